"""Reading a grid's datasets before a run (``bench validate GRID --data``): every dataset the
grid's cells use is loaded through the loader the run uses (:func:`bench.run.inputs.dataset`),
so a wrong column name, a file that is not UTF-8, an empty file or a file changed since the grid
was read is one error line here instead of a failed run, and the rows a CSV/JSONL loader drops
(an empty text, label or attribute) are counted.

Each distinct dataset configuration is loaded once, with the seed of its first cell: what can
be wrong with a file does not depend on the seed (the seed only draws the subsample and the
splits). The messages name files, lines and columns, never a row's values.

Example:
    >>> from bench.grid import load_grid
    >>> report = check_data(load_grid("experiments/quickstart.yaml"))
    >>> print(report.text(), report.errors)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from bench.grid import Grid, canonical_json

logger = logging.getLogger(__name__)


@dataclass
class DataCheck:
    """What loading a grid's datasets found."""

    loaded: list[str] = field(default_factory=list)
    """One line per dataset that loaded: its name in the grid and its size."""
    warnings: list[str] = field(default_factory=list)
    """Rows dropped by a loader (:class:`bench.datasets.generic.DroppedRows`), one line each."""
    errors: list[str] = field(default_factory=list)
    """One line per dataset that cannot be loaded: ``dataset NAME: what is wrong``."""

    def text(self) -> str:
        """The lines ``bench validate --data`` prints on stdout (errors go to stderr)."""
        lines = [f"data: {len(self.loaded)} dataset(s) loaded, {len(self.errors)} error(s)"]
        lines += [f"  {x}" for x in self.loaded]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines) + "\n"


def check_data(grid: Grid) -> DataCheck:
    """Load every distinct dataset configuration of ``grid``'s cells (skipped cells aside) and
    report what is wrong with each; never raises for a dataset's fault."""
    from bench.datasets.generic import collect_dropped
    from bench.run import inputs

    out = DataCheck()
    seen: set[str] = set()
    for cell in grid.cells:
        key = canonical_json([cell.dataset, cell.dataset_kwargs()])
        if key in seen:
            continue
        seen.add(key)
        label = cell.name.split(":", 1)[0]
        with collect_dropped() as dropped:
            try:
                ds = inputs.dataset(cell)
            except Exception as e:  # noqa: BLE001 - every fault is reported, none is raised
                out.errors.append(f"dataset {label}: {_message(e)}")
                continue
        out.loaded.append(f"{label}: {len(ds)} texts")
        out.warnings += list(dict.fromkeys(d.text() for d in dropped))
    return out


def _message(e: Exception) -> str:
    """An exception as one line: a dataset error's own message, anything else with its type."""
    from bench.datasets.errors import DatasetError

    text = (str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)).strip()
    first = text.splitlines()[0] if text else ""
    if isinstance(e, DatasetError):
        return first
    logger.debug("loading a dataset failed", exc_info=e)
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


__all__ = ["DataCheck", "check_data"]
