"""The leaderboard's score, its bootstrap interval, and ranks that respect both.

**Score** (``docs/leaderboard.md``): the hypervolume gain of an entry's points over a
reference point b,

    score = HV(P ∪ {b}) − HV({b}),   HV(S) = area of ∪_{(p, u) ∈ S} [0, p] × [0, u],

HV being the hypervolume indicator of multi-objective optimisation with reference point (0, 0)
(the "size of the space covered" of Zitzler & Thiele 1998, "Multiobjective optimization using
evolutionary algorithms -- a comparative case study"); both axes lie in [0, 1]. The leaderboard
(:mod:`bench.leaderboard.build`) passes the anchored points (privacy gained, utility retained;
:mod:`bench.analysis.anchored`) with b = (0, 1), the unprivatized baseline in that plane, which
covers no area: the score is then HV(P). (Before leaderboard schema 2 the points were the raw
(privacy, utility) means and b the baseline's.)

**Interval**: ``score ± t(0.975, n − 1) · sd* · √(n / (n − 1))``, a t interval whose standard
error comes from the bootstrap (Efron & Tibshirani 1993, Ch. 6 and 12). ``sd*`` is the standard
deviation of the score over bootstrap resamples. Per resample, each point (and the baseline) is
redrawn: over its seeds with replacement when it has two or more (utility and privacy of one
seed stay paired), else from a normal whose 95% range is the cell's own bootstrap interval over
test documents, else it is kept fixed. ``n`` is the smallest number of seeds among the
resampled points. The bootstrap's standard deviation of a mean over n seeds is
√((n − 1)/n) · s/√n, so the factor restores s/√n, and the t quantile makes this, for one
mean, exactly the classical t interval. With one seed per point (no seeds to resample) the
normal quantile is used. The percentile bootstrap this replaces is too narrow over few seeds:
by simulation it covered the true score 71% of the time at 2 seeds and about 80% at 3, so
overlapping-interval ranks invented differences; this interval's coverage is checked by
simulation in ``tests/leaderboard/test_rank.py`` (at least 0.93 at 3 seeds). It is symmetric,
so the score is always inside it.

**Ranks**: ``rank_i = 1 + #{j : lo_j > hi_i}`` (:func:`bench.analysis.stats.interval_ranks`), so
entries whose intervals overlap share a rank; entries with an audit violation are ranked after
every other entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from bench.analysis.stats import interval_ranks

Z95 = 1.959963984540054
"""The standard normal's 97.5% quantile: a 95% interval is mean ± Z95·σ."""


