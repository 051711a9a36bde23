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
    refs = {p.name for p in (ROOT / "results" / "reference").iterdir() if p.is_dir()}
    assert {f.parents[2].name for f in CELLS} == refs and len(CELLS) > 500  # every reference
    for f in CELLS:
        d = json.loads(f.read_text(encoding="utf-8"))
        assert json.dumps(upgrade(d).to_dict()) == json.dumps(d), f  # same keys, same order


def test_values_read_by_attribute_and_absent_keys_read_as_none():
    d = json.loads(next(f for f in CELLS if "quickstart" in str(f)).read_text())
    m = upgrade(d)
    assert m.utility.macro_f1 == d["utility"]["macro_f1"]
    assert interval(m.utility.macro_f1_ci95) == tuple(d["utility"]["macro_f1_ci95"])
    (attr,) = m.attributes
    p = m.attribute(attr)
    assert isinstance(p, AttributePrivacy) and p.adversary in p.by_adversary
    assert p.by_adversary[p.adversary].privacy == p.privacy
    assert p.result(p.adversary).privacy == p.privacy and not p.result("no such adversary")
    assert m.runtime.get("total_seconds") > 0 and m.runtime.get("nothing", -1.0) == -1.0
    assert not m.mia or m.mia.mia_auc is not None


def test_an_absent_section_or_attribute_reads_as_an_empty_one():
    m = CellMetrics.from_dict({"utility": {"macro_f1": 0.5}})
    assert m.utility and m.utility.macro_f1 == 0.5 and m.utility.macro_f1_ci95 is None
    assert not m.mia and m.mia.mia_auc is None and not m.has("mia")
    absent = m.attribute("gender")
    assert not absent and absent.privacy is None and absent.result("informed").privacy is None
    assert m.vs_baseline.attribute("gender").tradeoff is None and m.measure("s_w") == {}
    assert m.to_dict() == {"utility": {"macro_f1": 0.5}}  # nothing invented on the way back
    null = CellMetrics.from_dict({"mia": None})
    assert not null.mia and null.mia.mia_auc is None and null.to_dict() == {"mia": None}


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
    assert dl.attribute("gender").tradeoff == 0.1 and not dl.attribute("age")


def test_a_malformed_section_is_refused():
    with pytest.raises(TypeError, match="expected a mapping"):
        CellMetrics.from_dict({"utility": [1, 2]})


def test_keys_keep_their_order_and_with_values_adds_at_the_end():
    d = {"macro_f1": 0.5, "task": "topic", "n": 10}
    u = Utility.from_dict(d)
    assert list(u.to_dict()) == ["macro_f1", "task", "n"]
    v = u.with_values(n=11, chance_level=False)
    assert list(v.to_dict()) == ["macro_f1", "task", "n", "chance_level"] and v.n == 11
    assert u.n == 10  # the original is unchanged
    with pytest.raises(TypeError, match="unknown key"):
        u.with_values(macro_f2=1.0)


def test_set_sections_writes_whole_sections_and_refuses_a_misspelt_one():
    from bench.results.sections import RewriteScores, set_sections

    metrics: dict = {"cell": "c", "utility": {"macro_f1": 0.1}}
    set_sections(metrics, utility=Utility.make(task="topic", macro_f1=0.5), n_w=None,
                 rewrite=RewriteScores.make(n_w=0.4, extra={"my_plugin_score": 0.7}))
    assert metrics == {"cell": "c", "utility": {"task": "topic", "macro_f1": 0.5}, "n_w": None,
                       "rewrite": {"n_w": 0.4, "my_plugin_score": 0.7}}
    assert list(metrics) == ["cell", "utility", "n_w", "rewrite"]  # an entry keeps its place
    assert upgrade(metrics).rewrite.value("my_plugin_score") == 0.7
    with pytest.raises(TypeError, match="unknown section"):
        set_sections(metrics, utilty={})
    with pytest.raises(TypeError, match="given as extra"):
        RewriteScores.make(extra={"bleu": 1.0})
