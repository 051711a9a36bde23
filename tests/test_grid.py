"""Tests of bench.grid: expansion, exclude/include/extends, baselines, skips, errors, hashes."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
import textwrap
from pathlib import Path

import pytest

import bench
from bench import grid as G
from bench.grid import (
    Cell,
    GridError,
    cell_hash,
    cli_validate,
    load_grid,
    privatization_hash,
    validate_text,
)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "experiments").glob("*.yaml"))
PATH_ENV = ("BENCH_AGNEWS_PATH", "BENCH_TRUSTPILOT_PATH", "BENCH_SST2_PATH", "BENCH_IMDB_PATH",
            "BENCH_YELP_PATH")


@pytest.fixture(autouse=True)
def _no_dataset_env(monkeypatch):
    for var in PATH_ENV:
        monkeypatch.delenv(var, raising=False)


def write(tmp_path: Path, text: str, name: str = "g.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


BASIC = """
name: basic
axes:
  dataset: [bbc, conventions]
  model: [lstm, bow]
  mechanism: [mvl, {name: trlaplace, C: 1.0}]
  sensitivity: [none, unit_norm]
  mapping: [nearest, vickrey]
  epsilon: [1, 10, 100]
  seed: [0, 1]
"""


def by_name(cells):
    return {c.name: c for c in cells}


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


# ---------------------------------------------------------------------------------- extends


def test_extends_overrides_axes_and_merges_settings(tmp_path):
    write(tmp_path, BASIC + "settings: {vocab_size: 1000, mia: true}\n", "parent.yaml")
    child = write(tmp_path, """
        name: child
        extends: parent.yaml
        axes:
          epsilon: [3]
          dataset: [bbc]
        settings: {mia: false}
    """, "child.yaml")
    g = load_grid(child)
    assert g.name == "child"
    assert {c.epsilon for c in g.cells if not c.is_baseline} == {3.0}
    assert {c.dataset for c in g.cells} == {"bbc"}
    assert {c.model for c in g.cells} == {"lstm", "bow"}  # inherited axis
    assert g.settings["vocab_size"] == 1000 and g.settings["mia"] is False
    assert len(g.cells) == 2 * 2 * 2 * 2 * 1 * 2 + 2 * 2
    assert len(g.files) == 2


def test_extends_name_not_inherited(tmp_path):
    write(tmp_path, BASIC, "parent.yaml")
    child = write(tmp_path, "extends: parent.yaml\n", "mychild.yaml")
    assert load_grid(child).name == "mychild"


def test_extends_cycle_is_an_error(tmp_path):
    write(tmp_path, "extends: b.yaml\n" + BASIC, "a.yaml")
    write(tmp_path, "extends: c.yaml\n", "b.yaml")
    write(tmp_path, "extends: a.yaml\n", "c.yaml")
    with pytest.raises(GridError, match=r"extends: cycle detected: .*a\.yaml -> .*b\.yaml -> "
                                        r".*c\.yaml -> .*a\.yaml"):
        load_grid(tmp_path / "a.yaml")


def test_extends_missing_parent(tmp_path):
    p = write(tmp_path, "extends: nope.yaml\n")
    with pytest.raises(GridError, match=r"g\.yaml: extends: no grid file at .*nope\.yaml"):
        load_grid(p)


def test_error_in_parent_names_the_parent_file(tmp_path):
    write(tmp_path, BASIC.replace("[mvl,", "[mvll,"), "parent.yaml")
    child = write(tmp_path, "extends: parent.yaml\naxes: {epsilon: [1]}\n", "child.yaml")
    with pytest.raises(GridError, match=r"parent\.yaml: axes\.mechanism\[0\]: unknown mechanism "
                                        r"'mvll'; did you mean 'mvl'"):
        load_grid(child)


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


# ------------------------------------------------------------------------------------ skips


def skip_reasons(g):
    return {c.name: r for c, r in g.skipped}


def test_skip_text_only_model_with_vector_output(tmp_path):
    g = load_grid(write(tmp_path, """
        axes:
          dataset: [bbc]
          model: [transformer, lstm]
          mechanism: [mvl]
          mapping: [none, nearest]
          epsilon: [1]
    """))
    r = skip_reasons(g)
    assert list(r) == ["bbc:model=transformer,mech=mvl,sens=none,map=none,eps=1,seed=0"]
    assert "takes text only" in next(iter(r.values())) and "outputs vectors" in next(
        iter(r.values()))
    assert "bbc:model=lstm,mech=mvl,sens=none,map=none,eps=1,seed=0" in by_name(g.cells)


def test_skip_selection_mechanism_with_vector_mapping(tmp_path):
    g = load_grid(write(tmp_path, """
        axes:
          dataset: [bbc]
          model: [bow]
          mechanism: [tem, truncated_gumbel]
          mapping: [none, nearest, vickrey]
          epsilon: [100]
    """))
    r = skip_reasons(g)
    assert len(r) == 4 and len(g.cells) == 3
    assert r["bbc:model=bow,mech=tem,sens=none,map=vickrey,eps=100,seed=0"].startswith(
        "mechanism 'tem' selects output words itself; mapping 'vickrey' does not apply")


def test_skip_mechanism_refusing_epsilon_uses_its_own_message(tmp_path):
    g = load_grid(write(tmp_path, """
        axes:
          dataset: [bbc]
          model: [bow]
          mechanism: [gaussian, {name: gaussian, calibration: analytic}]
          epsilon: [0.5, 5]
    """))
    r = skip_reasons(g)
    assert list(r) == ["bbc:model=bow,mech=gaussian,sens=none,map=nearest,eps=5,seed=0"]
    assert "classic calibration holds only for epsilon <= 1" in r[list(r)[0]]
    assert "bbc:model=bow,mech=gaussian(calibration=analytic),sens=none,map=nearest,eps=5,seed=0" \
        in by_name(g.cells)


def test_skip_dataset_without_path_and_valid_with_path(tmp_path, monkeypatch):
    text = """
        axes:
          dataset: [agnews, bbc]
          model: [bow]
          mechanism: [mvl]
          epsilon: [1]
    """
    g = load_grid(write(tmp_path, text))
    r = skip_reasons(g)
    assert set(r) == {"agnews:model=bow,mech=none,sens=none,map=none,eps=inf,seed=0",
                      "agnews:model=bow,mech=mvl,sens=none,map=nearest,eps=1,seed=0"}
    assert all("needs its data file" in v and "BENCH_AGNEWS_PATH" in v for v in r.values())
    data = tmp_path / "ag.csv"
    data.write_text('"1","t","d"\n')
    monkeypatch.setenv("BENCH_AGNEWS_PATH", str(data))
    assert load_grid(write(tmp_path, text)).skipped == []
    monkeypatch.setenv("BENCH_AGNEWS_PATH", str(tmp_path / "missing.csv"))
    assert all("nothing at" in r for _, r in load_grid(write(tmp_path, text)).skipped)
    monkeypatch.delenv("BENCH_AGNEWS_PATH")
    g = load_grid(write(tmp_path, text.replace("[agnews,", f"[{{name: agnews, path: {data}}},")))
    assert g.skipped == [] and g.cells[0].dataset_config["path"] == str(data)
    assert "path" not in g.cells[0].name


# ---------------------------------------------------------------------------------- errors

GOOD_AXES = {
    "dataset": "[bbc]", "model": "[lstm]", "mechanism": "[mvl]", "sensitivity": "[none]",
    "mapping": "[nearest]", "epsilon": "[1]", "seed": "[0]",
}


def grid_with(**override) -> str:
    axes = {**GOOD_AXES, **override}
    return "axes:\n" + "".join(f"  {k}: {v}\n" for k, v in axes.items() if v is not None)


@pytest.mark.parametrize(
    ("axis", "value", "pattern"),
    [
        ("mechanism", "[mvll]", r"axes\.mechanism\[0\]: unknown mechanism 'mvll'; did you mean "
                                r"'mvl'"),
        ("sensitivity", "[unitnorm]", r"axes\.sensitivity\[0\]: unknown sensitivity approach "
                                      r"'unitnorm'; did you mean 'unit_norm'"),
        ("mapping", "[nearst]", r"axes\.mapping\[0\]: unknown mapping 'nearst'; did you mean "
                                r"'nearest'"),
        ("dataset", "[bbcc]", r"axes\.dataset\[0\]: unknown dataset 'bbcc'; did you mean 'bbc'"),
        ("model", "[lstmm]", r"axes\.model\[0\]: unknown model 'lstmm'; did you mean 'lstm'"),
        ("mechanism", "[{name: mvl, calibrat: true}]",
         r"axes\.mechanism\[0\]: unknown mechanism 'mvl' parameter 'calibrat'; did you mean "
         r"'calibrate'"),
        ("mapping", "[{name: vickrey, tt: 0.5}]",
         r"axes\.mapping\[0\]: unknown mapping 'vickrey' parameter 'tt'; did you mean 't'"),
        ("sensitivity", "[{name: jl, bta: 0.5}]",
         r"axes\.sensitivity\[0\]: unknown sensitivity approach 'jl' parameter 'bta'; did you "
         r"mean 'beta'"),
        ("dataset", "[{name: bbc, entites: [x]}]",
         r"axes\.dataset\[0\]: dataset 'bbc': unknown config key 'entites'; did you mean "
         r"'entities'"),
        ("mechanism", "[none]", r"axes\.mechanism\[0\]: mechanism 'none' is the baseline"),
    ],
)
def test_unknown_names_did_you_mean(tmp_path, axis, value, pattern):
    p = write(tmp_path, grid_with(**{axis: value}))
    with pytest.raises(GridError, match=r"g\.yaml: " + pattern) as e:
        load_grid(p)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (grid_with() + "exlude: []\n", r"exlude: unknown top-level key 'exlude'; did you mean "
                                       r"'exclude'"),
        (grid_with().replace("  epsilon:", "  epsilons:"),
         r"axes\.epsilons: unknown axis 'epsilons'; did you mean 'epsilon'"),
        (grid_with() + "exclude:\n  - {mechansim: mvl}\n",
         r"exclude\[0\]\.mechansim: unknown axis 'mechansim'; did you mean 'mechanism'"),
        (grid_with() + "exclude:\n  - {mechanism: mvk}\n",
         r"exclude\[0\]\.mechanism: unknown mechanism 'mvk'; did you mean 'mvl'"),
        (grid_with() + "settings: {vocab_sise: 10}\n",
         r"settings\.vocab_sise: unknown setting 'vocab_sise'; did you mean 'vocab_size'"),
        (grid_with() + "settings: {metrics: [utilty]}\n",
         r"settings\.metrics: unknown metric group 'utilty'; did you mean 'utility'"),
        (grid_with() + "settings: {models: {lsmt: {}}}\n",
         r"settings\.models\.lsmt: unknown model 'lsmt'; did you mean 'lstm'"),
        (grid_with() + "settings: {embedding: glove-6b-5d}\n",
         r"settings\.embedding: unknown embedding 'glove-6b-5d'; did you mean 'glove-6b-50d'"),
    ],
)
def test_unknown_keys_did_you_mean(tmp_path, text, pattern):
    with pytest.raises(GridError, match=r"g\.yaml: " + pattern):
        load_grid(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (grid_with(epsilon="[0]"), r"axes\.epsilon\[0\]: epsilon must be > 0, got 0"),
        (grid_with(epsilon="[1, -2]"), r"axes\.epsilon\[1\]: epsilon must be > 0, got -2"),
        (grid_with(epsilon="[abc]"), r"axes\.epsilon\[0\]: epsilon must be a number > 0"),
        (grid_with(epsilon="[true]"), r"axes\.epsilon\[0\]: epsilon must be a number > 0"),
        (grid_with(epsilon="[.inf]"), r"axes\.epsilon\[0\]: epsilon must be finite"),
        (grid_with(epsilon="1"), r"axes\.epsilon: must be a list of values"),
        (grid_with(seed="[-1]"), r"axes\.seed\[0\]: seed must be an integer >= 0"),
        (grid_with(seed="[0.5]"), r"axes\.seed\[0\]: seed must be an integer >= 0"),
        (grid_with(model="[]"), r"axes\.model: empty axis"),
        (grid_with(mechanism="[3]"), r"axes\.mechanism\[0\]: must be a name or a mapping"),
        (grid_with(mechanism="[{C: 1}]"), r"axes\.mechanism\[0\]: must be a name or a mapping"),
        (grid_with(mechanism=None), r"axes\.mechanism: missing required axis 'mechanism'"),
        ("name: x\n", r"axes: missing required key 'axes'"),
        ("", r"the grid file is empty"),
        ("- a\n- b\n", r"a grid file must be a mapping"),
        ("axes: [1]\n", r"axes: must be a mapping"),
        (grid_with() + "name: [x]\n", r"name: must be a non-empty string"),
        (grid_with() + "exclude: {mechanism: mvl}\n", r"exclude: must be a list"),
        (grid_with() + "include:\n  - 3\n", r"include\[0\]: must be a non-empty mapping"),
        (grid_with() + "settings: [1]\n", r"settings: must be a mapping"),
        (grid_with() + "settings: {mia: yes-please}\n", r"settings\.mia: must be true or false"),
        (grid_with() + "settings: {vocab_size: 1}\n", r"settings\.vocab_size: must be an integer"),
        (grid_with() + "settings: {oov: drop}\n", r"settings\.oov: must be one of unk, keep"),
        (grid_with() + "include:\n  - {epsilon: -1}\n", r"include\[0\]\.epsilon: epsilon must be"),
        (grid_with(mechanism="[{name: trlaplace, C: -1}]"),
         r"axes\.mechanism\[0\]: trlaplace: C \(clipping norm\) must be a finite number > 0.*"
         r"refused at every epsilon"),
        (grid_with(mapping="[{name: vickrey, t: 1.5}]"),
         r"axes\.mapping\[0\]: vickrey: t must be in \[0, 1\)"),
        ("axes:\n  epsilon: [1\n", r"line \d+, column \d+: invalid YAML"),
        (grid_with() + "axes: {}\n", r"line 9, column 1: invalid YAML: duplicate key 'axes'"),
    ],
)
def test_malformed_grid_errors_name_file_and_key(tmp_path, text, pattern):
    with pytest.raises(GridError, match=r"g\.yaml:? " + pattern):
        load_grid(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(GridError, match=r"nope\.yaml: grid file not found"):
        load_grid(tmp_path / "nope.yaml")


def test_model_hyperparameters_from_settings(tmp_path):
    g = load_grid(write(tmp_path, """
        axes:
          dataset: [bbc]
          model: [lstm, {name: bow, C: 2}, transformer]
          mechanism: [tem]
          epsilon: [1]
        settings:
          models:
            lstm: {hidden_size: 64}
            transformer: {epochs: 1}
    """))
    lstm = [c for c in g.cells if c.model == "lstm"]
    bow = [c for c in g.cells if c.model == "bow"]
    assert all(c.model_params == {"hidden_size": 64} for c in lstm)
    assert all(c.model_params == {"C": 2} for c in bow)
    assert all(c.settings["model_defaults"] == {"hidden_size": 64} for c in lstm)
    assert "model=lstm," in lstm[1].name and "model=bow(C=2)," in bow[1].name
    # another model's hyperparameters do not change this model's cells
    g2 = load_grid(write(tmp_path, """
        axes:
          dataset: [bbc]
          model: [lstm]
          mechanism: [tem]
          epsilon: [1]
        settings:
          models:
            lstm: {hidden_size: 64}
            transformer: {epochs: 5}
    """, "g2.yaml"))
    assert [c.hash for c in g2.cells] == [c.hash for c in lstm]


def test_works_without_models_package(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "bench.models", None)  # import raises ImportError
    G._model_catalog.cache_clear()
    try:
        assert {n: i.accepts for n, i in G.model_catalog().items()} == G.FALLBACK_MODELS
        g = load_grid(write(tmp_path, grid_with(model="[transformer]", mapping="[none]")))
        assert len(g.skipped) == 1 and "takes text only" in g.skipped[0][1]
        with pytest.raises(GridError, match="did you mean 'transformer'"):
            load_grid(write(tmp_path, grid_with(model="[transformr]")))
    finally:
        G._model_catalog.cache_clear()


# ----------------------------------------------------------------------------------- hashes


def one_cell(tmp_path, name="h.yaml", **override):
    g = load_grid(write(tmp_path, grid_with(**override), name))
    return next(c for c in g.cells if not c.is_baseline)


def test_hash_stable_for_same_spec(tmp_path):
    a = one_cell(tmp_path, "a.yaml", mechanism="[tem]", mapping="[none]")
    b = one_cell(tmp_path, "b.yaml", mechanism="[{name: tem, beta: 0.001}]", mapping="[none]",
                 epsilon="[1.0]")
    assert a == b and a.hash == b.hash and a.privatization_key == b.privatization_key
    assert len(a.hash) == 16 and int(a.hash, 16) >= 0
    assert a.hash == cell_hash(a) == cell_hash(a, None)
    # the YAML key order does not matter
    text = "axes:\n" + "".join(f"  {k}: {v}\n" for k, v in reversed(list(GOOD_AXES.items())))
    c = next(x for x in load_grid(write(tmp_path, text, "c.yaml")).cells if not x.is_baseline)
    assert c.hash == one_cell(tmp_path, "d.yaml").hash
    # rebuilding from the stored spec gives the same identity
    spec = json.loads(json.dumps(a.spec()))
    assert Cell.from_spec(spec) == a and Cell.from_spec(spec).hash == a.hash


@pytest.mark.parametrize(
    "override",
    [
        {"epsilon": "[2]"},
        {"seed": "[1]"},
        {"mechanism": "[{name: mvl, calibrate: true}]"},
        {"mechanism": "[trlaplace]"},
        {"sensitivity": "[unit_norm]"},
        {"sensitivity": "[{name: unit_norm, fit_on: train}]"},
        {"mapping": "[vickrey]"},
        {"mapping": "[{name: vickrey, t: 0.5}]"},
        {"model": "[bow]"},
        {"dataset": "[conventions]"},
        {"dataset": "[{name: bbc, subsample: 0.5}]"},
    ],
)
def test_hash_changes_with_any_axis(tmp_path, override):
    ref = one_cell(tmp_path, "ref.yaml")
    if "mapping" in override and "vickrey" in override["mapping"]:
        ref = one_cell(tmp_path, "ref.yaml", mapping="[vickrey]")
        if override["mapping"] == "[vickrey]":
            override = {"mapping": "[nearest]"}
    other = one_cell(tmp_path, "other.yaml", **override)
    assert other.hash != ref.hash
    assert cell_hash(other, "d" * 64) != cell_hash(ref, "d" * 64)


def test_hash_changes_with_settings_dataset_hash_and_version(tmp_path, monkeypatch):
    ref = one_cell(tmp_path)
    g = load_grid(write(tmp_path, grid_with() + "settings: {mia: true}\n", "s.yaml"))
    mia = next(c for c in g.cells if not c.is_baseline)
    assert mia.hash != ref.hash
    assert mia.privatization_key == ref.privatization_key  # model/metric settings only
    assert cell_hash(ref, "a" * 64) != cell_hash(ref, "b" * 64) != ref.hash
    h = ref.hash
    monkeypatch.setattr(bench, "__version__", "999.0")
    assert ref.hash != h
    changed = dataclasses.replace(ref, versions=G.freeze({**ref.versions, "mechanism": "2"}))
    monkeypatch.undo()
    assert changed.hash != h and ref.hash == h


def test_rewrite_metric_versions_are_part_of_the_hash(tmp_path, monkeypatch):
    """Cells that compute the rewrite metrics carry their versions (and a bump re-keys them);
    cells that do not compute them keep their hash."""
    from bench.metrics import METRICS

    plain = one_cell(tmp_path)
    assert "metrics" not in plain.spec()
    g = load_grid(write(tmp_path, grid_with() + "settings: {rewrite_metrics: true}\n", "r.yaml"))
    rw = next(c for c in g.cells if not c.is_baseline)
    base = next(c for c in g.cells if c.is_baseline)
    assert rw.spec()["metrics"] == "bertscore=2,bleu=1,n_w=1,rouge1=1"
    assert G.Cell.from_spec(rw.spec()) == rw
    assert "metrics" not in base.spec()  # baselines compute no rewrite metrics
    info = METRICS.get("bertscore")
    monkeypatch.setitem(METRICS._entries, "bertscore", dataclasses.replace(info, version="3"))
    g2 = load_grid(write(tmp_path, grid_with() + "settings: {rewrite_metrics: true}\n", "r.yaml"))
    assert next(c for c in g2.cells if not c.is_baseline).hash != rw.hash
    assert one_cell(tmp_path).hash == plain.hash


def test_hash_ignores_dataset_path(tmp_path):
    f1, f2 = tmp_path / "a.csv", tmp_path / "b.csv"
    for f in (f1, f2):
        f.write_text('"1","t","d"\n')
    a = one_cell(tmp_path, "a.yaml", dataset=f"[{{name: agnews, path: {f1}}}]")
    b = one_cell(tmp_path, "b.yaml", dataset=f"[{{name: agnews, path: {f2}}}]")
    assert a.hash == b.hash  # the content hash passed by the runner tells the files apart
    assert cell_hash(a, "x" * 64) != cell_hash(b, "y" * 64)


def test_privatization_key_shared_between_models(tmp_path):
    g = load_grid(write(tmp_path, grid_with(model="[lstm, bow]", epsilon="[1, 2]")))
    priv = [c for c in g.cells if not c.is_baseline]
    keys = {(c.model, c.epsilon): c.privatization_key for c in priv}
    assert keys[("lstm", 1.0)] == keys[("bow", 1.0)]
    assert keys[("lstm", 1.0)] != keys[("lstm", 2.0)]
    assert priv[0].hash != priv[2].hash  # lstm vs bow at the same eps
    assert privatization_hash(priv[0], "x") != priv[0].privatization_key
    g2 = load_grid(write(tmp_path, grid_with() + "settings: {vocab_size: 1000}\n", "v.yaml"))
    assert next(c for c in g2.cells if not c.is_baseline).privatization_key != keys[("lstm", 1.0)]


def test_cell_is_frozen(tmp_path):
    c = one_cell(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.mechanism_params["calibrate"] = True
    assert hash(c) == hash(Cell.from_spec(c.spec()))


# --------------------------------------------------------------------------- validate / CLI


def test_validate_text_and_cli(tmp_path):
    p = write(tmp_path, grid_with(mechanism="[mvl, tem]", mapping="[nearest]"))
    text, code = cli_validate(p)
    assert code == 0
    assert "2 cells (1 baseline), 1 skipped" in text
    assert "mechanism 'tem' selects output words itself" in text
    assert "bbc:model=lstm,mech=tem,sens=none,map=nearest,eps=1,seed=0" in text
    assert validate_text(p) == text
    assert "cells:" in validate_text(p, verbose=True)
    text, code = cli_validate(write(tmp_path, grid_with(mechanism="[mvll]"), "bad.yaml"))
    assert code == 2
    assert "bad.yaml: axes.mechanism[0]: unknown mechanism 'mvll'; did you mean 'mvl'" in text


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
    assert counts["quickstart"] == (27, 0)
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
