"""Running a grid: plan its cells into groups, run them on an executor, mirror them to MLflow.

Result files are the source of truth (:mod:`bench.results`): a killed run loses at most the
cells in flight, and the next run resumes. Cells are grouped by privatized corpus
(:func:`plan`; one group runs in one worker: privatize once, train many), baselines first
(their metrics feed the deltas): a privatized group starts once the baselines its cells
compare with have finished (:class:`_Dependencies`). Executors: in-process (``jobs=1``),
loky processes (``jobs>1``, joblib's executor), or a Dask cluster (``executor="dask"``: a
scheduler address, or a local cluster on 127.0.0.1). The workers never talk to MLflow:
the run's mirror process does (:class:`bench.results.mirror.BackgroundMirror`).

Example:
    >>> from bench.run import run_grid
    >>> summary = run_grid("experiments/smoke.yaml", results="results", jobs=1)
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.analysis.baseline import BaselineIndex
from bench.grid import Cell, Grid, canonical_json, cell_hash, load_grid, privatization_hash
from bench.grid.components import mechanism_kind, registry
from bench.results.mirror import BackgroundMirror
from bench.results.record import read_metrics
from bench.results.sections import Runtime, upgrade
from bench.run import inputs
from bench.run.stages import SUMMARY_KEYS
from bench.run.worker import OVERWRITE, CellResult, run_group

logger = logging.getLogger(__name__)


@dataclass
class RunSummary:
    """Counts and per-cell outcomes of one ``bench run``."""

    grid: str
    results: list[CellResult]
    skipped: list[tuple[str, str]]
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Lines about measurements that are not valid (e.g. privacy at chance on the baseline)."""
    channels: dict[str, float] = field(default_factory=dict)
    """The informed adversary's channels in the cells run: ``computed`` / ``reused`` (counts)
    and their ``computed_seconds`` / ``reused_seconds`` (:func:`_channel_counts`)."""
    measures: dict[str, float] = field(default_factory=dict)
    """Seconds per measure, summed over the cells run (:func:`measure_times`)."""
    mirror: dict[str, float] = field(default_factory=dict)
    """The MLflow mirror (empty with ``mlflow=False``): ``cells`` mirrored by this run,
    ``background_seconds`` its process spent (opening the store, logging), ``waited_seconds``
    the run waited for it at the end (the part on the run's wall time)."""

    def count(self, status: str) -> int:
        """Number of cells with this status."""
        return sum(r.status == status for r in self.results)

    def text(self) -> str:
        """The summary printed after a run: counts, warnings, failures, skipped cells."""
        lines = [f"grid {self.grid}: {len(self.results)} cells — {self.count('done')} run, "
                 f"{self.count('cached')} already done, {self.count('failed')} failed, "
                 f"{self.count('locked')} locked by another run; {len(self.skipped)} skipped "
                 f"({self.seconds:.1f} s)"]
        if self.stages:
            # shares of the time the cells spent (summed over the workers, so with --jobs N
            # it exceeds the wall time above), not of the wall time
            total = max(sum(self.stages.values()), 1e-9)
            parts = ", ".join(f"{k} {v:.1f} s ({100 * v / total:.0f}%)"
                              for k, v in self.stages.items())
            lines.append(f"  time by stage, summed over the cells: {parts}")
        if self.mirror:
            m = self.mirror
            lines.append(f"  MLflow mirror: {m['cells']:.0f} cell(s) logged, "
                         f"{m['background_seconds']:.1f} s in its own process, "
                         f"{m['waited_seconds']:.2f} s waited for at the end "
                         f"({100 * m['waited_seconds'] / max(self.seconds, 1e-9):.0f}% of the "
                         f"wall time)")
        if self.measures:
            lines.append("  measures, summed over the cells: " + measure_times_text(self.measures))
        if self.channels:
            c = self.channels
            lines.append(f"  informed channels: {c['computed']:.0f} computed "
                         f"({c['computed_seconds']:.1f} s), {c['reused']:.0f} reused from a cache "
                         f"({c['reused_seconds']:.1f} s)")
        for w in self.warnings:
            lines.append(f"  WARNING {w}")
        for r in self.results:
            if r.status == "failed":
                lines.append(f"  FAILED {r.name}: {r.error}")
        for name, reason in self.skipped:
            lines.append(f"  skipped {name}: {reason}")
        return "\n".join(lines) + "\n"


