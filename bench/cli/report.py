"""The commands that show results: ``bench report`` (tables, plots and the per-grid
leaderboard page of one results folder) and ``bench leaderboard`` (many results folders or
MLflow stores merged and ranked, docs/leaderboard.md).

Example:
    $ bench report --grid quickstart
    $ bench leaderboard results other/results --out leaderboard
"""

from __future__ import annotations

from bench.cli.common import UsageError


def cmd_report(args) -> str:
    """``bench report``: build the report; returns its summary."""
    from bench.report import ReportError, cli_report

    try:
        return cli_report(args.results, args.out, args.grid, args.audit, args.adversary)
    except ReportError as e:
        raise UsageError(str(e)) from None


def cmd_leaderboard(args) -> str:
    """``bench leaderboard``: write ``leaderboard.json`` and ``.html``; returns a summary."""
    from bench.leaderboard import LeaderboardError, build_leaderboard

    try:
        doc = build_leaderboard(args.results, args.mlflow, args.out,
                                allow_mixed_versions=args.allow_mixed_versions,
                                resamples=args.resamples, seed=args.seed, audits=args.audit,
                                trusted=args.trusted, verify=args.verify,
                                verify_seed=args.verify_seed, keys=args.keys)
    except LeaderboardError as e:
        raise UsageError(str(e)) from None
    srcs = ", ".join(f"{s['id']} {s['location']} ({s['cells']} cells, {s['left_out']} left "
                     "out)" for s in doc["sources"])
    ranked = sum(e["rank"] is not None for e in doc["entries"])
    checked = ""
    if doc.get("verify"):
        n = doc["verify"]["counts"]
        refuted = ", ".join(doc["verify"]["refuted_sources"]) or "none"
        checked = (f"\n  verified by recomputation ({doc['verify']['cells_per_entry']} cell(s) "
                   f"per entry, seed {doc['verify']['seed']}): {n['verified']} verified, "
                   f"{n['refuted']} refuted, {n['unverified']} unverified; refuted sources: "
                   f"{refuted}")
    return (f"leaderboard: {len(doc['entries'])} entries on {len(doc['boards'])} board(s), "
            f"{ranked} ranked; {len(doc['conflicts'])} conflict(s), {len(doc['problems'])} "
            f"problem(s){checked}\n  sources: {srcs}\n  wrote {args.out}/leaderboard.json and "
            f"{args.out}/leaderboard.html\n")


def add_report_parser(sub) -> None:
    """``bench report``: tables, plots and leaderboard.html."""
    rp = sub.add_parser("report", help="tables (md/tex/csv), plots and leaderboard.html")
    rp.add_argument("--results", default="results")
    rp.add_argument("--out", default=None, help="output folder (default: RESULTS/report)")
    rp.add_argument("--grid", default=None, help="only the cells of this grid (name or path)")
    rp.add_argument("--audit", default=None, metavar="DIR",
                    help="`bench audit` status records to show (default: RESULTS/audit where "
                    "that folder exists; without it the report has no audit column)")
    rp.add_argument("--adversary", default=None, metavar="NAME",
                    help="privacy from this adversary instead of the strongest one: 'model' "
                    "(each cell's own model, the thesis layout) or a name from `bench ls "
                    "adversaries`")
    rp.set_defaults(func=cmd_report)


def add_leaderboard_parser(sub) -> None:
    """``bench leaderboard``: results of many runs merged and ranked (docs/leaderboard.md)."""
    lb = sub.add_parser("leaderboard", help="merge results folders / MLflow stores into one "
                        "ranked leaderboard (leaderboard.json + leaderboard.html)")
    lb.add_argument("results", nargs="*", help="results folders (each holding cells/)")
    lb.add_argument("--mlflow", action="append", default=[], metavar="URI",
                    help="an MLflow tracking URI to read cell runs from (repeatable)")
    lb.add_argument("--out", default="leaderboard", help="output folder (default: leaderboard)")
    lb.add_argument("--allow-mixed-versions", action="store_true",
                    help="rank entries of different suite versions on one board")
    lb.add_argument("--audit", action="append", default=[], metavar="DIR",
                    help="extra `bench audit` record folders (RESULTS/audit is always read)")
    lb.add_argument("--trusted", action="append", default=[], metavar="SOURCE",
                    help="a source (results folder or tracking URI, as given) whose copy stands "
                    "in a conflict: the maintainer's own results (repeatable)")
    lb.add_argument("--keys", default=None, metavar="FILE",
                    help="keyring naming contributors' public keys, one 'NAME ed25519:<hex>' "
                    "per line: the page names a verified signer it lists (`bench sign`)")
    lb.add_argument("--verify", type=int, default=0, metavar="N",
                    help="recompute N randomly chosen cells of every entry and compare them bit "
                    "for bit: verified / refuted (the source's entries are taken out) / "
                    "unverified (docs/leaderboard.md)")
    lb.add_argument("--verify-seed", type=int, default=None, metavar="S",
                    help="seed of the choice of cells to recompute (default: a fresh random "
                    "seed; the seed used is recorded in leaderboard.json, and passing it "
                    "repeats the choice)")
    lb.add_argument("--resamples", type=int, default=1000,
                    help="bootstrap resamples of each score's interval (default 1000)")
    lb.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    lb.set_defaults(func=cmd_leaderboard)
