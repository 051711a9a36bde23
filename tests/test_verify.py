"""`bench verify`: every kind of damage to a results folder and its MLflow mirror is reported,
and `--repair` / `--seal` bring the folder back to the state a clean run leaves."""

import json
import os
import time
from pathlib import Path

import pytest

from bench.cli import main
from bench.reference import comparable
from bench.results.mirror import Tracker, default_uri
from bench.results.store import MANIFEST
from bench.run.runner import run_grid
from bench.verify import verify_results

GRID = """
name: tinyverify
axes:
  dataset: [{name: bbc, subsample: 80}]
  model: [bow]
  mechanism: [mvl]
  epsilon: [10, 20]
  seed: [0]
settings:
  vocab_size: 2000
  adversaries: [lexical]
"""


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    """A finished run (3 cells, mirrored in MLflow) and its metrics by cell hash."""
    root = tmp_path_factory.mktemp("verify")
    grid = root / "g.yaml"
    grid.write_text(GRID)
    results = root / "results"
    summary = run_grid(grid, results=results, jobs=1)
    assert summary.count("done") == 3
    return results, {r.hash: r for r in summary.results}


def _copy(clean_run, tmp_path):
    import shutil

    results, cells = clean_run
    dst = tmp_path / "results"
    shutil.copytree(results, dst)
    return dst, cells


def test_clean_run_verifies(clean_run, capsys):
    results, _ = clean_run
    report = verify_results(results)
    assert report.ok and len(report.done) == 3 and report.mlflow.runs == 3, report.text()
    assert main(["verify", "--results", str(results)]) == 0
    assert "OK" in capsys.readouterr().out


def test_every_kind_of_damage_is_reported_and_repaired(clean_run, tmp_path, capsys):
    results, cells = _copy(clean_run, tmp_path)
    base, a, b = sorted(cells, key=lambda h: (cells[h].name.split("eps=")[1], h))
    names = {h: cells[h].name for h in cells}
    before = {h: json.loads((results / "cells" / h / "metrics.json").read_text())
              for h in cells}
    # damage: a truncated baseline, a cell without its manifest, a killed writer's temp
    # folder, one run deleted from MLflow, one cell logged twice
    f = results / "cells" / base / "metrics.json"
    f.write_bytes(f.read_bytes()[:50])
    (results / "cells" / a / MANIFEST).unlink()
    stray = results / "cells" / f".{b}.x1y2"
    stray.mkdir()
    os.utime(stray, (time.time() - 120, time.time() - 120))  # left by a writer killed 2 min ago
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=default_uri(results))
    exp = client.get_experiment_by_name("bench")
    runs = client.search_runs([exp.experiment_id], "tags.`bench.kind` = 'cell'")
    victim = next(r for r in runs if r.data.tags["bench.cell_hash"] == b)
    client.delete_run(victim.info.run_id)
    t = Tracker(default_uri(results), "duplicate", results)
    t.logged.clear()
    spec = json.loads((results / "cells" / a / "spec.json").read_text())
    assert t.log_cell(a, spec, before[a])  # a second run for a logged cell
    t.finish({})

    report = verify_results(results)
    assert not report.ok
    assert list(report.damaged) == [base] and "bytes" in report.damaged[base]
    assert report.unsealed == [a] and report.stray == [f".{b}.x1y2"]
    assert report.mlflow.missing == [b] and list(report.mlflow.duplicated) == [a]
    assert len(report.mlflow.duplicated[a]) == 2
    assert main(["verify", "--results", str(results)]) == 1
    assert "damaged" in capsys.readouterr().out

    fixed = verify_results(results, repair=True, seal=True)
    assert fixed.ok, fixed.text()
    assert any(line.startswith(f"recomputed {base}") for line in fixed.actions)
    moved = sorted(p.name for p in (results / "damaged").iterdir())
    assert len(moved) == 2 and moved[0].startswith(".") and moved[1].startswith(base)
    again = verify_results(results)
    assert again.ok and sorted(again.done) == sorted(cells), again.text()
    assert again.mlflow.runs == 3 and not again.mlflow.orphaned
    for h in cells:  # the recomputed baseline is the same measurement
        got = json.loads((results / "cells" / h / "metrics.json").read_text())
        assert comparable(got) == comparable(before[h]), names[h]


def test_disagreeing_run_is_relogged(clean_run, tmp_path):
    results, cells = _copy(clean_run, tmp_path)
    h = sorted(cells)[0]
    folder = results / "cells" / h
    m = json.loads((folder / "metrics.json").read_text())
    m["utility"]["macro_f1"] = 0.123  # the files win; rewrite the cell as bench would
    from bench.results.store import write_cell

    write_cell(folder, json.loads((folder / "spec.json").read_text()), m)
    report = verify_results(results)
    assert list(report.mlflow.disagreeing) == [h]
    assert "utility.macro_f1" in report.mlflow.disagreeing[h]
    assert verify_results(results, repair=True).ok
    assert verify_results(results).ok


def test_missing_results_folder(tmp_path, capsys):
    assert main(["verify", "--results", str(tmp_path / "nope")]) == 2
    assert "no results under" in capsys.readouterr().err


