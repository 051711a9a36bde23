"""The ``bench`` console script.

Commands:
    bench ls mechanisms|sensitivity|mappings|embeddings|datasets|adversaries|rewriters
             [--details]
    bench privatize -m MECH -e EPS [--sensitivity S] [--mapping M] [--seed N] [--vocab-size N]
                    [--oov unk|keep] [-p key=value ...] [-i FILE] [-o FILE]
    bench data prepare NAME [--cache-dir DIR] [--set key=value ...] [--force]
    bench data fetch NAME... [--from TARBALL] [--force]
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

Bad input (a :class:`bench.errors.InputError`) gets one clear line on stderr and exit code 2;
nothing is written. A check that fails exits with code 1. Any other exception is an internal
error, a bug in bench: one line ``bench: internal error: <type>: <message>`` and exit code 1;
``bench -v`` prints its traceback -- except a full disk, a read-only file system or a folder the
command may not write (:data:`MACHINE_ERRNOS`): one line ``bench: error: <why>: <path>`` and exit
code 1. ``bench --version`` prints the installed package's version.

One module per group of commands, each holding its commands and their parsers:
:mod:`~bench.cli.components` (ls, privatize, data, embeddings), :mod:`~bench.cli.run`
(validate, run, mlflow-sync, dask-worker), :mod:`~bench.cli.report` (report, leaderboard),
:mod:`~bench.cli.checks` (audit, verify, migrate, reference), :mod:`~bench.cli.sign` (keygen,
sign), :mod:`~bench.cli.tools` (perf, demo); :mod:`~bench.cli.common` holds the exit codes and
shared helpers. Every command imports what it needs when it runs, so ``bench --help`` stays
fast.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
import traceback

import bench
from bench.cli.checks import (
    add_audit_parser,
    add_migrate_parser,
    add_reference_parser,
    add_verify_parser,
)
from bench.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    AuditViolation,
    ReferenceMismatch,
    RunFailed,
    UsageError,
    VerifyFailed,
    error_text,
)
from bench.cli.components import (
    add_data_parser,
    add_embeddings_parser,
    add_ls_parser,
    add_privatize_parser,
)
from bench.cli.report import add_leaderboard_parser, add_report_parser
from bench.cli.run import (
    add_dask_worker_parser,
    add_measure_parser,
    add_mlflow_sync_parser,
    add_run_parser,
    add_validate_parser,
)
from bench.cli.sign import add_keygen_parser, add_sign_parser
from bench.cli.tools import add_demo_parser, add_perf_parser, add_platform_parser
from bench.errors import InputError

__all__ = [
    "EXIT_FAILED",
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
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log progress to stderr; an internal error prints its traceback")
    p.add_argument("--version", action="version", version=f"bench {bench.__version__}",
                   help="print the installed version of bench and exit")
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
    """Run the ``bench`` command line; returns the exit code: 0, 1 (a check failed, or an
    internal error) or 2 (bad input: a :class:`bench.errors.InputError`)."""
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
    except InputError as e:  # bad input: UsageError and the library's declared input errors
        print(f"bench: error: {error_text(e)}", file=sys.stderr)
        return EXIT_USAGE
    except AuditViolation:
        print("bench: audit found a VIOLATION of the claimed guarantee", file=sys.stderr)
        return EXIT_FAILED
    except ReferenceMismatch as e:
        print(f"bench: the committed reference of {e.args[0]} does not check out",
              file=sys.stderr)
        return EXIT_FAILED
    except VerifyFailed as e:
        print(f"bench: {e.args[0]} has problems (see above)", file=sys.stderr)
        return EXIT_FAILED
    except RunFailed as e:
        from bench.results.layout import CELLS, ERROR

        print(f"bench: {e.args[0]} cell(s) failed; see results/{CELLS}/*/{ERROR}",
              file=sys.stderr)
        return EXIT_FAILED
    except OSError as e:
        if e.errno in MACHINE_ERRNOS:  # the machine's disk or permissions, not a bug
            where = f": {e.filename}" if e.filename else ""
            print(f"bench: error: {os.strerror(e.errno)}{where} (free space or fix the "
                  "permissions, then run the command again)", file=sys.stderr)
            return EXIT_FAILED
        return _internal_error(e, verbose=args.verbose)
    except Exception as e:  # anything else is a bug in bench, never "bad input"
        return _internal_error(e, verbose=args.verbose)
    if text:
        sys.stdout.write(text)
    return 0


MACHINE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES,
                            errno.EPERM})
"""Errors of the machine a command runs on -- a full disk or quota, a read-only file system, a
folder it may not write -- reported in one line (exit code 1), never as a bug in bench."""


def _internal_error(e: Exception, *, verbose: bool) -> int:
    """Report an exception no command declared as bad input: a bug in bench (exit code 1).

    One line names its type and message; ``-v`` prints the traceback above it.
    """
    if verbose:
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    msg = " ".join(str(e).split())  # as Python's last traceback line has it, on one line
    print(f"bench: internal error: {type(e).__name__}{': ' + msg if msg else ''}",
          file=sys.stderr)
    if not verbose:
        print("bench: run with -v for the traceback", file=sys.stderr)
    return EXIT_FAILED
