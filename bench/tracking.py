"""MLflow mirror of the result files: one parent run per grid, one child run per cell.

The files under ``results/cells`` are the source of truth; this module only mirrors them.
Default tracking store: SQLite at ``results/mlflow.db``; any tracking URI on request. Only the
parent process talks to MLflow. Logged: the flattened cell spec as params, every numeric metric,
tags with the cell's hash/name/guarantee. Never any text from the dataset.

Example:
    >>> tracker = Tracker("sqlite:///results/mlflow.db", grid)
    >>> tracker.log_cell(result); tracker.finish(results)
"""

from __future__ import annotations

import logging
import math
import os
from typing import Any

logger = logging.getLogger(__name__)


def flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}`` (lists are joined)."""
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(d, (list, tuple)):
        if all(isinstance(x, (int, float, str, bool)) or x is None for x in d):
            out[prefix[:-1]] = ",".join(map(str, d))
        else:
            for i, v in enumerate(d):
                out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = d
    return out


def numeric_metrics(metrics: dict) -> dict[str, float]:
    """Finite numbers (and booleans as 0/1) of a metrics dict, flattened."""
    out = {}
    for k, v in flatten(metrics).items():
        if isinstance(v, bool):
            out[k] = float(v)
        elif isinstance(v, (int, float)) and math.isfinite(float(v)):
            out[k] = float(v)
    return out


class Tracker:
    """Parent run for a grid, child runs for cells."""

    def __init__(self, uri: str, grid) -> None:
        os.environ.setdefault("MLFLOW_TRACKING_URI", uri)
        os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
        import mlflow

        logging.getLogger("alembic").setLevel(logging.WARNING)
        self.mlflow = mlflow
        mlflow.set_tracking_uri(uri)
        mlflow.set_experiment("bench")
        self.parent = mlflow.start_run(run_name=grid.name)
        mlflow.set_tags({"grid": grid.name, "grid_path": str(grid.path),
                         "bench.kind": "grid"})
        mlflow.log_params({"n_cells": len(grid.cells), "n_skipped": len(grid.skipped)})

    def log_cell(self, result) -> None:
        """Mirror one finished cell as a nested run."""
        mlflow = self.mlflow
        with mlflow.start_run(run_name=result.name, nested=True):
            params = {k: str(v)[:500] for k, v in flatten(result.spec).items()}
            items = list(params.items())
            for i in range(0, len(items), 100):
                mlflow.log_params(dict(items[i : i + 100]))
            mlflow.log_metrics(numeric_metrics(result.metrics))
            g = result.metrics.get("guarantee") or {}
            mlflow.set_tags({"cell_hash": result.hash, "cell": result.name,
                             "guarantee.kind": g.get("kind", "none"),
                             "guarantee.proven": str(g.get("proven", ""))})

    def finish(self, results) -> None:
        """Close the parent run with the grid's counts."""
        mlflow = self.mlflow
        counts: dict[str, int] = {}
        for r in results:
            counts[r.status] = counts.get(r.status, 0) + 1
        mlflow.log_metrics({f"cells_{k}": float(v) for k, v in counts.items()})
        mlflow.end_run(status="FAILED" if counts.get("failed") else "FINISHED")
