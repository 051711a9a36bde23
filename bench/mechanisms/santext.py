"""SanText (``santext``; Yue et al. 2021): the exponential mechanism over the whole public
vocabulary, P(y|x) ∝ exp(−ε·d(x, y)/2).

A selection mechanism (:class:`bench.mechanisms.base.SelectionMechanism`): one independent
draw per token occurrence.
"""

from __future__ import annotations

import math

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import (
    MECHANISMS,
    SAMPLE_TILE,
    SelectionMechanism,
    metric_guarantee,
    sample_per_unique_word,
)
from bench.mechanisms.channels import ExpChannel
from bench.neighbors import NeighborIndex


@MECHANISMS.register()
class SanText(SelectionMechanism):
    """SanText (Yue et al. 2021, Alg. 1 / Eq. 2): P(y|x) ∝ exp(−ε·d(x, y)/2) over all of W.

    d is the full Euclidean distance in the space passed to :meth:`fit` (no truncation — TEM
    with γ = ∞). ε·d metric LDP (Yue et al. 2021, Thm. 1): the score −d(x, y) changes by at most
    d(x, x′) between inputs, and the normaliser by at most exp(ε·d(x, x′)/2).

    Sampling is exact per occurrence: for each unique input word, float32 weights
    exp(−(ε/2)·(d(x, y) − min_y d(x, y))) are written into the index's reused buffer (one
    matrix product of scaled squared distances; the shift by the row minimum cancels in the
    normalisation and keeps the largest weight at 1), then one two-level inverse-CDF draw per
    token (:func:`bench.mechanisms.base.sample_categorical`). Weights below float32's range
    (relative probability < 1e−38) become 0; their total mass is < |W|·1e−38.

    Args:
        epsilon: ε > 0.
        rng: NumPy Generator or seed.
    """

    name = "santext"
    version = "2"  # 2: two-level categorical sampler on float32 weights (new random stream)
    description = "exponential mechanism over the vocabulary: P(y|x) ~ exp(-eps d(x,y)/2)"
    guarantee_kind = "metric"

    def _fit(self) -> None:
        self.index = NeighborIndex(self.space, tile=SAMPLE_TILE)

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact output distributions (float64), one row per input id, ``(len(ids), |W|)``."""
        ids = self._lookup(ids)
        d = self.index.distances(self.inputs[ids])
        logw = -(self.epsilon / 2.0) * (d - d.min(axis=1, keepdims=True))
        w = np.exp(logw)
        return w / w.sum(axis=1, keepdims=True)

    def channel(self, words: np.ndarray) -> ExpChannel:
        """The exact channel P(o|w) = exp(−ε·d(w, o)/2) / Z_w of input words ``words`` (Yue et
        al. 2021, Eq. 2): TEM's :class:`bench.mechanisms.channels.ExpChannel` with γ = ∞ (floor
        0, dense excess; see :meth:`Mechanism.channel`)."""
        self._check_fitted()
        return ExpChannel(self, words, math.inf)

    def _weights(self, words: np.ndarray) -> np.ndarray:
        s = self.word_sq_distances(words, scale=self.epsilon / 2.0)  # (ε/2)²·d², float32
        np.maximum(s, 0.0, out=s)
        np.sqrt(s, out=s)  # (ε/2)·d
        s -= s.min(axis=1, keepdims=True)
        np.negative(s, out=s)
        np.exp(s, out=s)
        return s

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One draw per occurrence (see :meth:`SelectionMechanism.sample`)."""
        ids = self._lookup(ids)
        return sample_per_unique_word(self, ids, self._weights)

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε·d metric DP (see :meth:`Mechanism.guarantee`)."""
        return metric_guarantee(self.epsilon, sensitivity)