def _dataset_hashes(grid: Grid) -> dict[str, str]:
    out = {}
    for cell in grid.cells:
        key = canonical_json([cell.dataset, cell.dataset_kwargs(), cell.seed])
        if key not in out:
            out[key] = inputs.dataset(cell).content_hash
    return out


def dataset_hashes(grid: Grid) -> dict[tuple, str]:
    """The content hash of every (dataset, config, seed) of the grid's cells."""
    by_key = _dataset_hashes(grid)
    return {(c.dataset, c.dataset_config, c.seed):
            by_key[canonical_json([c.dataset, c.dataset_kwargs(), c.seed])] for c in grid.cells}


def plan(grid: Grid) -> list[list[tuple[Cell, str, str | None]]]:
    """Groups of (cell, dataset hash, baseline hash), baselines first, by privatized corpus.

    The corpora of cells that differ only in a searching word mapping (``nearest``,
    ``vickrey``: :attr:`bench.mapping.Mapping.search_k`) come from the same noisy vectors
    (:func:`bench.grid.privatization_hash` with ``mapping=False``), so their groups are joined
    into one, the mapping that asks for the most neighbours first: its nearest-word search is
    kept by :data:`bench.neighbors.SEARCH_MEMO` and answers the others' (bit for bit what
    their own search would find).
    """
    hashes = _dataset_hashes(grid)
    groups: OrderedDict[str, list] = OrderedDict()
    base_of: BaselineIndex[str] = BaselineIndex()  # the one pairing rule (bench.analysis)
    cells = sorted(grid.cells, key=lambda c: not c.is_baseline)
    for cell in cells:
        dh = hashes[canonical_json([cell.dataset, cell.dataset_kwargs(), cell.seed])]
        spec = cell.spec()
        if cell.is_baseline:
            h = cell_hash(cell, dh)
            base_of.add(spec, dh, h, hash=h)
        key = "baseline" if cell.is_baseline else privatization_hash(cell, dh)
        groups.setdefault(key, []).append((cell, dh, base_of.find(spec, dh)))
    baseline = groups.pop("baseline", [])
    joined: OrderedDict[str, list[list]] = OrderedDict()
    for key, group in groups.items():
        cell, dh, _ = group[0]
        k = _search_k(cell)
        shared = privatization_hash(cell, dh, mapping=False) if k else key
        joined.setdefault(shared, []).append(group)
    merged = [[c for g in sorted(gs, key=lambda g: -_search_k(g[0][0])) for c in g]
              for gs in joined.values()]
    return ([[b] for b in baseline]) + merged


def _search_k(cell: Cell) -> int:
    """Neighbours the cell's word mapping searches for (0: none, or no additive mechanism)."""
    if cell.is_baseline or cell.mapping == "none" or mechanism_kind(cell.mechanism) != "additive":
        return 0
    return int(getattr(registry("mapping").get(cell.mapping), "search_k", 0) or 0)


def _stage_times(results: Path, outcomes: list[CellResult]) -> dict[str, float]:
    """Sum of the per-cell runtimes of the cells run in this invocation, by stage."""
    out = dict.fromkeys(SUMMARY_KEYS, 0.0)
    for r in outcomes:
        rt = upgrade(r.metrics).runtime if r.status == "done" else Runtime()
        for k in SUMMARY_KEYS:
            out[k] += rt.get(k)
    return {k.removesuffix("_seconds"): v for k, v in out.items() if v}


def measure_times(metrics: list[dict]) -> dict[str, float]:
    """Seconds per measure summed over cells' metrics (the ``seconds`` of each record in
    ``measures``; cells computed before measures recorded them add nothing)."""
    out: dict[str, float] = {}
    for m in map(upgrade, metrics):
        for name in m.measures or {}:
            seconds = m.measure(name).get("seconds")
            if isinstance(seconds, (int, float)):
                out[name] = out.get(name, 0.0) + float(seconds)
    return out