def hypervolume(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """HV of the points ``(p[..., i], u[..., i])`` along the last axis, reference (0, 0).

    With the points sorted by privacy, p_(1) ≤ ... ≤ p_(k) (p_(0) = 0), the covered area is
    ``Σ_i (p_(i) − p_(i−1)) · max_{j ≥ i} u_(j)``. Values are clipped to [0, 1]; a NaN point
    covers nothing.
    """
    p = np.clip(np.nan_to_num(np.asarray(p, dtype=float), nan=0.0), 0.0, 1.0)
    u = np.clip(np.nan_to_num(np.asarray(u, dtype=float), nan=0.0), 0.0, 1.0)
    order = np.argsort(p, axis=-1, kind="stable")
    ps = np.take_along_axis(p, order, axis=-1)
    us = np.take_along_axis(u, order, axis=-1)
    best_right = np.flip(np.maximum.accumulate(np.flip(us, axis=-1), axis=-1), axis=-1)
    widths = np.diff(ps, axis=-1, prepend=0.0)
    return (widths * best_right).sum(axis=-1)


def hypervolume_gain(p: np.ndarray, u: np.ndarray, base_p: np.ndarray,
                     base_u: np.ndarray) -> np.ndarray:
    """``HV(P ∪ {b}) − HV({b})`` along the last axis (``base_*`` of shape ``p.shape[:-1]``)."""
    bp, bu = np.asarray(base_p, dtype=float), np.asarray(base_u, dtype=float)
    both_p = np.concatenate([p, bp[..., None]], axis=-1)
    both_u = np.concatenate([u, bu[..., None]], axis=-1)
    return hypervolume(both_p, both_u) - hypervolume(bp[..., None], bu[..., None])


@dataclass(frozen=True)
class Point:
    """One (privacy, utility) point over its seeds: paired per-seed values, and the cell's own
    95% intervals when there is one seed."""

    privacy: tuple[float, ...]
    """Empirical privacy per seed."""
    utility: tuple[float, ...]
    """Utility per seed (same seeds, same order)."""
    privacy_ci: tuple[float, float] | None = None
    """The single seed's bootstrap interval of privacy (None: none or several seeds)."""
    utility_ci: tuple[float, float] | None = None
    """The single seed's bootstrap interval of utility."""

    @property
    def mean(self) -> tuple[float, float]:
        """(mean privacy, mean utility)."""
        return float(np.mean(self.privacy)), float(np.mean(self.utility))

    @property
    def varies(self) -> bool:
        """Whether resampling can move this point."""
        return len(self.privacy) >= 2 or self.privacy_ci is not None \
            or self.utility_ci is not None

    def draws(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` bootstrap draws of (privacy, utility)."""
        k = len(self.privacy)
        if k >= 2:
            idx = rng.integers(0, k, size=(n, k))
            return (np.asarray(self.privacy)[idx].mean(axis=1),
                    np.asarray(self.utility)[idx].mean(axis=1))
        p, u = self.mean
        return _normal(rng, p, self.privacy_ci, n), _normal(rng, u, self.utility_ci, n)


def _normal(rng: np.random.Generator, mean: float, ci: tuple[float, float] | None,
            n: int) -> np.ndarray:
    if ci is None:
        return np.full(n, mean)
    sd = (ci[1] - ci[0]) / (2 * Z95)
    return np.clip(rng.normal(mean, sd, size=n), 0.0, 1.0)


@dataclass(frozen=True)
class Score:
    """An entry's score and its 95% bootstrap interval (None when nothing can vary)."""

    value: float
    """The score at the mean points."""
    ci: tuple[float, float] | None
    """The 95% interval (see the module docstring)."""
    seeds: int | None = None
    """The ``n`` of the interval: the fewest seeds among the resampled points (None: every
    point has one seed, and its own interval over test documents)."""


def score(points: Sequence[Point], baseline: Point, *, resamples: int = 1000,
          rng: np.random.Generator | int = 0) -> Score:
    """The hypervolume gain of ``points`` over ``baseline`` with its bootstrap interval."""
    if not points:
        raise ValueError("an entry needs at least one point")
    rng = np.random.default_rng(rng)
    mp = np.array([pt.mean[0] for pt in points])
    mu = np.array([pt.mean[1] for pt in points])
    bp, bu = baseline.mean
    value = float(hypervolume_gain(mp, mu, np.float64(bp), np.float64(bu)))
    if not (baseline.varies or any(pt.varies for pt in points)):
        return Score(value, None)
    draws = [pt.draws(rng, resamples) for pt in points]
    p = np.stack([d[0] for d in draws], axis=-1)
    u = np.stack([d[1] for d in draws], axis=-1)
    b_p, b_u = baseline.draws(rng, resamples)
    dist = hypervolume_gain(p, u, b_p, b_u)
    sd = float(np.std(dist, ddof=1))
    seeds = [len(pt.privacy) for pt in (*points, baseline) if len(pt.privacy) >= 2]
    n = min(seeds) if seeds else None
    half = Z95 * sd if n is None else float(stats.t.ppf(0.975, n - 1)) * sd * np.sqrt(n / (n - 1))
    return Score(value, (value - half, value + half), n)


def rank(scores: Sequence[Score | None], violations: Sequence[bool]) -> list[int | None]:
    """Ranks for one board's entries (None: no score, not ranked).

    Entries without a violation are ranked among themselves by :func:`interval_ranks` (an
    entry without an interval by its score alone); violating entries come after all of them,
    ranked among themselves the same way.
    """
    out: list[int | None] = [None] * len(scores)
    offset = 0
    for flag in (False, True):
        idx = [i for i, (s, v) in enumerate(zip(scores, violations, strict=True))
               if s is not None and v is flag]
        bounds = [scores[i].ci or (scores[i].value, scores[i].value) for i in idx]
        ranks = interval_ranks(bounds)
        for i, r in zip(idx, ranks, strict=True):
            out[i] = offset + r
        offset += len(idx)
    return out


def board_power(scores: Sequence[Score | None], ranks: Sequence[int | None]
                ) -> dict[str, Any] | None:
    """What a board can tell apart, from the spread its entries' intervals show.

    Two entries get different ranks only when their intervals do not overlap
    (:func:`bench.analysis.stats.interval_ranks`), i.e. when their scores differ by more than
    the sum of their half-widths; with the board's median half-width h the smallest difference
    it ranks is about ``2h`` (``min_detectable_difference``). Also how many ranked entries share
    rank 1. Intervals of width 0 (every seed the same, e.g. a score clipped at 0) say nothing
    about the spread and are left out of the median. None: no entry has a wider interval."""
    halves = sorted(h for sc in scores if sc is not None and sc.ci is not None
                    and (h := (sc.ci[1] - sc.ci[0]) / 2) > 0)
    ranked = [r for r in ranks if r is not None]
    if not halves:
        return None
    h = float(np.median(halves))
    return {"median_half_width": h, "min_detectable_difference": 2 * h,
            "n_ranked": len(ranked), "n_rank1": sum(r == 1 for r in ranked)}
