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
    SAMPLE_TILE,
    SelectionMechanism,
    check_positive,
    metric_guarantee,
    sample_categorical,
    unique_word_tiles,
)
from bench.neighbors import NeighborIndex, max_pairwise_distance


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
    version = "2"  # 2: sparse L_w path + two-level categorical sampler (new random stream)
    description = "truncated exponential mechanism: P(w') ~ exp(-eps/2 min(d, gamma))"
    guarantee_kind = "metric"

    # the sparse path is used for a tile when at most this fraction of (word, w′) pairs is
    # inside γ; ``path`` = "sparse" / "dense" forces one (tests run both on the same inputs)
    sparse_max = 0.05
    path = "auto"

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
        self.index = NeighborIndex(self.space, tile=SAMPLE_TILE)
        self._mask: np.ndarray | None = None  # reused (tile × |W|) boolean buffer

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact output distributions, one row per input id, shape ``(len(ids), |W|)``."""
        ids = self._lookup(ids)
        d = self.index.distances(self.inputs[ids])
        # log-weights −(ε/2)·min(d, γ); shifting by the row max keeps exp in range
        logw = -(self.epsilon / 2.0) * np.minimum(d, self.gamma)
        logw -= logw.max(axis=1, keepdims=True)
        w = np.exp(logw)
        return w / w.sum(axis=1, keepdims=True)

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One independent draw per occurrence; the per-word work is done once per unique word.

        The weight of w′ splits as exp(−(ε/2)·min(d, γ)) = c + a(w′) with c = e^{−εγ/2} for every
        word and a(w′) = e^{−εd/2} − c > 0 only inside L_w. So a draw is, exactly, a uniform word
        from W with probability |W|·c / Z and otherwise a word of L_w with probability ∝ a(w′)
        (Z = |W|·c + Σ a). Each tile of unique input words gets one float32 matrix product of
        scaled squared distances; when L_w is small (large ε: the usual case), only its members
        are kept and their weights a(w′) computed in float64 (the sparse path: per-word work
        after the product is proportional to |L_w|); when most of the vocabulary is inside γ
        (small ε), the full weight rows are sampled by a two-level inverse CDF (the dense path,
        float32 weights). A vocabulary word's distance to itself is set to exactly 0 on both
        paths (float32 cancellation would otherwise leave up to ~1e−3 there).
        """
        ids = self._lookup(ids)
        out = np.empty(len(ids), dtype=np.int64)
        for words, positions, rows in unique_word_tiles(ids, SAMPLE_TILE):
            out[positions] = self._sample_tile(words, rows)
        return out

    def _sample_tile(self, words: np.ndarray, rows: np.ndarray) -> np.ndarray:
        d2 = self.word_sq_distances(words, scale=self.epsilon / 2.0)  # (ε/2)²·d², float32
        cut = np.float32((self.epsilon / 2.0 * self.gamma) ** 2)  # (ε/2)²·γ²
        if self._mask is None or self._mask.shape[0] < len(words):
            self._mask = np.empty((max(len(words), SAMPLE_TILE), d2.shape[1]), dtype=bool)
        mask = np.less(d2, cut, out=self._mask[: len(words)])
        n_inside = np.count_nonzero(mask)
        if self.path == "sparse" or (self.path == "auto"
                                     and n_inside <= self.sparse_max * mask.size):
            return self._sample_sparse(d2, mask, len(words), rows)
        return self._sample_dense(d2, rows, cut)

    def _sample_sparse(self, d2, mask, n_words, rows) -> np.ndarray:
        m = self.space.shape[0]
        r, c = np.divmod(np.flatnonzero(mask), m)  # row-major: grouped by row (a 2-D
        # nonzero is ~25x slower than this flat one)
        kd = np.sqrt(np.maximum(d2[r, c].astype(np.float64), 0.0))  # (ε/2)·d
        floor = math.exp(-self.epsilon / 2.0 * self.gamma)
        a = np.maximum(np.exp(-kd) - floor, 0.0)  # the weight above the floor, inside L_w
        z_in = np.bincount(r, weights=a, minlength=n_words)
        z_out = m * floor
        u = self.rng.random(len(rows)) * (z_out + z_in[rows])
        out = np.empty(len(rows), dtype=np.int64)
        uni = u < z_out
        out[uni] = self.rng.integers(0, m, size=int(uni.sum()))
        inn = ~uni
        if inn.any():
            cs = np.cumsum(a)
            start = np.searchsorted(r, np.arange(n_words), side="left")
            stop = np.searchsorted(r, np.arange(n_words), side="right")
            base = np.where(start > 0, cs[np.maximum(start - 1, 0)], 0.0)
            rr = rows[inn]
            pos = np.searchsorted(cs, base[rr] + (u[inn] - z_out), side="right")
            out[inn] = c[np.clip(pos, start[rr], stop[rr] - 1)]
        return out

    def _sample_dense(self, d2, rows, cut) -> np.ndarray:
        np.clip(d2, 0.0, cut, out=d2)
        np.sqrt(d2, out=d2)  # (ε/2)·min(d, γ)
        np.negative(d2, out=d2)
        np.exp(d2, out=d2)  # ≥ e^{−εγ/2} = β/((1−β)(|W|−1)): no underflow in float32
        return sample_categorical(d2, rows, self.rng)

    def describe(self) -> dict:
        out = super().describe()
        if self.space is not None:
            out["gamma"] = self.gamma
        return out

    def guarantee(self, sensitivity=None) -> Guarantee:
        return metric_guarantee(self.epsilon, sensitivity)


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
        out = super().describe()
        if self.space is not None:
            out.update(b=self.b, delta_min=self.dmin, delta_max=self.dmax)
        return out

    def guarantee(self, sensitivity=None) -> Guarantee:
        self._check_fitted()
        if self.b_override is not None:
            return metric_guarantee(self.epsilon, sensitivity, proven=False,
                                    reason="noise scale b set by hand, not from Alg. 1")
        return metric_guarantee(self.epsilon, sensitivity)
