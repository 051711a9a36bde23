"""What regenerating each committed reference costs: its cells' recorded run times.

Sums every committed cell's ``runtime.total_seconds`` (one core each: a cell runs on one
worker process) per reference, so that the regeneration of all of them can be planned in
machine-hours (docs/reference.md, "What regenerating the references costs"; issue 50). The
times are the ones recorded when each cell was computed, on the machine named in the
reference's row of docs/reference.md; reruns on another CPU differ by up to about a quarter.

Run ``python -m bench.tools.costs`` (``--cores N``: the workers of a machine, default 2).
"""

from __future__ import annotations

import argparse
import statistics
import sys

from bench.reference import (
    REFERENCE_ROOT,
    committed_cells,
    committed_references,
    reference_dir,
)
from bench.results.sections import upgrade


def reference_costs(grid: str) -> dict[str, float]:
    """Cells, CPU-seconds in all, and the median and largest cell of reference ``grid``."""
    cells = committed_cells(reference_dir(grid))
    secs = [float(upgrade(c["metrics"]).runtime.total_seconds or 0.0) for c in cells.values()]
    return {"cells": len(secs), "cpu_seconds": sum(secs),
            "median": statistics.median(secs) if secs else 0.0,
            "largest": max(secs, default=0.0)}


def table(grids: list[str], cores: int = 2) -> str:
    """The Markdown table of :func:`reference_costs` for ``grids`` with a total row; hours on
    ``cores`` cores assume the cells spread evenly over them (the grid's largest cell bounds
    how evenly)."""
    rows = ["| reference | cells | CPU-hours | median cell (s) | largest cell (s) "
            f"| hours on {cores} cores |", "|---|---:|---:|---:|---:|---:|"]
    total = {"cells": 0, "cpu_seconds": 0.0}
    for g in grids:
        c = reference_costs(g)
        total["cells"] += c["cells"]
        total["cpu_seconds"] += c["cpu_seconds"]
        rows.append(f"| `{g}` | {c['cells']:,} | {c['cpu_seconds'] / 3600:.2f} "
                    f"| {c['median']:.0f} | {c['largest']:.0f} "
                    f"| {c['cpu_seconds'] / 3600 / cores:.2f} |")
    rows.append(f"| all {len(grids)} | {total['cells']:,} | {total['cpu_seconds'] / 3600:.2f} "
                f"| | | {total['cpu_seconds'] / 3600 / cores:.2f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """The table for the references named (default: all); exit status 2 on a bad argument."""
    ap = argparse.ArgumentParser(prog="python -m bench.tools.costs", description=__doc__)
    ap.add_argument("grids", nargs="*", help="references (default: every committed one)")
    ap.add_argument("--cores", type=int, default=2, help="cores of the machine (default 2)")
    args = ap.parse_args(argv)
    if args.cores < 1:
        ap.error("--cores must be at least 1")
    known = committed_references()
    if not known:
        ap.error(f"no committed references under {REFERENCE_ROOT}/ (run it from the repository)")
    unknown = sorted(set(args.grids) - set(known))
    if unknown:
        ap.error(f"not a committed reference: {', '.join(unknown)} (expected one of "
                 f"{', '.join(known)})")
    print(table(args.grids or known, args.cores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
