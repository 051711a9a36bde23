"""Maintainer tools: peer comparisons and speed benchmarks, not part of running a benchmark.

Nothing in the core (``bench run``, ``bench report``, the leaderboard) imports this package; the
command line reaches it lazily:

- :mod:`bench.tools.perf`: ``bench perf`` (tokens/s per mechanism, named benchmarks such as the
  leaderboard page's load time) and ``bench demo`` (BBC News through every mechanism);
- :mod:`bench.tools.peers`: ``bench perf --peers`` (speed and N_w next to the PyPI packages
  ``mldp-text`` and ``pypantera``, when installed).

Example:
    >>> from bench.tools.perf import run_perf
    >>> print(run_perf(vocab_size=50_000, n_tokens=20_000, mechanisms=["mvl"]))
"""
