"""Sources: results folders with their provenance, and a real `mlflow server` read back through
MLflow's search API (started on 127.0.0.1 by the test and stopped again)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
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
    src, = read_sources([a])
    cells = {c.hash: c for c in src.cells}
    assert cells[h].provenance == manifest["provenance"]
    # a cell sealed before provenance existed: only what its metrics say
    other = cells[all_hashes()[1]].provenance
    assert other == {"suite_version": "0.3.0", "commit": None, "machine": None, "date": None,
                     "run_by": None}


def test_provenance_record_fills_every_key():
    assert provenance_record(None, "0.1") == {"suite_version": "0.1", "commit": None,
                                              "machine": None, "date": None, "run_by": None}
    assert provenance_record({"machine": "x", "extra": 1})["machine"] == "x"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def mlflow_server(tmp_path):
    port = _free_port()
    exe = shutil.which("mlflow", path=str(Path(sys.executable).parent))
    server = subprocess.Popen(
        [exe, "server", "--host", "127.0.0.1", "--port", str(port),
         "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
         "--default-artifact-root", str(tmp_path / "artifacts"), "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"{uri}/health", timeout=2)
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise AssertionError("mlflow server did not start") from None
                time.sleep(0.5)
        yield uri
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_mlflow_server_source_merges_with_its_folder(tmp_path, mlflow_server, monkeypatch):
    from bench.tracking import sync_results

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
