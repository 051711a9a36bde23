"""``bench measure``: a grid's new measures added to existing cells without recomputing them,
equal to what a full run computes, and only where a source cell exists."""

from __future__ import annotations

import json

import pytest

from bench.cli import main
from bench.results.compare import comparable, differences
from bench.run.augment import add_measures
from bench.run.runner import run_grid
from tests.run.helpers import BOW_MIA_GRID


def _cells(results):
    out = {}
    for f in results.glob("cells/*/metrics.json"):
        out[f.parent.name] = (json.loads(f.read_text()),
                              json.loads((f.parent / "manifest.json").read_text()))
    return out


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("augment")
    grids = {}
    for name, extra in (("none", ""), ("some", "measures: [linkage]"),
                        ("all", "measures: [s_w, linkage, mia_low_fpr]")):
        grids[name] = base / f"{name}.yaml"
        grids[name].write_text(BOW_MIA_GRID.format(name="augment", extra=extra))
    derived = base / "derived"
    run_grid(grids["none"], results=derived, mlflow=False)  # cells without measures
    assert main(["measure", str(grids["some"]), "--results", str(derived)]) == 0
    first = add_measures(grids["all"], derived)  # from the cells with linkage
    again = add_measures(grids["all"], derived)
    full = base / "full"
    summary = run_grid(grids["all"], results=full, mlflow=False)
    return grids, derived, full, first, again, summary


def test_derived_cells_equal_a_full_run(folders):
    grids, derived, full, first, *_ = folders
    assert len(first.derived) == 2 and not first.failed and not first.no_source
    got, want = _cells(derived), _cells(full)
    assert set(want) <= set(got)
    for h, (metrics, _) in want.items():
        assert differences(comparable(metrics), comparable(got[h][0])) == [], h


def test_the_provenance_names_the_source_and_what_was_added(folders):
    _, derived, _, first, *_ = folders
    cells = _cells(derived)
    for h, src, added in first.derived:
        prov = cells[h][1]["provenance"]["derived_from"]
        assert prov["cell"] == src and prov["measures_added"] == added
        if "mech=none" not in cells[h][0]["cell"]:  # the source already had linkage
            assert "linkage" in cells[src][0]["measures"] and "linkage" not in added


def test_each_measure_records_its_seconds_and_the_summaries_add_them(folders):
    """Every measure record carries ``seconds`` (not compared by a rerun); ``bench run`` and
    ``bench measure`` print them summed per measure."""
    _, _, full, first, _, summary = folders
    for metrics, _ in _cells(full).values():
        for name, rec in metrics.get("measures", {}).items():
            assert rec["seconds"] >= 0 and "seconds" not in comparable(rec), name
    assert set(summary.measures) == {"s_w", "linkage", "mia_low_fpr"}
    assert "measures, summed over the cells: " in summary.text()
    added = {n for _, _, names in first.derived for n in names}
    assert set(first.measures) == added and all(v > 0 for v in first.measures.values())
    assert "measures added, summed over the cells: " in first.text()


def test_with_two_jobs_the_workers_derive_what_a_full_run_computes(folders, tmp_path):
    """``bench measure --jobs 2``: the cells are derived in two worker processes, each once,
    and equal the full run's (run times aside)."""
    import shutil

    grids, derived, full, first, *_ = folders
    work = tmp_path / "parallel"
    shutil.copytree(derived, work)
    for h, _, _ in first.derived:  # the "all" grid's cells go; their sources stay
        shutil.rmtree(work / "cells" / h)
    out = add_measures(grids["all"], work, jobs=2)
    assert sorted(h for h, _, _ in out.derived) == sorted(h for h, _, _ in first.derived)
    assert out.failed == [] and out.present == 0 and out.no_source == []
    got, want = _cells(work), _cells(full)
    for h, (metrics, _) in want.items():
        assert differences(comparable(metrics), comparable(got[h][0])) == [], h
    assert {p for p in (work / "cells").iterdir() if p.suffix == ".lock"} == set()
    assert main(["measure", str(grids["all"]), "--results", str(work), "--jobs", "0"]) == 2


def test_a_second_run_finds_everything_present(folders):
    *_, again, _ = folders
    assert again.derived == [] and again.present == 2 and again.failed == []


def test_a_cell_without_a_source_is_left_to_bench_run(folders, tmp_path):
    grids, *_ = folders
    out = add_measures(grids["all"], tmp_path / "empty")
    assert out.derived == [] and len(out.no_source) == 2
    assert "2 without a source" in out.text()


def test_an_outdated_measure_is_recomputed_from_its_source(folders, tmp_path, monkeypatch):
    """Cells holding a measure at an older version are sources too: the measure is recomputed
    at its current version, the rest kept, and the result equals a full run."""
    import dataclasses

    from bench.measures import MEASURES, measure

    grids, _, full, *_ = folders
    old = tmp_path / "old"
    with monkeypatch.context() as mp:  # linkage at a version "0" that no longer exists
        mp.setitem(MEASURES._entries, "linkage", dataclasses.replace(measure("linkage"),
                                                                     version="0"))
        mp.setattr(MEASURES, "_lazy", MEASURES._lazy - {"linkage"})
        run_grid(grids["some"], results=old, mlflow=False)
    before = _cells(old)
    assert [m["measures"]["linkage"]["version"] for m, _ in before.values()
            if "mech=none" not in m["cell"]] == ["0"]
    out = add_measures(grids["all"], old)
    assert len(out.derived) == 2 and not out.failed and not out.no_source
    got, want = _cells(old), _cells(full)
    for h, src, added in out.derived:
        if "mech=none" not in got[h][0]["cell"]:
            assert src in before and sorted(added) == ["linkage", "mia_low_fpr", "s_w"]
    for h, (metrics, _) in want.items():
        assert differences(comparable(metrics), comparable(got[h][0])) == [], h
