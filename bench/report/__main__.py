"""``python -m bench.report``: the report without the ``bench`` CLI (used by ``dvc.yaml``).

Example:
    $ python -m bench.report --results results --out results/report --grid smoke
"""

from __future__ import annotations

import argparse
import logging
import sys

from bench.report import ReportError, cli_report

logger = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, build the report, print the summary; exit 2 on bad input."""
    p = argparse.ArgumentParser(prog="python -m bench.report",
                                description="tables, plots and leaderboard from results")
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument("--out", default=None, help="report folder (default: RESULTS/report)")
    p.add_argument("--grid", default=None, help="only the cells of this grid (name or file)")
    p.add_argument("--audit", default=None, metavar="DIR",
                   help="bench audit status records (default: RESULTS/audit if it exists)")
    p.add_argument("--adversary", default=None, metavar="NAME",
                   help="read privacy from this adversary: 'headline' (default: the strongest, "
                        "1 - max adversary macro-F1), 'model' (the cell's own model, the thesis "
                        "layout) or a name (lexical, informed, lstm, ...)")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        text = cli_report(args.results, args.out, args.grid, args.audit, args.adversary)
    except ReportError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
