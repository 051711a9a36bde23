"""CusText (``custext``; Chen et al. 2023): the exponential mechanism over a K-word output
set, P(y|x) ∝ exp(ε·s(x, y)/2) with min-max-normalised scores.

A selection mechanism (:class:`bench.mechanisms.base.SelectionMechanism`): one independent
draw per token occurrence.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from scipy import sparse

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS, SelectionMechanism, data_dependent
from bench.mechanisms.channels import TableChannel
from bench.neighbors import NeighborIndex

logger = logging.getLogger(__name__)


@MECHANISMS.register()
class CusText(SelectionMechanism):
    """CusText (Chen et al. 2023, Sec. 3 and Alg. 1): exponential mechanism over K-word sets.

    Mapping f_map (Chen et al. 2023, Sec. 3.2): walk the public vocabulary in row (= frequency)
    order; the first word not yet assigned and its K − 1 nearest *unassigned* words (Euclidean,
    in the space passed to :meth:`fit`) form one output set, which every member maps to. The sets
    partition W (the last set has |W| mod K words when K does not divide |W|). Input-only rows
    (``<unk>``) map to the set of their nearest vocabulary word.

    Scores (precisely): for input x with set Y = f_map(x), let d_y = ‖x − y‖,
    d_min = min_Y d_y, d_max = max_Y d_y; the normalised distance is
    n(x, y) = (d_y − d_min)/(d_max − d_min) ∈ [0, 1] (0 for all y when d_max = d_min) and the score
    is s(x, y) = −n(x, y) (pypantera's Euclidean variant; the original code's
    s = 1 − n differs by the constant 1 inside the set, so the probabilities are identical).
    P(y|x) = exp(ε·s/2) / Σ_{y′∈Y} exp(ε·s(x, y′)/2).

    Guarantee, stated carefully: s ∈ [−1, 0] for every input, so the score's sensitivity is 1
    and P(y|x) ≤ e^ε·P(y|x′) for every pair x, x′ with f_map(x) = f_map(x′) — ε-DP *within an
    output set* (Chen et al. 2023, Thm. 1). Words from different sets have disjoint output sets,
    so they are perfectly distinguishable: there is no guarantee across sets. The guarantee record
    is therefore ``pure`` with ``proven=False`` and that scope as its reason, and
    :meth:`same_scope` tells an auditor which pairs the claim covers.

    Note: pypantera's CusText uses each word's own K nearest words instead of the partition;
    then two words generally have different candidate sets and even the within-set claim fails.

    Args:
        epsilon: ε > 0.
        K: output-set size (default 20).
        rng: NumPy Generator or seed.
    """

    name = "custext"
    description = "exponential mechanism over K-word output sets, P ~ exp(eps s/2), s in [-1,0]"
    guarantee_kind = "pure"

    def __init__(self, *, epsilon: float, K: int = 20, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 1:
            raise ValueError(f"custext: K must be a positive integer, got {K!r}")
        self.K = int(K)
        self.params = {"K": self.K}

    def _fit(self) -> None:
        """Partition W into output sets (f_map), then the exact per-input distributions."""
        x = self.space
        n = x.shape[0]
        k = min(self.K, n)
        group, members = _partition(x, k)
        self.group = group
        self.members = members
        index = NeighborIndex(x)
        n_in = self.inputs.shape[0]
        in_group = np.empty(n_in, dtype=np.int64)
        in_group[:n] = group
        if n_in > n:
            in_group[n:] = group[index.search(self.inputs[n:], k=1)[0][:, 0]]
        self.input_group = in_group
        self.candidates, self.probs, self.cdf = self._distributions(members, in_group, k)
        if n % k:
            logger.info("custext: |W|=%d is not a multiple of K=%d; the last output set has %d "
                        "words", n, k, n % k)

    def _distributions(self, members: list[np.ndarray], in_group: np.ndarray, k: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each input's candidates (its output set, padded with −1), P(y|x) ∝ exp(ε·s/2) with
        s = −n(x, y) and the CDFs sampled from."""
        x = self.space
        n_in = self.inputs.shape[0]
        sizes = np.array([len(g) for g in members])
        table = np.full((len(members), k), -1, dtype=np.int64)
        table[np.repeat(np.arange(len(members)), sizes),
              np.concatenate([np.arange(sz) for sz in sizes])] = np.concatenate(members)
        cand = table[in_group]
        valid = cand >= 0
        safe = np.where(valid, cand, 0)
        dist = np.linalg.norm(self.inputs[:, None, :] - x[safe], axis=2)
        dist[~valid] = np.nan
        dmin = np.nanmin(dist, axis=1, keepdims=True)
        span = np.nanmax(dist, axis=1, keepdims=True) - dmin
        with np.errstate(invalid="ignore", divide="ignore"):
            norm = np.where(span > 0, (dist - dmin) / np.where(span > 0, span, 1.0), 0.0)
        score = -norm  # s = −n(x, y) ∈ [−1, 0]
        w = np.where(valid, np.exp(self.epsilon * score / 2.0), 0.0)
        probs = w / w.sum(axis=1, keepdims=True)
        cdf = np.cumsum(probs, axis=1)
        cdf[np.arange(n_in), sizes[in_group] - 1] = 1.0  # exact 1 at the last real member
        cdf[~valid] = 1.0
        return cand, probs, cdf

    def same_scope(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether input ids ``a`` and ``b`` share an output set (the pairs ε-DP covers)."""
        self._check_fitted()
        return self.input_group[np.asarray(a)] == self.input_group[np.asarray(b)]

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact output distributions over the whole vocabulary, ``(len(ids), |W|)``."""
        ids = self._lookup(ids)
        out = np.zeros((len(ids), self.space.shape[0]))
        cand = self.candidates[ids]
        rows = np.broadcast_to(np.arange(len(ids))[:, None], cand.shape)
        ok = cand >= 0
        out[rows[ok], cand[ok]] = self.probs[ids][ok]
        return out

    def channel(self, words: np.ndarray) -> TableChannel:
        """The exact channel of input words ``words``: each word's own K-word output set and
        its probabilities P(y|x) ∝ exp(ε·s(x, y)/2) (Chen et al. 2023, Alg. 1), as a sparse
        table with floor 0 (:class:`bench.mechanisms.channels.TableChannel`; see
        :meth:`Mechanism.channel`)."""
        self._check_fitted()
        words = np.asarray(words, dtype=np.int64)
        n_vocab = self.space.shape[0]
        c = self.candidates[words]
        p = self.probs[words]
        ok = c >= 0
        r = np.broadcast_to(np.arange(len(words))[:, None], c.shape)[ok]
        table = sparse.coo_matrix((p[ok], (r, c[ok])), shape=(len(words), n_vocab))
        return TableChannel(words, n_vocab, table, 0.0, "exact")

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One draw per occurrence from the word's K-word output set.

        See :meth:`SelectionMechanism.sample`.
        """
        ids = self._lookup(ids)
        u = self.rng.random(len(ids))
        j = (self.cdf[ids] <= u[:, None]).sum(axis=1)  # inverse CDF over ≤ K entries
        j = np.minimum(j, self.candidates.shape[1] - 1)
        return self.candidates[ids, j]

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε-DP within one output set only; reported as not proven."""
        proven, reason = False, (
            "eps-DP holds only between words of the same K-word output set (Chen et al. 2023, "
            "Thm. 1); words of different sets have disjoint outputs (no guarantee across sets)")
        if data_dependent(sensitivity):
            reason += "; sensitivity statistics fitted on private training data"
        return Guarantee("pure", self.epsilon, metric="within one CusText output set",
                         proven=proven, reason=reason)


def _partition(x: np.ndarray, k: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """f_map (Chen et al. 2023, Sec. 3.2): each row's output set and the sets, built in row
    order from the first unassigned word and its k − 1 nearest unassigned words."""
    n = x.shape[0]
    group = np.full(n, -1, dtype=np.int64)
    members: list[np.ndarray] = []
    free = np.ones(n, dtype=bool)
    n_free = n
    # fit time only: |W|/K iterations. Scores x_seed·v − ½‖v‖² (larger is nearer) come in
    # float32 blocks for the next 64 candidate seeds (one matrix product), over a pool of
    # the still-free words compacted every 64 sets; the best k+8 are re-ranked exactly.
    aug = np.hstack([x, -0.5 * np.einsum("ij,ij->i", x, x)[:, None]]).astype(np.float32)
    pool = np.arange(n)
    pool_aug = aug
    block: dict[int, np.ndarray] = {}
    seed, it = 0, 0
    while seed < n:
        if seed not in block:
            if it:
                pool = np.flatnonzero(free)
                pool_aug = aug[pool]
            nxt = pool[pool >= seed][:64]
            q = np.hstack([x[nxt], np.ones((len(nxt), 1))]).astype(np.float32)
            scores = pool_aug @ q.T  # (|pool|, len(nxt))
            block = {int(w): scores[:, j] for j, w in enumerate(nxt)}
        it += 1
        s = block.pop(seed).copy()
        s[~free[pool]] = -np.inf
        m = min(k, n_free)
        mm = min(m + 8, len(pool))
        top = pool[np.argpartition(-s, mm - 1)[:mm]] if mm < len(pool) else pool
        top = top[free[top]]
        exact = np.linalg.norm(x[top] - x[seed], axis=1)
        exact[top == seed] = -1.0  # the seed itself first, even against duplicate vectors
        pick = top[np.argsort(exact, kind="stable")[:m]]
        group[pick] = len(members)
        members.append(pick)
        free[pick] = False
        n_free -= len(pick)
        nxt_free = np.flatnonzero(free[seed:])
        seed = seed + int(nxt_free[0]) if len(nxt_free) else n
    return group, members
