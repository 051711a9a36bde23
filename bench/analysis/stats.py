"""The report's statistics: 95% intervals, significance of a Δ, and ranks that respect intervals.

Pure functions on plain numbers (no results folders), so each rule is testable on synthetic
values:

* :func:`t_interval` — Student-t interval of a mean over n ≥ 2 seeds,
  ``mean ± t_{(1+level)/2, n−1} · s / √n`` (Student 1908, "The probable error of a mean":
  the interval for the mean of a small normal sample with unknown variance);
* :func:`bootstrap_interval` — a single run's percentile-bootstrap interval over the test
  documents as the runner stored it (``*_ci95``; :func:`bench.metrics.classification.
  bootstrap_macro_f1`, Efron & Tibshirani 1993, Ch. 13), validated;
* :func:`delta_significance` — whether a change vs the baseline differs from zero: with n ≥ 2
  seeds paired by seed (the privatized cell and the baseline of the same seed share the data
  split and the model seed) the t interval of the per-seed differences (the paired t test,
  Student 1908) must exclude 0; with one seed the two bootstrap intervals
  (privatized, baseline) must be disjoint — conservative, since overlapping 95% intervals do
  not imply that the difference is not significant (Schenker & Gentleman 2001, "On judging
  the significance of differences by examining the overlap between confidence intervals");
* :func:`interval_ranks` — ``rank_i = 1 + #{j : lo_j > hi_i}`` (higher is better): an entry is
  ranked below another only when their intervals are disjoint, so entries whose intervals
  overlap share a rank (a "competition" rank on interval dominance).

Example:
    >>> round(t_interval([0.7, 0.6])[1], 4)  # 0.65 − 12.706 · 0.0707 / √2
    0.0147
    >>> delta_significance([0.30, 0.31, 0.29]).significant
    True
    >>> delta_significance([0.05], ci_priv=(0.6, 0.7), ci_base=(0.65, 0.75)).significant
    False
    >>> interval_ranks([(0.8, 0.9), (0.7, 0.85), (0.5, 0.6)])
    [1, 1, 3]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

LEVEL = 0.95
"""Coverage of every interval the report shows."""

T = "t"
"""Interval kind: Student-t over n ≥ 2 seeds."""

BOOTSTRAP = "bootstrap"
"""Interval kind: one run's percentile bootstrap over the test documents."""

PAIRED_T = "paired t"
"""Significance rule: paired t interval of the per-seed differences (n ≥ 2)."""

OVERLAP = "bootstrap overlap"
"""Significance rule: the privatized and baseline bootstrap intervals (one seed)."""


def t_quantile(df: int, level: float = LEVEL) -> float:
    """``t_{(1+level)/2, df}``: the two-sided Student-t critical value (``scipy.stats.t``)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    from scipy.stats import t

    return float(t.ppf((1 + level) / 2, df))


def _finite(values: Iterable[Any]) -> list[float]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if math.isfinite(v):
            out.append(float(v))
    return out


def mean_std(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (ddof = 1; None for one value) of finite numbers."""
    n = len(values)
    if not n:
        raise ValueError("no values")
    mean = math.fsum(values) / n
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    return mean, std


def t_interval(values: Iterable[Any], level: float = LEVEL) -> tuple[float, float, float] | None:
    """``(mean, lo, hi)``: the Student-t interval of the mean of n ≥ 2 values (None: n < 2).

    ``mean ± t_{(1+level)/2, n−1} · s / √n`` with ``s`` the sample standard deviation
    (Student 1908). Non-finite and non-numeric values are skipped.
    Zero spread gives ``lo = hi = mean``.
    """
    vals = _finite(values)
    n = len(vals)
    if n < 2:
        return None
    mean, std = mean_std(vals)
    half = t_quantile(n - 1, level) * (std or 0.0) / math.sqrt(n)
    return mean, mean - half, mean + half


def bootstrap_interval(ci: Any) -> tuple[float, float] | None:
    """A stored ``[lo, hi]`` interval as floats, or None where it is missing or malformed.

    Accepts a two-element list or tuple of finite numbers with ``lo <= hi`` (the runner's
    ``*_ci95`` keys); anything else (absent in cells from before suite 0.3.0, NaN where no
    bootstrap ran) is "no interval", never a made-up one.
    """
    if not isinstance(ci, (list, tuple)) or len(ci) != 2:
        return None
    vals = _finite(ci)
    if len(vals) != 2 or vals[0] > vals[1]:
        return None
    return vals[0], vals[1]


def intervals_overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two closed intervals ``[lo, hi]`` share a point."""
    return a[0] <= b[1] and b[0] <= a[1]


@dataclass(frozen=True)
class Significance:
    """Whether a change vs the baseline is distinguishable from zero, and by which rule."""

    significant: bool | None
    """True: differs from 0; False: not significant (``ns``); None: no rule applies."""
    rule: str
    """:data:`PAIRED_T`, :data:`OVERLAP`, or ``""`` where nothing could be judged."""
    n: int = 0
    """Paired seeds the judgement rests on."""


def delta_significance(diffs: Iterable[Any], ci_priv: Any = None, ci_base: Any = None,
                       level: float = LEVEL) -> Significance:
    """Is a Δ (privatized − baseline) different from zero?

    Args:
        diffs: the per-seed differences, one per seed where both the privatized cell and the
            baseline of that seed exist (paired by seed).
        ci_priv: with exactly one difference, the privatized cell's bootstrap interval of the
            metric (``[lo, hi]``).
        ci_base: with exactly one difference, the baseline cell's bootstrap interval.
        level: coverage of the intervals.

    Returns:
        n ≥ 2: :data:`PAIRED_T` — significant iff the t interval of the differences
        (:func:`t_interval`) excludes 0 (a paired t test at ``1 − level``). n = 1:
        :data:`OVERLAP` — not significant iff the two bootstrap intervals overlap
        (conservative), None where either interval is missing. n = 0: None.
    """
    vals = _finite(diffs)
    if len(vals) >= 2:
        _mean, lo, hi = t_interval(vals, level)  # type: ignore[misc]
        return Significance(not (lo <= 0.0 <= hi), PAIRED_T, len(vals))
    if len(vals) == 1:
        a, b = bootstrap_interval(ci_priv), bootstrap_interval(ci_base)
        if a is None or b is None:
            return Significance(None, "", 1)
        return Significance(not intervals_overlap(a, b), OVERLAP, 1)
    return Significance(None, "", 0)


def interval_ranks(intervals: Sequence[tuple[float, float]],
                   higher_is_better: bool = True) -> list[int]:
    """Ranks that never separate entries whose intervals overlap.

    ``rank_i = 1 + #{j : lo_j > hi_i}`` when higher is better (``1 + #{j : hi_j < lo_i}`` when
    lower is better): only entries whose whole interval lies beyond entry i's count against it.
    Overlapping intervals therefore share a rank, and ranks may skip (1, 1, 3). An entry
    without an interval is passed as ``(mean, mean)``: ranked by its mean alone (the caller
    flags it).
    """
    out = []
    for lo_i, hi_i in intervals:
        if higher_is_better:
            better = sum(1 for lo_j, _hi_j in intervals if lo_j > hi_i)
        else:
            better = sum(1 for _lo_j, hi_j in intervals if hi_j < lo_i)
        out.append(1 + better)
    return out


__all__ = [
    "BOOTSTRAP",
    "LEVEL",
    "OVERLAP",
    "PAIRED_T",
    "T",
    "Significance",
    "bootstrap_interval",
    "delta_significance",
    "interval_ranks",
    "intervals_overlap",
    "mean_std",
    "t_interval",
    "t_quantile",
]
