"""``bench run``'s progress (bench.run.progress): the count, the elapsed time and an ETA from the
cells' own costs, and the line per finished cell that the CLI prints when its output is piped."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from bench.run.progress import RunProgress, cell_kind, duration
from bench.run.worker import CellResult


def cell(name: str, mechanism: str = "none", model: str = "bow", dataset: str = "bbc",
         rewriter: str = "none") -> SimpleNamespace:
    return SimpleNamespace(name=name, dataset=dataset, model=model, mechanism=mechanism,
                           rewriter=rewriter, is_baseline=mechanism == "none")


def done(c: SimpleNamespace, seconds: float, status: str = "done", f1: float | None = 0.5
         ) -> CellResult:
    metrics = {"runtime": {"total_seconds": seconds}} if status == "done" else {}
    if f1 is not None and status == "done":
        metrics["utility"] = {"macro_f1": f1}
    return CellResult(hash=c.name, name=c.name, status=status, metrics=metrics)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def grid() -> list[SimpleNamespace]:
    """A baseline (2 s), four mvl cells (30 s each), two tem cells (10 s each)."""
    return ([cell("base")] + [cell(f"mvl{i}", "mvl") for i in range(4)]
            + [cell(f"tem{i}", "tem") for i in range(2)])


def test_eta_comes_from_the_cells_own_kind_not_from_an_average(grid):
    clock = Clock()
    p = RunProgress(grid, workers=1, clock=clock)
    assert p.eta() is None and p.eta_text() == "ETA unknown"
    clock.now += 2
    p.finished(done(grid[0], 2.0))
    # a baseline says nothing about privatized cells: no estimate yet
    assert p.eta() is None and p.eta_text() == "ETA unknown"
    clock.now += 30
    p.finished(done(grid[1], 30.0))
    # 3 mvl at 30 s + 2 tem estimated from mvl (the same dataset and model) at 30 s
    assert p.eta() == pytest.approx(150.0)
    clock.now += 10
    p.finished(done(grid[5], 10.0))
    # now tem's own cost: 3 x 30 + 1 x 10; an equal-cost estimate (elapsed / done x left)
    # would say 42 / 3 x 4 = 56 s
    assert p.eta() == pytest.approx(100.0)
    assert p.status() == "elapsed 42s, ETA 1m40s"
    for c, s in [(grid[2], 30.0), (grid[3], 30.0), (grid[4], 30.0), (grid[6], 10.0)]:
        p.finished(done(c, s))
    assert p.eta() == 0.0 and p.count == p.total == 7


def test_eta_is_a_lower_bound_while_some_kind_is_untimed():
    cells = [cell("base"), cell("b2", dataset="other"), cell("mvl", "mvl"),
             cell("rw", "mvl", rewriter="autoencoder")]
    p = RunProgress(cells)
    p.finished(done(cells[0], 4.0))
    # the other dataset's baseline is estimated from this one; the privatized cells are not
    assert p.eta() is None and p.eta_text() == "ETA >4s"
    p.finished(done(cells[2], 20.0))
    # a rewriter cell is never estimated from cells without one
    assert p.eta_text() == "ETA >4s"
    p.finished(done(cells[3], 300.0))
    assert p.eta() == pytest.approx(4.0)


def test_workers_share_the_remaining_cost_while_enough_cells_are_left(grid):
    p = RunProgress(grid, workers=4)
    p.finished(done(grid[0], 2.0))
    p.finished(done(grid[1], 30.0))
    assert p.eta() == pytest.approx(150.0 / 4)  # 5 cells left on 4 workers
    for c in grid[2:5]:
        p.finished(done(c, 30.0))
    assert p.eta() == pytest.approx(60.0 / 2)  # 2 tem cells left: 2 workers busy at most


def test_cached_and_failed_cells_count_but_never_as_a_cost(grid):
    p = RunProgress(grid)
    p.finished(done(grid[1], 0.0, status="cached"))
    p.finished(done(grid[2], 0.0, status="failed"))
    assert p.count == 2 and p.costs == {}
    p.finished(done(grid[3], 30.0))
    assert p.estimate(cell_kind(grid[4])) == pytest.approx(30.0)


def test_line_has_the_count_elapsed_time_and_eta(grid):
    clock = Clock()
    p = RunProgress(grid, clock=clock)
    clock.now += 65
    r = done(grid[0], 2.0, f1=0.913)
    p.finished(r)
    assert p.line(r) == "[done] base utility F1 0.913 — 1/7, elapsed 1m05s, ETA unknown"
    f = CellResult(hash="x", name="mvl0", status="failed", error="ValueError: boom")
    p.finished(f)
    assert p.line(f).startswith("[failed] mvl0 ValueError: boom — 2/7, elapsed ")


@pytest.mark.parametrize(("seconds", "text"), [(0.4, "0s"), (59.6, "1m00s"), (185, "3m05s"),
                                                (7620, "2h07m")])
def test_duration(seconds, text):
    assert duration(seconds) == text


GRID = """
name: progress
axes:
  dataset: [{name: bbc, subsample: 60}]
  model: [bow]
  mechanism: [tem]
  mapping: [none]
  epsilon: [10]
  seed: [0, 1]
settings: {mia: false, vocab_size: 2000, metrics: [utility, runtime]}
"""


def test_piped_bench_run_prints_a_line_per_cell_with_the_eta(tmp_path):
    """With stderr not a terminal, `bench run` says what it will run at once and then prints
    one line per finished cell: the count, the cell, the elapsed time and the ETA."""
    grid = tmp_path / "progress.yaml"
    grid.write_text(textwrap.dedent(GRID), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "bench.cli", "run", str(grid), "--results",
                          str(tmp_path / "res"), "--no-mlflow"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    cells = [ln for ln in lines if ln.startswith("[")]
    # said at once, before the first cell finishes
    head = [i for i, ln in enumerate(lines) if ln.startswith("running 4 cell(s) on 1 worker(s)")]
    assert len(head) == 1 and head[0] < lines.index(cells[0])
    assert [(ln.split()[0], ln.split(" — ")[1].split(",")[0]) for ln in cells] == [
        ("[done]", "1/4"), ("[done]", "2/4"), ("[done]", "3/4"), ("[done]", "4/4")]
    assert all(", elapsed " in ln and ", ETA " in ln for ln in cells), cells
    # baselines run first and say nothing of the privatized cells' cost ...
    assert cells[1].endswith("ETA unknown")
    # ... the first privatized cell times the second, and the last has nothing left
    assert "ETA unknown" not in cells[2] and cells[3].endswith("ETA 0s")
    # a second run finds every cell done
    again = subprocess.run([sys.executable, "-m", "bench.cli", "run", str(grid), "--results",
                            str(tmp_path / "res"), "--no-mlflow"],
                           capture_output=True, text=True, timeout=600, check=False)
    assert [ln.split(" — ")[1].split(",")[0] for ln in again.stderr.splitlines()
            if ln.startswith("[cached]")] == ["1/4", "2/4", "3/4", "4/4"]
