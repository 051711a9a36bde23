"""Expansion: the axes product, exclude / include, baselines, component defaults."""

from __future__ import annotations

import json
import math

from bench.grid import (
    load_grid,
)

from .helpers import (
    BASIC,
    write,
)

# ------------------------------------------------------------------------------- expansion


def test_expansion_count_is_product_plus_baselines(tmp_path):
    g = load_grid(write(tmp_path, BASIC))
    product = 2 * 2 * 2 * 2 * 2 * 3 * 2  # 192
    baselines = 2 * 2 * 2  # dataset x model x seed
    assert len(g.cells) == product + baselines
    assert g.skipped == []
    assert g.name == "basic"
    assert len({c.hash for c in g.cells}) == len(g.cells)
    assert len({c.name for c in g.cells}) == len(g.cells)


def test_order_is_deterministic_baselines_first(tmp_path):
    p = write(tmp_path, BASIC)
    a, b = load_grid(p), load_grid(p)
    assert [c.hash for c in a.cells] == [c.hash for c in b.cells]
    assert all(c.is_baseline for c in a.cells[:8])
    assert not any(c.is_baseline for c in a.cells[8:])
    # first axis varies slowest, seed fastest
    first = a.cells[8]
    assert (first.dataset, first.model, first.mechanism, first.epsilon, first.seed) == (
        "bbc", "lstm", "mvl", 1.0, 0)
    assert a.cells[9].seed == 1 and a.cells[9].epsilon == 1.0


def test_default_axes_and_natural_mapping(tmp_path):
    g = load_grid(write(tmp_path, """
        axes:
          dataset: [bbc]
          model: [lstm]
          mechanism: [mvl, tem]
          epsilon: [5]
    """))
    names = [c.name for c in g.cells]
    assert names == [
        "bbc:model=lstm,mech=none,sens=none,map=none,eps=inf,seed=0",
        "bbc:model=lstm,mech=mvl,sens=none,map=nearest,eps=5,seed=0",
        "bbc:model=lstm,mech=tem,sens=none,map=none,eps=5,seed=0",
    ]
    assert g.name == "g"  # file stem when `name` is absent


def test_cell_resolves_component_defaults(tmp_path):
    g = load_grid(write(tmp_path, """
        axes:
          dataset: [bbc]
          model: [bow]
          mechanism: [tem, {name: gaussian, calibration: analytic}]
          sensitivity: [jl]
          mapping: [none, vickrey]
          epsilon: [2]
    """))
    tem = next(c for c in g.cells if c.mechanism == "tem")
    assert tem.mechanism_params == {"beta": 0.001}
    assert tem.sensitivity_params["beta"] == 0.9 and tem.sensitivity_params["fit_on"] == "vocab"
    gauss = next(c for c in g.cells if c.mechanism == "gaussian" and c.mapping == "vickrey")
    assert gauss.mechanism_params["calibration"] == "analytic"
    assert gauss.mechanism_params["C"] == 1.0
    assert gauss.mapping_params == {"t": 0.75}
    assert "mech=gaussian(calibration=analytic)" in gauss.name  # only non-defaults shown


# ------------------------------------------------------------------------- exclude, include


