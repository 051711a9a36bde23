"""Selection mechanisms: the truncated exponential mechanism (TEM) and the truncated Gumbel
mechanism. Both sample an output word directly from the public vocabulary.

Fast by construction: the work that depends only on the input word (its distances to the whole
vocabulary, its candidate list) is done once per *unique* input word; every occurrence then gets
its own independent draw from that word's distribution. This is equal in distribution to running
the per-word algorithm once per occurrence (tests compare the two).

Example:
    >>> mech = TEM(epsilon=5.0, rng=0).fit(space)
    >>> out_ids = mech.sample(in_ids)
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
    SelectionMechanism,
    check_positive,
    data_dependent,
    sample_per_unique_word,
    sensitivity_multiplier,
)
from bench.neighbors import NeighborIndex, max_pairwise_distance


def _metric_guarantee(epsilon: float, sensitivity, proven: bool = True, reason: str = "") -> Guarantee:
    mult, delta, s_proven, s_reason = sensitivity_multiplier(sensitivity)
    if data_dependent(sensitivity):
        s_proven, s_reason = False, s_reason or "sensitivity statistics fitted on private data"
    ok = proven and s_proven
    why = "; ".join(r for r in (reason, s_reason) if r)
    return Guarantee("metric", epsilon, multiplier=mult, delta=delta,
                     metric="euclidean (original embedding space)", proven=ok, reason=why)


@MECHANISMS.register("tem")
class TEM(SelectionMechanism):
    """Truncated exponential mechanism (Carvalho et al. 2021, Alg. 2; γ from Thm. 4.2).

    γ = (2/ε)·ln((1−β)(|W|−1)/β); L_w = {w′ : d(w, w′) ≤ γ}; each w′ ∈ L_w scores −d(w, w′);
    ⊥ scores −γ + (2/ε)·ln|W∖L_w|; Gumbel(0, 2/ε) noise is added to every score and the argmax
    is taken; ⊥ is then replaced by a uniform draw from W∖L_w. By the Gumbel-max trick its exact
    output distribution is P(w′) ∝ exp(−(ε/2)·min(d(w, w′), γ)) (Carvalho et al. 2021, Sec. 4.2),
    which is what is sampled, once per unique input word. ε·d metric DP (Thm. 4.1).
    """

    name = "tem"
    description = "truncated exponential mechanism: P(w') ~ exp(-eps/2 min(d, gamma))"
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, beta: float = 0.001, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        beta = check_positive(beta, "beta", self.name)
        if not beta < 1:
            raise ValueError(f"tem: beta must be in (0, 1), got {beta}")
        self.beta = beta
        self.params = {"beta": beta}

    def _fit(self) -> None:
        n = self.space.shape[0]
        self.gamma = (2.0 / self.epsilon) * math.log((1 - self.beta) * (n - 1) / self.beta)
        self.index = NeighborIndex(self.space)

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact output distributions, one row per input id, shape ``(len(ids), |W|)``."""
        ids = self._lookup(ids)
        d = self.index.distances(self.inputs[ids])
        # log-weights −(ε/2)·min(d, γ); shifting by the row max keeps exp in range
        logw = -(self.epsilon / 2.0) * np.minimum(d, self.gamma)
        logw -= logw.max(axis=1, keepdims=True)
        w = np.exp(logw)
        return w / w.sum(axis=1, keepdims=True)

    def _weights(self, q: np.ndarray) -> np.ndarray:
        """Unnormalised weights exp(−(ε/2)·min(d, γ)) for a tile of input vectors (float32).

        The hot path of :meth:`sample`: one matrix product into the index's reused buffer and
        in-place element-wise passes. No max-shift is needed: min(d, γ) ≤ γ keeps every weight
        ≥ e^{−εγ/2} = β/((1−β)(|W|−1)), far above float32's smallest normal number.
        """
        s = self.index.scores(q)  # q·v − ½‖v‖²
        s *= -2.0
        s += np.einsum("ij,ij->i", q, q).astype(np.float32)[:, None]  # = ‖q − v‖²
        np.maximum(s, 0.0, out=s)
        np.sqrt(s, out=s)
        np.minimum(s, np.float32(self.gamma), out=s)
        s *= np.float32(-self.epsilon / 2.0)
        np.exp(s, out=s)
        return s

    def sample(self, ids: np.ndarray) -> np.ndarray:
        return sample_per_unique_word(self, self._lookup(ids), self._weights)

    def describe(self) -> dict:
        out = super().describe()
        if self.space is not None:
            out["gamma"] = self.gamma
        return out

    def guarantee(self, sensitivity=None) -> Guarantee:
        return _metric_guarantee(self.epsilon, sensitivity)


def truncated_poisson_ppf(u: np.ndarray, lam: float, high: int) -> np.ndarray:
    """Inverse CDF of Poisson(λ) conditioned on 1 ≤ k ≤ high, at uniforms ``u``."""
    f0, fh = stats.poisson.cdf(0, lam), stats.poisson.cdf(high, lam)
    k = stats.poisson.ppf(f0 + u * (fh - f0), lam)
    return np.clip(k, 1, high).astype(np.int64)


@MECHANISMS.register("truncated_gumbel")
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
    description = "k ~ TruncPoisson(ln|W|) nearest words, argmin of distance + truncated Gumbel"
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, b: float | None = None, k_cache: int = 64,
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
        from bench.sensitivity import min_pairwise_distance

        stats_min = min_pairwise_distance(self.space)
        # Alg. 1's Δmin ranges over distinct *words*: two words sharing a vector give Δmin = 0
        self.dmin = 0.0 if stats_min["n_duplicate_rows"] else stats_min["min_distance"]
        self.dmax = max_pairwise_distance(self.space)
        if self.b_override is not None:
            self.b = self.b_override
        else:
            self.b = self.noise_scale(self.epsilon, n, self.dmin, self.dmax)
        self.lam = math.log(n)
        self.index = NeighborIndex(self.space)
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
        ids = self._lookup(ids)
        n_vocab = self.space.shape[0]
        uniq, inverse = np.unique(ids, return_inverse=True)
        kc = min(self.k_cache, n_vocab)
        cand, dist = self.candidates(uniq, kc)
        k = truncated_poisson_ppf(self.rng.random(len(ids)), self.lam, n_vocab)
        out = np.empty(len(ids), dtype=np.int64)
        short = k <= kc
        if short.any():
            rows = inverse[short]
            noisy = dist[rows] + self.gumbel((len(rows), kc))
            noisy[np.arange(kc)[None, :] >= k[short][:, None]] = np.inf
            out[short] = cand[rows, np.argmin(noisy, axis=1)]
        for i in np.nonzero(~short)[0]:  # P(k > 64) < 1e-25 at |W| = 50,000
            c, dd = self.candidates(ids[i : i + 1], int(k[i]))
            out[i] = c[0, np.argmin(dd[0] + self.gumbel(len(dd[0])))]
        return out

    def describe(self) -> dict:
        out = super().describe()
        if self.space is not None:
            out.update(b=self.b, delta_min=self.dmin, delta_max=self.dmax)
        return out

    def guarantee(self, sensitivity=None) -> Guarantee:
        self._check_fitted()
        if self.b_override is not None:
            return _metric_guarantee(self.epsilon, sensitivity, proven=False,
                                     reason="noise scale b set by hand, not from Alg. 1")
        return _metric_guarantee(self.epsilon, sensitivity)
