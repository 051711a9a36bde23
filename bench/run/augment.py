"""``bench measure``: add a grid's new measures to the cells a results folder already holds.

A measure (:mod:`bench.measures`) draws from its own random stream and reads what the other
stages produced without changing it, so a cell with measures M ∪ N has the same numbers as the
cell with measures M, plus N's records. When a grid asks for a measure its cells do not have
yet, :func:`add_measures` finds, for every cell of the grid that is not in the folder, a
*source*: the sound cell that differs from it only in its measures (fewer of them, or some at
an older version: the one with the most of them at the current versions), and writes the new
cell from the source's metrics plus the missing or outdated measures, computed from the cached
privatized (and rewritten) corpus -- no model is trained, no attack rerun. A measure that
needs the membership attacks (``mia_low_fpr``, ``mia_rmia``) reruns the membership stage, and
the new cell is written only if that stage reproduces the source's membership metrics bit for
bit. The manifest's provenance records the source cell
(``derived_from``: its hash, the measures added, the source's own provenance).

A derived cell is what ``bench run`` would compute (``bench reference check --rerun``
recomputes a cell in full and compares; the tests do it for a derived cell). Cells without a
source (another configuration, another component version) are left to ``bench run``.

Example:
    $ bench measure experiments/quickstart.yaml --results results/reference/quickstart
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.grid import Cell, cell_hash, load_grid
from bench.results import layout
from bench.results.compare import comparable, differences
from bench.results.locks import CellLock
from bench.results.record import read_metrics
from bench.results.sections import set_sections, upgrade
from bench.results.store import cell_done, read_provenance, write_cell

logger = logging.getLogger(__name__)


@dataclass
class MeasureSummary:
    """What :func:`add_measures` did, cell by cell."""

    derived: list[tuple[str, str, list[str]]] = field(default_factory=list)
    """(new cell hash, source cell hash, measures added)."""
    present: int = 0
    """Cells already in the folder."""
    no_source: list[str] = field(default_factory=list)
    """Names of the cells without a source (to compute with ``bench run``)."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """(cell name, why)."""
    seconds: float = 0.0
    measures: dict[str, float] = field(default_factory=dict)
    """Seconds per measure added, summed over the derived cells."""

    def text(self) -> str:
        """The summary ``bench measure`` prints."""
        lines = [f"measures: {len(self.derived)} cell(s) derived from existing ones, "
                 f"{self.present} already present, {len(self.no_source)} without a source "
                 f"(run them with bench run), {len(self.failed)} failed "
                 f"({self.seconds:.1f} s)"]
        if self.measures:
            from bench.run.runner import measure_times_text

            lines.append("  measures added, summed over the cells: "
                         + measure_times_text(self.measures))
        lines += [f"  failed {name}: {why}" for name, why in self.failed]
        return "\n".join(lines) + "\n"


def _identity(spec: dict) -> str:
    """A stored or expanded spec without its measures (and without what names the cell): two
    cells with the same identity differ at most in their measures and their versions."""
    from bench.grid.frozen import canonical_json

    out = {k: v for k, v in spec.items() if k not in ("hash", "name", "measures")}
    out["settings"] = {k: v for k, v in (spec.get("settings") or {}).items() if k != "measures"}
    return canonical_json(out)


def folder_index(results: Path) -> dict[str, list[tuple[str, dict[str, str]]]]:
    """The sound cells of ``results`` by :func:`_identity`: ``[(hash, {measure: version})]``."""
    import json

    from bench.measures import parse_versions

    index: dict[str, list[tuple[str, dict[str, str]]]] = {}
    cells = layout.cells_dir(results)
    if not cells.is_dir():
        return index
    for folder in sorted(p for p in cells.iterdir() if p.is_dir()):
        if not cell_done(folder):
            continue
        try:
            spec = json.loads((folder / layout.SPEC).read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(spec, dict):
            continue
        index.setdefault(_identity(spec), []).append(
            (folder.name, parse_versions(spec.get("measures"))))
    return index


def find_source(cell: Cell, dataset_hash: str, index: dict[str, list[tuple[str, dict]]]
                ) -> tuple[str, dict[str, str]] | None:
    """The sound cell of the folder (``index``: :func:`folder_index`) that differs from
    ``cell`` only in its measures -- fewer of them, or some at other versions -- with the
    most of ``cell``'s measures at their current versions (ties: the lowest hash), and its
    measures; None if there is none."""
    from bench.measures import parse_versions

    spec = cell.spec() | {"dataset_hash": dataset_hash}
    wanted = parse_versions(cell.versions.get("measures"))
    best = None
    for h, have in index.get(_identity(spec), []):
        kept = sum(have.get(n) == v for n, v in wanted.items())
        if best is None or kept > best[0]:
            best = (kept, h, have)
    return None if best is None else (best[1], best[2])


def derive_cell(cell: Cell, dataset_hash: str, source_hash: str, source_measures: dict[str, str],
                results: Path) -> list[str]:
    """Write ``cell`` from its source's metrics plus the measures the source lacks or holds at
    another version (recomputed); returns their names. The source's records of measures the
    cell does not ask for are left out. Raises ValueError where the membership stage does not
    reproduce the source's."""
    from bench.measures import compute_measures, parse_versions
    from bench.results.provenance import current
    from bench.run import stages

    t0 = time.perf_counter()
    src_metrics = copy.deepcopy(read_metrics(results, source_hash))
    src = upgrade(src_metrics)
    wanted = parse_versions(cell.versions.get("measures"))
    missing = [n for n, v in wanted.items() if source_measures.get(n) != v]
    run = stages.CellRun(cell, results)
    stages.load(run)
    stages.privatize(run)
    if cell.has_rewriter:
        stages.rewrite(run)
    from bench.measures import measure

    if any("mia" in measure(n).needs for n in missing):
        stages.membership(run)
        # the validity keys come later (deltas stage)
        rerun = comparable(upgrade(run.metrics).mia.to_dict())
        stored = {k: v for k, v in comparable(src.mia.to_dict()).items() if k in rerun}
        diff = differences(stored, rerun)
        if diff:
            raise ValueError("the membership stage does not reproduce the source cell's: "
                             + "; ".join(diff[:3]))
    added = compute_measures(stages.measure_input(cell, run), missing)
    metrics = dict(src_metrics)
    measures = {n: (added.get(n) or src.measure(n)) for n in wanted}
    set_sections(metrics, cell=cell.name, measures=measures)
    if not measures:
        metrics.pop("measures")
    set_sections(metrics, runtime=src.runtime.with_values(
        measures_seconds=src.runtime.get("measures_seconds") + time.perf_counter() - t0))
    h = cell_hash(cell, dataset_hash)
    spec = cell.spec() | {"hash": h, "name": cell.name, "dataset_hash": dataset_hash}
    prov = current() | {"derived_from": {"cell": source_hash, "measures_added": missing,
                                         "provenance": read_provenance(
                                             layout.cell_dir(results, source_hash))}}
    write_cell(layout.cell_dir(results, h), spec, metrics, provenance=prov)
    return missing


