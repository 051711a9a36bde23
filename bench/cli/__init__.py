"""The ``bench`` console script.

Commands:
    bench ls mechanisms|sensitivity|mappings|embeddings|datasets|adversaries|rewriters
             [--details]
    bench privatize -m MECH -e EPS [--sensitivity S] [--mapping M] [--seed N] [--vocab-size N]
                    [--oov unk|keep] [-p key=value ...] [-i FILE] [-o FILE]
    bench data prepare NAME [--cache-dir DIR] [--set key=value ...] [--force]
    bench embeddings fetch NAME [--from TARBALL] [--force]
    bench validate GRID [--details]
    bench run GRID [--results DIR] [--jobs N] [--executor local|dask] [--scheduler ADDRESS]
                   [--tracking-uri URI] [--no-mlflow] [--overwrite never|only-missing|always]
                   [--fail-fast]
    bench mlflow-sync [--results DIR] [--tracking-uri URI]
    bench report [--results DIR] [--out DIR] [--grid NAME] [--audit DIR] [--adversary NAME]
    bench perf [--vocab-size N] [--tokens N] [-m MECH ...] [--peers [--peers-path DIR]]
    bench leaderboard RESULTS... [--mlflow URI] [--out DIR] [--trusted SOURCE] [--keys FILE]
                      [--verify N]
    bench keygen FILE
    bench sign [--results DIR] --key FILE
    bench audit -m MECH -e EPS [-p key=value] [--sensitivity S] [--draws N] [--pairs N]
    bench demo

Bad input gets one clear line on stderr and exit code 2; nothing is written.

One module per group of commands, each holding its commands and their parsers:
:mod:`~bench.cli.components` (ls, privatize, data, embeddings), :mod:`~bench.cli.grid`
(validate, run, mlflow-sync, dask-worker), :mod:`~bench.cli.report` (report, leaderboard),
:mod:`~bench.cli.checks` (audit, verify, migrate, reference), :mod:`~bench.cli.sign` (keygen,
sign), :mod:`~bench.cli.tools` (perf, demo); :mod:`~bench.cli.common` holds the exit codes and
shared helpers. Every command imports what it needs when it runs, so ``bench --help`` stays
fast.
"""

from __future__ import annotations

import argparse
import logging
import sys

from bench.cli.checks import (
    add_audit_parser,
    add_migrate_parser,
    add_reference_parser,
    add_verify_parser,
)
from bench.cli.common import (
    EXIT_USAGE,
    AuditViolation,
    ReferenceMismatch,
    RunFailed,
    UsageError,
    VerifyFailed,
)
from bench.cli.components import (
    add_data_parser,
    add_embeddings_parser,
    add_ls_parser,
    add_privatize_parser,
)
from bench.cli.grid import (
    add_dask_worker_parser,
    add_measure_parser,
    add_mlflow_sync_parser,
    add_run_parser,
    add_validate_parser,
)
from bench.cli.report import add_leaderboard_parser, add_report_parser
from bench.cli.sign import add_keygen_parser, add_sign_parser
from bench.cli.tools import add_demo_parser, add_perf_parser, add_platform_parser

__all__ = [
    "EXIT_USAGE",
    "AuditViolation",
    "ReferenceMismatch",
    "RunFailed",
    "UsageError",
    "VerifyFailed",
    "build_parser",
    "main",
]


def build_parser() -> argparse.ArgumentParser:
    """The ``bench`` argument parser: one ``add_*_parser`` helper per subcommand, in the order
    ``bench --help`` lists them."""
    p = argparse.ArgumentParser(prog="bench", description="Word-level DP text privatization "
                                "benchmark suite.")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = p.add_subparsers(dest="command", required=True)

    add_ls_parser(sub)
    add_privatize_parser(sub)
    add_data_parser(sub)
    add_embeddings_parser(sub)
    add_perf_parser(sub)
    add_platform_parser(sub)
    add_audit_parser(sub)
    add_validate_parser(sub)
    add_run_parser(sub)
    add_measure_parser(sub)
    add_report_parser(sub)
    add_leaderboard_parser(sub)
    add_mlflow_sync_parser(sub)
    add_verify_parser(sub)
    add_keygen_parser(sub)
    add_sign_parser(sub)
    add_migrate_parser(sub)
    add_reference_parser(sub)
    add_dask_worker_parser(sub)
    add_demo_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the ``bench`` command line; returns the exit code: 0, 1 (a check failed) or 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    from bench import numeric

    if numeric.mode_error():
        print(f"bench: error: {numeric.mode_error()}", file=sys.stderr)
        return EXIT_USAGE
    try:
        text = args.func(args)
    except AuditViolation:
        print("bench: audit found a VIOLATION of the claimed guarantee", file=sys.stderr)
        return 1
    except ReferenceMismatch as e:
        print(f"bench: the committed reference of {e.args[0]} does not check out",
              file=sys.stderr)
        return 1
    except VerifyFailed as e:
        print(f"bench: {e.args[0]} has problems (see above)", file=sys.stderr)
        return 1
    except RunFailed as e:
        from bench.results.layout import CELLS, ERROR

        print(f"bench: {e.args[0]} cell(s) failed; see results/{CELLS}/*/{ERROR}",
              file=sys.stderr)
        return 1
    except (UsageError, ValueError, KeyError, FileNotFoundError) as e:
        msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        print(f"bench: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    if text:
        sys.stdout.write(text)
    return 0
