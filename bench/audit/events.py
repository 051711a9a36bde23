"""The audit's statistics and events: one-sided Clopper–Pearson bounds on a binomial p, and the
events S of a mechanism's output -- single output words, high-ratio unions, tails of a
statistic -- chosen on one half of the draws (:class:`Candidate`) for a test on the other half.

Example:
    >>> cp_lower(np.array([50]), 100, 0.025)  # P(M(w) ∈ S) is at least this, 97.5% confident
    array([0.39832...])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

N_QUANTILES = (0.001, 0.005, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 0.995, 0.999)
EVENTS_PER_DIRECTION = 4


def cp_lower(k: np.ndarray, n: int, a: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound on a binomial p at level ``a`` (0 for k = 0)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(a, k, n - k + 1)
    return np.where(k > 0, out, 0.0)


def cp_upper(k: np.ndarray, n: int, a: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound on a binomial p at level ``a`` (1 for k = n)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = stats.beta.ppf(1.0 - a, k + 1, n - k)
    return np.where(k < n, out, 1.0)


@dataclass
class Candidate:
    """An event S chosen on the selection half: the test half's membership in S of the outputs
    of the pair's two inputs, and the direction of the ratio it tests."""

    row: int
    name: str
    forward: bool  # True: test P(M(a) ∈ S) / P(M(b) ∈ S); False: the reverse
    in_a: np.ndarray  # membership of the test-half outputs of a in S
    in_b: np.ndarray
    b_impossible: bool = False  # P(M(b) ∈ S) = 0 by construction (not estimated)


def discrete_events(ya_sel, yb_sel, ya_test, yb_test, claim, row, label) -> list[Candidate]:
    """Singletons and the high-ratio union, chosen on the selection half."""
    vals, inv = np.unique(np.concatenate([ya_sel, yb_sel]), return_inverse=True)
    ca = np.bincount(inv[: len(ya_sel)], minlength=len(vals))
    cb = np.bincount(inv[len(ya_sel):], minlength=len(vals))
    out = []
    for forward in (True, False):
        num, den = (ca, cb) if forward else (cb, ca)
        score = np.log((num + 0.5) / (den + 0.5))
        order = np.argsort(-score, kind="stable")
        chosen = [o for o in order[:EVENTS_PER_DIRECTION] if num[o] > 0]
        for o in chosen:
            v = vals[o]
            out.append(Candidate(row, f"{label}={v}", forward, ya_test == v, yb_test == v))
        union = vals[(score > min(claim, 50.0)) & (num > 0)] if math.isfinite(claim) else vals[
            num > den]
        if len(union) > 1:
            out.append(Candidate(row, f"{label} in {len(union)} high-ratio outputs", forward,
                                  np.isin(ya_test, union), np.isin(yb_test, union)))
    return out


def tail_events(ta_sel, tb_sel, ta_test, tb_test, row, label) -> list[Candidate]:
    """Tails {t ≤ q} and {t > q} at pooled quantiles q of the selection half.

    Statistics are rounded to 1e−9 first: the audit tests the mechanism's distribution, not
    float64 rounding artefacts. (Those do leak — Mironov 2012: unrounded, the event
    ``|z − x′| − |z − x| > d`` exactly at the extreme d separates two inputs of a correct 1-D
    Laplace mechanism through the last bits; see docs/audit.md.)
    """
    ta_sel, tb_sel, ta_test, tb_test = (np.round(t * 1e9) / 1e9
                                        for t in (ta_sel, tb_sel, ta_test, tb_test))
    qs = np.quantile(np.concatenate([ta_sel, tb_sel]), N_QUANTILES)
    events = []
    for q in np.unique(qs):
        for side in ("<=", ">"):
            sa = ta_sel <= q if side == "<=" else ta_sel > q
            sb = tb_sel <= q if side == "<=" else tb_sel > q
            events.append((f"{label}{side}{q:.3g}", q, side, int(sa.sum()), int(sb.sum())))
    out = []
    for forward in (True, False):
        scored = sorted(events, key=lambda e: -math.log(((e[3] if forward else e[4]) + 0.5)
                                                        / ((e[4] if forward else e[3]) + 0.5)))
        for name, q, side, na, nb in scored[:EVENTS_PER_DIRECTION]:
            if (na if forward else nb) == 0:
                continue
            ia = ta_test <= q if side == "<=" else ta_test > q
            ib = tb_test <= q if side == "<=" else tb_test > q
            out.append(Candidate(row, name, forward, ia, ib))
    return out
