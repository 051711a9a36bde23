"""The grids in experiments/: they validate, document every key and expand as documented."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from bench import grid as G
from bench.grid import (
    cli_validate,
    load_grid,
)

from .helpers import ROOT, SHIPPED

# ---------------------------------------------------------------------------- shipped grids


_shipped_cache: dict[Path, G.Grid] = {}


def shipped(path: Path) -> G.Grid:
    """Shipped grids are loaded once per test session (the thesis grid has 4,000 cells)."""
    if path not in _shipped_cache:
        _shipped_cache[path] = load_grid(path)
    return _shipped_cache[path]


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_grid_validates(path):
    g = shipped(path)
    assert g.cells, f"{path.name} has no runnable cell"
    assert g.warnings == []
    assert g.name == path.stem
    if path.stem != "thesis":  # (the thesis grid's text is checked through the same code)
        text, code = cli_validate(path)
        assert code == 0 and f"{len(g.cells)} cells" in text


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_grid_documents_every_key(path):
    """Every key line of a shipped grid carries a comment (style.md)."""
    key = re.compile(r"^\s*(- )?[A-Za-z_][A-Za-z0-9_]*:(\s|$)")
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if key.match(line):
            assert "#" in line, f"{path.name}:{lineno}: key without a comment: {line!r}"


def test_shipped_grid_counts():
    counts = {p.stem: (len(shipped(p).cells), len(shipped(p).skipped)) for p in SHIPPED}
    assert counts["smoke"] == (3, 1)
    assert counts["quickstart"] == (45, 0)
    assert counts["thesis_reference"] == (410, 0)
    assert counts["thesis"] == (1268, 2780)
    assert counts["trlaplace"] == (75, 261)
    assert counts["tem"] == (55, 55)


def test_quickstart_contents():
    g = shipped(ROOT / "experiments" / "quickstart.yaml")
    mechs = {(c.mechanism, c.epsilon, c.mapping) for c in g.cells}
    assert mechs == {
        ("none", math.inf, "none"), ("mvl", 1.0, "nearest"), ("mvl", 10.0, "nearest"),
        ("tem", 1.0, "none"), ("tem", 10.0, "none"), ("trlaplace", 1.0, "nearest"),
        ("trlaplace", 10.0, "nearest"), ("truncated_gumbel", 100.0, "none"),
        ("truncated_gumbel", 150.0, "none")}
    assert {c.dataset for c in g.cells} == {"bbc"} and {c.model for c in g.cells} == {"lstm"}


def test_thesis_grid_axes():
    g = shipped(ROOT / "experiments" / "thesis.yaml")
    priv = [c for c in g.cells if not c.is_baseline]
    assert {c.sensitivity for c in priv} == {"none", "unit_norm", "unit_norm_clip", "minmax",
                                             "observed_range", "clip_observed_range", "jl"}
    assert {c.epsilon for c in priv} == {0.1, 1, 10, 50, 100, 150}
    assert {c.mechanism for c in priv} == {"mvl", "truncated_gumbel"}
    assert {c.seed for c in priv if c.model == "transformer"} == {0}
    assert {c.dataset for c, _ in g.skipped if "needs its data file" in _} == {
        "agnews", "trustpilot"}