def add_measures(grid_path: str | Path, results: str | Path, jobs: int = 1) -> MeasureSummary:
    """Derive every cell of the grid that is missing from ``results`` and has a source there
    (see the module docstring); ``jobs`` > 1 derives that many cells at a time, each in a
    worker process (joblib's loky executor, as ``bench run --jobs``: the workers inherit the
    pinned environment), taking the cells as they come free."""
    from bench.run.runner import dataset_hashes

    t0 = time.perf_counter()
    results = Path(results)
    grid = load_grid(grid_path)
    hashes = dataset_hashes(grid)
    out = MeasureSummary()
    index = folder_index(results)
    todo = []
    for cell in grid.cells:
        dh = hashes[(cell.dataset, cell.dataset_config, cell.seed)]
        h = cell_hash(cell, dh)
        if cell_done(layout.cell_dir(results, h)):
            out.present += 1
            continue
        found = find_source(cell, dh, index) if "measures" in cell.versions else None
        if found is None:
            out.no_source.append(cell.name)
            continue
        todo.append((cell, dh, h, found))
    if jobs > 1 and len(todo) > 1:
        from concurrent.futures import wait

        from joblib.externals.loky import get_reusable_executor

        executor = get_reusable_executor(max_workers=min(int(jobs), len(todo)))
        futures = [executor.submit(_derive_locked, cell, dh, h, found, results)
                   for cell, dh, h, found in todo]
        try:
            outcomes = [f.result() for f in futures]
        finally:  # interrupted: cells not started are dropped, those in flight finish
            for f in futures:
                f.cancel()
            wait(futures)
    else:
        outcomes = [_derive_locked(cell, dh, h, found, results) for cell, dh, h, found in todo]
    for (cell, _dh, h, found), (added, why, times) in zip(todo, outcomes, strict=True):
        if why is not None:
            out.failed.append((cell.name, why))
            continue
        out.derived.append((h, found[0], added))
        for name in added:
            out.measures[name] = out.measures.get(name, 0.0) + times.get(name, 0.0)
    out.seconds = time.perf_counter() - t0
    return out


def _derive_locked(cell: Cell, dh: str, h: str, found: tuple[str, dict[str, str]],
                   results: Path) -> tuple[list[str], str | None, dict[str, float]]:
    """:func:`derive_cell` under the cell's lock and the cell's BLAS thread count:
    ``(measures added, None, their seconds)``, or ``([], why it failed, {})``; one failing cell
    is reported and the others go on."""
    from bench.run.runner import measure_times
    from bench.run.worker import cell_threads

    lock = CellLock(layout.lock_file(results, h))
    if not lock.acquire():
        return [], "locked by another run", {}
    try:
        with cell_threads():
            added = derive_cell(cell, dh, *found, results)
        return added, None, measure_times([read_metrics(results, h)])
    except Exception as e:
        logger.error("bench measure: %s: %s", cell.name, e)
        return [], f"{type(e).__name__}: {e}", {}
    finally:
        lock.release()
