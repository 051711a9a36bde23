"""The commands that run a grid: ``bench validate`` (check a grid file), ``bench run`` (run
its cells), ``bench measure`` (add new measures to existing cells), ``bench mlflow-sync``
(back-fill the MLflow mirror) and ``bench dask-worker`` (a
worker for ``bench run --executor dask``).

Example:
    $ bench validate experiments/quickstart.yaml
    $ bench validate experiments/mine.yaml --data    # also load the datasets
    $ bench run experiments/quickstart.yaml --jobs 2
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from bench.cli.common import RunFailed, UsageError, check_folder


def cmd_validate(args) -> str:
    """``bench validate``: the grid summary; a malformed grid is a :class:`UsageError`.

    ``--data`` also loads every dataset of the grid (:func:`bench.run.check_data.check_data`):
    the datasets' lines go after the summary, each dataset that cannot be loaded is one error
    line on stderr, and any such error is a :class:`UsageError` (exit 2).
    """
    from bench.grid import cli_validate

    text, code = cli_validate(args.grid, verbose=args.details)
    if code:
        raise UsageError(text.strip().removeprefix("error: "))
    if not getattr(args, "data", False):
        return text
    from bench.grid import load_grid
    from bench.run.check_data import check_data

    report = check_data(load_grid(args.grid))
    text += report.text()
    if report.errors:
        sys.stdout.write(text)
        sys.stdout.flush()
        raise UsageError("\nbench: error: ".join(report.errors))
    return text


def cmd_run(args) -> str:
    """``bench run``: run a grid (progress and summary on stderr); returns ``""``.

    Raises :class:`RunFailed` when a cell failed.
    """
    from bench.grid import cli_validate, load_grid
    from bench.run.progress import RunProgress
    from bench.run.runner import run_grid

    text, code = cli_validate(args.grid)
    if code:  # a malformed grid: nothing is run, nothing is written
        raise UsageError(text.strip().removeprefix("error: "))
    check_folder(args.results, "--results")
    grid = load_grid(args.grid)  # once more, for the run itself (validation loaded it too)
    if not grid.cells:  # nothing could run: a configuration problem, not an empty success
        raise UsageError(_no_cells(grid))
    tracker = RunProgress(grid.cells, workers=args.jobs)
    bar = None
    if sys.stderr.isatty():  # a progress bar on a terminal; one line per cell otherwise
        from tqdm import tqdm

        # tqdm's own rate and remaining time assume every cell costs the same: the bar shows
        # the count and the elapsed time, the ETA is RunProgress's (docs/usage.md)
        bar = tqdm(total=len(grid.cells), unit="cell", file=sys.stderr,
                   bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]")

    def started() -> None:  # piped or logged: say at once what runs (a bad dataset has raised)
        if bar is None:
            print(tracker.header(len(grid.skipped)), file=sys.stderr, flush=True)

    def progress(r) -> None:
        tracker.finished(r)
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"{r.status}, {tracker.eta_text()}")
            if r.status in ("done", "failed"):
                bar.write(tracker.line(r), file=sys.stderr)
        else:  # piped or logged: every finished cell, with the count and the ETA
            print(tracker.line(r), file=sys.stderr, flush=True)

    try:
        summary = run_grid(grid, results=args.results, jobs=args.jobs,
                           executor=args.executor, scheduler=args.scheduler,
                           tracking_uri=args.tracking_uri, mlflow=not args.no_mlflow,
                           overwrite=args.overwrite, fail_fast=args.fail_fast,
                           progress=progress, started=started)
    finally:
        if bar is not None:
            bar.close()
    print(summary.text(), end="", file=sys.stderr)
    if summary.count("failed"):
        raise RunFailed(summary.count("failed"))
    return ""


def _no_cells(grid) -> str:
    """One line saying why ``grid`` has no cell to run: the commonest skip reason, or none."""
    if not grid.skipped:
        return (f"grid {grid.name!r} has no cells (its exclude patterns remove every one); "
                "nothing to run")
    reasons = Counter(reason.splitlines()[0] for _, reason in grid.skipped)
    (top, _), others = reasons.most_common(1)[0], len(reasons) - 1
    more = f"; and {others} other reason(s)" if others else ""
    return (f"grid {grid.name!r}: none of its {len(grid.skipped)} cells can run here, all are "
            f"skipped: {top}{more} (`bench validate {grid.path} --details` lists them)")


def cmd_measure(args) -> str:
    """``bench measure``: derive the grid's cells that only add measures to cells the folder
    holds (:mod:`bench.run.augment`). Raises :class:`RunFailed` when a cell failed."""
    from bench.grid import cli_validate
    from bench.run.augment import add_measures

    text, code = cli_validate(args.grid)
    if code:
        raise UsageError(text.strip().removeprefix("error: "))
    check_folder(args.results, "--results")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (cells derived at a time), got {args.jobs}")
    summary = add_measures(args.grid, args.results, jobs=args.jobs)
    if summary.failed:
        raise RunFailed(summary.text())
    return summary.text()


def cmd_mlflow_sync(args) -> str:
    """``bench mlflow-sync``: log the cells MLflow lacks; returns the counts."""
    from bench.results.layout import cells_dir
    from bench.results.mirror import sync_results

    if not cells_dir(args.results).is_dir():
        raise UsageError(f"no results under {cells_dir(args.results)}")
    logged, present = sync_results(args.results, args.tracking_uri)
    return f"mlflow-sync: {logged} cell(s) logged, {present} already in MLflow\n"


def cmd_dask_worker(args) -> str:
    """``bench dask-worker ARGS``: ``dask worker ARGS`` in the pinned numeric environment."""
    import shutil

    from bench import numeric

    exe = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
    if exe is None:
        raise UsageError("the `dask` command is not installed (pip install 'dask[distributed]')")
    argv = [exe, "worker", *args.dask_args]
    sys.stdout.flush()
    os.execve(exe, argv, numeric.worker_environment())
    return ""  # pragma: no cover - execve does not return


def add_validate_parser(sub) -> None:
    """``bench validate``: check a grid file."""
    va = sub.add_parser("validate", help="check a grid file: cells, skipped cells, errors")
    va.add_argument("grid")
    va.add_argument("--details", action="store_true", help="list every skipped cell")
    va.add_argument("--data", action="store_true",
                    help="also load every dataset of the grid, as the run would: wrong column "
                    "names, files that are not UTF-8 or are empty are errors (exit 2), dropped "
                    "rows are counted")
    va.set_defaults(func=cmd_validate)


def add_run_parser(sub) -> None:
    """``bench run``: run a grid (resumable, optionally in parallel)."""
    ru = sub.add_parser("run", help="run a grid: privatize, train, attack, measure (resumable)")
    ru.add_argument("grid")
    ru.add_argument("--results", default="results", help="results folder (default: results)")
    ru.add_argument("--jobs", "--workers", type=int, default=1, dest="jobs",
                    help="parallel worker processes (default 1: in-process)")
    ru.add_argument("--executor", choices=["local", "dask"], default="local",
                    help="local (joblib) or dask (distributed)")
    ru.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="Dask scheduler tcp://host:port (default: a LocalCluster on 127.0.0.1)")
    ru.add_argument("--tracking-uri", default=None,
                    help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI or "
                    "sqlite:///RESULTS/mlflow.db)")
    ru.add_argument("--no-mlflow", action="store_true", help="do not mirror results to MLflow")
    ru.add_argument("--overwrite", choices=["never", "only-missing", "always"],
                    default="only-missing",
                    help="only-missing (default): run cells without results, failed ones "
                    "included; never: leave failed cells too; always: recompute everything")
    ru.add_argument("--fail-fast", action="store_true", help="stop at the first failed cell")
    ru.set_defaults(func=cmd_run)


def add_measure_parser(sub) -> None:
    """``bench measure GRID [--results DIR] [--jobs N]``."""
    me = sub.add_parser("measure", help="add a grid's new measures to the cells a results folder "
                                        "holds, without recomputing them (docs/measures.md)")
    me.add_argument("grid")
    me.add_argument("--results", default="results", help="results folder (default: results)")
    me.add_argument("--jobs", type=int, default=1,
                    help="cells derived at a time, each in a worker process (default 1: "
                         "in this process)")
    me.set_defaults(func=cmd_measure)


def add_mlflow_sync_parser(sub) -> None:
    """``bench mlflow-sync``: back-fill MLflow from the cells."""
    ms = sub.add_parser("mlflow-sync", help="back-fill MLflow from results/cells")
    ms.add_argument("--results", default="results")
    ms.add_argument("--tracking-uri", default=None)
    ms.set_defaults(func=cmd_mlflow_sync)


def add_dask_worker_parser(sub) -> None:
    """``bench dask-worker``: a Dask worker that computes cells in the pinned environment."""
    dw = sub.add_parser("dask-worker", help="start `dask worker ARGS` with the pinned numeric "
                        "environment (docs/reference.md)")
    dw.add_argument("dask_args", nargs=argparse.REMAINDER, metavar="ARGS",
                    help="arguments for `dask worker`, e.g. tcp://10.0.0.1:8786 --nthreads 1")
    dw.set_defaults(func=cmd_dask_worker)