def measure_times_text(times: dict[str, float]) -> str:
    """``name seconds`` per measure, largest first (the summaries of ``bench run`` and
    ``bench measure``)."""
    return ", ".join(f"{k} {v:.1f} s" for k, v in sorted(times.items(), key=lambda kv: -kv[1]))


def _channel_counts(outcomes: list[CellResult]) -> dict[str, float]:
    """The informed adversary's channels computed and reused in the cells run in this
    invocation, and the seconds each took (their ``runtime``: :data:`bench.run.attacks.COSTS`);
    empty when none was asked for."""
    keys = {"computed": "channels_computed", "computed_seconds": "channel_seconds",
            "reused": "channels_reused", "reused_seconds": "channel_reuse_seconds"}
    out = dict.fromkeys(keys, 0.0)
    for r in outcomes:
        rt = upgrade(r.metrics).runtime if r.status == "done" else Runtime()
        for k, src in keys.items():
            out[k] += rt.get(src)
    return out if out["computed"] or out["reused"] else {}


def run_grid(grid_path: str | Path | Grid, results: str | Path = "results", jobs: int = 1,
             executor: str = "local", scheduler: str | None = None,
             tracking_uri: str | None = None, mlflow: bool = True,
             overwrite: str = "only-missing", fail_fast: bool = False,
             progress: Callable[[CellResult], None] | None = None,
             started: Callable[[], None] | None = None) -> RunSummary:
    """Run every valid cell of a grid (see the module docstring); returns the summary.

    Args:
        grid_path: the grid YAML (or a :class:`~bench.grid.Grid` already loaded from it).
        results: results folder (``cells/``, ``cache/``, ``mlflow.db``).
        jobs: worker processes for the ``local`` executor (joblib; 1 = in-process).
        executor: ``local`` or ``dask``.
        scheduler: Dask scheduler address (``tcp://host:port``); None starts a LocalCluster on
            127.0.0.1 with ``jobs`` workers.
        tracking_uri: MLflow URI (default: ``MLFLOW_TRACKING_URI`` or SQLite in ``results``).
        mlflow: mirror cells to MLflow.
        overwrite: ``never``, ``only-missing`` or ``always`` (see :func:`run_cell`).
        fail_fast: stop at the first failed cell.
        progress: called with each cell's outcome.
        started: called once the cells are planned (every dataset loaded, so a bad one has
            raised by then), before the first cell runs (MLflow opens meanwhile, in the
            mirror's process).
    """
    if overwrite not in OVERWRITE:
        raise ValueError(f"overwrite must be one of {OVERWRITE}, got {overwrite!r}")
    if executor not in ("local", "dask"):
        raise ValueError(f"executor must be 'local' or 'dask', got {executor!r}")
    t0 = time.perf_counter()
    grid = grid_path if isinstance(grid_path, Grid) else load_grid(grid_path)
    grid_path = grid.path if isinstance(grid_path, Grid) else grid_path
    results = Path(results)
    groups = plan(grid)
    mirror = None
    if mlflow:  # a process of its own opens MLflow and logs the cells: they do not wait
        from bench.results.mirror import default_uri

        uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or default_uri(results)
        mirror = BackgroundMirror(
            results, uri, grid.name,
            {"grid_path": str(grid_path), "n_cells": len(grid.cells),
             "n_skipped": len(grid.skipped), "overwrite": overwrite},
            lambda text: logger.warning("%s", text))
    collector = _Collector(mirror, results, progress, fail_fast)
    if started is not None:
        started()
    # baselines first (their metrics feed the deltas); a privatized group starts as soon as
    # the baselines its cells compare with have finished, not after every baseline
    n_base = sum(1 for g in groups if g[0][0].is_baseline)
    finished = False
    try:
        warnings_ = _run_groups(groups, n_base, collector, results, executor=executor,
                                jobs=jobs, scheduler=scheduler, overwrite=overwrite,
                                fail_fast=fail_fast)
        finished = True
    finally:
        collector.finish(t0, interrupted=not finished)
    skipped = [(c.name, reason) for c, reason in grid.skipped]
    stages = _stage_times(results, collector.outcomes)
    mirrored = {}
    if mirror is not None:
        mirrored = {"cells": mirror.mirrored, "background_seconds": mirror.busy_s,
                    "waited_seconds": mirror.wait_s}
    return RunSummary(grid.name, collector.outcomes, skipped, time.perf_counter() - t0, stages,
                      warnings_, _channel_counts(collector.outcomes),
                      measure_times([r.metrics for r in collector.outcomes
                                     if r.status == "done"]), mirrored)


