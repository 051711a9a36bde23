"""Sources: results folders with their provenance, and a real `mlflow server` read back through
MLflow's search API (started on 127.0.0.1 by the test and stopped again)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.leaderboard import build, read_sources
from bench.leaderboard.sources import provenance_record

from .helpers import all_hashes, copy_results


def test_folder_cells_carry_the_manifest_provenance(tmp_path):
    a = copy_results(tmp_path / "a", all_hashes()[:2])
    h = all_hashes()[0]
    manifest = json.loads((a / "cells" / h / "manifest.json").read_text())
    manifest["provenance"] = {"suite_version": "0.3.0", "commit": "abc", "machine": "m1",
                              "date": "2026-11-22T10:00:00Z", "run_by": "alice"}
    (a / "cells" / h / "manifest.json").write_text(json.dumps(manifest))
    # a cell sealed before provenance existed (the manifest is not a checked file)
    old = a / "cells" / all_hashes()[1] / "manifest.json"
    old.write_text(json.dumps({k: v for k, v in json.loads(old.read_text()).items()
                               if k != "provenance"}))
    src, = read_sources([a])
    cells = {c.hash: c for c in src.cells}
    assert cells[h].provenance == manifest["provenance"] | {"numeric": None}
    # the cell without a record: nothing invented
    other = cells[all_hashes()[1]].provenance
    assert other == {"suite_version": None, "commit": None, "machine": None, "date": None,
                     "run_by": None, "numeric": None}


def test_provenance_record_fills_every_key():
    assert provenance_record(None, "0.1") == {"suite_version": "0.1", "commit": None,
                                              "machine": None, "date": None, "run_by": None,
                                              "numeric": None}
    assert provenance_record({"machine": "x", "extra": 1})["machine"] == "x"


def test_mlflow_server_source_merges_with_its_folder(tmp_path, mlflow_server, monkeypatch):
    from bench.results.mirror import sync_results

    monkeypatch.setenv("BENCH_RUN_BY", "tester")
    some = all_hashes()[:9]
    folder = copy_results(tmp_path / "a", some)
    assert sync_results(folder, mlflow_server) == (9, 0)
    src_folder, src_ml = read_sources([folder], [mlflow_server])
    assert src_ml.kind == "mlflow" and len(src_ml.cells) == 9 and src_ml.problems == []
    cell = src_ml.cells[0]
    assert cell.mlflow.startswith(f"{mlflow_server}/#/experiments/") and cell.href is None
    # sync logs who computed the cell (here: sealed before provenance existed), not the syncer
    assert cell.provenance["run_by"] is None
    doc = build([src_folder, src_ml])
    assert doc["conflicts"] == []
    cells = [c for e in doc["entries"] for p in e["points"] for c in p["cells"]]
    assert cells and all(len(c["provenance"]) == 2 and c["mlflow"] and c["href"] for c in cells)


def test_mlflow_server_cells_are_sealed_and_signed_as_their_folder(tmp_path, mlflow_server):
    """The mirror logs the cell's files byte for byte with its manifest and signature: a
    server's copy is sealed, its signer verified, and a run whose metrics were edited on the
    server (manifest no longer matching) is left out by name."""
    import mlflow

    from bench.results import signing
    from bench.results.mirror import sync_results

    folder = copy_results(tmp_path / "a", all_hashes()[:6])
    kid = signing.generate_key(tmp_path / "k")
    signing.sign_results(folder, signing.load_private_key(tmp_path / "k"))
    assert sync_results(folder, mlflow_server) == (6, 0)
    (src,) = read_sources([], [mlflow_server])
    assert len(src.cells) == 6 and src.problems == []
    assert all(c.sealed and c.signer == kid for c in src.cells)
    # a forger with write access to the server logs edited metrics into one run
    client = mlflow.MlflowClient(tracking_uri=mlflow_server)
    run = next(r for r in client.search_runs(
        [client.get_experiment_by_name("bench").experiment_id], "tags.`bench.kind` = 'cell'"))
    h = run.data.tags["bench.cell_hash"]
    metrics = json.loads((folder / "cells" / h / "metrics.json").read_text())
    metrics["utility"]["macro_f1"] = 0.99
    with mlflow.start_run(run_id=run.info.run_id):
        mlflow.log_text(json.dumps(metrics), "metrics.json")
    (src,) = read_sources([], [mlflow_server])
    line = next(p for p in src.problems if h in p)
    assert "damaged" in line and "metrics.json" in line and len(src.cells) == 5


def test_a_local_store_whose_runs_point_outside_it_is_not_followed(tmp_path):
    """A run's artifact_uri is the submitter's to write: a local store's runs are read only
    inside the store's folder, and one pointing elsewhere is left out by name."""
    import sqlite3

    from bench.results.mirror import default_uri, sync_results

    folder = copy_results(tmp_path / "a", all_hashes()[:3])
    uri = default_uri(folder)
    assert sync_results(folder, uri) == (3, 0)
    (src,) = read_sources([], [uri])
    assert len(src.cells) == 3 and all(c.sealed for c in src.cells)
    outside = tmp_path / "elsewhere"
    shutil.copytree(folder / "mlartifacts", outside)
    db = sqlite3.connect(folder / "mlflow.db")
    (rid,) = db.execute("select run_uuid from runs where run_uuid in (select run_uuid from "
                        "tags where key='bench.kind' and value='cell') limit 1").fetchone()
    db.execute("update runs set artifact_uri=? where run_uuid=?",
               ((outside / "x" / rid / "artifacts").as_uri(), rid))
    db.commit()
    db.close()
    (src,) = read_sources([], [uri])
    line = next(p for p in src.problems if rid[:12] in p)
    assert "outside the store's folder" in line and len(src.cells) == 2
    # a symbolic link inside the store that leads out of it is not followed either
    art = next(p for p in (folder / "mlartifacts").glob("*/artifacts")
               if p.parent.name != rid and (p / "spec.json").exists())
    (art / "metrics.json").unlink()
    (art / "metrics.json").symlink_to("/dev/zero")
    (src,) = read_sources([], [uri])
    assert any("symbolic link" in p for p in src.problems) and len(src.cells) == 1


