"""The truncated Gumbel mechanism (``truncated_gumbel``; Riecker 2023, Alg. 1).

A selection mechanism (:class:`bench.mechanisms.base.SelectionMechanism`): one independent
draw per token occurrence.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import lambertw

from bench.guarantee import Guarantee
from bench.mechanisms.base import (
    MECHANISMS,
    SAMPLE_TILE,
    SelectionMechanism,
    check_positive,
    metric_guarantee,
)
from bench.neighbors import NeighborIndex


def truncated_poisson_ppf(u: np.ndarray, lam: float, high: int) -> np.ndarray:
    """Inverse CDF of Poisson(λ) conditioned on 1 ≤ k ≤ high, at uniforms ``u``.

    The conditional CDF is tabulated once for k = 1 … K, K the first k where it reaches 1 in
    float64 (≈ 60 for λ = ln 50,000), so each draw is one ``searchsorted``.
    """
    f0, fh = stats.poisson.cdf(0, lam), stats.poisson.cdf(high, lam)
    kmax = int(min(high, max(stats.poisson.isf(1e-17, lam), lam) + 2))
    ks = np.arange(1, kmax + 1)
    cdf = (stats.poisson.cdf(ks, lam) - f0) / (fh - f0)
    if kmax == high:
        cdf[-1] = 1.0  # exactly, whatever the rounding
    k = np.searchsorted(cdf, np.asarray(u, dtype=np.float64), side="left") + 1
    over = k > kmax  # only if the table stops short of 1 (u beyond its last value)
    if over.any():
        k[over] = np.clip(stats.poisson.ppf(f0 + u[over] * (fh - f0), lam), 1, high)
    return np.clip(k, 1, high).astype(np.int64)


@MECHANISMS.register()
class TruncatedGumbel(SelectionMechanism):
    """Truncated Gumbel mechanism (Xu et al. 2021a; Riecker 2023, Alg. 1).

    k ~ TruncatedPoisson(ln|W|; 1, |W|); the k nearest vocabulary words u₁..u_k of the input x
    (u₁ = x itself, at distance 0, when x is a vocabulary word), distances d_j = ‖x − u_j‖; i.i.d.
    g_j ~ TruncatedGumbel(0, b) restricted to [−Δmax, Δmax]; output argmin_j d_j + g_j, with
    b = 2Δmax / min{W₀(2αΔmax), ln(αΔmin)}, α = (ε − 2(1+ln|W|)/Δmin)/3, Δmax and Δmin the exact
    max / min inter-word distances of the public vocabulary in the space the mechanism runs in.
    ε·d metric DP (Riecker 2023, Thm. 2.1.2).

    Rule where the formula is undefined (α ≤ 0, or αΔmin ≤ 1 so ln(αΔmin) ≤ 0 and b would be
    negative or infinite): the mechanism is refused with a ``ValueError`` that states the smallest
    ε for which b is defined, ε > (2(1+ln|W|) + 3)/Δmin. No noise scale is invented. A user can
    set ``b`` by hand instead; the guarantee is then reported as not proven.

    Truncation: the Gumbel variable is conditioned on |g| ≤ Δmax (the density is renormalised),
    sampled exactly by inverse CDF. Candidate lists of ``k_cache`` nearest words are computed
    once per unique input word; the (astronomically rare) draw k > k_cache recomputes a longer
    list for that word, so the sampler stays exact.
    """

    name = "truncated_gumbel"
    version = "2"  # 2: block-maxima top-k, ragged draws, k_cache 32 (new random stream)
    description = "k ~ TruncPoisson(ln|W|) nearest words, argmin of distance + truncated Gumbel"
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, b: float | None = None, k_cache: int = 32,
                 rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        self.b_override = None if b is None else check_positive(b, "b", self.name)
        if int(k_cache) < 1:
            raise ValueError(f"truncated_gumbel: k_cache must be >= 1, got {k_cache}")
        self.k_cache = int(k_cache)
        self.params = {} if b is None else {"b": self.b_override}

    @staticmethod
    def noise_scale(epsilon: float, n_words: int, dmin: float, dmax: float) -> float:
        """b of Riecker 2023, Alg. 1; ``ValueError`` where the formula is undefined."""
        if dmin <= 0:
            raise ValueError("truncated_gumbel: the minimum inter-word distance is 0 (duplicate "
                             "vectors in the vocabulary); the noise scale is undefined")
        alpha = (epsilon - 2.0 * (1.0 + math.log(n_words)) / dmin) / 3.0
        eps_min = (2.0 * (1.0 + math.log(n_words)) + 3.0) / dmin
        if alpha <= 0 or alpha * dmin <= 1.0:
            raise ValueError(
                f"truncated_gumbel: undefined for epsilon={epsilon:g} with |W|={n_words}, "
                f"Δmin={dmin:.4g}: b needs α·Δmin > 1, i.e. epsilon > (2(1+ln|W|)+3)/Δmin = "
                f"{eps_min:.4g} (Riecker 2023, Alg. 1)")
        w0 = float(lambertw(2.0 * alpha * dmax).real)
        return 2.0 * dmax / min(w0, math.log(alpha * dmin))

    def _fit(self) -> None:
        n = self.space.shape[0]
        from bench.sensitivity.base import max_distance_cached, min_distance_cached

        # exact; kept per process by content (a cell fits its privatizer up to three times)
        stats_min = min_distance_cached(self.space)
        # Alg. 1's Δmin ranges over distinct *words*: two words sharing a vector give Δmin = 0
        self.dmin = 0.0 if stats_min["n_duplicate_rows"] else stats_min["min_distance"]
        self.dmax = max_distance_cached(self.space)
        if self.b_override is not None:
            self.b = self.b_override
        else:
            self.b = self.noise_scale(self.epsilon, n, self.dmin, self.dmax)
        self.lam = math.log(n)
        self.index = NeighborIndex(self.space, tile=SAMPLE_TILE)
        # CDF of the Gumbel(0, b) at the truncation points
        self._F_lo = math.exp(-math.exp(self.dmax / self.b))
        self._F_hi = math.exp(-math.exp(-self.dmax / self.b))

    def gumbel(self, shape) -> np.ndarray:
        """Gumbel(0, b) conditioned on [−Δmax, Δmax], by inverse CDF."""
        u = self._F_lo + self.rng.random(shape) * (self._F_hi - self._F_lo)
        return -self.b * np.log(-np.log(u))

    def candidates(self, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest vocabulary words (and distances) of each input, input word first."""
        k = min(k, self.space.shape[0])
        cand, dist = self.index.search(self.inputs[ids], k=k)
        # u₁ = x: a vocabulary word is its own nearest neighbour at distance 0; force it first
        # (an exact tie with a duplicate vector would otherwise be ordered arbitrarily)
        in_vocab = ids < self.space.shape[0]
        pos = np.argmax(cand == ids[:, None], axis=1)
        has = in_vocab & (cand[np.arange(len(ids)), pos] == ids)
        rows = np.nonzero(has & (pos > 0))[0]
        for r in rows:  # only duplicate-vector ties; not a per-token path
            p = pos[r]
            cand[r, 1 : p + 1], cand[r, 0] = cand[r, 0:p].copy(), ids[r]
            dist[r, 1 : p + 1], dist[r, 0] = dist[r, 0:p].copy(), 0.0
        return cand, dist

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One draw per occurrence (see :meth:`SelectionMechanism.sample`)."""
        ids = self._lookup(ids)
        n_vocab = self.space.shape[0]
        uniq, inverse = np.unique(ids, return_inverse=True)
        kc = min(self.k_cache, n_vocab)
        cand, dist = self.candidates(uniq, kc)
        k = truncated_poisson_ppf(self.rng.random(len(ids)), self.lam, n_vocab)
        out = np.empty(len(ids), dtype=np.int64)
        short = k <= kc
        if short.any():
            # ragged: draw i gets exactly k_i Gumbel variables, laid out flat segment by segment
            rows, ks = inverse[short], k[short]
            seg = np.cumsum(ks) - ks
            flat_row = np.repeat(rows, ks)
            flat_col = np.arange(int(ks.sum())) - np.repeat(seg, ks)
            noisy = dist[flat_row, flat_col] + self.gumbel(len(flat_col))
            hit = np.flatnonzero(noisy == np.repeat(np.minimum.reduceat(noisy, seg), ks))
            # every segment holds its minimum; keep the first hit per segment (ties: prob. 0)
            _, first = np.unique(np.repeat(np.arange(len(ks)), ks)[hit], return_index=True)
            out[short] = cand[rows, flat_col[hit[first]]]
        for i in np.nonzero(~short)[0]:  # P(k > 32) ≈ 5e-8 at |W| = 50,000
            c, dd = self.candidates(ids[i : i + 1], int(k[i]))
            out[i] = c[0, np.argmin(dd[0] + self.gumbel(len(dd[0])))]
        return out

    def describe(self) -> dict:
        """As :meth:`Mechanism.describe`, plus b, Δmin and Δmax once fitted."""
        out = super().describe()
        if self.space is not None:
            out.update(b=self.b, delta_min=self.dmin, delta_max=self.dmax)
        return out

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε·d metric DP; not proven when ``b`` is set by hand."""
        self._check_fitted()
        if self.b_override is not None:
            return metric_guarantee(self.epsilon, sensitivity, proven=False,
                                    reason="noise scale b set by hand, not from Alg. 1")
        return metric_guarantee(self.epsilon, sensitivity)
