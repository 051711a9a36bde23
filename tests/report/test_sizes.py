"""The dataset-size curves (bench.report.sizes): families of configurations that differ only in
``train_subsample``, their values against the size, and the report files."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest

from bench.analysis import group_cells, load_results
from bench.report import build_report
from bench.report.sizes import SIZES_CSV, size_families, size_points, write_size_curves

from .make_fixtures import _metrics, _spec

# (mechanism, ε, size) -> (utility per seed, privacy per seed); the baseline's utility grows
# with the size, mvl's grows faster, so the anchored trade-off changes order with the size
VALUES = {
    ("none", "inf", 100): ((0.60, 0.62), (0.10, 0.12)),
    ("none", "inf", 400): ((0.80, 0.82), (0.10, 0.12)),
    ("mvl", 1.0, 100): ((0.30, 0.32), (0.60, 0.62)),
    ("mvl", 1.0, 400): ((0.70, 0.74), (0.50, 0.52)),
    ("tem", 1.0, 100): ((0.50, 0.52), (0.40, 0.42)),
    ("tem", 1.0, 400): ((0.60, 0.62), (0.40, 0.42)),
}


def _cell(mech: str, eps: float | str, size: int | None, seed: int, u: float, p: float,
          other: dict | None = None) -> tuple[dict, dict]:
    spec = _spec(mech, eps, seed, "none" if mech in ("none", "tem") else "nearest")
    config = dict(other or {}, **({"train_subsample": size} if size is not None else {}))
    spec["dataset"] = {**spec["dataset"], "config": config}
    spec["name"] += f",size={size},{json.dumps(other, sort_keys=True)}"
    spec["hash"] = hashlib.sha256(spec["name"].encode()).hexdigest()[:16]
    return spec, _metrics(spec, u, p)


def _write(root: Path, cells: list[tuple[dict, dict]]) -> Path:
    for spec, metrics in cells:
        folder = root / "cells" / spec["hash"]
        folder.mkdir(parents=True)
        for name, obj in (("spec.json", spec), ("metrics.json", metrics)):
            (folder / name).write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")
    return root


def _size_cells(other: dict | None = None) -> list[tuple[dict, dict]]:
    return [_cell(mech, eps, size, seed, us[seed], ps[seed], other)
            for (mech, eps, size), (us, ps) in VALUES.items() for seed in (0, 1)]


@pytest.fixture()
def size_results(tmp_path: Path) -> Path:
    return _write(tmp_path / "size_results", _size_cells())


def test_a_family_holds_the_configurations_that_differ_only_in_the_size(tmp_path) -> None:
    cells = _size_cells() + _size_cells({"max_tokens": 50})   # two families
    cells.append(_cell("mvl", 1.0, None, 0, 0.5, 0.5))        # no size: in no family
    groups, _ = group_cells(load_results(_write(tmp_path / "r", cells)).cells)
    fams = size_families(groups)
    assert len(fams) == 2
    for label, model, lines in fams:
        assert (label, model) == ("bbc", "lstm")
        assert set(lines) == {"baseline", "mvl · sens=none · map=nearest · ε=1",
                              "tem · sens=none · map=none · ε=1"}
        assert all(sorted(by) == [100, 400] for by in lines.values())


def test_one_size_or_mixed_kinds_make_no_family(tmp_path) -> None:
    one = [c for c in _size_cells() if c[0]["dataset"]["config"]["train_subsample"] == 100]
    groups, _ = group_cells(load_results(_write(tmp_path / "a", one)).cells)
    assert size_families(groups) == []
    mixed = one + [_cell(m, e, 0.5, s, us[s], ps[s]) for (m, e, size), (us, ps)
                   in VALUES.items() if size == 400 for s in (0, 1)]
    groups, _ = group_cells(load_results(_write(tmp_path / "b", mixed)).cells)
    assert size_families(groups) == []   # a count and a fraction cannot share an axis
    assert write_size_curves(groups, tmp_path / "plots") == []


def test_points_are_the_seed_means_and_the_anchored_tradeoff_changes_order(size_results) -> None:
    groups, _ = group_cells(load_results(size_results).cells)
    rows = {(r["line"], r["train_subsample"]): r for r in size_points(groups)}
    assert float(rows[("baseline", "400")]["utility"]) == pytest.approx(0.81)
    assert float(rows[("mvl · sens=none · map=nearest · ε=1", "100")]["privacy"]) == (
        pytest.approx(0.61))
    assert rows[("baseline", "100")]["anchored_tradeoff"] == ""   # the baseline has none
    mvl = "mvl · sens=none · map=nearest · ε=1"
    tem = "tem · sens=none · map=none · ε=1"

    def t(line: str, size: str) -> float:
        return float(rows[(line, size)]["anchored_tradeoff"])
    # small data: tem ahead (mvl's utility near chance); large data: mvl ahead
    assert t(tem, "100") > t(mvl, "100") and t(mvl, "400") > t(tem, "400")
    assert all(r["attribute"] == "entities" and r["n_seeds"] == "2" for r in rows.values())


def test_the_report_writes_the_size_plot_and_csv_only_for_a_size_grid(size_results, results,
                                                                       tmp_path) -> None:
    build_report(size_results, tmp_path / "rep")
    png = tmp_path / "rep" / "plots" / "sizes_bbc_lstm.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(io.StringIO((tmp_path / "rep" / SIZES_CSV).read_text())))
    assert len(rows) == 6
    assert "plots/sizes_bbc_lstm.png" in (tmp_path / "rep" / "index.md").read_text()
    build_report(size_results, tmp_path / "rep2")                     # deterministic bytes
    assert (tmp_path / "rep2" / "plots" / "sizes_bbc_lstm.png").read_bytes() == png.read_bytes()
    build_report(results, tmp_path / "plain")                         # no size axis: nothing
    assert not (tmp_path / "plain" / SIZES_CSV).exists()
    assert not list((tmp_path / "plain" / "plots").glob("sizes_*"))


def test_the_figure_has_utility_then_privacy_and_tradeoff_per_attribute(size_results) -> None:
    from bench.analysis.privacy import baseline_index
    from bench.report.sizes import size_figure

    groups, _ = group_cells(load_results(size_results).cells)
    (label, model, lines), = size_families(groups)
    fig = size_figure(label, model, lines, baseline_index(r for g in groups for r in g.records))
    fig.canvas.draw()
    assert [ax.get_ylabel().split(" (")[0] for ax in fig.axes] == [
        "utility", "empirical privacy", "anchored trade-off R·G"]
    assert fig.axes[0].get_xlabel() == "training documents (train_subsample)"
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["100", "400"]