def test_unusable_mlflow_store_is_rebuilt(clean_run, tmp_path):
    """A results/mlflow.db that cannot be opened (here: overwritten with garbage, as a kill
    during its creation can leave it): `bench run` goes on without it, `bench verify` reports
    it, and `--repair` moves it aside and mirrors every cell into a new one."""
    results, cells = _copy(clean_run, tmp_path)
    (results / "mlflow.db").write_bytes(b"not a database" * 100)
    report = verify_results(results)
    assert not report.ok and report.mlflow.error, report.text()
    assert "UNUSABLE" in report.text()
    fixed = verify_results(results, repair=True)
    assert fixed.ok, fixed.text()
    assert any("moved the unusable MLflow store" in a for a in fixed.actions)
    final = verify_results(results)
    assert final.ok and final.mlflow.runs == len(cells), final.text()
    assert len(list((results / "damaged").glob("mlflow.db.*"))) == 1


def test_a_temporary_folder_dated_in_the_future_is_moved_a_fresh_one_is_left(tmp_path):
    """Issue 48, trial 11: a temporary folder with a future timestamp looked younger than any
    writer's and stayed forever; a fresh one (a writer at work) is still left alone."""
    results = tmp_path / "r"
    future = results / "cells" / ".0123456789abcdef.fut1"
    fresh = results / "cells" / ".fedcba9876543210.now1"
    future.mkdir(parents=True)
    fresh.mkdir()
    os.utime(future, (time.time() + 86400, time.time() + 86400))
    report = verify_results(results, repair=True)
    assert any(a.startswith(f"moved temporary folder {future.name}") for a in report.actions)
    assert report.stray == [fresh.name] and fresh.is_dir() and not future.exists()


def _mirrored(results, tmp_path):
    """Each cell run of the results folder's store: its cell hash -> (the provenance its
    artifacts record, whether it carries the cell's manifest byte for byte)."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=default_uri(results))
    exp = client.get_experiment_by_name("bench")
    out = {}
    for r in client.search_runs([exp.experiment_id], "tags.`bench.kind` = 'cell'"):
        h, rid = r.data.tags["bench.cell_hash"], r.info.run_id
        names = {a.path for a in client.list_artifacts(rid)}
        prov = json.loads(Path(client.download_artifacts(rid, "provenance.json",
                                                         str(tmp_path))).read_text())
        manifest = (results / "cells" / h / MANIFEST).read_bytes()
        same = "manifest.json" in names and Path(client.download_artifacts(
            rid, "manifest.json", str(tmp_path))).read_bytes() == manifest
        out[h] = (prov, same)
    return out


def _own_provenance(results, h):
    return json.loads((results / "cells" / h / MANIFEST).read_text())["provenance"]


def test_an_interrupted_sync_is_resynced_and_repaired_with_the_cells_own_files(clean_run,
                                                                              tmp_path, capsys):
    """Issue 48, trial 11: after an interrupted `mlflow-sync` (a run created with its tags, then
    the process killed), `verify --repair` re-mirrored the cell without its manifest and with the
    repairing process's provenance; a resync counted the unfinished run as logged. Now both log
    the cell's own files and provenance, and the unfinished run is replaced, not duplicated."""
    import mlflow

    results, cells = _copy(clean_run, tmp_path)
    a, b, c = sorted(cells)
    client = mlflow.MlflowClient(tracking_uri=default_uri(results))
    exp = client.get_experiment_by_name("bench")
    by_hash = {r.data.tags["bench.cell_hash"]: r
               for r in client.search_runs([exp.experiment_id], "tags.`bench.kind` = 'cell'")}
    for h in (a, b):
        client.delete_run(by_hash[h].info.run_id)
    # the killed sync: b's run created with its tags, nothing else
    client.create_run(exp.experiment_id, tags={"bench.kind": "cell", "bench.cell_hash": b})
    assert main(["mlflow-sync", "--results", str(results)]) == 0
    assert "2 cell(s) logged, 1 already in MLflow" in capsys.readouterr().out
    report = verify_results(results)
    assert report.ok and report.mlflow.runs == 3, report.text()
    mirrored = _mirrored(results, tmp_path)
    assert sorted(mirrored) == [a, b, c]
    for h in (a, b):
        assert mirrored[h] == (_own_provenance(results, h), True)

    # a disagreeing run (the files win), re-logged by --repair with the cell's own files
    m = json.loads((results / "cells" / c / "metrics.json").read_text())
    m["utility"]["macro_f1"] = 0.123
    from bench.results.store import write_cell

    spec = json.loads((results / "cells" / c / "spec.json").read_text())
    prov = json.loads((results / "cells" / c / MANIFEST).read_text())["provenance"]
    write_cell(results / "cells" / c, spec, m, provenance=prov | {"machine": "where-computed"})
    assert list(verify_results(results).mlflow.disagreeing) == [c]
    assert verify_results(results, repair=True).ok
    assert _mirrored(results, tmp_path)[c] == (_own_provenance(results, c), True)
    assert _own_provenance(results, c)["machine"] == "where-computed"
    assert verify_results(results).ok
