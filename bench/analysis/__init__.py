"""The analysis layer: what every reader of results computes the same way, defined once.

Which cells are baselines and which baseline a cell is compared with
(:mod:`bench.analysis.baseline`), ... -- used by the runner, ``bench report``, ``bench
leaderboard``, ``bench reference``, the findings and ``bench verify``; ``bench.report`` and
``bench.leaderboard`` render what it computes.
"""

from bench.analysis.baseline import BaselineIndex, baseline_key, is_baseline

__all__ = ["BaselineIndex", "baseline_key", "is_baseline"]
