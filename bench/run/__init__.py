"""Running a benchmark: a grid's cells on an executor, and each cell's life as named stages.

- :mod:`bench.run.runner`: plan a grid into groups, run them (in-process, joblib, Dask), mirror
  each cell to MLflow, summarise (:func:`run_grid`).
- :mod:`bench.run.worker`: one cell in a results folder: lock, run, write atomically
  (:func:`run_cell`).
- :mod:`bench.run.stages`: one cell's data flow, top to bottom (load → privatize → rewrite →
  utility → attacks → membership → rewrite metrics → deltas).
- :mod:`bench.run.attacks`, :mod:`bench.run.validity`: the attacks and deltas stages.
- :mod:`bench.run.inputs`: the dataset, embedding and tokens, cached per worker.

Where the results go is :mod:`bench.results`'s business.
"""

from bench.run.runner import RunSummary, plan, run_grid
from bench.run.stages import STAGES, evaluate_cell
from bench.run.worker import CellResult, run_cell, run_group

__all__ = ["STAGES", "CellResult", "RunSummary", "evaluate_cell", "plan", "run_cell",
           "run_grid", "run_group"]