def test_a_server_run_pointing_at_files_is_read_by_the_server_never_by_this_machine(
        tmp_path, mlflow_server, monkeypatch):
    """A tracking server's run whose artifact_uri is a file: path is read through the server's
    own get-artifact route (the server reads where it keeps the run): this machine opens no
    path the server names. Nothing readable there: an error that says how to fix it."""
    import mlflow

    from bench.leaderboard import LeaderboardError

    client = mlflow.MlflowClient(tracking_uri=mlflow_server)
    exp = client.create_experiment("hostile", artifact_location=(tmp_path / "x").as_uri())
    run = client.create_run(exp, tags={"bench.kind": "cell", "bench.cell_hash": "0" * 16})
    client.set_terminated(run.info.run_id)
    opened = []
    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: (
        opened.append(str(self)), real_open(self, *a, **k))[1])
    with pytest.raises(LeaderboardError, match=r"none of its 1 cell run\(s\) could be read .*"
                                               r"no spec\.json artifact.*Fix: read the results "
                                               r"folder"):
        read_sources([], [mlflow_server])
    assert not any(str(tmp_path / "x") in p for p in opened)


def test_the_documented_mlflow_ui_path_reads_every_cell(mlflow_ui):
    """`mlflow ui --backend-store-uri sqlite:///results/mlflow.db` (docs/usage.md), then
    `bench leaderboard --mlflow http://...`: the runs were logged with file: artifacts under
    results/mlartifacts, which only the server's get-artifact route serves."""
    from bench.results.mirror import sync_results

    uri, folder = mlflow_ui
    copy_results(folder, all_hashes()[:9])
    assert sync_results(folder, f"sqlite:///{folder / 'mlflow.db'}") == (9, 0)
    (src,) = read_sources([], [uri])
    assert len(src.cells) == 9 and src.problems == []
    assert all(c.sealed for c in src.cells)


def test_a_run_whose_spec_is_edited_and_resealed_is_held_to_the_hash_rule(tmp_path):
    """Issue 48, trial 10: MLflow runs skipped the hash recomputation folders get, so a run
    with its seed edited and its manifest resealed was ranked. Now its spec must hash to the
    run's cell hash as a folder's must to its name."""
    from bench.results.mirror import default_uri, sync_results
    from bench.results.store import CELL_FILES, manifest_for

    folder = copy_results(tmp_path / "a", all_hashes()[:3])
    uri = default_uri(folder)
    assert sync_results(folder, uri) == (3, 0)
    art = next(p for p in (folder / "mlartifacts").glob("*/artifacts")
               if (p / "spec.json").exists())
    spec = json.loads((art / "spec.json").read_text())
    spec["seed"] = spec["seed"] + 7
    (art / "spec.json").write_text(json.dumps(spec))
    old = json.loads((art / "manifest.json").read_text())
    files = {n: (art / n).read_bytes() for n in CELL_FILES}
    (art / "manifest.json").write_text(json.dumps(
        manifest_for(spec["hash"], files) | {"provenance": old.get("provenance")}))
    (src,) = read_sources([], [uri])
    line = next(p for p in src.problems if f"cell {spec['hash']}" in p)
    assert "spec.json hashes to" in line and line.endswith("left out")
    assert len(src.cells) == 2
