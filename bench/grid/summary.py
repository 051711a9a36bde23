"""``bench validate GRID``: what a grid expands to, and why cells are skipped; nothing runs."""

from __future__ import annotations

import os

from bench.grid.cell import Cell
from bench.grid.expand import load_grid
from bench.grid.frozen import canonical_json
from bench.grid.schema import AXES, GridError


def validate_text(path: str | os.PathLike[str], *, verbose: bool = False,
                  max_examples: int = 3) -> str:
    """Human-readable summary for ``bench validate GRID``: counts, skipped cells with reasons.

    Skipped cells are grouped by reason (``max_examples`` names per reason; ``verbose`` lists
    every valid and skipped cell). Raises :class:`GridError` on an invalid grid.
    """
    grid = load_grid(path)
    n_base = sum(c.is_baseline for c in grid.cells)
    lines = [f"grid {grid.name!r} ({grid.path}): {len(grid.cells)} cells "
             f"({n_base} baseline), {len(grid.skipped)} skipped"]
    if len(grid.files) > 1:
        lines.append("  extends: " + " <- ".join(grid.files))
    privatized = [c for c in grid.cells if not c.is_baseline]
    if privatized:
        axes = [a for a in AXES if a != "rewriter" or any(c.has_rewriter for c in privatized)]
        counts = {a: len({_axis_label(c, a) for c in privatized}) for a in axes}
        lines.append("  distinct values (baselines aside): "
                     + ", ".join(f"{a} {n}" for a, n in counts.items()))
    for w in grid.warnings:
        lines.append(f"  warning: {w}")
    if verbose:
        lines.append("cells:")
        lines += [f"  {c.hash}  {c.name}" for c in grid.cells]
    if grid.skipped:
        lines.append("skipped:")
        groups: dict[str, list[Cell]] = {}
        for cell, reason in grid.skipped:
            groups.setdefault(reason, []).append(cell)
        for reason, cells in groups.items():
            lines.append(f"  {len(cells)} x {reason}")
            shown = cells if verbose else cells[:max_examples]
            lines += [f"      {c.name}" for c in shown]
            if len(cells) > len(shown):
                lines.append(f"      ... and {len(cells) - len(shown)} more")
    return "\n".join(lines) + "\n"


def _axis_label(cell: Cell, axis: str) -> str:
    if axis in ("epsilon", "seed"):
        return str(getattr(cell, axis))
    params = cell.dataset_config if axis == "dataset" else getattr(cell, f"{axis}_params")
    return getattr(cell, axis) + canonical_json(params)


def cli_validate(path: str | os.PathLike[str], *, verbose: bool = False) -> tuple[str, int]:
    """``bench validate GRID``: (text to print, exit code). Exit 0 for a valid grid; exit 2 and
    the error message (for stderr) for an invalid one. Nothing is run or written."""
    try:
        return validate_text(path, verbose=verbose), 0
    except GridError as e:
        return f"error: {e}\n", 2
