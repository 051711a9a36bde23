"""The truncated exponential mechanism (``tem``; Carvalho et al. 2021, Alg. 1).

A selection mechanism (:class:`bench.mechanisms.base.SelectionMechanism`): one independent
draw per token occurrence.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

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
from bench.mechanisms.channels import ExpChannel
from bench.neighbors import NeighborIndex


@MECHANISMS.register()
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

    def channel(self, words: np.ndarray) -> ExpChannel:
        """The exact channel P(o|w) = exp(−(ε/2)·min(d(w, o), γ)) / Z_w of input words ``words``
        (Carvalho et al. 2021, Sec. 4.2; γ of Thm. 4.2), as floor + sparse excess inside γ
        (:class:`bench.mechanisms.channels.ExpChannel`; see :meth:`Mechanism.channel`)."""
        self._check_fitted()
        return ExpChannel(self, words, self.gamma)

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
        """As :meth:`Mechanism.describe`, plus γ once fitted."""
        out = super().describe()
        if self.space is not None:
            out["gamma"] = self.gamma
        return out

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε·d metric DP (see :meth:`Mechanism.guarantee`)."""
        return metric_guarantee(self.epsilon, sensitivity)
