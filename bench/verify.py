"""``bench verify``: check a whole results folder, and its MLflow mirror, and optionally repair.

Checked (files are the source of truth, :mod:`bench.results.store`):

* every ``cells/<hash>/`` folder: *done* (sound), *failed* (``error.json``), *damaged* (with the
  reason: unparsable, checksum or size mismatch, wrong hash, schema) or *unsealed* (sound but
  without a manifest: written before manifests existed, by hand or elsewhere);
* temporary folders a killed writer left in ``cells/`` (dot-folders);
* the MLflow mirror, if there is one (``results/mlflow.db`` or ``--tracking-uri``): sound cells
  with no run (*missing*), cells with more than one run (*duplicated*), runs whose metrics
  disagree with the files (*disagreeing*) and runs of cells that are not in the files
  (*orphaned*, e.g. moved aside as damaged).

``--repair`` moves damaged cells and temporary folders aside to ``results/damaged/`` (never
deleting them), recomputes every damaged cell whose stored spec still describes a current
cell that ``bench run`` would accept (:func:`recompute_refusal`: no file named in it, its values
within the grid checks and resource limits; its baseline is looked up among the sound cells),
logs missing runs, deletes the extra runs of duplicated cells and re-logs disagreeing ones;
``--seal`` writes manifests for unsealed cells. Orphaned runs are only reported.

Example:
    >>> report = verify_results("results", repair=True)
    >>> print(report.text())
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.analysis.baseline import BaselineIndex, is_baseline
from bench.results import layout
from bench.results.layout import MANIFEST
from bench.results.record import read_metrics, read_spec
from bench.results.store import (
    cell_state,
    check_cell,
    parse_object,
    quarantine,
    read_regular,
    seal_cell,
)

logger = logging.getLogger(__name__)

STRAY_AGE = 60
"""Seconds a temporary folder under ``cells/`` must be old before ``--repair`` moves it: a
running writer's folder lives for milliseconds, one a killed writer left stays forever."""


