"""MLflow mirror of the result files: one parent run per grid invocation, one child per cell.

The files under ``results/cells`` are the source of truth; this module only mirrors them.
Default store: SQLite at ``results/mlflow.db`` (artifacts under ``results/mlartifacts``); any
tracking URI on request (``--tracking-uri`` or ``MLFLOW_TRACKING_URI``). Only the parent process
talks to MLflow. A cell is logged once: runs carry the tag ``bench.cell_hash`` and a cell whose
hash is already in the experiment is not logged again (after a resume, or by
:func:`sync_results`, which back-fills MLflow from the result files).

Logged per cell: params = the cell's axes and component parameters; metrics = every finite
number of ``metrics.json`` (flattened); tags = cell hash and name, grid name, git commit, suite
version, dataset hash, guarantee; artifacts = the cell's files byte for byte (spec, metrics,
manifest, signature when signed) and its provenance. Never any text from the dataset.

Example:
    >>> tracker = Tracker("sqlite:///results/mlflow.db", grid_name="smoke")
    >>> tracker.log_cell(hash_, spec, metrics)
    >>> tracker.finish({"done": 3})
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

import bench
from bench.results.layout import METRICS, PROVENANCE, SPEC
from bench.results.provenance import git_commit

logger = logging.getLogger(__name__)

EXPERIMENT = "bench"


def flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}`` (lists of scalars are joined with commas)."""
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
    """Finite numbers (and booleans as 0/1) of a metrics dict, flattened; the privatizer's
    description (configuration, not a measurement) is left out."""
    out = {}
    for k, v in flatten(metrics).items():
        if k.startswith("privatization.privatizer."):
            continue
        if isinstance(v, bool):
            out[k] = float(v)
        elif isinstance(v, (int, float)) and math.isfinite(float(v)):
            out[k] = float(v)
    return out


def cell_params(spec: dict) -> dict[str, str]:
    """MLflow params of a cell: its axes and component parameters (no settings noise)."""
    keep = {k: spec[k] for k in ("dataset", "model", "mechanism", "sensitivity", "mapping",
                                 "epsilon", "seed") if k in spec}
    return {k: str(v)[:500] for k, v in flatten(keep).items()}


def default_uri(results: str | Path) -> str:
    """``sqlite:///<results>/mlflow.db`` (absolute)."""
    return f"sqlite:///{(Path(results) / 'mlflow.db').resolve()}"


class Tracker:
    """A parent run for one grid invocation; nested child runs for cells."""

    def __init__(self, uri: str, grid_name: str, results: str | Path = "results",
                 params: dict | None = None) -> None:
        os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
        import mlflow

        for name in ("alembic", "mlflow.store.db.utils", "mlflow.tracking.fluent"):
            logging.getLogger(name).setLevel(logging.WARNING)
        self.mlflow = mlflow
        self.grid_name = grid_name
        self.commit = git_commit() or "unknown"
        before = os.environ.get("MLFLOW_TRACKING_URI")
        mlflow.set_tracking_uri(uri)
        # mlflow also exports the URI to the environment (for subprocesses): a later run in
        # this process, or a `bench run` it starts, on another results folder would then log
        # into this folder's store; only a URI the user set stays in the environment
        if before is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = before
        client = mlflow.MlflowClient()
        exp = client.get_experiment_by_name(EXPERIMENT)
        if exp is None:
            art = None
            if uri.startswith("sqlite:"):
                art = (Path(results).resolve() / "mlartifacts").as_uri()
            exp_id = client.create_experiment(EXPERIMENT, artifact_location=art)
        else:
            exp_id = exp.experiment_id
        self.experiment_id = exp_id
        self.logged = self._logged_hashes(client)
        self.parent = mlflow.start_run(experiment_id=exp_id, run_name=grid_name)
        mlflow.set_tags({"bench.grid": grid_name, "bench.kind": "grid",
                         "bench.git_commit": self.commit,
                         "bench.suite_version": bench.__version__})
        if params:
            mlflow.log_params({k: str(v)[:500] for k, v in params.items()})

    def _logged_hashes(self, client) -> set[str]:
        hashes: set[str] = set()
        token = None
        while True:
            page = client.search_runs([self.experiment_id], "tags.`bench.kind` = 'cell'",
                                      max_results=1000, page_token=token)
            hashes.update(r.data.tags.get("bench.cell_hash", "") for r in page)
            token = page.token
            if not token:
                return hashes

    def is_logged(self, cell_hash: str) -> bool:
        """Whether the experiment has a run of this cell, asking MLflow again (another runner
        on the same results folder may have logged it since this tracker started)."""
        if cell_hash in self.logged:
            return True
        found = self.mlflow.MlflowClient().search_runs(
            [self.experiment_id], f"tags.`bench.cell_hash` = '{cell_hash}'", max_results=1)
        if found:
            self.logged.add(cell_hash)
        return bool(found)

    def log_cell(self, cell_hash: str, spec: dict, metrics: dict, recheck: bool = False,
                 provenance: dict | None = None, files: dict[str, bytes] | None = None) -> bool:
        """Mirror one finished cell as a nested run; False if it was logged before (with
        ``recheck``, as MLflow says now, see :meth:`is_logged`; otherwise as it said when this
        tracker started or since).

        Artifacts: ``spec.json``, ``metrics.json`` (what ``bench leaderboard`` reads back) and
        ``provenance.json`` (``provenance``, by default :func:`bench.results.provenance.current`).
        ``files``: the cell folder's files as they are (:func:`cell_files`: spec, metrics,
        manifest, signature), logged byte for byte instead of ``spec`` and ``metrics``
        re-serialised, so a reader can check the manifest and the signature against them.
        """
        if self.is_logged(cell_hash) if recheck else cell_hash in self.logged:
            return False
        mlflow = self.mlflow
        g = metrics.get("guarantee") or {}
        # tags at creation: a run cut short (a killed process) is still found by its hash, and
        # `bench verify` reports its metrics as disagreeing with the files
        tags = {"bench.kind": "cell", "bench.cell_hash": cell_hash,
                "bench.cell": spec.get("name", ""), "bench.grid": self.grid_name,
                "bench.git_commit": self.commit,
                "bench.suite_version": str((provenance or {}).get("suite_version")
                                           or spec.get("suite_version", "")),
                "bench.dataset_hash": spec.get("dataset_hash", ""),
                "bench.guarantee": g.get("kind", "none"),
                "bench.guarantee_proven": str(g.get("proven", ""))}
        with mlflow.start_run(experiment_id=self.experiment_id, run_name=spec.get("name"),
                              nested=True, tags=tags):
            mlflow.log_params(cell_params(spec))
            mlflow.log_metrics(numeric_metrics(metrics))
            if files:
                for name, data in sorted(files.items()):
                    mlflow.log_text(data.decode("utf-8"), name)
            else:
                mlflow.log_dict(spec, SPEC)
                mlflow.log_dict(metrics, METRICS)
            if provenance is None:
                from bench.results.provenance import current

                provenance = current()
            mlflow.log_dict(provenance, PROVENANCE)
        self.logged.add(cell_hash)
        return True

    def finish(self, counts: dict[str, int], seconds: float | None = None) -> None:
        """Close the parent run with the invocation's counts."""
        metrics = {f"cells_{k}": float(v) for k, v in counts.items()}
        if seconds is not None:
            metrics["wall_seconds"] = float(seconds)
        self.mlflow.log_metrics(metrics)
        self.mlflow.end_run(status="FAILED" if counts.get("failed") else "FINISHED")


