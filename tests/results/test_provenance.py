"""Provenance: who wrote a cell, where and when -- in its manifest, never in its metrics."""

from __future__ import annotations

import json

import bench
from bench.results.provenance import KEYS, current, git_commit
from bench.results.store import check_cell, seal_cell, write_cell


def test_current_record(monkeypatch):
    monkeypatch.delenv("BENCH_RUN_BY", raising=False)
    rec = current()
    assert tuple(rec) == KEYS
    assert rec["suite_version"] == bench.__version__ and rec["run_by"] is None
    assert rec["date"].endswith("Z") and rec["machine"]
    monkeypatch.setenv("BENCH_RUN_BY", "alice")
    assert current()["run_by"] == "alice"


def test_commit_of_this_checkout():
    commit = git_commit()
    assert commit is None or len(commit.removesuffix("-dirty")) == 40


def _spec(h: str) -> dict:
    return {"hash": h, "name": "n", "suite_version": "0.0.0", "dataset_hash": "d",
            "dataset": {}, "model": {}, "mechanism": {}, "sensitivity": {}, "mapping": {},
            "epsilon": 1.0, "seed": 0, "settings": {}}


def test_written_cell_records_provenance_in_its_manifest(tmp_path, monkeypatch):
    from bench.results.store import METRICS_KEYS, SPEC_KEYS

    monkeypatch.setenv("BENCH_RUN_BY", "bob")
    # a placeholder spec marked as written before 0.4.0, whose hash check_cell cannot recompute
    spec = {k: _spec("abc").get(k, {}) for k in SPEC_KEYS} | {"hash": "abc",
                                                               "suite_version": "0.0.0"}
    metrics = {k: {} for k in METRICS_KEYS}
    write_cell(tmp_path / "abc", spec, metrics)
    manifest = json.loads((tmp_path / "abc" / "manifest.json").read_text())
    assert manifest["provenance"]["run_by"] == "bob"
    assert "provenance" not in json.loads((tmp_path / "abc" / "metrics.json").read_text())
    assert check_cell(tmp_path / "abc") is None
    # sealing a cell written before manifests existed does not invent who computed it
    (tmp_path / "abc" / "manifest.json").unlink()
    seal_cell(tmp_path / "abc")
    assert "provenance" not in json.loads((tmp_path / "abc" / "manifest.json").read_text())
