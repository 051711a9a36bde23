"""Progress of a grid's run: how many cells are finished, how long it took, and an ETA
estimated from the cells' own costs (never from an average over unlike cells).

A cell's cost is the time it computed (its ``runtime.total_seconds``, measured in the worker).
Each remaining cell is estimated by the mean cost of the finished cells of the same *kind* —
the same dataset, model, mechanism (``baseline`` for the unprivatized cells) and rewriter — or,
while no cell of its kind has finished, of the closest kind that has: another mechanism on the
same dataset and model; then the same model on any dataset; then any model. A baseline is only
ever estimated from baselines and a privatized cell from privatized cells with the same
rewriter, since their costs differ by an order of magnitude (in the smoke grid a baseline takes
3 s, a privatized cell with rewrite metrics 35 s). The ETA is the sum of those estimates
divided by the workers that can still be busy (``min(workers, cells left)``); while some cells
left have no estimate it is a lower bound (``ETA >1m05s``), while none has, ``ETA unknown``.
Cells found already done (``cached``), locked by another run, skipped or failed count as
finished but never as a cost sample.

Example:
    >>> p = RunProgress(grid.cells, workers=2)
    >>> p.finished(result)        # each CellResult as it arrives
    >>> p.line(result)
    '[done] bbc(...):model=lstm,... utility F1 0.913 — 3/45, elapsed 2m05s, ETA 14m10s'
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from bench.results.sections import upgrade

Kind = tuple[str, str, str, str]
"""(dataset, model, mechanism or ``baseline``, rewriter) of a cell."""


def cell_kind(cell: Any) -> Kind:
    """The kind of a :class:`~bench.grid.Cell` (see the module docstring)."""
    mech = "baseline" if cell.is_baseline else cell.mechanism
    return (cell.dataset, cell.model, mech, getattr(cell, "rewriter", "none"))


def _fallbacks(kind: Kind) -> list[Callable[[Kind], bool]]:
    """Tests of finished kinds, closest first, for estimating a cell of ``kind``: a baseline is
    only ever estimated from baselines, a privatized cell from privatized cells, and a cell with
    a rewriter from cells with the same rewriter (their costs differ by an order of magnitude)."""
    ds, model, mech, rw = kind
    base = mech == "baseline"

    def like(k: Kind) -> bool:
        return (k[2] == "baseline") == base and k[3] == rw

    return [lambda k: k == kind,
            lambda k: like(k) and k[:2] == (ds, model),
            lambda k: like(k) and k[1] == model,
            like]


def duration(seconds: float) -> str:
    """``45s``, ``3m05s``, ``2h07m``."""
    s = max(int(round(seconds)), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class RunProgress:
    """Counts, elapsed time and the ETA of one ``bench run`` (see the module docstring).

    Args:
        cells: the grid's cells to run (:attr:`bench.grid.Grid.cells`).
        workers: cells computed at once (``bench run --jobs``).
        clock: seconds now (tests pass a fake one).
    """

    def __init__(self, cells: Iterable[Any], workers: int = 1,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        cells = list(cells)
        self.kinds = {c.name: cell_kind(c) for c in cells}
        self.left: Counter[Kind] = Counter(cell_kind(c) for c in cells)
        self.total = len(cells)
        self.workers = max(int(workers), 1)
        self.clock = clock
        self.start = clock()
        self.count = 0
        self.costs: dict[Kind, list[float]] = {}

    def finished(self, result: Any) -> None:
        """Record one cell's outcome (a :class:`bench.run.worker.CellResult`)."""
        self.count += 1
        kind = self.kinds.get(result.name)
        if kind is None:
            return
        if self.left[kind]:
            self.left[kind] -= 1
        cost = upgrade(result.metrics).runtime.total_seconds
        if result.status == "done" and isinstance(cost, (int, float)) and cost >= 0:
            self.costs.setdefault(kind, []).append(float(cost))

    def estimate(self, kind: Kind) -> float | None:
        """Seconds one cell of ``kind`` is expected to take; None before any cost is known."""
        for test in _fallbacks(kind):
            seen = [c for k, cs in self.costs.items() if test(k) for c in cs]
            if seen:
                return sum(seen) / len(seen)
        return None

    def remaining(self) -> tuple[float, int]:
        """(seconds the cells left are expected to take, spread over the workers that can
        still be busy; how many cells left have no estimate yet, left out of those seconds)."""
        n_left = sum(self.left.values())
        seconds, unknown = 0.0, 0
        for kind, n in self.left.items():
            est = self.estimate(kind) if n else 0.0
            if est is None:
                unknown += n
            else:
                seconds += est * n
        return (seconds / min(self.workers, n_left) if n_left else 0.0), unknown

    def eta(self) -> float | None:
        """Seconds until the last cell is expected to finish (0 when none is left); None while
        some cell left has no estimate (no finished cell is like it)."""
        seconds, unknown = self.remaining()
        return None if unknown else seconds

    def eta_text(self) -> str:
        """``ETA 14m10s``; ``ETA >3m05s`` while some cells left have no estimate (the time of
        the others); ``ETA unknown`` while none has."""
        seconds, unknown = self.remaining()
        if unknown and unknown == sum(self.left.values()):
            return "ETA unknown"
        return f"ETA {'>' if unknown else ''}{duration(seconds)}"

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return self.clock() - self.start

    def status(self) -> str:
        """``elapsed 2m05s, ETA 14m10s`` (:meth:`eta_text`)."""
        return f"elapsed {duration(self.elapsed())}, {self.eta_text()}"

    def line(self, result: Any) -> str:
        """One line for a finished cell: ``[status] name [utility F1 …] [error] — k/N, elapsed
        …, ETA …`` (the status and the name first, as before the count was added, so that logs
        keep the shape scripts read)."""
        u = upgrade(result.metrics).utility.macro_f1
        extra = f" utility F1 {u:.3f}" if isinstance(u, float) else ""
        err = f" {result.error}" if result.error else ""
        return (f"[{result.status}] {result.name}{extra}{err} — {self.count}/{self.total}, "
                f"{self.status()}")

    def header(self, skipped: int = 0) -> str:
        """The line printed before the first cell finishes."""
        more = f", {skipped} skipped" if skipped else ""
        return (f"running {self.total} cell(s){more} on {self.workers} worker(s); a line per "
                "finished cell with the ETA from the cells' own costs")
