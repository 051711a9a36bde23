"""The commands that check: ``bench audit`` (a mechanism's privacy loss against its claim),
``bench verify`` and ``bench migrate`` (a results folder's integrity; old cells re-keyed) and
``bench reference check|prune`` (the committed reference results).

A check that runs and fails exits with code 1 (:class:`~bench.cli.common.AuditViolation`,
:class:`~bench.cli.common.VerifyFailed`, :class:`~bench.cli.common.ReferenceMismatch`).

Example:
    $ bench audit -m mvl -e 1
    $ bench verify --results results
    $ bench reference check quickstart
"""

from __future__ import annotations

import sys

from bench.cli.common import (
    AuditViolation,
    ReferenceMismatch,
    UsageError,
    VerifyFailed,
    check_folder,
    key_values,
    user_argument,
)


def cmd_audit(args) -> str:
    """``bench audit``: the audit report; :class:`AuditViolation` on a violation."""
    from bench.audit import audit_privatizer, check_settings, cli_audit

    check_folder(args.results_dir, "--results-dir")
    params = key_values(args.param, "--param")
    with user_argument():  # the user's settings, mechanism, epsilon and parameters
        check_settings(pairs=args.pairs, draws=args.draws, confidence=args.confidence)
        privatizer = audit_privatizer(args.mechanism, args.epsilon, params=params,
                                      sensitivity=args.sensitivity, vocab_size=args.vocab_size,
                                      seed=args.seed, oov=args.oov)
    text, code = cli_audit(args.mechanism, args.epsilon, params=params,
                           sensitivity=args.sensitivity, vocab_size=args.vocab_size,
                           pairs=args.pairs, draws=args.draws, confidence=args.confidence,
                           seed=args.seed, oov=args.oov, results_dir=args.results_dir,
                           privatizer=privatizer)
    if code:
        sys.stdout.write(text)
        raise AuditViolation()
    return text


def cmd_reference(args) -> str:
    """``bench reference check``: one report per grid; :class:`ReferenceMismatch` on failure."""
    from bench.reference import ReferenceError, check_reference

    rerun = args.rerun_cell or args.rerun
    texts, failed = [], []
    for grid in args.grids:
        try:
            res = check_reference(grid, args.root, rerun=rerun, check_cells=not args.no_cells)
        except ReferenceError as e:
            raise UsageError(str(e)) from None
        texts.append(res.text())
        if not res.ok:
            failed.append(grid)
    if failed:
        sys.stdout.write("".join(texts))
        raise ReferenceMismatch(", ".join(failed))
    return "".join(texts)


def cmd_reference_compare(args) -> str:
    """``bench reference compare``: statistical agreement of a results folder with a reference."""
    from bench.reference import ReferenceError, compare_results

    check_folder(args.results, "--results")
    try:
        return compare_results(args.grid, args.results, args.root).text()
    except ReferenceError as e:
        raise UsageError(str(e)) from None


def cmd_verify(args) -> str:
    """``bench verify``: the integrity report; :class:`VerifyFailed` if problems remain."""
    from bench.results.layout import check_results
    from bench.verify import verify_results

    # the folder first, as verify_results refuses it: no cells/, or a cells/, damaged/ or
    # locks/ that is a symbolic link, is bad input (NoResultsError, UnsafeResultsError)
    check_results(args.results, writes=True)
    report = verify_results(args.results, args.tracking_uri, repair=args.repair, seal=args.seal)
    if not report.ok:
        sys.stdout.write(report.text())
        raise VerifyFailed(str(args.results))
    return report.text()


def cmd_migrate(args) -> str:
    """``bench migrate``: re-key cells written before 0.4.0 (:mod:`bench.migrate`)."""
    from bench.migrate import migrate_results

    return migrate_results(args.results).text()  # no cells/: NoResultsError, bad input


def cmd_reference_prune(args) -> str:
    """``bench reference prune``: remove committed cells the grid no longer has."""
    from bench.reference import ReferenceError, prune_reference

    lines = []
    for grid in args.grids:
        try:
            removed = prune_reference(grid, args.root)
        except ReferenceError as e:
            raise UsageError(str(e)) from None
        lines.append(f"reference {grid}: removed {len(removed)} stale cell(s)\n")
        lines += [f"  {r}\n" for r in removed]
    return "".join(lines)