def cell_files(folder: Path) -> dict[str, bytes]:
    """A sealed cell's files as MLflow artifacts carry them: spec, metrics, manifest and, when
    it is signed, the signature (read as any cell file: regular, bounded)."""
    from bench.results import layout
    from bench.results.store import read_regular

    names = [SPEC, METRICS, layout.MANIFEST]
    if layout.signature_file(folder).is_file():
        names.append(layout.SIGNATURE)
    return {n: read_regular(folder / n) for n in names}


def _parsed(files: dict[str, bytes], name: str) -> dict[str, Any]:
    """One of :func:`cell_files`' files as its JSON object (the bytes read once serve both)."""
    from bench.results.store import parse_object

    return parse_object(files[name], name)


def sync_results(results: str | Path = "results", uri: str | None = None) -> tuple[int, int]:
    """Back-fill MLflow from ``results/cells``: log every sound cell not yet logged.

    Returns:
        ``(logged, already_there)``.
    """
    from bench.results import layout
    from bench.results.store import cell_done

    results = Path(results)
    cells = [f for f in layout.cell_folders(results)
             if cell_done(f)]  # sound cells only (bench.results.store)
    tracker = Tracker(uri or default_uri(results), "mlflow-sync", results)
    logged = 0
    for folder in cells:
        files = cell_files(folder)
        spec, metrics, manifest = (_parsed(files, n) for n in (SPEC, METRICS, layout.MANIFEST))
        # who computed the cell, not who syncs it ({} when the cell predates provenance)
        logged += tracker.log_cell(folder.name, spec, metrics,
                                   provenance=manifest.get("provenance") or {}, files=files)
    tracker.finish({"synced": logged})
    return logged, len(cells) - logged


def mirror_cell(tracker: Tracker, results: str | Path, cell_hash: str, cached: bool,
                spec: dict[str, Any], metrics: dict[str, Any]) -> None:
    """Log one finished (``cached``: already finished earlier) cell to MLflow, once.

    Under a per-cell lock and asking MLflow again: another runner on the same results folder
    may be logging the same cell (it computed it; here it is cached). A cached cell is logged
    from its files (``spec`` and ``metrics`` are then unused), only if it never reached MLflow.
    """
    import time

    from bench.results import layout
    from bench.results.locks import CellLock
    from bench.results.store import read_provenance

    folder = layout.cell_dir(results, cell_hash)
    lock = CellLock(layout.lock_file(results, f"{cell_hash}.mlflow"))
    for _ in range(600):  # 30 s; a lock held that long belongs to a stuck runner: go on
        if lock.acquire():
            break
        time.sleep(0.05)
    try:
        # the cell's own provenance (written by the worker that computed it, with the numeric
        # platform it ran on), not this process's
        prov = read_provenance(folder)
        if cached:
            if not tracker.is_logged(cell_hash):
                files = cell_files(folder)
                tracker.log_cell(cell_hash, _parsed(files, SPEC), _parsed(files, METRICS),
                                 provenance=prov, files=files)
        else:
            tracker.log_cell(cell_hash, spec, metrics, recheck=True, provenance=prov,
                             files=cell_files(folder))
    finally:
        lock.release()
