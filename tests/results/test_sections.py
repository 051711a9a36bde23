"""The typed cell record (bench.results.sections): every committed cell reads into typed
sections and writes back exactly as stored; values read by attribute; stages' keys only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.results.sections import (
    AttributePrivacy,
    CellMetrics,
    Deltas,
    Utility,
    interval,
    upgrade,
)

ROOT = Path(__file__).resolve().parents[2]
CELLS = sorted((ROOT / "results" / "reference").glob("*/cells/*/metrics.json"))


def test_every_committed_cell_round_trips_exactly():
    assert len(CELLS) > 1000
    for f in CELLS:
        d = json.loads(f.read_text(encoding="utf-8"))
        assert upgrade(d).to_dict() == d, f


def test_values_read_by_attribute_and_absent_keys_read_as_none():
    d = json.loads(next(f for f in CELLS if "quickstart" in str(f)).read_text())
    m = upgrade(d)
    assert m.utility.macro_f1 == d["utility"]["macro_f1"]
    assert interval(m.utility.macro_f1_ci95) == tuple(d["utility"]["macro_f1_ci95"])
    (attr,) = m.attributes
    p = m.attribute(attr)
    assert isinstance(p, AttributePrivacy) and p.adversary in p.by_adversary
    assert p.by_adversary[p.adversary].privacy == p.privacy
    assert m.attribute("no such attribute") is None
    assert m.runtime.get("total_seconds") > 0 and m.runtime.get("nothing", -1.0) == -1.0
    assert m.mia is None or m.mia.mia_auc is not None


def test_a_none_value_is_kept_apart_from_an_absent_key():
    d = {"runtime": {"total_seconds": 1.0}, "n_w": None}
    m = CellMetrics.from_dict(d)
    assert m.n_w is None and m.has("n_w") and not m.has("utility")
    assert m.to_dict() == d  # "n_w": null stays, "utility" is not invented


def test_unmodelled_keys_are_kept_and_stages_build_only_known_keys():
    d = {"runtime": {"total_seconds": 1.0, "new_stage_seconds": 2.0}, "utility": {"future": 1}}
    assert CellMetrics.from_dict(d).to_dict() == d
    u = Utility.make(task="topic", macro_f1=0.5)
    assert u.to_dict() == {"task": "topic", "macro_f1": 0.5}
    with pytest.raises(TypeError, match="unknown key"):
        Utility.make(macro_f2=0.5)
    dl = Deltas.from_dict({"delta_utility": -0.1, "by_privacy_task": {
        "gender": {"delta_privacy": 0.2, "tradeoff": 0.1}}})
    assert dl.attribute("gender").tradeoff == 0.1 and dl.attribute("age") is None


def test_a_malformed_section_is_refused():
    with pytest.raises(TypeError, match="expected a mapping"):
        CellMetrics.from_dict({"utility": [1, 2]})
