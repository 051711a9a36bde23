"""``bench migrate``: carry cells written before 0.4.0 over to the hash that ignores the suite
version.

Before 0.4.0 a cell's hash covered the suite version, so every release orphaned every result,
even when nothing that computes it had changed. Since 0.4.0 it covers the spec (every
component's version), the dataset content hash and :data:`bench.grid.cell.PIPELINE_VERSION`.
A cell migrates when it is sound (:func:`bench.results.store.check_cell`) and its spec hashes to its
folder's name under the old rule -- that proves the spec is the one it was computed from. It
is then rewritten under its new hash: the spec without ``suite_version``, the metrics without
their copy of it, and a manifest whose provenance is the cell's own (who computed it, with
the suite version it was computed by) plus ``migrated``: the old hash, the release that
migrated it and when. Its measurements are untouched. A cell whose numeric platform was never
recorded (all cells before 0.4.0) stays so: nothing is invented.

Anything else is left where it is and named in one line: a damaged cell, a spec that does not
hash to its folder, a cell already present under its new hash.

Example:
    >>> print(migrate_results("results").text())
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import bench
from bench.results import layout
from bench.results.store import cell_done, check_cell, load_object, read_provenance, write_cell


@dataclass
class MigrationReport:
    """What ``bench migrate`` did to a results folder."""

    results: Path
    """The results folder."""
    migrated: list[tuple[str, str]] = field(default_factory=list)
    """``(old hash, new hash)`` of every cell rewritten."""
    current: int = 0
    """Cells already written under the current rule (left as they are)."""
    left: list[str] = field(default_factory=list)
    """One line per cell left as it is, with the reason."""

    def text(self) -> str:
        """The console report."""
        lines = [f"migrate {self.results}: {len(self.migrated)} cell(s) moved to the 0.4.0 hash, "
                 f"{self.current} already current, {len(self.left)} left as they are"]
        lines += [f"  {old} -> {new}" for old, new in self.migrated]
        lines += [f"  left {x}" for x in self.left]
        return "\n".join(lines) + "\n"


def migrate_cell(folder: Path) -> tuple[str | None, str | None]:
    """Migrate one cell folder: ``(new hash, None)``, ``(None, None)`` if it is current
    already, or ``(None, reason)`` if it is left as it is."""
    from bench.grid import Cell, cell_hash

    problem = check_cell(folder)
    if problem:
        return None, f"damaged: {problem}"
    spec = load_object(layout.spec_file(folder))
    if "suite_version" not in spec:
        return None, None
    suite = str(spec["suite_version"])
    try:
        cell = Cell.from_spec(spec)
    except (KeyError, TypeError, ValueError) as e:
        return None, f"{layout.SPEC} of suite {suite} does not describe a cell ({e})"
    new = cell_hash(cell, spec.get("dataset_hash"))  # check_cell checked its old hash
    target = folder.parent / new
    if target.exists():
        state = "a sound cell" if cell_done(target) else "something"
        return None, f"{state} is already at its new hash {new}"
    metrics = load_object(layout.metrics_file(folder))
    metrics.pop("suite_version", None)
    new_spec = {k: v for k, v in spec.items() if k != "suite_version"} | {"hash": new}
    prov = dict(read_provenance(folder) or {})
    prov.setdefault("suite_version", suite)
    prov["migrated"] = {"from": folder.name, "by": bench.__version__,
                        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    write_cell(target, new_spec, metrics, provenance=prov)
    shutil.rmtree(folder)
    return new, None


def migrate_results(results: str | Path) -> MigrationReport:
    """Migrate every cell under ``results/cells`` (see the module docstring).

    Raises:
        FileNotFoundError: ``results/cells`` is not a folder.
    """
    results = layout.check_results(results)  # NoResultsError (a FileNotFoundError)
    cells = layout.cells_dir(results)
    report = MigrationReport(results)
    for folder in sorted(cells.iterdir()):
        if folder.name.startswith(".") or not folder.is_dir() or folder.is_symlink():
            continue
        if not layout.spec_file(folder).exists():  # a failed cell or debris
            continue
        try:
            new, reason = migrate_cell(folder)
        except (OSError, ValueError) as e:
            new, reason = None, f"unreadable: {e}"
        if new:
            report.migrated.append((folder.name, new))
        elif reason:
            report.left.append(f"{folder.name}: {reason}")
        else:
            report.current += 1
    return report
