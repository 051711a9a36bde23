"""Resource limits (issue 24): `bench run` refuses a grid whose parameters would make a cell
run without bound (``epochs: 1e9``), with one error naming the file, the key, the value and
the bound; every shipped grid lies within them."""

from __future__ import annotations

import json
import re

import pytest

from bench.cli import main
from bench.grid import GridError, load_grid
from bench.grid.limits import LIMITS, check_value, limits_table

from .helpers import ROOT, SHIPPED, grid_with, write


@pytest.mark.parametrize("value, shown", [("1e9", "got '1e9'"),  # YAML 1.1: a string
                                          ("1000000000", "= 1000000000 is above its limit")])
def test_bench_run_refuses_epochs_1e9(tmp_path, capsys, value, shown):
    grid = write(tmp_path, grid_with(model=f"[{{name: lstm, epochs: {value}}}]"))
    results = tmp_path / "results"
    assert main(["run", str(grid), "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{grid}: axes.model[0]: model 'lstm' parameter epochs" in err
    assert shown in err and "1,000" in err
    assert not results.exists() or not any(results.rglob("*"))


@pytest.mark.parametrize("axes, settings, key, message", [
    ({}, "models: {lstm: {batch_size: 100000}}", "settings.models.lstm",
     "model 'lstm' parameter batch_size = 100000 is above its limit 8,192"),
    ({"model": "[{name: lstm, hidden_size: 5000}]"}, "", "axes.model[0]",
     "hidden_size = 5000 is above its limit 4,096"),
    ({"model": "[{name: lstm, max_len: 1000000}]"}, "", "axes.model[0]",
     "max_len = 1000000 is above its limit 100,000"),
    ({"model": "[{name: lstm, patience: 2.5}]"}, "", "axes.model[0]",
     "patience must be an integer from 1 to 1,000, got 2.5"),
    ({"model": "[{name: bow, max_iter: 10000000}]"}, "", "axes.model[0]",
     "model 'bow' parameter max_iter = 10000000 is above its limit 100,000"),
    ({"model": "[{name: transformer, max_length: 4096}]"}, "", "axes.model[0]",
     "max_length = 4096 is above its limit 512"),
    ({"mechanism": "[{name: custext, K: 100000}]"}, "", "axes.mechanism[0]",
     "mechanism 'custext' parameter K = 100000 is above its limit 4,096"),
    ({"sensitivity": "[{name: jl, m: 100000}]"}, "", "axes.sensitivity[0]",
     "sensitivity 'jl' parameter m = 100000 is above its limit 4,096"),
    ({"sensitivity": "[{name: jl, beta: 0.01}]"}, "", "axes.sensitivity[0]",
     "(from beta and delta at a vocabulary of 50,001 words) is above its limit 4,096"),
    ({"dataset": "[{name: bbc, subsample: 1000000000}]"}, "", "axes.dataset[0]",
     "dataset 'bbc' parameter subsample = 1000000000 is above its limit 100,000,000"),
    ({"dataset": "[{name: bbc, max_tokens: 100000000}]"}, "", "axes.dataset[0]",
     "max_tokens = 100000000 is above its limit 10,000,000"),
    ({"model": "[{name: lstm, epochs: 0}]"}, "", "axes.model[0]",  # models are not built here
     "epochs must be an integer from 1 to 1,000, got 0"),
    ({}, "vocab_size: 100000000", "settings.vocab_size",
     "setting vocab_size = 100000000 is above its limit 2,000,000"),
    ({}, "rewrite_max_docs: '20'", "settings.rewrite_max_docs",
     "setting rewrite_max_docs must be an integer from 1 to 100,000,000 or null, got '20'"),
])
def test_each_limit_is_one_error_naming_file_key_value_and_bound(tmp_path, axes, settings, key,
                                                                   message):
    text = grid_with(**axes) + (f"settings:\n  {settings}\n" if settings else "")
    path = write(tmp_path, text)
    with pytest.raises(GridError) as e:
        load_grid(path)
    assert str(e.value).startswith(f"{path}: {key}: "), str(e.value)
    assert message in str(e.value)


def test_the_autoencoder_rewriter_is_limited(tmp_path):
    path = write(tmp_path, grid_with(mapping="[none]", rewriter="[{name: autoencoder, "
                                     "epochs: 100000}]", dataset="[{name: rt, public: 100}]"))
    with pytest.raises(GridError, match=r"axes\.rewriter\[0\]: rewriter 'autoencoder' "
                                        r"parameter epochs = 100000 is above its limit 1,000"):
        load_grid(path)


def test_values_at_the_bounds_and_their_meanings_are_accepted(tmp_path):
    g = load_grid(write(tmp_path, grid_with(
        dataset="[{name: bbc, subsample: 0.5, max_tokens: null}]",
        model="[{name: lstm, epochs: 1000, max_len: null, num_threads: null}]",
        sensitivity="[{name: jl, m: 4096}]")))
    assert g.cells
    assert check_value("subsample", 0.5, LIMITS[("dataset", "*")]["subsample"]) is None
    assert check_value("epochs", True, LIMITS[("model", "lstm")]["epochs"])  # not a count


def test_exclude_patterns_are_not_limited(tmp_path):
    """A pattern removes cells, it runs nothing."""
    g = load_grid(write(tmp_path, grid_with() + "exclude:\n  - {model: {name: lstm, "
                                                "epochs: 100000}}\n"))
    assert g.cells and g.warnings  # matched nothing, refused nothing


def test_shipped_grids_and_reference_specs_lie_within_the_limits():
    """`bench run` on each shipped grid applies the limits; every committed reference spec
    passes the same checks (tests/grid/test_stored.py: the stored-spec check)."""
    from bench.grid.stored import spec_refusal

    for path in SHIPPED:
        load_grid(path)  # raises on a limit
    specs = sorted(ROOT.glob("results/reference/*/cells/*/spec.json"))
    assert len(specs) > 600
    refused = {p.parent.name: spec_refusal(json.loads(p.read_text())) for p in specs}
    assert {h: r for h, r in refused.items() if r} == {}


def test_docs_list_every_limit():
    doc = (ROOT / "docs" / "grids.md").read_text(encoding="utf-8")
    section = doc.split("### Resource limits")[1].split("\n## ")[0]
    rows = {tuple(c.strip().strip("`") for c in line.strip("|").split("|"))
            for line in section.splitlines() if line.startswith("| ")}
    for comp, param, allowed, reason in limits_table():
        assert (comp, param, allowed, reason) in rows, (comp, param)
    assert len([r for r in rows if not re.match(r"-+$", r[0]) and r[0] != "component"]) == \
        len(limits_table())