class _Collector:
    """Takes the cells' outcomes batch by batch: hands each finished one to the MLflow mirror
    (which logs it in its own process), reports progress, and sets ``stop`` at a failure under
    ``fail_fast``."""

    def __init__(self, mirror: BackgroundMirror | None, results: Path,
                 progress: Callable[[CellResult], None] | None, fail_fast: bool) -> None:
        self.mirror = mirror
        self.results = results
        self.progress = progress
        self.fail_fast = fail_fast
        self.outcomes: list[CellResult] = []
        self.stop = False

    def collect(self, batch: list[CellResult]) -> None:
        for r in batch:
            self.outcomes.append(r)
            if self.mirror is not None and r.status in ("done", "cached"):
                self.mirror.put(r.hash)
            if self.progress:
                self.progress(r)
            if self.fail_fast and r.status == "failed":
                self.stop = True

    def finish(self, t0: float, interrupted: bool = False) -> None:
        """Wait for the mirror to log what it was handed (``interrupted``: at most 30 s) and
        close the MLflow parent run with the counts by status (``t0``: when the run
        began)."""
        counts: dict[str, int] = {}
        for r in self.outcomes:
            counts[r.status] = counts.get(r.status, 0) + 1
        if self.mirror is not None:
            self.mirror.close(counts, t0, abandon=interrupted)


class _Dependencies:
    """When each group may start: a baseline group at once, a privatized group once every
    baseline its cells compare with (their baseline hash, :func:`plan`) has finished, whatever
    its outcome (:func:`bench.run.worker.run_cell` then finds the baseline's metrics or runs
    without deltas, as it would after a failed baseline). Groups are released in plan order.

    Waiting for *every* baseline instead left workers idle behind the slowest one: in
    ``thesis_reference`` one of two workers sat idle for the 29 minutes of the MiniLM baseline.
    """

    def __init__(self, groups: list, n_base: int) -> None:
        base = {cell_hash(c, dh) for g in groups[:n_base] for c, dh, _ in g}
        self.baselines_left = set(base)
        self.waiting: list[tuple[list, set[str]]] = []
        self.ready: list[list] = list(groups[:n_base])
        for g in groups[n_base:]:
            needs = {bh for _, _, bh in g if bh in base}
            if needs:
                self.waiting.append((g, needs))
            else:
                self.ready.append(g)

    def take_ready(self) -> list[list]:
        """The groups that may start now (each handed out once)."""
        out, self.ready = self.ready, []
        return out

    def finished(self, batch: list[CellResult]) -> None:
        """Record a group's outcomes; groups whose baselines are now all finished become
        ready."""
        done = {r.hash for r in batch} & self.baselines_left
        if not done:
            return
        self.baselines_left -= done
        still = []
        for g, needs in self.waiting:
            needs -= done
            if needs:
                still.append((g, needs))
            else:
                self.ready.append(g)
        self.waiting = still


