"""Measures: registry, seeds, records, and a grid's ``settings.measures``."""

from __future__ import annotations

import numpy as np
import pytest

from bench.grid import GridError, load_grid
from bench.measures import MEASURES, measure, measure_seed, measure_versions, parse_versions
from bench.measures.base import as_record, bootstrap_ci, rate_with_ci

GRID = """
name: m
axes:
  dataset: [{name: bbc, subsample: 150}]
  model: [bow]
  mechanism: [mvl, tem, {name: laplace, C: 1.0}]
  mapping: [nearest, none]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 2000
  {extra}
"""


def _grid(tmp_path, extra=""):
    p = tmp_path / "g.yaml"
    p.write_text(GRID.replace("{extra}", extra))
    return load_grid(p)


def test_every_builtin_measure_is_registered():
    assert sorted(MEASURES.names()) == ["linkage", "linkage_minilm", "mia_low_fpr", "mia_rmia",
                                        "perplexity_smollm2", "reconstruction", "reconstruction_lm",
                                        "reference_utility", "s_w", "similarity_minilm"]
    for name in MEASURES.names():
        assert measure(name).name == name


def test_versions_round_trip_and_seeds_differ():
    text = measure_versions(["s_w", "linkage"])
    assert text == "linkage=1,s_w=1"
    assert parse_versions(text) == {"linkage": "1", "s_w": "1"}
    assert parse_versions(None) == {}
    assert measure_seed(0, "s_w") != measure_seed(0, "linkage")
    assert measure_seed(0, "s_w") != measure_seed(1, "s_w")


def test_record_holds_finite_json_numbers_only():
    rec = as_record({"a": np.float64("nan"), "b": np.int64(3), "c": [np.float32(0.5)],
                     "d": {"e": np.bool_(True)}})
    assert rec == {"a": None, "b": 3, "c": [0.5], "d": {"e": True}}


def test_bootstrap_interval_covers_the_ratio_and_narrows_with_more_documents():
    rng = np.random.default_rng(0)
    small = rng.random(20) < 0.3
    lo, hi = bootstrap_ci(small.astype(float), seed=0)
    assert lo <= small.mean() <= hi
    big = rng.random(2000) < 0.3
    lo2, hi2 = bootstrap_ci(big.astype(float), seed=0)
    assert hi2 - lo2 < hi - lo
    rec = rate_with_ci(np.array([1, 0, 1, 1]), np.array([0, 0, 1, 1]), 2, seed=0)
    assert rec["rate"] == 0.75 and rec["ci"][0] <= 0.75 <= rec["ci"][1]


def test_a_grid_without_measures_keeps_every_cell_identity(tmp_path):
    plain = _grid(tmp_path)
    assert all("measures" not in c.versions and "measures" not in c.spec() for c in plain.cells)
    with_m = _grid(tmp_path, "measures: [reconstruction, s_w, linkage]")
    assert {c.hash for c in with_m.cells}.isdisjoint({c.hash for c in plain.cells})


def test_measures_land_only_in_the_cells_they_apply_to(tmp_path):
    grid = _grid(tmp_path, "measures: [reconstruction, linkage, mia_low_fpr]")
    by_kind = {}
    for c in grid.cells:
        by_kind[(c.mechanism, c.output)] = parse_versions(c.versions.get("measures"))
    assert by_kind[("none", "text")] == {}  # the baseline: none applies
    assert by_kind[("mvl", "text")] == {"linkage": "1", "reconstruction": "3"}
    assert by_kind[("tem", "text")] == {"linkage": "1", "reconstruction": "3"}
    assert by_kind[("mvl", "vectors")] == {}  # no words: neither applies
    assert all(c.spec().get("measures") == c.versions.get("measures") for c in grid.cells)


@pytest.mark.parametrize("value, expected", [
    ("[reconstruction, nope]", "unknown measure 'nope'"),
    ("reconstruction", "must be a list of measure names"),
    ("[s_w, s_w]", "names a measure twice"),
])
def test_a_bad_measures_setting_is_refused(tmp_path, value, expected):
    with pytest.raises(GridError, match=expected):
        _grid(tmp_path, f"measures: {value}")
