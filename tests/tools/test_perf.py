"""``bench perf``'s table: the roofline columns (its numbers are timings, never asserted)."""

from __future__ import annotations

import re

from bench.tools import perf


def test_perf_prints_each_additive_mechanisms_fraction_of_the_scoring_limit(monkeypatch):
    words = "the bank raised its rates on tuesday , and markets fell".split()
    monkeypatch.setattr(perf, "corpus_tokens", lambda n: [(words * 60)[:300], (words * 60)[:300]])
    out = perf.run_perf(vocab_size=3_000, n_tokens=600, mechanisms=["mvl", "tem"], repeats=1)
    head, limit_line, columns, *rows = out.splitlines()
    assert head.startswith("bench perf: 600 BBC tokens, glove-6b-50d |W|=3,000, d=50; ")
    assert head.endswith("; 1 BLAS thread (as cells), best of 1 run")
    assert limit_line.startswith("limit: tokens/s of the nearest-word search's float32 scoring "
                                 "product alone ((256 x 51) . (51 x 3,000) per 256 tokens, "
                                 "0.3 MFLOP per token)")
    assert columns.split() == ["mechanism", "mapping", "eps", "fit", "s", "tokens/s", "limit",
                               "of", "limit", "N_w", "target"]
    table = {tuple(r.split()[:2]): r.split() for r in rows}
    assert set(table) == {("mvl", "nearest"), ("mvl", "vickrey"), ("tem", "none")}
    for key in (("mvl", "nearest"), ("mvl", "vickrey")):
        _, _, _, _, tps, limit, frac, *_ = table[key]
        tps, limit = float(tps.replace(",", "")), float(limit.replace(",", ""))
        assert re.fullmatch(r"\d+\.\d\d", frac)
        assert abs(float(frac) - tps / limit) <= 0.01  # the fraction is tokens/s over limit
    tem = table[("tem", "none")]
    assert len(tem) == 8 and re.fullmatch(r"0\.\d{3}", tem[5])  # no limit, no fraction



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
