"""Validation: skip reasons, unknown names with did-you-mean, model hyperparameters."""

from __future__ import annotations

import sys

import pytest

from bench import grid as G
from bench.grid import (
    GridError,
    load_grid,
)

from .helpers import (
    by_name,
    grid_with,
    skip_reasons,
    write,
)

# ------------------------------------------------------------------------------------ skips


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
    # a file that is named but missing is an error, never a skip (nor a reuse)
    with pytest.raises(GridError, match=r"axes\.dataset\[0\]: dataset 'agnews': nothing at "
                                        r".*missing\.csv \(set by BENCH_AGNEWS_PATH"):
        load_grid(write(tmp_path, text))
    monkeypatch.delenv("BENCH_AGNEWS_PATH")
    g = load_grid(write(tmp_path, text.replace("[agnews,", f"[{{name: agnews, path: {data}}},")))
    assert g.skipped == [] and g.cells[0].dataset_config["path"] == str(data)
    assert "path" not in g.cells[0].name and "file=ag.csv" in g.cells[0].name
    missing = text.replace("[agnews,", f"[{{name: agnews, path: {tmp_path / 'gone.csv'}}},")
    with pytest.raises(GridError, match=r"nothing at .*gone\.csv \(set by path: in the grid\)"):
        load_grid(write(tmp_path, missing))


# ---------------------------------------------------------------------------------- errors


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
    G.components._model_catalog.cache_clear()
    try:
        assert {n: i.accepts for n, i in G.model_catalog().items()} == G.FALLBACK_MODELS
        g = load_grid(write(tmp_path, grid_with(model="[transformer]", mapping="[none]")))
        assert len(g.skipped) == 1 and "takes text only" in g.skipped[0][1]
        with pytest.raises(GridError, match="did you mean 'transformer'"):
            load_grid(write(tmp_path, grid_with(model="[transformr]")))
    finally:
        G.components._model_catalog.cache_clear()
