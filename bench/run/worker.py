"""One cell's life in a results folder: lock it, run its stages, write it atomically.

:func:`run_cell` skips a cell whose files are sound (:func:`bench.results.store.cell_done`),
moves a damaged one aside and recomputes it, runs the cell's stages
(:func:`bench.run.stages.evaluate_cell`) under one BLAS thread, and writes the spec, metrics
and manifest as one atomic step (:func:`bench.results.store.write_cell`); a failure is
recorded instead, and never raised. :func:`run_group` is what a worker runs: the cells that
share one privatized corpus, in order.

Example:
    >>> run_cell(cell, Path("results"), dataset_hash, baseline_hash).status
    'done'
"""

from __future__ import annotations

import contextlib
import logging
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.grid import Cell, cell_hash
from bench.results import layout
from bench.results.locks import CellLock
from bench.results.record import read_metrics
from bench.results.store import (
    cell_done,
    cell_state,
    check_cell,
    quarantine,
    write_cell,
    write_error,
)
from bench.results.store import clean as _clean
from bench.run.stages import evaluate_cell

logger = logging.getLogger(__name__)


@dataclass
class CellResult:
    """What a worker reports back for one cell (never raw text)."""

    hash: str
    name: str
    status: str  # done | skipped | failed | cached | locked
    metrics: dict = field(default_factory=dict)
    spec: dict = field(default_factory=dict)
    error: str = ""


OVERWRITE = ("never", "only-missing", "always")

CELL_BLAS_THREADS = 1
"""BLAS threads (NumPy, scikit-learn) while a cell runs: the runner's parallelism is over cells,
and a fixed count is part of what makes a cell's rerun reproduce its metrics bit for bit."""

THREADED_LIBRARIES = ("scipy.linalg", "sklearn.utils._openmp_helpers")
"""Modules that load a thread pool of their own -- SciPy's bundled OpenBLAS (NumPy has
another), scikit-learn's OpenMP runtime -- imported before a cell's thread limit is set
(:func:`cell_threads`). threadpoolctl limits the libraries loaded when the limit is entered; a
library first loaded during the cell kept its default thread count, the machine's cores. So the
first cell of a fresh worker process (``bench run --jobs N``), which loads SciPy and
scikit-learn itself, computed with two threads on a 2-core machine where an in-process run or a
rerun used one: a ``bow`` baseline's membership-attack losses differed in their last bits
(``tests/run/test_worker.py``), and would have differed between machines with different
numbers of cores."""


@contextlib.contextmanager
def cell_threads() -> Iterator[None]:
    """:data:`CELL_BLAS_THREADS` threads for every BLAS and OpenMP library a cell uses, those
    of :data:`THREADED_LIBRARIES` loaded first so that the limit reaches them."""
    import importlib

    from threadpoolctl import threadpool_limits

    for name in THREADED_LIBRARIES:
        importlib.import_module(name)
    with threadpool_limits(limits=CELL_BLAS_THREADS):
        yield


def run_cell(cell: Cell, results: Path, dataset_hash: str, baseline_hash: str | None,
             overwrite: str = "only-missing") -> CellResult:
    """Run one cell unless its results say otherwise; lock, evaluate, write atomically.

    ``overwrite``: ``only-missing`` (default) runs cells without sound results, failed ones
    included; ``never`` also leaves failed cells alone; ``always`` recomputes everything. A
    damaged cell (:func:`bench.results.store.check_cell`: unparsable, checksum mismatch, wrong hash,
    no manifest) is moved aside to ``results/damaged/`` with one warning line and recomputed,
    whatever ``overwrite`` says. Never raises: a failure is recorded in the cell's error record
    (if the disk lets it) and returned.
    """
    h = cell_hash(cell, dataset_hash)
    folder = layout.cell_dir(results, h)
    if overwrite != "always" and cell_done(folder):
        return CellResult(h, cell.name, "cached")
    if overwrite == "never" and cell_state(folder) == "failed":
        return CellResult(h, cell.name, "failed", error="failed earlier (--overwrite never)")
    lock = CellLock(layout.lock_file(results, h))
    if not lock.acquire():
        return CellResult(h, cell.name, "locked")
    # the suite version is not part of the cell (nor of its hash): the manifest's provenance
    # records which release computed it, and the numeric platform it ran on
    spec = cell.spec() | {"hash": h, "name": cell.name, "dataset_hash": dataset_hash}
    try:
        state = cell_state(folder)  # again, under the lock: another run may have finished it
        if state == "done" and overwrite != "always":
            return CellResult(h, cell.name, "cached")
        if state == "damaged":
            reason = check_cell(folder) or "damaged"
            dest = quarantine(folder, results, reason)
            logger.warning("cell %s was damaged (%s): moved to %s; recomputing it", cell.name,
                           reason, dest)
        base = None
        if not cell.is_baseline and baseline_hash \
                and cell_done(layout.cell_dir(results, baseline_hash)):
            base = read_metrics(results, baseline_hash)
        # one BLAS thread per cell (torch models use one thread too, bench.models.base): the
        # runner parallelises over cells, and a fixed thread count keeps reruns bit-exact
        with cell_threads():
            metrics = evaluate_cell(cell, results, dataset_hash, baseline=base)
        write_cell(folder, spec, metrics)
        return CellResult(h, cell.name, "done", _clean(metrics), _clean(spec))
    except Exception as e:  # one failing cell is logged and the grid goes on
        tb = traceback.format_exc()
        logger.error("cell %s failed: %s", cell.name, e)
        try:
            write_error(folder, {"name": cell.name, "error": str(e), "traceback": tb})
        except OSError as e2:  # e.g. the disk is full: the cell stays missing, not half-written
            logger.error("cell %s: could not record the failure either: %s", cell.name, e2)
        return CellResult(h, cell.name, "failed", spec=_clean(spec),
                          error=f"{type(e).__name__}: {e}")
    finally:
        lock.release()


WORKER_MEMORY_GROWTH = 8 * 2**30
"""Memory growth (bytes) a joblib worker may show before loky replaces it (see
:func:`keep_worker_caches`)."""


def keep_worker_caches() -> None:
    """Let a joblib (loky) worker keep its caches across cells.

    loky replaces a worker whose memory grew by more than 300 MB since its first task, taking
    that for a leak (``process_executor._MAX_MEMORY_LEAK_SIZE``, checked in the worker after
    every task). A cell worker legitimately grows by more: the embedding table, the neighbour
    index and BERTScore's model and reference embeddings are cached per process. With the
    default, ``--jobs 2`` replaced workers every few cells, recomputed those caches each time
    (about 12 s of BERTScore per replacement on ``rt``) and warned "A worker stopped while some
    jobs were given to the executor". The bound is raised, inside the worker, to
    :data:`WORKER_MEMORY_GROWTH`.
    """
    from joblib.externals.loky import process_executor

    if process_executor._MAX_MEMORY_LEAK_SIZE < WORKER_MEMORY_GROWTH:
        process_executor._MAX_MEMORY_LEAK_SIZE = WORKER_MEMORY_GROWTH


def run_group(cells: list[tuple[Cell, str, str | None]], results: str,
              overwrite: str = "only-missing", fail_fast: bool = False) -> list[CellResult]:
    """Run cells sharing one privatized corpus, in order (one worker)."""
    keep_worker_caches()
    out = []
    for c, dh, bh in cells:
        out.append(run_cell(c, Path(results), dh, bh, overwrite))
        if fail_fast and out[-1].status == "failed":
            break
    return out
