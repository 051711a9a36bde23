"""Dataset cards: `bench ls datasets [--details]` text and the docs page stay in sync."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.datasets import DATASETS, cli_ls, load_dataset, render_docs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def test_docs_page_is_in_sync() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_docs(), (
        "docs/datasets.md is stale: run `python -m bench.datasets docs/datasets.md`"
    )


@pytest.mark.parametrize("name", DATASETS.names(), ids=str)
def test_every_card_is_complete(name: str) -> None:
    card = DATASETS.get(name).card
    assert card.name == name
    for field in ("title", "source", "licence", "expected_size", "how_to_get"):
        assert getattr(card, field).strip(), field
    assert card.caveats
    roles = [t.role for t in card.tasks]
    assert roles.count("utility") == 1


@pytest.mark.parametrize("name", ["bbc", "conventions", "rt", "debates2016", "news_outlets",
                                  "spam_assassin", "sotu"], ids=str)
def test_embedded_expected_size_matches_loaded(name: str) -> None:
    card = DATASETS.get(name).card
    size = len(load_dataset(name))
    assert f"{size:,}" in card.expected_size


def test_ls_table_and_details() -> None:
    table = cli_ls(details=False)
    lines = table.splitlines()
    assert lines[0].split() == ["name", "kind", "utility", "privacy", "size"]
    assert [ln.split()[0] for ln in lines[1:]] == DATASETS.names()
    details = cli_ls(details=True)
    for name in DATASETS.names():
        assert f"## `{name}`" in details
    assert "2,127 texts" in details  # measured size of bbc
    assert "iraq 75 (3.5%)" in details  # measured class balance (first 500 tokens)
    assert "not self-reported" in details.lower()
    assert "Licence:** MIT" in details


@pytest.mark.parametrize("name", [n for n in DATASETS.names() if DATASETS.get(n).shipped],
                         ids=str)
def test_every_embedded_privacy_task_has_a_measured_baseline(name: str) -> None:
    card = DATASETS.get(name).card
    for task in card.tasks:
        if task.role != "privacy":
            assert not task.baselines
            continue
        assert task.baselines and task.measurable is not None, task.name
        for b in task.baselines:
            assert b.adversary == "lexical" and 0 <= b.chance < 1 and 0 <= b.macro_f1 <= 1
            assert "seed" in b.setting or "as the quickstart" in b.setting


def test_not_measurable_tasks_are_marked() -> None:
    from bench.datasets.base import MEASURABLE_MARGIN, Baseline

    assert Baseline("lexical", 0.51, 0.49, "x").measurable is False
    assert Baseline("lexical", 0.49 + MEASURABLE_MARGIN, 0.49, "x").measurable is True
    tasks = {(n, t.name): t for n in ("bbc", "conventions", "conventions_speakers")
             for t in DATASETS.get(n).card.tasks if t.role == "privacy"}
    assert tasks[("conventions", "gender")].measurable is False
    assert tasks[("bbc", "entities")].measurable is True
    assert tasks[("conventions_speakers", "speaker")].measurable is True
    table = cli_ls(details=False)
    assert "gender [not measurable]" in table and "entities [not" not in table
    details = cli_ls(details=True)
    assert "`gender` (NOT MEASURABLE" in details and "`speaker` (measurable)" in details


def test_speaker_baseline_on_the_card_reproduces() -> None:
    """The card's conventions_speakers number is the lexical adversary's, measured (~3 s)."""
    from bench.attacks.lexical import LexicalAdversary
    from bench.embeddings import tokenize
    from bench.metrics.classification import chance_level, macro_f1

    ds = load_dataset("conventions_speakers", seed=0)
    spk = ds.tasks["speaker"]
    card_b = next(t for t in ds.card.tasks if t.name == "speaker").baselines[0]
    toks = {s: [tokenize(t)[: ds.config["max_tokens"]] for t in ds.split_texts(s)]
            for s in ("train", "dev", "test")}
    y = {s: ds.split_labels(s, "speaker") for s in toks}
    k = len(spk.classes)
    adv = LexicalAdversary(seed=0, n_classes=k).fit(toks["train"], y["train"], toks["dev"],
                                                    y["dev"])
    f1 = macro_f1(y["test"], adv.predict(toks["test"]), k)
    assert abs(f1 - card_b.macro_f1) < 0.01
    assert abs(chance_level(y["test"], y["train"], n_classes=k).threshold - card_b.chance) < 0.01


def test_the_new_private_attributes_are_measurable_and_say_where() -> None:
    """debates2016's gender is measurable within speakers only (its across-speaker baselines
    are marked as not beating chance); news_outlets' outlet is measurable at every size."""
    gender = next(t for t in DATASETS.get("debates2016").card.tasks if t.name == "gender")
    within = [b for b in gender.baselines if "within speakers" in b.setting]
    across = [b for b in gender.baselines if "ACROSS speakers" in b.setting]
    assert within and all(b.measurable for b in within)
    assert len(across) == 3 and not any(b.measurable for b in across)
    outlet = next(t for t in DATASETS.get("news_outlets").card.tasks if t.name == "outlet")
    assert outlet.baselines and all(b.measurable for b in outlet.baselines)
    table = cli_ls(details=False)
    assert "gender [not" not in table.split("debates2016")[1].splitlines()[0]


PAPER_LOADERS = ("agnews", "imdb", "sst2", "yelp", "trustpilot")


@pytest.mark.parametrize("name", PAPER_LOADERS, ids=str)
def test_paper_loader_cards_name_their_papers_and_files(name: str) -> None:
    from bench.datasets import render_card

    card = DATASETS.get(name).card
    assert card.used_in and card.files
    text = render_card(card)
    assert "Used in (the data and scale each paper states):" in text
    assert "Files (the published release" in text
    for f in card.files:
        assert f"- `{f.name}`: <{f.url}>" in text
        assert f.checksums in text
    assert card.to_dict()["files"][0]["name"] == card.files[0].name


def test_files_render_checksums_rows_and_sources() -> None:
    from bench.datasets import render_card

    agnews = render_card(DATASETS.get("agnews").card)
    assert ("120,000 rows; 29,470,338 bytes; md5 `b1a00f826fdfbd249f79597b59e1dc12`, sha256 "
            "`76a0a2d2f92b286371fe4d4044640910a04a803fdd2538e0f3f29a5c6f6b672e`") in agnews
    assert "published in: pytorch/text torchtext/datasets/ag_news.py" in agnews
    assert "140,510 train / 17,563 dev / 17,564 test" in agnews
    assert "no checksum published" in render_card(DATASETS.get("trustpilot").card)
    assert "Files (" not in render_card(DATASETS.get("bbc").card)
