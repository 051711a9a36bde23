"""Sources: results folders with their provenance, and a real `mlflow server` read back through
MLflow's search API (started on 127.0.0.1 by the test and stopped again)."""

from __future__ import annotations

import json

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
