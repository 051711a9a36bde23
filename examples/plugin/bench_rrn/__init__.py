"""bench-rrn: randomized response over nearest neighbours (``rrn``), a toy plugin mechanism.

A worked example for plugin authors (docs/plugins.md in the bench repository), NOT a mechanism to
use for privacy: its guarantee covers almost no pair of words (see
:meth:`RandomizedResponseNeighbours.guarantee`). It is registered through the entry point
``rrn = "bench_rrn:RandomizedResponseNeighbours"`` in the group ``bench.mechanisms``
(pyproject.toml); bench imports this module only when ``rrn`` is used.

Example:
    >>> from bench.mechanisms import MECHANISMS
    >>> mech = MECHANISMS.create("rrn", epsilon=2.0, k=5, rng=0).fit(space)
    >>> out_ids = mech.sample(ids)
    >>> mech.channel(ids)        # its exact output distribution, for the informed adversary
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse

from bench.guarantee import Guarantee
from bench.mechanisms.base import SelectionMechanism, data_dependent
from bench.neighbors import NeighborIndex

__version__ = "0.1.0"


class RandomizedResponseNeighbours(SelectionMechanism):
    """k-ary randomized response over a word and its k nearest neighbours (toy example).

    Randomized response (Warner 1965) in its k-ary form (Kairouz, Bonawitz and Ramage 2016,
    Sec. 2), run over a small per-word candidate set instead of the whole alphabet.

    Algorithm, for an input word w (one independent draw per token occurrence):

    1. C(w) = {w} ∪ N_k(w), where N_k(w) are the k nearest *other* vocabulary words of w
       (exact Euclidean search in the space passed to :meth:`fit`, computed once there);
    2. output w with probability p = e^ε / (e^ε + k);
    3. otherwise output one of the k neighbours, uniformly: each with q = 1 / (e^ε + k).

    An input-only row (``<unk>``) is treated as its nearest vocabulary word: that word's
    candidate set and probabilities.

    Guarantee, stated precisely: for two words w, w′ with the same candidate set
    C(w) = C(w′), every output y has P(y|w) / P(y|w′) ∈ {e^ε, 1, e^−ε} (p/q = e^ε), so ε-DP
    holds between them -- k-ary randomized response over the set C. When C(w) ≠ C(w′), some y
    is in one set only and has probability 0 under the other input: the privacy loss is
    unbounded, so there is no ε-DP and no ε·d metric DP for any ε. Equal candidate sets are
    rare (for k = 1: mutual nearest neighbours; for larger k, groups of k + 1 words that are
    each other's k nearest neighbours). The guarantee record is ``pure`` with
    ``proven=False`` and this scope as its reason, and :meth:`same_scope` tells
    ``bench audit`` which pairs the claim covers.

    Args:
        epsilon: ε > 0.
        k: number of neighbours, 1 <= k < |W| (default 5).
        rng: NumPy Generator or seed.
    """

    name = "rrn"
    # bump whenever the output distribution, the random stream or the channel changes
    version = "2"  # 2: exact channel() (the informed adversary inverts it instead of sampling)
    description = "toy plugin: randomized response over {w} + its k nearest neighbours"
    guarantee_kind = "pure"

    def __init__(self, *, epsilon: float, k: int = 5, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"rrn: k must be a positive integer, got {k!r}")
        self.k = int(k)
        self.params = {"k": self.k}
        # p = e^ε / (e^ε + k) and q = 1 / (e^ε + k), written with e^−ε (no overflow at large ε)
        t = math.exp(-self.epsilon)
        self.p_keep = 1.0 / (1.0 + self.k * t)
        self.q_other = t / (1.0 + self.k * t)

    def _fit(self) -> None:
        n, k = self.space.shape[0], self.k
        if k >= n:
            raise ValueError(f"rrn: k must be < |W| = {n}, got {k}")
        index = NeighborIndex(self.space)
        ids, _ = index.search(self.space, k=k + 1)  # the word itself (distance 0) and k others
        is_self = ids == np.arange(n)[:, None]
        is_self[~is_self.any(axis=1), -1] = True  # duplicate vectors: drop the farthest instead
        cand = np.empty((n, k + 1), dtype=np.int64)
        cand[:, 0] = np.arange(n)
        cand[:, 1:] = ids[~is_self].reshape(n, k)
        base = np.arange(self.inputs.shape[0])
        if self.inputs.shape[0] > n:  # input-only rows act as their nearest vocabulary word
            base[n:] = index.search(self.inputs[n:], k=1)[0][:, 0]
        self.candidates = cand[base]  # (inputs, k + 1): column 0 is the kept word
        # scope: inputs with the same candidate *set* (sorted rows compared)
        _, scope = np.unique(np.sort(cand, axis=1), axis=0, return_inverse=True)
        self.scope = scope.reshape(-1)[base]

    def same_scope(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether input ids ``a`` and ``b`` have the same candidate set (the pairs ε-DP
        covers)."""
        self._check_fitted()
        return self.scope[np.asarray(a)] == self.scope[np.asarray(b)]

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact output distributions over the vocabulary, one row per input id."""
        ids = self._lookup(ids)
        out = np.zeros((len(ids), self.space.shape[0]))
        rows = np.arange(len(ids))[:, None]
        out[rows, self.candidates[ids, 1:]] = self.q_other
        out[rows[:, 0], self.candidates[ids, 0]] = self.p_keep
        return out

    def channel(self, words: np.ndarray) -> sparse.csr_matrix:
        """The exact channel: row i is P(· | words[i]) over the vocabulary, p on the word itself
        and q on each of its k neighbours (steps 2-3 above), as a sparse ``(len(words), |W|)``
        matrix (k + 1 non-zeros per row). Optional (:meth:`bench.mechanisms.base.Mechanism.
        channel`): with it the informed adversary inverts the mechanism exactly by Bayes' rule
        instead of estimating P(o | w) by sampling."""
        ids = self._lookup(words)
        probs = np.r_[self.p_keep, np.full(self.k, self.q_other)]  # column 0 is the kept word
        return sparse.csr_matrix(
            (np.tile(probs, len(ids)), (np.repeat(np.arange(len(ids)), self.k + 1),
                                        self.candidates[ids].ravel())),
            shape=(len(ids), self.space.shape[0]))

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One independent draw per occurrence: keep w w.p. p, else a uniform neighbour."""
        ids = self._lookup(ids)
        keep = self.rng.random(len(ids)) < self.p_keep
        col = np.where(keep, 0, self.rng.integers(1, self.k + 1, size=len(ids)))
        return self.candidates[ids, col]

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε-DP within one candidate set only; reported as not proven."""
        reason = ("eps-DP holds only between words with the same candidate set {w} + its k "
                  "nearest neighbours (k-ary randomized response); other pairs have outputs "
                  "of probability 0 under one input (unbounded privacy loss, no guarantee)")
        if data_dependent(sensitivity):
            reason += "; sensitivity statistics fitted on private training data"
        return Guarantee("pure", self.epsilon, metric="within one rrn candidate set",
                         proven=False, reason=reason)
