"""Kill `bench run` at random moments, over and over, until the grid is done: no cell lost, none
computed twice, no MLflow run duplicated, and `bench verify` finds the folder sound.

CI runs 2 kills (``BENCH_FAULT_KILLS``, default 2); ``make faults`` runs 12. Each kill lands at a
uniformly random time in the run (seeded), so over many kills every stage of a cell is hit:
start-up, privatization, training, the attacks, the write, the MLflow mirror.
"""

import json
import os
import random
import re
import signal
import subprocess
import sys
import time

from bench.reference import comparable
from bench.verify import verify_results

GRID = """
name: tinyfaults
axes:
  dataset: [{name: bbc, subsample: 80}]
  model: [bow]
  mechanism: [mvl, tem]
  epsilon: [10]
  seed: [0, 1]
settings:
  vocab_size: 2000
  adversaries: [lexical]
"""
CELLS = 6  # 2 baselines + 2 mechanisms x 2 seeds


def metrics(results):
    """Every cell's metrics without run times, by hash."""
    return {p.name: comparable(json.loads((p / "metrics.json").read_text()))
            for p in (results / "cells").iterdir() if not p.name.startswith(".")}


def _run(grid, results):
    return subprocess.Popen([sys.executable, "-m", "bench.cli", "run", str(grid), "--results",
                             str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def test_random_kills_lose_nothing_and_duplicate_nothing(tmp_path):
    kills = int(os.environ.get("BENCH_FAULT_KILLS", "2"))
    rng = random.Random(12345)
    grid = tmp_path / "g.yaml"
    grid.write_text(GRID)
    # how long an undisturbed run takes sets the window the kills are drawn from
    t0 = time.time()
    probe = _run(grid, tmp_path / "probe")
    assert probe.wait(timeout=900) == 0, probe.stderr.read()
    window = time.time() - t0
    killed = rounds = 0
    stray = cut_short = broken_stores = 0
    while killed < kills:  # rounds: a fresh folder, killed and resumed until the grid is done
        results = tmp_path / f"r{rounds}"
        rounds += 1
        computed = []  # every "[done]" line of every attempt: a cell computed twice shows twice
        while True:
            proc = _run(grid, results)
            if killed < kills:
                try:
                    proc.wait(timeout=rng.uniform(0.5, window))
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    killed += 1
                _, err = proc.communicate(timeout=60)
            else:
                _, err = proc.communicate(timeout=900)
                assert proc.returncode == 0, err
            computed += [line.split()[1] for line in err.splitlines()
                         if line.startswith("[done]")]
            if proc.returncode == 0:
                break
        cells = [p for p in (results / "cells").iterdir() if not p.name.startswith(".")]
        assert len(cells) == CELLS  # nothing lost
        assert len(computed) == len(set(computed)) <= CELLS  # nothing computed twice
        report = verify_results(results)
        assert not report.damaged and len(report.done) == CELLS, report.text()
        broken = report.mlflow.error is not None  # a kill while the store was being created
        if not broken:
            assert report.mlflow.runs == CELLS, report.text()
            assert not report.mlflow.duplicated and not report.mlflow.missing, report.text()
        # what a kill may leave: a killed writer's temporary folder, a run cut short in MLflow,
        # a half-created MLflow store; `--repair` fixes each (no writer runs now, so temporary
        # folders are aged past the minute --repair leaves a running writer)
        for tmp in (results / "cells").glob(".*"):
            os.utime(tmp, (time.time() - 120, time.time() - 120))
        repaired = verify_results(results, repair=True)
        assert repaired.ok, repaired.text()
        final = verify_results(results)
        assert final.ok and final.mlflow.runs == CELLS, final.text()
        stray += len(report.stray)
        cut_short += 0 if broken else len(report.mlflow.disagreeing)
        broken_stores += broken
        # the killed-and-resumed results equal the undisturbed run's, cell for cell
        assert metrics(results) == metrics(tmp_path / "probe")
    print(f"{kills} kills over {rounds} round(s) of {CELLS} cells (window {window:.0f} s): 0 "
          f"lost, 0 computed twice, 0 MLflow runs duplicated; repaired by bench verify: "
          f"{stray} temporary folder(s), {cut_short} MLflow run(s) cut short, "
          f"{broken_stores} half-created MLflow store(s)")


def test_dask_worker_dying_mid_cell(tmp_path):
    """SIGKILL the Dask worker process computing a cell: the scheduler gives its group to another
    worker, the dead worker's cell lock is taken over as stale, and every cell is written once,
    with the same metrics as an undisturbed run."""
    import threading

    from dask.distributed import Client, LocalCluster

    from bench.run.runner import run_grid

    grid = tmp_path / "g.yaml"
    grid.write_text(GRID)
    run_grid(grid, results=tmp_path / "probe", mlflow=False)
    results = tmp_path / "r"
    victims = []

    def kill_first_worker_holding_a_lock():
        deadline = time.time() + 300
        while time.time() < deadline and not victims:
            for lock in (results / "locks").glob("*.lock") if (results / "locks").is_dir() else []:
                try:
                    pid = int(lock.read_text().split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                if pid != os.getpid():
                    os.kill(pid, signal.SIGKILL)
                    victims.append((pid, lock.stem))
                    return
            time.sleep(0.02)

    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", processes=True) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2)
        killer = threading.Thread(target=kill_first_worker_holding_a_lock)
        killer.start()
        summary = run_grid(grid, results=results, executor="dask",
                           scheduler=cluster.scheduler_address, mlflow=False)
        killer.join()
    assert len(victims) == 1  # one worker died mid-cell
    assert summary.count("done") == CELLS  # every cell computed by a live worker, once
    assert len({r.hash for r in summary.results}) == CELLS
    assert verify_results(results, repair=True).ok  # a temporary folder of the dead write, if any
    assert metrics(results) == metrics(tmp_path / "probe")


def test_two_runners_and_reports_at_the_same_time(tmp_path):
    """Two `bench run` on one folder while `bench report` is built from it over and over: no
    report fails or sees a half-written cell, no cell is computed twice, no MLflow run is
    duplicated, and the final report has every cell."""
    from bench.report import build_report

    grid = tmp_path / "g.yaml"
    grid.write_text(GRID)
    results = tmp_path / "r"
    procs = [_run(grid, results) for _ in range(2)]
    reports, seen = 0, []
    while any(p.poll() is None for p in procs):
        if (results / "cells").is_dir():
            summary = build_report(results, tmp_path / f"report{reports % 2}")
            seen.append(summary.n_cells)
            reports += 1
        time.sleep(0.2)
    errs = [p.communicate()[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    done = [line.split()[1] for e in errs for line in e.splitlines() if line.startswith("[done]")]
    assert len(done) == len(set(done)) == CELLS  # each cell computed once, by one of the two
    assert reports >= 1 and seen == sorted(seen)  # reports only ever saw whole cells, growing
    assert build_report(results, tmp_path / "final").n_cells == CELLS
    # both runners mirrored their cells, each cell once between them, and MLflow never failed
    assert not any("MLflow stopped" in e or "cannot be used" in e for e in errs), errs
    logged = r"MLflow mirror: (\d+) cell\(s\) logged"
    mirrored = [int(m) for e in errs for m in re.findall(logged, e)]
    assert len(mirrored) == 2 and sum(mirrored) == CELLS, errs
    report = verify_results(results)
    assert report.ok and report.mlflow.runs == CELLS, report.text()  # each cell logged once
    print(f"2 runners, {reports} reports while they ran (cells seen: {seen[0]} -> {seen[-1]})")
