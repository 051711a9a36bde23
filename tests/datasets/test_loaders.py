"""Paper loaders parse small files in the original formats and reject malformed input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from bench.datasets import (
    DatasetConfigError,
    DatasetError,
    DatasetFileNotFoundError,
    DatasetFormatError,
    load_dataset,
)


def write_ag(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    # the original files quote every field and have no header row
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    return path


AG_ROWS = [
    ("3", "Wall St. Bears Claw Back (Reuters)", "Reuters - Short-sellers, Wall Street's\\band"),
    ("1", "Iraq vote", "Baghdad #39;s voters in IRAQ went to the polls."),
    ("2", "Bush hails team", "President bush and the United  States team."),
    ("4", "China chips", "Chinese firms; china's chip output &lt;b&gt;rises&lt;/b&gt;."),
    ("1", "British troops", "British forces leave Basra."),
    ("2", "Empty", ""),
]


def ag_dataset(tmp_path: Path, rows: list[tuple[str, str, str]] = AG_ROWS, **kw):
    write_ag(tmp_path / "train.csv", rows * 4)
    return load_dataset("agnews", path=tmp_path / "train.csv", **kw)


def test_agnews_parses_original_csv(tmp_path: Path) -> None:
    ds = ag_dataset(tmp_path)
    assert len(ds) == 20  # the row with an empty description is dropped
    assert ds.utility_task.classes == ("World", "Sports", "Business", "Sci/Tech")
    assert (
        ds.texts[0]
        == "Wall St. Bears Claw Back (Reuters) Reuters - Short-sellers, Wall Street's band"
    )
    assert ds.texts[1] == "Iraq vote Baghdad 's voters in IRAQ went to the polls."
    assert ds.texts[3].endswith("chip output <b>rises</b>.")
    assert ds.utility_task.labels[:5].tolist() == [2, 0, 1, 3, 0]
    ent = ds.tasks["entities"]
    assert ent.classes == ("iraq", "china", "united states", "bush", "british")
    assert ent.labels[:5].tolist() == [
        [0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0],
        [0, 0, 1, 1, 0],
        [0, 1, 0, 0, 0],  # "Chinese" does not count, "china's" does
        [0, 0, 0, 0, 1],
    ]


def test_agnews_folder_reads_train_and_test(tmp_path: Path) -> None:
    write_ag(tmp_path / "train.csv", AG_ROWS[:3] * 4)
    write_ag(tmp_path / "test.csv", AG_ROWS[3:5] * 4)
    ds = load_dataset("agnews", path=tmp_path)
    assert len(ds) == 20


def test_agnews_env_var_and_require_entity(tmp_path: Path, monkeypatch) -> None:
    write_ag(tmp_path / "a.csv", AG_ROWS * 4)
    monkeypatch.setenv("BENCH_AGNEWS_PATH", str(tmp_path / "a.csv"))
    ds = load_dataset("agnews", require_entity=True)
    assert len(ds) == 16
    assert ds.tasks["entities"].labels.any(axis=1).all()


def test_agnews_thesis_topic_variant(tmp_path: Path) -> None:
    topics = [
        "Business",
        "Sci/Tech",
        "Software and Development",
        "Entertainment",
        "Sports",
        "Health",
    ]
    with (tmp_path / "ag6.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["topic", "title", "description"])
        for i in range(30):
            w.writerow([topics[i % 6], f"title {i}", f"Bush met China's leader {i}"])
    ds = load_dataset("agnews", path=tmp_path / "ag6.csv")
    assert ds.utility_task.classes == tuple(topics)
    assert ds.utility_task.kind == "multiclass"
    assert ds.utility_task.counts() == {t: 5 for t in topics}
    assert ds.tasks["entities"].counts()["bush"] == 30


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([("5", "t", "d")], r"class must be 1-4"),
        ([("1", "t")], r"expected 3 columns"),
        ([("1", "t", "d", "x")], r"expected 3 columns"),
    ],
)
def test_agnews_rejects_malformed_rows(tmp_path: Path, rows, match: str) -> None:
    write_ag(tmp_path / "bad.csv", [("1", "ok", "fine")] + rows)
    with pytest.raises(DatasetFormatError, match=match) as e:
        load_dataset("agnews", path=tmp_path / "bad.csv")
    assert "bad.csv:2" in str(e.value)  # file and line


def test_agnews_missing_file_and_no_path(tmp_path: Path) -> None:
    with pytest.raises(DatasetFileNotFoundError, match="BENCH_AGNEWS_PATH"):
        load_dataset("agnews")
    with pytest.raises(FileNotFoundError, match="nothing at"):
        load_dataset("agnews", path=tmp_path / "nope.csv")
    with pytest.raises(DatasetFileNotFoundError, match="no train.csv or test.csv"):
        load_dataset("agnews", path=tmp_path)


def test_agnews_empty_result(tmp_path: Path) -> None:
    write_ag(tmp_path / "e.csv", [("1", "title", "")])
    with pytest.raises(DatasetFormatError, match="no usable rows"):
        load_dataset("agnews", path=tmp_path / "e.csv")


# ------------------------------------------------------------------------------- trustpilot


def tp_user(uid: str, gender, year, reviews) -> dict:
    return {
        "user_id": uid,
        "gender": gender,
        "birth_year": year,
        "location": "x",
        "reviews": [
            {
                "text": [t],
                "rating": str(r),
                "title": "t",
                "company_id": "c",
                "date": "2012-01-01T00:00:00.000+00:00",
            }
            for t, r in reviews
        ],
    }


def write_tp(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    uk = [
        tp_user("u1", "M", 1980, [("Great service", 5), ("Slow delivery", 2)]),
        tp_user("u2", "F", 1975, [("Lovely shop", 5)]),
        tp_user("u3", None, 1990, [("no gender", 4)]),  # dropped: no gender
        tp_user("u4", "F", None, [("no year", 4)]),  # dropped: no birth year
    ]
    us = [
        tp_user("u5", "F", "1988", [("Awful", 1), ("", 3)]),  # empty review dropped
        tp_user("u6", "M", 1960, [("Fine", 3), ("Okay", 4)]),
    ]
    de = [tp_user("u7", "M", 1970, [("Sehr gut", 5)])]  # other subcorpus: not read
    for name, users in [
        ("united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.tmp", uk),
        ("united_states.auto-adjusted_gender.geocoded.jsonl.tmp", us),
        ("germany.auto-adjusted_gender.NUTS-regions.jsonl.tmp", de),
    ]:
        (folder / name).write_text("".join(json.dumps(u) + "\n" for u in users))
    return folder


def test_trustpilot_parses_folder_and_filters(tmp_path: Path) -> None:
    ds = load_dataset("trustpilot", path=write_tp(tmp_path / "tp"), split=(0.5, 0.25, 0.25))
    assert len(ds) == 6
    assert ds.texts == ["Great service", "Slow delivery", "Lovely shop", "Awful", "Fine", "Okay"]
    assert ds.utility_task.classes == ("1", "2", "3", "4", "5")
    assert [ds.utility_task.classes[i] for i in ds.utility_task.labels] == list("525134")
    assert [ds.tasks["gender"].classes[i] for i in ds.tasks["gender"].labels] == list("MMFFMM")
    assert ds.groups.tolist() == ["u1", "u1", "u2", "u5", "u6", "u6"]
    assert ds.config["split_by_group"] is False


def test_trustpilot_python_literal_lines_and_split_by_user(tmp_path: Path) -> None:
    users = [
        tp_user(
            f"u{i}", "MF"[i % 2], 1970 + i, [(f"review {i} {j}", 1 + (i + j) % 5) for j in range(3)]
        )
        for i in range(20)
    ]
    f = tmp_path / "united_kingdom.jsonl"
    f.write_text("".join(repr(u) + "\n" for u in users))  # some copies were written with repr
    ds = load_dataset("trustpilot", path=f, split_by_group=True)
    assert len(ds) == 60
    tr = set(ds.groups[ds.splits["train"]].tolist())
    assert not tr & set(ds.groups[ds.splits["test"]].tolist())


def test_trustpilot_rejects_malformed(tmp_path: Path) -> None:
    f = tmp_path / "united_kingdom.jsonl"
    f.write_text(json.dumps(tp_user("u1", "M", 1980, [("ok", 5)])) + "\n{not json\n")
    with pytest.raises(DatasetFormatError, match=r"united_kingdom.jsonl:2: not a JSON object"):
        load_dataset("trustpilot", path=f)
    f.write_text(json.dumps({"gender": "M", "birth_year": 1980}) + "\n")
    with pytest.raises(DatasetFormatError, match="expected a 'reviews' list"):
        load_dataset("trustpilot", path=f)
    f.write_text(json.dumps({"gender": "M", "birth_year": 1980, "reviews": [{"stars": 5}]}))
    with pytest.raises(DatasetFormatError, match="needs 'text' and 'rating'"):
        load_dataset("trustpilot", path=f)
    f.write_text(json.dumps(tp_user("u1", None, 1980, [("ok", 5)])) + "\n")
    with pytest.raises(DatasetFormatError, match="no user with gender"):
        load_dataset("trustpilot", path=f)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetFileNotFoundError, match="no file starting with united_kingdom"):
        load_dataset("trustpilot", path=tmp_path / "empty")


# ------------------------------------------------------------------------- sst2/imdb/yelp


def test_sst2_glue_tsv(tmp_path: Path) -> None:
    (tmp_path / "train.tsv").write_text(
        "sentence\tlabel\nhide new secretions from the parental units \t0\n"
        "contains no wit , only labored gags \t0\nthat loves its characters \t1\n"
        'the "best" film\t1\n'
    )
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\nit 's a charming journey . \t1\n")
    (tmp_path / "test.tsv").write_text("index\tsentence\n0\tunlabelled\n")
    ds = load_dataset("sst2", path=tmp_path, split=(0.6, 0.2, 0.2))
    assert len(ds) == 5
    assert ds.texts[3] == 'the "best" film'
    assert ds.utility_task.labels.tolist() == [0, 0, 1, 1, 1]
    assert ds.utility_task.classes == ("negative", "positive")
    (tmp_path / "bad.tsv").write_text("sentence\tlabel\nfine\t2\n")
    with pytest.raises(DatasetFormatError, match=r"bad.tsv:2"):
        load_dataset("sst2", path=tmp_path / "bad.tsv")
    (tmp_path / "nohead.tsv").write_text("fine\t1\n")
    with pytest.raises(DatasetFormatError, match="'sentence' and 'label'"):
        load_dataset("sst2", path=tmp_path / "nohead.tsv")


def test_imdb_folder(tmp_path: Path) -> None:
    root = tmp_path / "aclImdb"
    for split in ("train", "test"):
        for cls, rating in (("pos", 9), ("neg", 2)):
            d = root / split / cls
            d.mkdir(parents=True)
            for i in range(3):
                (d / f"{i}_{rating}.txt").write_text(f"{cls} review {i}<br /><br />more")
    (root / "train" / "unsup").mkdir()
    (root / "train" / "unsup" / "0_0.txt").write_text("unlabelled")
    ds = load_dataset("imdb", path=tmp_path, split=(0.5, 0.25, 0.25))  # parent folder works
    assert len(ds) == 12
    assert ds.utility_task.counts() == {"neg": 6, "pos": 6}
    assert "<br />" not in ds.texts[0] and ds.texts[0].endswith("review 0 more")
    with pytest.raises(DatasetFileNotFoundError, match="train/pos"):
        load_dataset("imdb", path=root / "train" / "unsup")


def test_yelp_json_lines(tmp_path: Path) -> None:
    f = tmp_path / "review.json"
    rows = [
        {
            "review_id": str(i),
            "user_id": f"u{i % 3}",
            "business_id": "b",
            "stars": float(s),
            "text": f"text {i}",
            "date": "2018-01-01",
        }
        for i, s in enumerate([1, 2, 3, 4, 5] * 4)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_dataset("yelp", path=f)
    assert len(ds) == 20 and ds.utility_task.counts() == {str(s): 4 for s in range(1, 6)}
    assert ds.groups.tolist()[:4] == ["u0", "u1", "u2", "u0"]
    pol = load_dataset("yelp", path=f, polarity=True)
    assert len(pol) == 16 and pol.utility_task.kind == "binary"
    assert len(load_dataset("yelp", path=f, max_rows=10)) == 10
    f.write_text(json.dumps({"text": "x"}) + "\n")
    with pytest.raises(DatasetFormatError, match="'text' and 'stars'"):
        load_dataset("yelp", path=f)


# ----------------------------------------------------------------------------- csv / jsonl


def test_generic_csv(tmp_path: Path) -> None:
    f = tmp_path / "mine.csv"
    with f.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "body", "stance", "age", "author"])
        for i in range(40):
            w.writerow(
                [
                    i,
                    f"text, number {i}",
                    ["pro", "con", "neutral"][i % 3],
                    "young" if i % 2 else "old",
                    f"a{i % 8}",
                ]
            )
        w.writerow([99, "", "pro", "old", "a1"])  # empty text: dropped
    ds = load_dataset(
        "csv",
        path=f,
        text="body",
        label="stance",
        private=["age"],
        group="author",
        split_by_group=True,
    )
    assert len(ds) == 40
    assert ds.texts[0] == "text, number 0"
    assert ds.utility_task.name == "stance" and ds.utility_task.classes == ("con", "neutral", "pro")
    assert ds.tasks["age"].role == "privacy" and ds.tasks["age"].kind == "binary"
    tr = set(ds.groups[ds.splits["train"]].tolist())
    assert not tr & set(ds.groups[ds.splits["test"]].tolist())
    with pytest.raises(DatasetFormatError, match=r"column\(s\) 'gender' not found.*'body'"):
        load_dataset("csv", path=f, text="body", label="stance", private=["gender"])
    with pytest.raises(DatasetConfigError, match="needs the column names"):
        load_dataset("csv", path=f, text="body")


def test_generic_tsv_numeric_labels(tmp_path: Path) -> None:
    f = tmp_path / "mine.tsv"
    f.write_text("t\ty\n" + "".join(f"doc {i}\t{[2, 10, 1][i % 3]}\n" for i in range(30)))
    ds = load_dataset("csv", path=f, text="t", label="y")
    assert ds.utility_task.classes == ("1", "2", "10")  # numeric order, not "1","10","2"


def test_generic_jsonl(tmp_path: Path) -> None:
    f = tmp_path / "mine.jsonl"
    rows = [
        {"text": f"t{i}", "y": i % 2 == 0, "region": ["n", "s", "e"][i % 3], "extra": [1]}
        for i in range(30)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_dataset("jsonl", path=f, text="text", label="y", private="region")
    assert ds.utility_task.classes == ("False", "True")
    assert ds.tasks["region"].counts() == {"e": 10, "n": 10, "s": 10}
    with pytest.raises(DatasetFormatError, match="must be a scalar"):
        load_dataset("jsonl", path=f, text="text", label="extra")
    f.write_text(json.dumps({"text": "a"}) + "\n")
    with pytest.raises(DatasetFormatError, match=r"mine.jsonl:1: field\(s\) 'y' missing"):
        load_dataset("jsonl", path=f, text="text", label="y")


# ------------------------------------------------------------------------------- config


def test_config_errors() -> None:
    with pytest.raises(DatasetConfigError, match="did you mean 'seed'"):
        load_dataset("rt", sed=1)
    with pytest.raises(DatasetConfigError, match="split must be 3"):
        load_dataset("rt", split=(0.5, 0.5, 0.5))
    with pytest.raises(DatasetConfigError, match="mia_split"):
        load_dataset("rt", mia_split=(0.6, 0.6, 0.0))
    with pytest.raises(DatasetConfigError, match="max_tokens"):
        load_dataset("rt", max_tokens=0)
    with pytest.raises(DatasetConfigError, match="subsample"):
        load_dataset("rt", subsample=1.5)
    with pytest.raises(DatasetConfigError, match="no group ids"):
        load_dataset("rt", split_by_group=True)
    with pytest.raises(KeyError, match="did you mean 'agnews'"):
        load_dataset("agnew")


def test_errors_share_one_base_class(tmp_path: Path) -> None:
    for exc in (DatasetFileNotFoundError, DatasetFormatError, DatasetConfigError):
        assert issubclass(exc, DatasetError)
    assert issubclass(DatasetFileNotFoundError, FileNotFoundError)
    assert issubclass(DatasetFormatError, ValueError)
    assert np.array_equal(  # a tiny split still stratifies or falls back, deterministically
        load_dataset("rt", subsample=7).splits["test"],
        load_dataset("rt", subsample=7).splits["test"],
    )