def _run_groups(groups: list, n_base: int, collector: _Collector, results: Path, *,
                executor: str, jobs: int, scheduler: str | None, overwrite: str,
                fail_fast: bool, pool: Any = None) -> list[str]:
    """Run the groups on the executor as :class:`_Dependencies` releases them, handing each
    batch of outcomes to ``collector``; stops submitting once it says stop. Returns the
    baseline warnings (:func:`baseline_warnings`), logged once every baseline has finished.
    ``pool``: an executor object to use instead (tests)."""
    deps = _Dependencies(groups, n_base)
    args = (str(results), overwrite, fail_fast)
    warnings_: list[str] | None = None

    def after(batch: list[CellResult]) -> None:
        nonlocal warnings_
        collector.collect(batch)
        deps.finished(batch)
        if warnings_ is None and not deps.baselines_left:
            warnings_ = baseline_warnings(results, groups[:n_base])
            for w in warnings_:
                logger.warning("%s", w)

    if pool is None:
        pool = (_DaskPool(scheduler, max(jobs, 1)) if executor == "dask"
                else _LocalPool(jobs) if jobs > 1 else _InProcessPool())
    with pool:
        for g in deps.take_ready():
            pool.submit(g, args)
        while pool.running and not collector.stop:
            after(pool.next_batch())
            if not collector.stop:
                for g in deps.take_ready():
                    pool.submit(g, args)
    if warnings_ is None:  # stopped early, or no baseline in the grid
        warnings_ = baseline_warnings(results, groups[:n_base])
    return warnings_


class _InProcessPool:
    """Groups run in this process (``jobs=1``), one at a time in the order submitted."""

    def __init__(self) -> None:
        self.queue: deque = deque()

    @property
    def running(self) -> bool:
        return bool(self.queue)

    def submit(self, group: list, args: tuple) -> None:
        self.queue.append((group, args))

    def next_batch(self) -> list[CellResult]:
        group, args = self.queue.popleft()
        return run_group(group, *args)

    def __enter__(self) -> _InProcessPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.queue.clear()


class _LocalPool:
    """loky worker processes (joblib's executor; they inherit the pinned environment) running
    one group per task; ``next_batch`` returns the outcomes of whichever group finishes
    first. On leaving, tasks not yet started are cancelled and the running ones awaited."""

    def __init__(self, jobs: int) -> None:
        from joblib.externals.loky import get_reusable_executor

        self.executor = get_reusable_executor(max_workers=jobs)
        self.futures: set = set()

    @property
    def running(self) -> bool:
        return bool(self.futures)

    def submit(self, group: list, args: tuple) -> None:
        self.futures.add(self.executor.submit(run_group, group, *args))

    def next_batch(self) -> list[CellResult]:
        from concurrent.futures import FIRST_COMPLETED, wait

        done, _ = wait(self.futures, return_when=FIRST_COMPLETED)
        fut = done.pop()
        self.futures.discard(fut)
        return fut.result()

    def __enter__(self) -> _LocalPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        from concurrent.futures import wait

        for f in self.futures:
            f.cancel()
        wait(self.futures)  # cells in flight finish and are written; nothing is left half-run


class _DaskPool:
    """Groups submitted to a Dask cluster (a LocalCluster on 127.0.0.1 when no address),
    collected as they complete."""

    def __init__(self, address: str | None, n_workers: int) -> None:
        from dask.distributed import Client, LocalCluster, as_completed

        self.cluster = None
        if address is None:
            self.cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                        host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                        processes=True)
            self.client = Client(self.cluster)
        else:
            self.client = Client(address)
        self.completed = as_completed()
        self.n = 0

    @property
    def running(self) -> bool:
        return self.n > 0

    def submit(self, group: list, args: tuple) -> None:
        self.completed.add(self.client.submit(run_group, group, *args, pure=False))
        self.n += 1

    def next_batch(self) -> list[CellResult]:
        fut = next(self.completed)
        self.n -= 1
        return fut.result()

    def __enter__(self) -> _DaskPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def baseline_warnings(results: Path, baseline_groups: list) -> list[str]:
    """One line per dataset × privacy task whose baseline attack is at chance (no valid
    privacy measurement; the cells keep their numbers and say so)."""
    seen: dict[tuple[str, str], str] = {}
    for group in baseline_groups:
        cell, dh, _ = group[0]
        try:
            m = upgrade(read_metrics(results, cell_hash(cell, dh)))
        except (OSError, ValueError, TypeError):
            continue
        ds = cell.name.split(":", 1)[0]
        for task in m.attributes:
            p = m.attribute(task)
            if p.privacy_valid is False and (ds, task) not in seen:
                seen[(ds, task)] = (f"no valid privacy measurement for {ds} / {task} (model "
                                    f"{cell.model}): {p.privacy_invalid_reason}")
    return list(seen.values())
