"""``bench perf``'s table: the roofline columns (its numbers are timings, never asserted)."""

from __future__ import annotations

import re

from bench import numeric
from bench.tools import perf


def test_perf_prints_each_additive_mechanisms_fraction_of_the_scoring_limit(monkeypatch):
    words = "the bank raised its rates on tuesday , and markets fell".split()
    monkeypatch.setattr(perf, "corpus_tokens", lambda n: [(words * 60)[:300], (words * 60)[:300]])
    out = perf.run_perf(vocab_size=3_000, n_tokens=600, mechanisms=["mvl", "tem"], repeats=1)
    head, limit_line, native_line, columns, *rows = out.splitlines()
    assert head.startswith("bench perf: 600 BBC tokens, glove-6b-50d |W|=3,000, d=50; ")
    assert head.endswith("; 1 BLAS thread (as cells), best of 1 run")
    assert limit_line.startswith("limit: tokens/s of the nearest-word search's float32 scoring "
                                 "product alone ((256 x 51) . (51 x 3,000) per 256 tokens, "
                                 "0.3 MFLOP per token)")
    # the native limit is measured in a process of its own (BENCH_NUMERIC=native)
    native = re.fullmatch(r"native limit: ([\d,]+) tokens/s \(the same product with "
                          r"BENCH_NUMERIC=native, in a process of its own\); of native = "
                          r"tokens/s / native limit \(target >= 0\.5\)", native_line)
    assert native, native_line
    native = float(native.group(1).replace(",", ""))
    assert columns.split() == ["mechanism", "mapping", "eps", "fit", "s", "tokens/s", "limit",
                               "of", "limit", "of", "native", "N_w", "target"]
    table = {tuple(r.split()[:2]): r.split() for r in rows}
    assert set(table) == {("mvl", "nearest"), ("mvl", "vickrey"), ("tem", "none")}
    for key in (("mvl", "nearest"), ("mvl", "vickrey")):
        _, _, _, _, tps, limit, frac, of_native, *_ = table[key]
        tps, limit = float(tps.replace(",", "")), float(limit.replace(",", ""))
        assert re.fullmatch(r"\d+\.\d\d", frac) and re.fullmatch(r"\d+\.\d\d", of_native)
        assert abs(float(frac) - tps / limit) <= 0.01  # the fraction is tokens/s over limit
        assert abs(float(of_native) - tps / native) <= 0.01  # and over the native limit
    tem = table[("tem", "none")]
    assert len(tem) == 8 and re.fullmatch(r"0\.\d{3}", tem[5])  # no limit, no fraction


def test_pin_cost_runs_the_grid_pinned_and_native_and_prints_the_ratio():
    """``bench perf -m pin_cost`` runs a grid twice, pinned and native, each cell recording the
    environment it was computed in (the native run really is native: its fit seconds come from
    its own cells)."""
    grid = perf.PIN_GRID.replace("[lstm]", "[bow]").replace("subsample: 600", "subsample: 120")
    grid = grid.replace("vocab_size: 50000", "vocab_size: 2000").replace("[mvl, tem]", "[tem]")
    out = perf.run_pin_cost(grid)
    m = re.search(r"pinned ([\d.]+) s \(utility fit ([\d.]+) s\), native ([\d.]+) s "
                  r"\(utility fit ([\d.]+) s\): pinned/native ([\d.]+); target <= 1\.3: "
                  r"(pass|FAIL)", out)
    assert m, out
    pinned, _, native, _, ratio, verdict = m.groups()
    # the ratio is of the unrounded times: it lies where the printed ones (to 0.1 s) allow
    p, n = float(pinned), float(native)
    assert (p - 0.05) / (n + 0.05) - 0.005 <= float(ratio) <= (p + 0.05) / (n - 0.05) + 0.005
    ids = re.search(r"the cells' platforms: (\S+) and (\S+)\n", out)
    assert ids and ids.group(1) == numeric.pinned_id() and ids.group(2).startswith("cpu-native-")
    assert verdict == ("pass" if float(ratio) <= 1.3 else "FAIL")
    assert perf.BENCHMARKS["pin_cost"] is perf.run_pin_cost



def test_mlflow_mirror_benchmark_reads_the_runs_summary_line(monkeypatch):
    """``bench perf -m mlflow_mirror`` times `bench run` with and without the mirror and reads
    the wait from the run's own summary line (the line a run prints, not a copy of it)."""
    import subprocess

    from bench.run.runner import RunSummary

    line = RunSummary("g", [], [], 10.0, mirror={"cells": 5, "background_seconds": 3.2,
                                                 "waited_seconds": 0.25}).text()
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        err = "" if "--no-mlflow" in cmd else line
        return subprocess.CompletedProcess(cmd, 0, "", err)

    monkeypatch.setattr(subprocess, "run", fake_run)
    out = perf.run_mlflow_mirror(repeats=2)
    assert len(calls) == 4 and sum("--no-mlflow" in c for c in calls) == 2
    assert "the run waited 0.25 s for the mirror" in out and "(the mirror's process: 3.2 s)" in out
    assert perf.BENCHMARKS["mlflow_mirror"] is perf.run_mlflow_mirror