def add_audit_parser(sub) -> None:
    """``bench audit``: empirical lower bound on a mechanism's privacy loss."""
    au = sub.add_parser("audit", help="empirical lower bound on a mechanism's privacy loss")
    au.add_argument("-m", "--mechanism", required=True)
    au.add_argument("-e", "--epsilon", required=True, type=float)
    au.add_argument("-p", "--param", action="append", metavar="KEY=VALUE")
    au.add_argument("--sensitivity", default="none")
    au.add_argument("--vocab-size", type=int, default=10_000)
    au.add_argument("--pairs", type=int, default=2, help="word pairs per kind (near/random/far/"
                    "frequent)")
    au.add_argument("--draws", type=int, default=200_000, help="mechanism runs per word")
    au.add_argument("--confidence", type=float, default=0.95)
    au.add_argument("--seed", type=int, default=0)
    au.add_argument("--oov", choices=["unk", "keep"], default="unk")
    au.add_argument("--results-dir", default="results/audit",
                    help="where the status file goes (the report shows it)")
    au.set_defaults(func=cmd_audit)


def add_verify_parser(sub) -> None:
    """``bench verify``: check (and repair) a results folder."""
    ve = sub.add_parser("verify", help="check a results folder: every cell's files, "
                        "checksums and hash, and the MLflow mirror (--repair fixes them)")
    ve.add_argument("--results", default="results")
    ve.add_argument("--tracking-uri", default=None,
                    help="MLflow store to compare (default: <results>/mlflow.db if present)")
    ve.add_argument("--repair", action="store_true",
                    help="move damaged cells aside and recompute them; re-mirror MLflow")
    ve.add_argument("--seal", action="store_true",
                    help="write manifests for sound cells that have none (older results)")
    ve.set_defaults(func=cmd_verify)


def add_migrate_parser(sub) -> None:
    """``bench migrate``: carry pre-0.4.0 cells over to the current hash."""
    mi = sub.add_parser("migrate", help="re-key cells written before 0.4.0 (whose hash covered "
                        "the suite version) to the current hash; measurements unchanged")
    mi.add_argument("--results", default="results")
    mi.set_defaults(func=cmd_migrate)


def add_reference_parser(sub) -> None:
    """``bench reference check|compare|prune``: the committed reference results."""
    rf = sub.add_parser("reference", help="check committed reference results (report "
                        "rebuilt byte-identically, cells current, reruns bit-exact)")
    rsub = rf.add_subparsers(dest="reference_command", required=True)
    rc = rsub.add_parser("check", help="check results/reference/<grid> for each grid")
    rc.add_argument("grids", nargs="+", metavar="GRID", help="grid name(s), e.g. quickstart")
    rc.add_argument("--root", default="results/reference",
                    help="folder holding one reference folder per grid")
    rc.add_argument("--rerun", type=int, default=0, metavar="N",
                    help="recompute the N cheapest committed cells and compare their metrics")
    rc.add_argument("--rerun-cell", action="append", default=None, metavar="HASH",
                    help="recompute this committed cell (hash prefix; repeatable; replaces "
                    "--rerun's cheapest cells)")
    rc.add_argument("--no-cells", action="store_true",
                    help="skip comparing the committed hashes with the grid's expansion")
    rc.set_defaults(func=cmd_reference)
    rq = rsub.add_parser("compare", help="how the cells of a results folder computed elsewhere "
                         "(a GPU, BENCH_NUMERIC=native) agree with the committed reference: "
                         "identical, inside each cell's 95%% interval, means inside the seeds' "
                         "interval")
    rq.add_argument("grid", metavar="GRID", help="the reference's grid name, e.g. quickstart")
    rq.add_argument("--results", required=True,
                    help="results folder of a `bench run` of that grid")
    rq.add_argument("--root", default="results/reference",
                    help="folder holding one reference folder per grid")
    rq.set_defaults(func=cmd_reference_compare)
    rp = rsub.add_parser("prune", help="remove committed cells the grid no longer has (after a "
                         "version bump), before rebuilding the report")
    rp.add_argument("grids", nargs="+", metavar="GRID", help="grid name(s), e.g. trlaplace")
    rp.add_argument("--root", default="results/reference",
                    help="folder holding one reference folder per grid")
    rp.set_defaults(func=cmd_reference_prune)
