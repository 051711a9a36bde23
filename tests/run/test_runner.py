"""End-to-end grid runs on a tiny real grid: results files, resume, failures, locks, MLflow,
joblib and a local Dask cluster (127.0.0.1 only)."""

import json
import os
import time
from pathlib import Path

import pytest

import bench
from bench.cli import main
from bench.grid import load_grid
from bench.results.locks import CellLock
from bench.results.store import cell_done
from bench.run.runner import run_grid

GRID = """
name: tiny
axes:
  dataset: [{name: bbc, subsample: 150}]
  model: [bow]
  mechanism: [mvl, tem, truncated_gumbel]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 2000
  rewrite_metrics: true
  rewrite_max_docs: 3
"""


@pytest.fixture()
def grid(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(GRID)
    return path


def search(results: Path, filter_string: str = ""):
    """Runs of the results folder's SQLite store (without touching the global tracking URI)."""
    import mlflow
    import pandas as pd

    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{results / 'mlflow.db'}")
    exp = client.get_experiment_by_name("bench")
    rows = []
    for r in client.search_runs([exp.experiment_id], filter_string=filter_string):
        row = {f"tags.{k}": v for k, v in r.data.tags.items()}
        row |= {f"metrics.{k}": v for k, v in r.data.metrics.items()}
        row |= {f"params.{k}": v for k, v in r.data.params.items()}
        row.setdefault("tags.mlflow.parentRunId", None)
        rows.append(row)
    return pd.DataFrame(rows)


def metrics_of(results: Path) -> dict[str, dict]:
    out = {}
    for f in sorted(results.glob("cells/*/metrics.json")):
        m = json.loads(f.read_text())
        out[m["cell"]] = m
    return out


def test_run_resume_failures_and_mlflow(grid, tmp_path):
    results = tmp_path / "results"
    summary = run_grid(grid, results=results, jobs=1)
    # truncated_gumbel is undefined at eps=10 on this vocabulary: that cell fails, the rest runs
    assert summary.count("done") == 3 and summary.count("failed") == 1
    failed = [r for r in summary.results if r.status == "failed"][0]
    assert "truncated_gumbel" in failed.name and "undefined" in failed.error
    err = json.loads((results / "cells" / failed.hash / "error.json").read_text())
    assert "Traceback" in err["traceback"]
    assert not cell_done(results / "cells" / failed.hash)

    m = metrics_of(results)
    base = next(v for k, v in m.items() if "mech=none" in k)
    mvl = next(v for k, v in m.items() if "mech=mvl" in k)
    assert 0 <= mvl["utility"]["macro_f1"] <= 1 and "entities" in mvl["privacy"]
    assert 0 <= mvl["privacy"]["entities"]["privacy"] <= 1
    assert mvl["guarantee"]["kind"] == "metric"
    d = mvl["vs_baseline"]["by_privacy_task"]["entities"]
    assert d["delta_utility"] == pytest.approx(mvl["utility"]["macro_f1"]
                                               - base["utility"]["macro_f1"])
    assert d["tradeoff"] == pytest.approx(d["delta_utility"] + d["delta_privacy"])
    assert set(mvl["rewrite"]) >= {"n_w", "rouge1", "rouge2", "rougeL", "bleu", "bertscore"}
    assert "rewrite" not in base
    spec_file = next(results.glob("cells/*/spec.json"))
    spec = json.loads(spec_file.read_text())
    # the release is provenance, not identity: it is in the manifest, not in the spec
    assert "hash" in spec and "suite_version" not in spec
    prov = json.loads((spec_file.parent / "manifest.json").read_text())["provenance"]
    assert prov["suite_version"] == bench.__version__ and prov["numeric"]["pinned"] is True

    # resume: nothing done is repeated; the failed cell is retried (and fails again)
    again = run_grid(grid, results=results, jobs=1)
    assert again.count("cached") == 3 and again.count("failed") == 1

    # a damaged cell (here truncated) is not "already done": moved aside, recomputed, the same
    mvl_hash = next(r.hash for r in summary.results if "mech=mvl" in r.name)
    f = results / "cells" / mvl_hash / "metrics.json"
    f.write_bytes(f.read_bytes()[:100])
    healed = run_grid(grid, results=results, jobs=1)
    assert healed.count("done") == 1 and healed.count("cached") == 2
    assert [r.name for r in healed.results if r.status == "done"] == [mvl["cell"]]
    moved = list((results / "damaged").iterdir())
    assert len(moved) == 1 and moved[0].name.startswith(mvl_hash)
    assert "bytes" in (moved[0] / "reason.txt").read_text()
    from bench.reference import comparable

    assert comparable(json.loads(f.read_text())) == comparable(mvl)

    runs = search(results)
    children = runs[runs["tags.mlflow.parentRunId"].notna()]
    assert len(children) == 3
    assert set(children["metrics.utility.macro_f1"]) == {v["utility"]["macro_f1"]
                                                        for v in m.values()}
    # no raw text reaches MLflow: no parameter or tag value contains a document's words
    text_cols = [c for c in runs.columns if c.startswith(("params.", "tags."))]
    assert not any("said" in str(v).split() for c in text_cols for v in runs[c])


def test_parallel_backends_match_serial(grid, tmp_path):
    serial = tmp_path / "serial"
    run_grid(grid, results=serial, jobs=1, mlflow=False)
    par = tmp_path / "joblib"
    run_grid(grid, results=par, jobs=2, mlflow=False)
    dask_dir = tmp_path / "dask"
    run_grid(grid, results=dask_dir, executor="dask", jobs=2, mlflow=False)
    a, b, c = metrics_of(serial), metrics_of(par), metrics_of(dask_dir)
    assert a.keys() == b.keys() == c.keys() and len(a) == 3
    def scores(m):
        return {k: v for k, v in m["utility"].items() if not k.endswith("seconds")}

    for k in a:  # seeded: the same cell gives the same numbers on every backend
        assert scores(a[k]) == scores(b[k]) == scores(c[k])
        assert a[k]["privacy"]["entities"]["privacy"] == c[k]["privacy"]["entities"]["privacy"]
    # every cell, computed in a loky or a Dask worker process, recorded the numeric platform
    # that process read back from its own libraries: the pinned kernels, one platform id
    from bench.numeric import PINNED_OPENBLAS_CORE, PINNED_SETTINGS, PINNED_TORCH_CAPABILITY

    ids = set()
    for folder in (serial, par, dask_dir):
        torch_seen = 0
        for mf in folder.glob("cells/*/manifest.json"):
            rec = json.loads(mf.read_text())["provenance"]["numeric"]
            assert rec["pinned"] is True and rec["problems"] == [], rec
            assert rec["settings"] == PINNED_SETTINGS
            assert rec["openblas"] == [PINNED_OPENBLAS_CORE]
            # torch is read back where the worker loaded it (BERTScore, in the mvl cell)
            assert rec["torch_cpu_capability"] in (None, PINNED_TORCH_CAPABILITY)
            torch_seen += rec["torch_cpu_capability"] == PINNED_TORCH_CAPABILITY
            ids.add(rec["id"])
        assert torch_seen >= 1
    assert len(ids) == 1 and ids.pop().startswith("cpu-pinned-")


def test_locked_cell_is_not_run_twice(grid, tmp_path):
    results = tmp_path / "r"
    cell = load_grid(grid).cells[0]
    from bench.grid import cell_hash
    from bench.run.inputs import dataset as _dataset

    h = cell_hash(cell, _dataset(cell).content_hash)
    lock = CellLock(results / "locks" / f"{h}.lock")
    assert lock.acquire()
    try:
        summary = run_grid(grid, results=results, jobs=1, mlflow=False)
        assert [r.status for r in summary.results if r.hash == h] == ["locked"]
    finally:
        lock.release()


def test_stale_lock_is_taken_over(tmp_path):
    path = tmp_path / "x.lock"
    import socket

    path.write_text(f"{socket.gethostname()} 999999999\n")  # no such process
    lock = CellLock(path)
    assert lock.acquire() and path.read_text().split()[1] == str(os.getpid())
    lock.release()
    assert not path.exists()


def test_cli_run_bad_grid_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\naxes:\n  dataset: [bbc]\n  model: [bow]\n  mechanism: [mvll]\n"
                   "  epsilon: [1]\n")
    results = tmp_path / "results"
    assert main(["run", str(bad), "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'mvl'" in err
    assert not results.exists()


def test_cli_run_reports_failures_with_exit_1(grid, tmp_path):
    assert main(["run", str(grid), "--results", str(tmp_path / "r"), "--no-mlflow"]) == 1


def _bench(args, **kw):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "bench.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_kill_and_resume_no_duplicates(grid, tmp_path):
    """SIGKILL a real `bench run` mid-grid, run again: every cell once, in files and MLflow."""
    import signal
    import time

    def finished():  # cell folders with metrics; pathlib's `*` also matches the writer's
        # temporary `.<hash>.*` folders, which are not cells (a kill may leave one behind)
        return [p for p in results.glob("cells/*/metrics.json")
                if not p.parent.name.startswith(".")]

    results = tmp_path / "r"
    proc = _bench(["run", str(grid), "--results", str(results)])
    deadline = time.time() + 240
    while time.time() < deadline and not finished():
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n_before = len(finished())
    assert 1 <= n_before < 3  # killed mid-grid
    # a half-written cell never counts: no temporary folders are mistaken for cells
    assert all((p / "spec.json").is_file() for p in results.glob("cells/*")
               if (p / "metrics.json").is_file())
    proc = _bench(["run", str(grid), "--results", str(results)])
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 1  # the truncated_gumbel cell fails (by design), the rest is done
    assert f"{n_before} already done" in err
    assert len(finished()) == 3

    runs = search(results, "tags.`bench.kind` = 'cell'")
    hashes = list(runs["tags.bench.cell_hash"])
    assert len(hashes) == len(set(hashes)) == 3


def test_two_concurrent_runners_share_the_work(grid, tmp_path):
    results = tmp_path / "r"
    procs = [_bench(["run", str(grid), "--results", str(results), "--no-mlflow"])
             for _ in range(2)]
    errs = [p.communicate(timeout=600)[1] for p in procs]
    done_lines = [line for e in errs for line in e.splitlines() if line.startswith("[done]")]
    names = [line.split()[1] for line in done_lines]
    assert len(names) == len(set(names))  # no cell computed twice
    assert len(list(results.glob("cells/*/metrics.json"))) == 3


def test_logging_to_a_real_mlflow_server(grid, tmp_path, mlflow_server):
    """An `mlflow server` on 127.0.0.1 (tests/conftest.py) receives the grid's runs, each cell
    with its spec, metrics and provenance as artifacts."""
    import mlflow

    uri = mlflow_server
    summary = run_grid(grid, results=tmp_path / "r", jobs=1, tracking_uri=uri)
    assert summary.count("done") == 3
    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("bench")
    runs = client.search_runs([exp.experiment_id])
    cells = [r for r in runs if r.data.tags.get("bench.kind") == "cell"]
    parents = [r for r in runs if r.data.tags.get("bench.kind") == "grid"]
    assert len(cells) == 3 and len(parents) == 1
    assert all(r.data.tags["mlflow.parentRunId"] == parents[0].info.run_id for r in cells)
    assert all(r.data.params["epsilon"] in ("10.0", "inf") for r in cells)
    assert {"bench.git_commit", "bench.suite_version", "bench.dataset_hash"} <= set(
        cells[0].data.tags)
    artifacts = {a.path for a in client.list_artifacts(cells[0].info.run_id)}
    assert artifacts == {"spec.json", "metrics.json", "manifest.json", "provenance.json"}


def test_mlflow_sync_backfills_once(grid, tmp_path):
    from bench.results.mirror import sync_results

    results = tmp_path / "r"
    run_grid(grid, results=results, jobs=1, mlflow=False)
    assert sync_results(results) == (3, 0)
    assert sync_results(results) == (0, 3)


def _hold_memory(mb: int) -> int:
    """A task that keeps ``mb`` MB alive in its worker, as the cell caches do (held from the
    ``sys`` module: this function may reach the worker pickled by value, with fresh globals)."""
    import sys

    import numpy as np

    from bench.run.worker import keep_worker_caches

    keep_worker_caches()
    sys.__dict__.setdefault("_bench_test_held", []).append(np.ones(mb * 2**20 // 8))
    time.sleep(1.1)  # loky checks a worker's memory at most once a second
    return os.getpid()


def test_workers_keep_their_caches(monkeypatch):
    """loky replaces a worker that grew by > 300 MB (its leak heuristic), which threw away
    every per-process cache; bench's workers raise that bound, so 6 tasks each keeping 310 MB
    run on the same 2 workers (loky's default replaces at least one)."""
    from joblib import Parallel, delayed
    from joblib.externals.loky import get_reusable_executor

    import bench.run.worker as R

    get_reusable_executor().shutdown(wait=True)  # fresh workers, with loky's default bound
    pids = Parallel(n_jobs=2)(delayed(_hold_memory)(310) for _ in range(6))
    get_reusable_executor().shutdown(wait=True)  # give the memory back
    assert len(set(pids)) <= 2
    calls = []
    monkeypatch.setattr(R, "keep_worker_caches", lambda: calls.append(1))
    assert R.run_group([], "unused") == [] and calls == [1]  # what the runner's workers call


def test_damaged_corpus_cache_is_rebuilt(tmp_path, caplog):
    """A cached privatized corpus whose file no longer matches its checksum is discarded and
    rebuilt (with one warning), and the cell's numbers do not change."""
    grid = tmp_path / "g.yaml"
    grid.write_text(GRID.replace("mechanism: [mvl, tem, truncated_gumbel]", "mechanism: [tem]"))
    results = tmp_path / "r"
    first = run_grid(grid, results=results, mlflow=False)
    assert first.count("done") == 2
    (entry,) = [p for p in (results / "cache" / "privatized").iterdir()
                if not p.name.startswith(".")]
    data = entry / "tokens.parquet"
    data.write_bytes(data.read_bytes()[:-40] + b"\0" * 40)  # same size, different bytes
    before = metrics_of(results)
    with caplog.at_level("WARNING", logger="bench"):
        again = run_grid(grid, results=results, mlflow=False, overwrite="always")
    assert again.count("done") == 2
    assert any("is damaged (tokens.parquet does not match its checksum): rebuilding" in r.message
               for r in caplog.records)
    from bench.reference import comparable

    after = metrics_of(results)
    assert {k: comparable(v) for k, v in after.items()} == \
        {k: comparable(v) for k, v in before.items()}
    assert all(not m["privatization"]["cache_hit"] for k, m in after.items() if "tem" in k)


def test_full_disk_fails_cells_cleanly(grid, tmp_path, monkeypatch):
    """ENOSPC while a cell is written: the cell is reported failed with the OS error, no
    folder holds a half-written cell, no temporary folder is left, and the grid goes on; the
    next run (disk space back) computes exactly the missing cells."""
    import errno

    from bench.results import store

    real = store._write_bytes

    def full(path, data):
        if path.name == "metrics.json":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(store, "_write_bytes", full)
    results = tmp_path / "r"
    summary = run_grid(grid, results=results, mlflow=False)
    assert summary.count("done") == 0 and summary.count("failed") == 4
    assert all("No space left on device" in r.error for r in summary.results if r.status
               == "failed" and "truncated_gumbel" not in r.name)
    cells = results / "cells"
    assert not [p for p in cells.iterdir() if p.name.startswith(".")]  # no temp folders
    assert not list(cells.glob("*/metrics.json")) and not list(cells.glob("*/spec.json"))
    monkeypatch.undo()
    again = run_grid(grid, results=results, mlflow=False)
    assert again.count("done") == 3 and again.count("failed") == 1


def test_mlflow_going_away_mid_run(grid, tmp_path, monkeypatch, caplog):
    """MLflow stops answering after the first cell: the run finishes (files are the results),
    says so once, and `bench mlflow-sync` later mirrors every cell exactly once."""
    import sys

    from bench.results import mirror as tracking

    calls = tmp_path / "calls"
    # the mirror process, with MLflow refusing from its second cell on (each call one line)
    flaky = (
        "import json, sys\n"
        "from bench.results import mirror\n"
        "real = mirror.Tracker.log_cell\n"
        "def flaky(self, *a, **k):\n"
        f"    with open({str(calls)!r}, 'a') as f:\n"
        "        f.write('call\\n')\n"
        f"    if len(open({str(calls)!r}).readlines()) > 1:\n"
        "        raise ConnectionError('Connection refused: 127.0.0.1:5000')\n"
        "    return real(self, *a, **k)\n"
        "mirror.Tracker.log_cell = flaky\n"
        "sys.exit(mirror.serve(json.loads(sys.argv[-1])))\n")
    monkeypatch.setattr(tracking, "MIRROR_COMMAND", [sys.executable, "-c", flaky])
    results = tmp_path / "r"
    with caplog.at_level("WARNING", logger="bench"):
        summary = run_grid(grid, results=results)
    assert summary.count("done") == 3 and summary.count("failed") == 1
    assert len(calls.read_text().splitlines()) == 2  # the second failed; no further attempts
    assert summary.mirror["cells"] == 1
    assert sum("MLflow stopped answering" in r.message for r in caplog.records) == 1
    monkeypatch.undo()
    assert main(["mlflow-sync", "--results", str(results)]) == 0
    assert main(["mlflow-sync", "--results", str(results)]) == 0  # idempotent
    runs = search(results, "tags.`bench.kind` = 'cell'")
    assert sorted(runs["tags.bench.cell_hash"]) == sorted(
        r.hash for r in summary.results if r.status == "done")
