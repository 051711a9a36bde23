"""bench migrate: cells written before 0.4.0 (suite version hashed) re-keyed, nothing else."""

from __future__ import annotations

import json

from bench.cli import main
from bench.grid import cell_hash, load_grid
from bench.grid.cell import legacy_cell_hash
from bench.migrate import migrate_results
from bench.results.store import check_cell, write_cell

GRID = """
name: m
axes:
  dataset: [{name: bbc, subsample: 60}]
  model: [bow]
  mechanism: [mvl]
  epsilon: [1, 2]
  seed: [0]
"""

DATA = "d" * 64


def _cells(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(GRID)
    return [c for c in load_grid(path).cells if not c.is_baseline]


def _write_old(results, cell, suite="0.3.0", folder_hash=None):
    """A cell as bench 0.3.0 wrote it: suite_version in spec and metrics, and hashed."""
    h = legacy_cell_hash(cell, DATA, suite)
    spec = cell.spec() | {"hash": h, "name": cell.name, "dataset_hash": DATA,
                          "suite_version": suite}
    metrics = {"runtime": {"total_seconds": 1.0}, "utility": {"macro_f1": 0.25},
               "suite_version": suite}
    folder = results / "cells" / (folder_hash or h)
    if folder_hash:
        spec["hash"] = folder_hash
    write_cell(folder, spec, metrics, provenance={"suite_version": suite, "machine": "old"})
    return folder


def test_old_cells_move_to_the_new_hash_with_their_measurements(tmp_path):
    a, b = _cells(tmp_path)
    results = tmp_path / "results"
    old = _write_old(results, a)
    assert legacy_cell_hash(a, DATA, "0.3.0") != cell_hash(a, DATA)
    report = migrate_results(results)
    new = cell_hash(a, DATA)
    assert report.migrated == [(old.name, new)] and report.left == []
    assert not old.exists() and check_cell(results / "cells" / new) is None
    spec = json.loads((results / "cells" / new / "spec.json").read_text())
    metrics = json.loads((results / "cells" / new / "metrics.json").read_text())
    prov = json.loads((results / "cells" / new / "manifest.json").read_text())["provenance"]
    assert "suite_version" not in spec and spec["hash"] == new
    assert metrics == {"runtime": {"total_seconds": 1.0}, "utility": {"macro_f1": 0.25}}
    assert prov["machine"] == "old" and prov["suite_version"] == "0.3.0"
    assert prov["migrated"]["from"] == old.name and "numeric" not in prov  # nothing invented
    # a second run finds it current; a cell written today is current too
    again = migrate_results(results)
    assert again.migrated == [] and again.current == 1


def test_cells_that_cannot_be_proven_are_left_as_they_are(tmp_path):
    a, b = _cells(tmp_path)
    results = tmp_path / "results"
    wrong = _write_old(results, a, folder_hash="0123456789abcdef")  # spec not its folder's
    damaged = _write_old(results, b)
    (damaged / "metrics.json").write_text("{}")
    report = migrate_results(results)
    assert report.migrated == []
    assert len(report.left) == 2 and wrong.exists() and damaged.exists()
    text = report.text()
    # the hash rule of its claimed suite is the one check_cell applies (issue 48, trial 5)
    assert "with its suite_version '0.3.0', not to its folder's name" in text
    assert "damaged: metrics.json" in text


def test_target_already_present_is_not_overwritten(tmp_path):
    (a, _b) = _cells(tmp_path)
    results = tmp_path / "results"
    old = _write_old(results, a)
    new = cell_hash(a, DATA)
    spec = a.spec() | {"hash": new, "name": a.name, "dataset_hash": DATA}
    write_cell(results / "cells" / new, spec, {"runtime": {}, "utility": {"macro_f1": 0.5}})
    report = migrate_results(results)
    assert report.migrated == [] and old.exists()
    assert f"a sound cell is already at its new hash {new}" in report.left[0]


def test_cli(tmp_path, capsys):
    (a, _b) = _cells(tmp_path)
    results = tmp_path / "results"
    _write_old(results, a)
    assert main(["migrate", "--results", str(results)]) == 0
    assert "1 cell(s) moved to the 0.4.0 hash" in capsys.readouterr().out
    assert main(["migrate", "--results", str(tmp_path / "nowhere")]) == 2
    assert "no results under" in capsys.readouterr().err