@dataclass
class MlflowCheck:
    """The MLflow mirror compared with the sound cells."""

    uri: str
    error: str | None = None
    """Why the store could not be read (then nothing else was compared)."""
    runs: int = 0
    missing: list[str] = field(default_factory=list)
    duplicated: dict[str, list[str]] = field(default_factory=dict)
    """Cell hash -> its run ids, oldest first."""
    disagreeing: dict[str, str] = field(default_factory=dict)
    """Cell hash -> the first metric that differs."""
    orphaned: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The store was readable and no cell is missing, duplicated or disagreeing."""
        return not (self.error or self.missing or self.duplicated or self.disagreeing)


@dataclass
class VerifyReport:
    """Outcome of :func:`verify_results`."""

    results: Path
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)
    """Cell hash -> reason."""
    unsealed: list[str] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    stale_locks: list[str] = field(default_factory=list)
    """Lock files (``locks/``) no live run holds (:func:`bench.results.locks.is_stale`): each
    keeps its cell "locked by another run" until ``--repair`` removes it."""
    mlflow: MlflowCheck | None = None
    actions: list[str] = field(default_factory=list)
    """What ``--repair`` / ``--seal`` did, one line each."""

    @property
    def ok(self) -> bool:
        """No damaged, unsealed or stray entries and a consistent MLflow mirror (orphaned runs
        and failed cells do not count: the first are history, the second recorded outcomes)."""
        return not (self.damaged or self.unsealed or self.stray or self.stale_locks) and (
            self.mlflow is None or self.mlflow.ok)

    def text(self) -> str:
        """Human-readable summary."""
        lines = [f"verify {self.results}: {len(self.done)} cells sound, {len(self.failed)} "
                 f"failed, {len(self.damaged)} damaged, {len(self.unsealed)} without a "
                 f"manifest, {len(self.stray)} unfinished temporary folder(s)"]
        from bench.results.record import platforms

        for desc, n in platforms(self.results, sorted(self.done)).items():
            lines.append(f"  platform: {n} cell(s) on {desc}")
        lines += [f"  damaged {h}: {r}" for h, r in sorted(self.damaged.items())]
        lines += [f"  unsealed {h} (`--seal` writes its manifest)" for h in self.unsealed[:20]]
        lines += [f"  stray {s}" for s in self.stray]
        lines += [f"  stale lock {s} (no live run holds it; `--repair` removes it)"
                  for s in self.stale_locks]
        m = self.mlflow
        if m is None:
            lines.append(f"  mlflow: no store ({self.results}/mlflow.db absent; --tracking-uri "
                         "to check another)")
        elif m.error:
            lines.append(f"  mlflow {m.uri}: UNUSABLE ({m.error}); `--repair` moves a broken "
                         "results/mlflow.db aside and mirrors every sound cell into a new one")
        else:
            lines.append(f"  mlflow {m.uri}: {m.runs} cell runs; {len(m.missing)} missing, "
                         f"{len(m.duplicated)} duplicated, {len(m.disagreeing)} disagreeing "
                         f"with the files, {len(m.orphaned)} orphaned")
            lines += [f"    missing {h}" for h in m.missing[:20]]
            lines += [f"    duplicated {h}: {len(r)} runs" for h, r in m.duplicated.items()]
            lines += [f"    disagreeing {h}: {d}" for h, d in m.disagreeing.items()]
            lines += [f"    orphaned {h} (no sound cell in the files)" for h in m.orphaned]
        lines += [f"  {a}" for a in self.actions]
        lines.append("  OK" if self.ok else "  PROBLEMS (`bench verify --repair` fixes what "
                     "it can)")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------

def stale_locks(results: Path) -> list[str]:
    """The names of the lock files under ``locks/`` that no live run holds (regular files
    only: nothing is followed)."""
    from bench.results.locks import is_stale

    folder = results / layout.LOCKS
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if p.is_file() and not p.is_symlink() and is_stale(p))


def scan(results: Path, report: VerifyReport) -> None:
    """Classify every entry of ``results/cells``."""
    cells = layout.cells_dir(results)
    if not cells.is_dir():
        return
    for folder in sorted(p for p in cells.iterdir() if p.is_dir()):
        if folder.is_symlink():  # never followed: moved aside (the link, not its target)
            report.damaged[folder.name] = check_cell(folder) or "a symbolic link"
            continue
        if folder.name.startswith("."):
            report.stray.append(folder.name)
            continue
        state = cell_state(folder)
        if state == "done":
            report.done.append(folder.name)
        elif state == "failed":
            report.failed.append(folder.name)
        elif state == "damaged":
            if not (folder / MANIFEST).exists() and check_cell(folder, False) is None:
                report.unsealed.append(folder.name)
            else:
                report.damaged[folder.name] = check_cell(folder) or "damaged"


def recompute_refusal(spec: Any) -> str | None:
    """Why a spec read from a results folder is not recomputed (``bench verify --repair``,
    ``bench leaderboard --verify``), in one line, or None; never raises.

    A cell written before 0.4.0 hashed the suite version; a spec naming a dataset file
    (``path``), an embedding file or a model folder could name any file on this machine, and
    only its grid file says which one the user meant; and a spec is recomputed only if
    ``bench run`` would accept the grid values it describes
    (:func:`bench.grid.stored.spec_refusal`: names known, parameters valid, the resource
    limits, so no ``epochs: 1e9``)."""
    from bench.grid.stored import spec_refusal

    if not isinstance(spec, dict):
        return f"its {layout.SPEC} is not a JSON object"
    if "suite_version" in spec:
        return "written before 0.4.0 (`bench migrate` re-keys such cells)"
    dataset = spec.get("dataset")
    config = dataset.get("config") if isinstance(dataset, dict) else None
    if isinstance(config, dict) and config.get("path"):
        return "its dataset is a file named in the spec"
    named = _file_named(spec)
    if named:
        return named
    why = spec_refusal(spec)
    if why:
        return f"`bench run` would refuse it: {why}"
    return None


def _file_named(spec: dict) -> str | None:
    """Why a spec names a file besides its dataset's, or None: the embedding
    (``settings.embedding_path``, read like a dataset's ``path``) or a model's folder
    (``model_path``)."""
    settings = spec.get("settings")
    if isinstance(settings, dict) and settings.get("embedding_path"):
        return "its embedding is a file named in the spec (settings.embedding_path)"
    model = spec.get("model")
    params = model.get("params") if isinstance(model, dict) else None
    if isinstance(params, dict) and params.get("model_path"):
        return "its model is a folder named in the spec (model_path)"
    return None


def _rebuildable(spec_file: Path) -> tuple[Any, dict] | str:
    """``(cell, spec)`` if a (moved-aside) stored spec still describes a current cell that
    ``--repair`` may recompute, else the reason it is not recomputed.

    The spec is read like any file of an untrusted folder (:func:`bench.results.store.read_regular`;
    a cell folder that was a symbolic link is not followed). A spec is not recomputed when
    :func:`recompute_refusal` gives a reason: e.g. it names a file (a hostile spec could name
    any file on this machine, and only its grid file says which data the user meant), or
    ``bench run`` would refuse its values (``epochs: 1e9``).
    """
    from bench.grid import Cell, cell_hash

    try:
        spec = parse_object(read_regular(spec_file), layout.SPEC)
        refusal = recompute_refusal(spec)
        if refusal:
            return refusal
        cell = Cell.from_spec(spec)
        if cell_hash(cell, spec.get("dataset_hash")) != spec.get("hash"):
            return f"its {layout.SPEC} does not hash to its name"
        return cell, spec
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return f"its {layout.SPEC} does not describe a cell ({type(e).__name__})"


def repair_files(results: Path, report: VerifyReport) -> None:
    """Move damaged cells and temporary folders aside; recompute the cells that can be."""
    from bench.run.worker import run_cell

    left = []
    for name in report.stray:
        folder = layout.cell_dir(results, name)
        age = time.time() - folder.stat().st_mtime
        # a writer may still be at work; a folder dated in the future (a wrong clock, or a
        # submitted folder's timestamp) is no writer's, and would otherwise stay forever
        if -STRAY_AGE < age < STRAY_AGE:
            left.append(name)
            report.actions.append(f"left temporary folder {name}: younger than {STRAY_AGE} s")
            continue
        dest = quarantine(folder, results, "unfinished temporary folder")
        report.actions.append(f"moved temporary folder {name} to {dest}")
    report.stray = left
    todo = []
    for h, reason in sorted(report.damaged.items()):
        linked = layout.cell_dir(results, h).is_symlink()
        dest = quarantine(layout.cell_dir(results, h), results, reason)
        report.actions.append(f"moved damaged cell {h} to {dest}")
        rebuilt = ("the cell folder was a symbolic link" if linked
                   else _rebuildable(layout.spec_file(dest)))
        if isinstance(rebuilt, str):
            report.actions.append(f"not recomputing {h}: {rebuilt}; run its grid again "
                                  f"(`bench run GRID --results {results}`)")
        else:
            todo.append((h, *rebuilt))
    baselines: BaselineIndex[str] = BaselineIndex()  # the one pairing rule (bench.analysis)
    for h in report.done:
        spec = read_spec(results, h)
        if is_baseline(spec):
            baselines.add(spec, None, h, hash=h)
    for h, cell, spec in sorted(todo, key=lambda t: not t[1].is_baseline):
        base = None if cell.is_baseline else baselines.find(spec)
        res = run_cell(cell, results, spec.get("dataset_hash"), base)
        if res.status == "done":
            report.actions.append(f"recomputed {h} ({cell.name})")
            report.done.append(h)
            del report.damaged[h]
            if cell.is_baseline:
                baselines.add(spec, None, h, hash=h)
        else:
            report.actions.append(f"recomputing {h} ({cell.name}) {res.status}: {res.error}")
            del report.damaged[h]
            report.failed.append(h)


# --------------------------------------------------------------------------------------------
# MLflow
# --------------------------------------------------------------------------------------------

def _cell_runs(client: Any, experiment_id: str) -> list[Any]:
    runs, token = [], None
    while True:
        page = client.search_runs([experiment_id], "tags.`bench.kind` = 'cell'",
                                  max_results=1000, page_token=token,
                                  order_by=["attributes.start_time ASC"])
        runs += list(page)
        token = page.token
        if not token:
            return runs


def check_mlflow(results: Path, uri: str, sound: list[str]) -> tuple[MlflowCheck, Any, list]:
    """Compare the cell runs of ``uri`` with the sound cells' files."""
    from bench.results.mirror import EXPERIMENT, import_mlflow, numeric_metrics

    mlflow = import_mlflow()

    for name in ("alembic", "mlflow.store.db.utils"):
        logging.getLogger(name).setLevel(logging.WARNING)
    client = mlflow.MlflowClient(tracking_uri=uri)
    out = MlflowCheck(uri)
    exp = client.get_experiment_by_name(EXPERIMENT)
    runs = _cell_runs(client, exp.experiment_id) if exp is not None else []
    out.runs = len(runs)
    by_hash: dict[str, list[Any]] = defaultdict(list)
    for r in runs:
        by_hash[r.data.tags.get("bench.cell_hash", "")].append(r)
    sound_set = set(sound)
    out.missing = sorted(sound_set - set(by_hash))
    out.orphaned = sorted(set(by_hash) - sound_set)
    for h, rs in sorted(by_hash.items()):
        if len(rs) > 1:
            out.duplicated[h] = [r.info.run_id for r in rs]
        if h not in sound_set:
            continue
        files = numeric_metrics(read_metrics(results, h))
        logged = rs[0].data.metrics
        for k, v in sorted(files.items()):
            if logged.get(k) != v:
                out.disagreeing[h] = f"{k}: files {v!r}, mlflow {logged.get(k)!r}"
                break
    return out, client, runs


def repair_mlflow(results: Path, check: MlflowCheck, client: Any, runs: list,
                  report: VerifyReport) -> None:
    """Delete extra and disagreeing runs, then log every sound cell that has no run."""
    from bench.results.mirror import Tracker, mirror_cell

    by_id = {r.info.run_id: r for r in runs}
    for h, ids in check.duplicated.items():
        for run_id in ids[1:]:
            client.delete_run(run_id)
        report.actions.append(f"mlflow: deleted {len(ids) - 1} duplicate run(s) of {h}")
    relog = sorted(check.disagreeing)
    for h in relog:
        for r in by_id.values():
            if r.data.tags.get("bench.cell_hash") == h:
                client.delete_run(r.info.run_id)
    todo = sorted(set(check.missing) | set(relog))
    if todo:
        tracker = Tracker(check.uri, "bench verify --repair", results)
        tracker.logged -= set(relog)
        for h in todo:  # the cell's files and its own provenance, as `bench run` logs them
            mirror_cell(tracker, results, h)
        tracker.finish({"relogged": len(todo)})
        report.actions.append(f"mlflow: logged {len(todo)} cell(s) "
                              f"({len(relog)} re-logged after disagreeing)")
    check.duplicated, check.disagreeing, check.missing = {}, {}, []


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------

def verify_results(results: str | Path = "results", tracking_uri: str | None = None,
                   repair: bool = False, seal: bool = False) -> VerifyReport:
    """Check (and with ``repair`` / ``seal``, fix) a results folder; see the module docstring.

    Raises:
        bench.results.layout.NoResultsError: ``results/cells`` does not exist.
        bench.results.layout.UnsafeResultsError: ``cells/``, ``damaged/`` or ``locks/`` is a
            symbolic link (``--repair`` reads and writes only inside ``results``).
    """
    from bench.results.mirror import default_uri, forget_engine

    results = layout.check_results(results, writes=True)
    report = VerifyReport(results)
    scan(results, report)
    report.stale_locks = stale_locks(results)
    if repair:
        for name in report.stale_locks:
            (results / layout.LOCKS / name).unlink(missing_ok=True)
            report.actions.append(f"removed stale lock {name}")
        report.stale_locks = []
    if seal:
        for h in report.unsealed:
            seal_cell(layout.cell_dir(results, h))
            report.done.append(h)
        if report.unsealed:
            report.actions.append(f"sealed {len(report.unsealed)} cell(s)")
        report.unsealed = []
    if repair:
        repair_files(results, report)
    local = default_uri(results)
    uri = tracking_uri or (local if (results / "mlflow.db").is_file() else None)
    if uri:
        try:
            check, client, runs = check_mlflow(results, uri, report.done)
        except Exception as e:  # e.g. a SQLite store a killed run left half-created
            first = str(e).splitlines()[0] if str(e) else ""
            check, client, runs = MlflowCheck(uri, error=f"{type(e).__name__}: {first}"), None, []
        report.mlflow = check
        if repair and check.error and uri == local:
            dest = quarantine(results / "mlflow.db", results, f"unusable MLflow store: "
                              f"{check.error}")
            forget_engine(uri)
            report.actions.append(f"moved the unusable MLflow store to {dest}")
            check, client, runs = check_mlflow(results, uri, report.done)  # a new, empty one
            report.mlflow = check
        if repair and not check.ok and not check.error:
            repair_mlflow(results, check, client, runs, report)
    return report
