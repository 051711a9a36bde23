"""A stored spec gets the checks `bench run` gives a grid (issue 24): what a grid may not hold,
a spec to be recomputed may not hold either; a spec of another format is one line."""

from __future__ import annotations

import copy
import json

import pytest

from bench.grid import load_grid
from bench.grid.stored import spec_refusal

from .helpers import ROOT, SHIPPED

QUICKSTART = ROOT / "results" / "reference" / "quickstart" / "cells"


def _spec(baseline: bool = False) -> dict:
    """The first committed quickstart baseline, or else the first tem cell (the refusals below
    name its mechanism)."""
    for p in sorted(QUICKSTART.glob("*/spec.json")):
        spec = json.loads(p.read_text())
        if spec["mechanism"]["name"] == ("none" if baseline else "tem"):
            return spec
    raise AssertionError("no such reference cell")


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_cell_of_a_shipped_grid_passes(path):
    g = load_grid(path)
    refused = {c.name: spec_refusal(c.spec()) for c in [*g.cells, *(c for c, _ in g.skipped)]}
    assert {n: r for n, r in refused.items() if r} == {}


@pytest.mark.parametrize("edit, why", [
    (lambda s: s["model"]["params"].update(epochs=1e9),
     "model: model 'lstm' parameter epochs = 1000000000.0 is above its limit 1,000"),
    (lambda s: s["settings"]["model_defaults"].update(batch_size=10**6),
     "settings.models.lstm: model 'lstm' parameter batch_size = 1000000 is above its limit"),
    (lambda s: s["settings"].update(vocab_size=10**9),
     "settings.vocab_size: setting vocab_size = 1000000000 is above its limit 2,000,000"),
    (lambda s: s["dataset"]["config"].update(subsample=10**12),
     "dataset: dataset 'bbc' parameter subsample = 1000000000000 is above its limit"),
    (lambda s: s["sensitivity"].update(name="jl", params={"beta": 0.001}),
     "sensitivity: sensitivity 'jl' parameter m = "),
    (lambda s: s["mechanism"].update(name="custext", params={"K": 10**7}),
     "mechanism: mechanism 'custext' parameter K = 10000000 is above its limit 4,096"),
    (lambda s: s["model"].update(name="lstmm"), "unknown model 'lstmm'; did you mean 'lstm'?"),
    (lambda s: s["mechanism"]["params"].update(bogus=1),
     "mechanism: unknown mechanism 'tem' parameter 'bogus'"),
    (lambda s: s.update(epsilon=-1), "epsilon: epsilon must be > 0, got -1"),
    (lambda s: s.update(seed=1.5), "seed: seed must be an integer >= 0, got 1.5"),
    (lambda s: s["settings"].update(models={"lstm": {}}), "settings: unknown key(s) models"),
])
def test_what_bench_run_refuses_is_refused(edit, why):
    spec = copy.deepcopy(_spec())
    assert spec_refusal(spec) is None
    edit(spec)
    got = spec_refusal(spec)
    assert got and why in got and "\n" not in got, got


def test_a_baseline_is_one_as_bench_run_writes_it():
    spec = _spec(baseline=True)
    assert spec_refusal(spec) is None
    for edit, why in [
        (lambda s: s.update(epsilon=1.0), "epsilon: a baseline's is 'inf'"),
        (lambda s: s["sensitivity"].update(name="jl", params={"m": 10**9}),
         "sensitivity: a baseline has sensitivity none"),
        (lambda s: s["model"]["params"].update(epochs=10**9), "epochs = 1000000000 is above"),
    ]:
        s = copy.deepcopy(spec)
        edit(s)
        assert why in (spec_refusal(s) or ""), spec_refusal(s)


@pytest.mark.parametrize("spec, why", [
    ([], "not a JSON object, got list"),
    ({}, "dataset: not {name: ..., config: {...}} (a spec of another format), got NoneType"),
    ({**_spec(), "model": "lstm"}, "model: not {name: ..., params: {...}}"),
    ({**_spec(), "mechanism": {"name": "mvl", "params": [1]}}, "mechanism: not {name"),
    ({**_spec(), "settings": "x"}, "settings: not a mapping"),
    ({**_spec(), "settings": {**_spec()["settings"], "model_defaults": [1]}},
     "settings.models.lstm: must be a mapping of hyperparameters, got [1]"),
    ({**_spec(), "epsilon": None}, "epsilon: epsilon must be a number > 0, got None"),
    ({**_spec(), "rewriter": {"name": "autoencoder"}}, "rewriter: not {name: ..., params"),
])
def test_a_spec_of_another_format_is_one_line(spec, why):
    got = spec_refusal(spec)
    assert got and why in got and "\n" not in got, got


def test_an_unforeseen_error_is_one_line_too(monkeypatch):
    import bench.grid.stored as stored

    def boom(spec):
        raise TypeError("unhashable type: 'list'\nsecond line")

    monkeypatch.setattr(stored, "_refusal", boom)
    assert stored.spec_refusal(_spec()) == \
        "not a spec of this version (TypeError: unhashable type: 'list' second line)"
