"""Moved to :mod:`bench.run` (running grids and cells) and :mod:`bench.results` (the results
folder); this import path stays for one release (0.4.x) with the names it had.
"""

from bench.grid import cell_hash
from bench.results.locks import CellLock
from bench.results.store import cell_done
from bench.run.attacks import attack_privacy
from bench.run.cell import (
    CELL_BLAS_THREADS,
    OVERWRITE,
    WORKER_MEMORY_GROWTH,
    CellResult,
    keep_worker_caches,
    run_cell,
    run_group,
)
from bench.run.grid import RunSummary, baseline_warnings, plan, run_grid
from bench.run.inputs import dataset as _dataset
from bench.run.inputs import embedding as _embedding
from bench.run.stages import evaluate_cell, privatized_corpus
from bench.run.validity import add_deltas, mark_mia_validity, mark_privacy_validity

__all__ = ["CELL_BLAS_THREADS", "OVERWRITE", "WORKER_MEMORY_GROWTH", "CellLock", "CellResult",
           "RunSummary", "_dataset", "_embedding", "add_deltas", "attack_privacy",
           "baseline_warnings", "cell_done", "cell_hash", "evaluate_cell", "keep_worker_caches",
           "mark_mia_validity", "mark_privacy_validity", "plan", "privatized_corpus",
           "run_cell", "run_grid", "run_group"]