def test_exclude_partial_matching(tmp_path):
    text = BASIC + """
exclude:
  - {mechanism: mvl, mapping: vickrey}          # by names
  - {mechanism: {name: trlaplace, C: 1.0}, epsilon: 100}   # by name + params
  - {model: bow, seed: [1]}                     # list of alternatives
  - {dataset: conventions, sensitivity: unit_norm, epsilon: [1, 10]}
"""
    g = load_grid(write(tmp_path, text))
    cells = [c for c in g.cells if not c.is_baseline]
    assert not any(c.mechanism == "mvl" and c.mapping == "vickrey" for c in cells)
    assert not any(c.mechanism == "trlaplace" and c.epsilon == 100 for c in cells)
    assert any(c.mechanism == "mvl" and c.epsilon == 100 for c in cells)
    assert not any(c.model == "bow" and c.seed == 1 for c in cells)
    assert any(c.model == "bow" and c.seed == 0 for c in cells)
    assert not any(c.dataset == "conventions" and c.sensitivity == "unit_norm" and
                   c.epsilon < 100 for c in cells)
    # the same count from the full product, filtered by hand
    keep = [c for c in load_grid(write(tmp_path, BASIC, "full.yaml")).cells
            if not c.is_baseline
            and not (c.mechanism == "mvl" and c.mapping == "vickrey")
            and not (c.mechanism == "trlaplace" and c.epsilon == 100)
            and not (c.model == "bow" and c.seed == 1)
            and not (c.dataset == "conventions" and c.sensitivity == "unit_norm"
                     and c.epsilon in (1, 10))]
    assert len(cells) == len(keep)
    # a baseline exists only for dataset x model x seed triples that still have cells
    triples = {(c.dataset, c.model, c.seed) for c in g.cells if c.is_baseline}
    assert ("bbc", "bow", 1) not in triples and ("bbc", "bow", 0) in triples
    assert g.warnings == []


def test_exclude_param_mismatch_does_not_match_and_warns(tmp_path):
    text = BASIC + "exclude:\n  - {mechanism: {name: trlaplace, C: 2.0}}\n"
    g = load_grid(write(tmp_path, text))
    assert sum(c.mechanism == "trlaplace" for c in g.cells) == 2 * 2 * 2 * 2 * 3 * 2  # 96
    assert len(g.warnings) == 1 and "exclude[0] matched no cell" in g.warnings[0]


def test_include_adds_cells(tmp_path):
    text = BASIC + """
include:
  - {dataset: bbc, model: lstm, mechanism: truncated_gumbel, sensitivity: none, mapping: none,
     epsilon: 150, seed: 0}
  - {mechanism: tem, mapping: none, epsilon: [2, 3]}   # other axes from `axes`
  - {dataset: rt, model: bow, mechanism: mvl, mapping: nearest, epsilon: 1, seed: 7,
     sensitivity: none}
"""
    g = load_grid(write(tmp_path, text))
    base = 192 + 8
    tg = [c for c in g.cells if c.mechanism == "truncated_gumbel"]
    assert [c.name for c in tg] == [
        "bbc:model=lstm,mech=truncated_gumbel,sens=none,map=none,eps=150,seed=0"]
    assert sum(c.mechanism == "tem" for c in g.cells) == 2 * 2 * 2 * 2 * 2  # ds,model,sens,eps,seed
    rt = [c for c in g.cells if c.dataset == "rt"]
    assert len(rt) == 2 and {c.is_baseline for c in rt} == {True, False}  # + its baseline
    assert len(g.cells) == base + 1 + 32 + 2


def test_include_duplicate_of_product_cell_is_deduplicated(tmp_path):
    text = BASIC + """
include:
  - {dataset: bbc, model: lstm, mechanism: mvl, sensitivity: none, mapping: nearest,
     epsilon: 1.0, seed: 0}
"""
    assert len(load_grid(write(tmp_path, text)).cells) == 192 + 8


# --------------------------------------------------------------------------------- baseline


def test_baseline_cells(tmp_path):
    g = load_grid(write(tmp_path, BASIC))
    base = [c for c in g.cells if c.is_baseline]
    assert len(base) == 8
    assert {(c.dataset, c.model, c.seed) for c in base} == {
        (d, m, s) for d in ("bbc", "conventions") for m in ("lstm", "bow") for s in (0, 1)}
    b = base[0]
    assert b.mechanism == "none" and math.isinf(b.epsilon) and b.mapping == "none"
    assert b.spec()["epsilon"] == "inf"
    json.dumps(b.spec(), allow_nan=False)  # JSON-able, no inf literal
    assert b.name.endswith("mech=none,sens=none,map=none,eps=inf,seed=0")


def test_baseline_can_be_switched_off(tmp_path):
    g = load_grid(write(tmp_path, BASIC + "settings: {baseline: false}\n"))
    assert not any(c.is_baseline for c in g.cells) and len(g.cells) == 192
