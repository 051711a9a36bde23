"""One rule for a baseline and one for pairing a cell with its baseline (bench.analysis)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from bench.analysis.baseline import BaselineIndex, baseline_key, is_baseline
from bench.grid import load_grid
from bench.results.record import scan

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "results" / "reference" / "quickstart"


def _spec(mech="none", eps="inf", seed=0, settings=None, path="/a/x.csv", data="d1"):
    return {"dataset": {"name": "csv", "config": {"path": path, "data": data}, "version": "1"},
            "model": {"name": "bow", "params": {"C": 1.0}, "version": "1"},
            "mechanism": {"name": mech, "params": {}, "version": "1"}, "epsilon": eps,
            "seed": seed, "settings": settings or {"vocab_size": 50000}}


def test_the_rule_is_the_mechanism_name_never_eps():
    assert is_baseline(_spec()) and is_baseline("none") and is_baseline({"name": "none"})
    assert not is_baseline(_spec("tem", "inf"))  # a privatized cell claiming eps = inf
    assert not is_baseline(_spec("tem", 1.0)) and not is_baseline({})


def test_pairing_is_exact_then_the_one_baseline_that_differs_only_in_settings():
    index: BaselineIndex[str] = BaselineIndex()
    index.add(_spec(), "h", "base0")
    index.add(_spec(seed=1), "h", "base1")
    assert index.find(_spec("tem", 1.0), "h") == "base0"
    assert index.find(_spec("tem", 1.0, seed=1), "h") == "base1"
    assert index.find(_spec("tem", 1.0, seed=2), "h") is None
    assert index.find(_spec("tem", 1.0), "other data") is None  # content, not name
    # the file's location is not the dataset; its content digest is
    assert index.find(_spec("tem", 1.0, path="/b/y.csv"), "h") == "base0"
    assert index.find(_spec("tem", 1.0, data="d2"), "h") is None
    # other settings: the unique baseline that differs only there, never one of several
    other = _spec("tem", 1.0, settings={"vocab_size": 1000})
    assert index.find(other, "h") == "base0"
    index.add(_spec(settings={"vocab_size": 2000}), "h", "base0b")
    assert index.find(other, "h") is None
    assert index.find(_spec("tem", 1.0), "h") == "base0"  # the exact match still wins


def test_every_committed_quickstart_cell_finds_its_own_seeds_baseline():
    cells = scan(QUICKSTART).cells
    index: BaselineIndex = BaselineIndex()
    for r in cells:
        if r.is_baseline:
            index.add(r.spec, r.dataset_hash, r, r.suite_version)
    for r in cells:
        base = index.find(r.spec, r.dataset_hash, r.suite_version)
        assert base is not None and base.seed == r.seed and base.is_baseline


def test_the_runner_pairs_by_the_same_rule(tmp_path):
    grid = load_grid(ROOT / "experiments" / "quickstart.yaml")
    index: BaselineIndex[str] = BaselineIndex()
    for c in grid.cells:
        if c.is_baseline:
            index.add(c.spec(), "h", c.hash)
    for c in grid.cells:
        found = index.find(c.spec(), "h")
        assert found is not None
        base = next(b for b in grid.cells if b.hash == found)
        assert (base.seed, base.model, base.dataset_config) == (c.seed, c.model,
                                                                c.dataset_config)
    spec = copy.deepcopy(grid.cells[0].spec())
    assert baseline_key(spec, "h") == json.loads(json.dumps(baseline_key(spec, "h")))


def test_configurations_differing_in_a_version_list_alone_are_kept_apart_and_labelled():
    """Issue 48, trial 2: cells that differ only in their adversary versions (so in their hash)
    were pooled as one configuration and seed, and the lowest hash replaced the other. Now
    each is a configuration of its own, and their equal labels are told apart."""
    from dataclasses import replace

    from bench.analysis.results import group_cells

    recs = [r for r in scan(QUICKSTART).cells if r.is_baseline and r.seed == 0]
    (honest,) = recs
    look_alike = replace(honest, hash="0" * 16,  # sorts first: the one kept before
                         spec=dict(honest.spec, adversaries=honest.spec["adversaries"] + ",x=1"))
    groups, warnings = group_cells([honest, look_alike])
    assert len(groups) == 2 and not any("same configuration" in w for w in warnings)
    labels = sorted(g.config.mechanism for g in groups)
    assert labels[0] != labels[1] and all(lab.startswith("none [adversaries ") for lab in labels)
    assert {g.records[0].hash for g in groups} == {honest.hash, "0" * 16}
    alone, _ = group_cells([honest])
    assert alone[0].config.mechanism == "none"  # no label changes where nothing collides


def test_every_committed_cells_exact_baseline_is_the_one_its_grid_ran():
    """baseline_cell rebuilds, from a stored privatized spec alone, the baseline the grid's
    expansion made for it: in every committed reference, each privatized cell's exact
    baseline is among the folder's cells."""
    from bench.analysis.baseline import expected_baseline_hash

    for folder in sorted((ROOT / "results" / "reference").iterdir()):
        specs = {d.name: json.loads((d / "spec.json").read_text())
                 for d in (folder / "cells").iterdir()}
        wanted = {expected_baseline_hash(s) for s in specs.values() if not is_baseline(s)}
        baselines = {h for h, s in specs.items() if is_baseline(s)}
        assert wanted and wanted <= baselines, folder.name
