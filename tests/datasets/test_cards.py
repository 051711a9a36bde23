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


@pytest.mark.parametrize("name", ["bbc", "conventions", "rt"], ids=str)
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
