"""More word-level mechanisms: regularized Mahalanobis, SanText, CusText and PrivEmb.

- ``mahalanobis`` (Xu et al. 2020): elliptical noise shaped by the public vocabulary's
  covariance (additive; uses the mapping).
- ``santext`` (Yue et al. 2021): exponential mechanism over the whole public vocabulary,
  P(y|x) ∝ exp(−ε·d(x, y)/2) (selection).
- ``custext`` (Chen et al. 2023): exponential mechanism over a K-word output set,
  P(y|x) ∝ exp(ε·s(x, y)/2) with min-max-normalised scores (selection).
- ``privemb`` (Feyisetan & Kasiviswanathan 2021): the ``jl`` sensitivity approach followed by
  multivariate Laplace noise calibrated to its bound (additive; a named preset of ``mvl``).

Every mechanism draws its randomness independently for every token occurrence; selection
mechanisms do the work that depends only on the input word once per *unique* input word (as
TEM does in :mod:`bench.mechanisms.selection`).

Example:
    >>> mech = make_mechanism("santext", epsilon=3.0, rng=0).fit(space)
    >>> out_ids = mech.sample(in_ids)
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import (
    MECHANISMS,
    SAMPLE_TILE,
    AdditiveMechanism,
    SelectionMechanism,
    data_dependent,
    metric_guarantee,
    sample_per_unique_word,
)
from bench.mechanisms.laplace import MultivariateLaplace
from bench.neighbors import NeighborIndex

logger = logging.getLogger(__name__)


# ------------------------------------------------------------------------------ Mahalanobis

@MECHANISMS.register("mahalanobis")
class RegularizedMahalanobis(AdditiveMechanism):
    """Regularized Mahalanobis mechanism (Xu et al. 2020, Alg. 1 and Thm. 1).

    Noise z = l·Σ_λ^{1/2}·u with u uniform on the unit sphere of ℝ^d and l ~ Gamma(d, 1/ε), so
    z has density ∝ exp(−ε‖Σ_λ^{−1/2} z‖₂) and the mechanism is ε·d_RM metric DP with the
    regularized Mahalanobis distance d_RM(x, y) = ‖Σ_λ^{−1/2}(x − y)‖₂ (Xu et al. 2020,
    Def. 2 and Thm. 1).

    Convention for Σ_λ (documented because papers and packages state it differently):
    Σ_λ = λ·Σ′ + (1 − λ)·I with Σ the covariance (ddof = 0) of the public vocabulary in the
    space passed to :meth:`fit`, and Σ′ = Σ·d/tr(Σ) normalised to trace d. Then tr(Σ_λ) = d =
    tr(I) for every λ, so E‖z‖² equals that of ``mvl`` at the same ε and λ only changes the
    *shape* of the noise (λ = 0 is exactly ``mvl``). Xu et al. (2020, Sec. 3) scale the sample
    covariance to be comparable with the identity; pypantera divides by the mean per-coordinate
    variance (= tr(Σ)/d, identical to ours), mldp-text by the variance of all entries (which
    also counts the spread of the coordinate means; slightly different).

    Σ_λ^{1/2} and Σ_λ^{−1/2} are computed once in :meth:`fit` by an eigendecomposition.

    Guarantee: ε·d_RM metric DP in the space the noise is added in (exact, Thm. 1). Because
    d_RM(x, y) ≤ κ·‖x − y‖₂ with κ = 1/√λ_min(Σ_λ) ≤ 1/√(1 − λ), the record states the implied
    Euclidean guarantee in the original embedding space with multiplier Δ_f·κ (Riecker 2023,
    Eq. 5.1 for Δ_f), so it is comparable with the other mechanisms; :meth:`metric_distance`
    gives the tighter d_RM for audits.

    Args:
        epsilon: ε > 0.
        lam: regularization λ ∈ [0, 1] (default 0.2, as in Xu et al. 2020's experiments).
        rng: NumPy Generator or seed.
    """

    name = "mahalanobis"
    description = "elliptical noise l*Sigma_lam^(1/2)*u, Sigma_lam = lam*Sigma' + (1-lam) I"
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, lam: float = 0.2, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        try:
            lam_f = float(lam)
        except (TypeError, ValueError):
            raise ValueError(f"mahalanobis: lam must be a number in [0, 1], got {lam!r}") from None
        if isinstance(lam, bool) or math.isnan(lam_f) or not 0.0 <= lam_f <= 1.0:
            raise ValueError(f"mahalanobis: lam must be a number in [0, 1], got {lam!r}")
        self.lam = lam_f
        self.params = {"lam": self.lam}

    def _fit(self) -> None:
        d = self.space.shape[1]
        cov = np.atleast_2d(np.cov(self.space, rowvar=False, ddof=0))
        trace = float(np.trace(cov))
        if not trace > 0:
            raise ValueError("mahalanobis: the vocabulary has zero variance; Σ cannot be normalised")
        sigma_lam = self.lam * cov * (d / trace) + (1.0 - self.lam) * np.eye(d)
        w, v = np.linalg.eigh(sigma_lam)
        if w.min() <= 1e-12 * w.max():
            raise ValueError(f"mahalanobis: Σ_λ is singular (λ={self.lam:g} with a rank-deficient "
                             f"vocabulary covariance); use lam < 1")
        self.sigma_lam = sigma_lam
        self.sqrt_sigma = (v * np.sqrt(w)) @ v.T  # symmetric Σ_λ^{1/2}
        self.inv_sqrt_sigma = (v / np.sqrt(w)) @ v.T  # symmetric Σ_λ^{−1/2}
        self.kappa = float(1.0 / math.sqrt(w.min()))  # d_RM ≤ κ‖·‖₂

    def noise(self, n: int) -> np.ndarray:
        d = self.space.shape[1]
        u = self.rng.standard_normal((n, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        u *= self.rng.gamma(shape=d, scale=1.0 / self.epsilon, size=n)[:, None]
        return u @ self.sqrt_sigma  # Σ_λ^{1/2} symmetric: (Σ^{1/2} w)ᵀ = wᵀ Σ^{1/2}

    def whiten(self, z: np.ndarray) -> np.ndarray:
        """Σ_λ^{−1/2}·z (row-wise): maps the noise back to the multivariate Laplace."""
        self._check_fitted()
        return np.asarray(z, dtype=np.float64) @ self.inv_sqrt_sigma

    def metric_distance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """d_RM(a, b) = ‖Σ_λ^{−1/2}(a − b)‖₂ row-wise, in the space the noise is added in."""
        return np.linalg.norm(self.whiten(np.atleast_2d(a) - np.atleast_2d(b)), axis=1)

    def describe(self) -> dict:
        out = super().describe()
        if self.space is not None:
            out["kappa"] = self.kappa
        return out

    def guarantee(self, sensitivity=None) -> Guarantee:
        self._check_fitted()
        return metric_guarantee(
            self.epsilon, sensitivity, scale=self.kappa,
            metric=f"euclidean (original embedding space), implied by eps*d_RM (regularized "
                   f"Mahalanobis, lam={self.lam:g}; Xu et al. 2020, Thm. 1) with d_RM <= "
                   f"{self.kappa:.4g}*euclidean")


# ---------------------------------------------------------------------- shared sampling code

# --------------------------------------------------------------------------------- SanText

@MECHANISMS.register("santext")
class SanText(SelectionMechanism):
    """SanText (Yue et al. 2021, Alg. 1 / Eq. 2): P(y|x) ∝ exp(−ε·d(x, y)/2) over all of W.

    d is the full Euclidean distance in the space passed to :meth:`fit` (no truncation — TEM
    with γ = ∞). ε·d metric LDP (Yue et al. 2021, Thm. 1): the score −d(x, y) changes by at most
    d(x, x′) between inputs, and the normaliser by at most exp(ε·d(x, x′)/2).

    Sampling is exact per occurrence: for each unique input word, float32 weights
    exp(−(ε/2)·(d(x, y) − min_y d(x, y))) are written into the index's reused buffer (one
    matrix product of scaled squared distances; the shift by the row minimum cancels in the
    normalisation and keeps the largest weight at 1), then one two-level inverse-CDF draw per
    token (:func:`bench.mechanisms.base.sample_categorical`). Weights below float32's range (relative probability < 1e−38)
    become 0; their total mass is < |W|·1e−38.

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

    def _weights(self, words: np.ndarray) -> np.ndarray:
        s = self.word_sq_distances(words, scale=self.epsilon / 2.0)  # (ε/2)²·d², float32
        np.maximum(s, 0.0, out=s)
        np.sqrt(s, out=s)  # (ε/2)·d
        s -= s.min(axis=1, keepdims=True)
        np.negative(s, out=s)
        np.exp(s, out=s)
        return s

    def sample(self, ids: np.ndarray) -> np.ndarray:
        ids = self._lookup(ids)
        return sample_per_unique_word(self, ids, self._weights)

    def guarantee(self, sensitivity=None) -> Guarantee:
        return metric_guarantee(self.epsilon, sensitivity)


# --------------------------------------------------------------------------------- CusText

@MECHANISMS.register("custext")
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
        x = self.space
        n = x.shape[0]
        k = min(self.K, n)
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
        self.group = group
        self.members = members
        index = NeighborIndex(x)
        n_in = self.inputs.shape[0]
        in_group = np.empty(n_in, dtype=np.int64)
        in_group[:n] = group
        if n_in > n:
            in_group[n:] = group[index.search(self.inputs[n:], k=1)[0][:, 0]]
        self.input_group = in_group
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
        self.candidates = cand
        self.probs = probs
        self.cdf = cdf
        if n % k:
            logger.info("custext: |W|=%d is not a multiple of K=%d; the last output set has %d "
                        "words", n, k, n % k)

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

    def sample(self, ids: np.ndarray) -> np.ndarray:
        ids = self._lookup(ids)
        u = self.rng.random(len(ids))
        j = (self.cdf[ids] <= u[:, None]).sum(axis=1)  # inverse CDF over ≤ K entries
        j = np.minimum(j, self.candidates.shape[1] - 1)
        return self.candidates[ids, j]

    def guarantee(self, sensitivity=None) -> Guarantee:
        proven, reason = False, (
            "eps-DP holds only between words of the same K-word output set (Chen et al. 2023, "
            "Thm. 1); words of different sets have disjoint outputs (no guarantee across sets)")
        if data_dependent(sensitivity):
            reason += "; sensitivity statistics fitted on private training data"
        return Guarantee("pure", self.epsilon, metric="within one CusText output set",
                         proven=proven, reason=reason)


# --------------------------------------------------------------------------------- PrivEmb

@MECHANISMS.register("privemb")
class PrivEmb(MultivariateLaplace):
    """PrivEmb (Feyisetan & Kasiviswanathan 2021): JL projection + calibrated multivariate Laplace.

    A named preset of ``mvl`` with ``calibrate=True`` that *requires* the ``jl`` sensitivity
    approach (unit normalisation and a Gaussian random projection; Riecker 2023, Sec. 4.5.5):
    noise η = l·u, l ~ Gamma(m, Δ_f/ε) in the projected space, Δ_f = 1 + β the approach's
    sensitivity bound. Guarantee: ε·d metric DP in the original space, with the approach's
    failure probability δ over the projection (and ``proven`` as the approach reports it).

    Why a mechanism and not a transform inside ``fit``: the Privatizer applies the sensitivity
    approach to the vocabulary *and* to the nearest-neighbour index; a mechanism projecting
    internally would add noise in a different space than the mapping searches. So ``privemb``
    refuses to bind to any approach but ``jl`` (``bench privatize -m privemb --sensitivity jl``).

    Args:
        epsilon: ε > 0.
        rng: NumPy Generator or seed.
    """

    name = "privemb"
    description = "jl projection + multivariate Laplace calibrated to its bound 1+beta"
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, calibrate=True, rng=rng)
        self.params = {}
        self._bound = False

    def bind_sensitivity(self, sensitivity) -> None:
        """Take Δ_f from the ``jl`` approach; any other approach is refused."""
        name = getattr(sensitivity, "name", None)
        if name != "jl":
            raise ValueError(f"privemb: needs the 'jl' sensitivity approach (Feyisetan & "
                             f"Kasiviswanathan 2021), got {name or 'none'!r}; use sensitivity jl")
        super().bind_sensitivity(sensitivity)
        self._bound = True

    def _fit(self) -> None:
        if not self._bound:
            raise ValueError("privemb: call bind_sensitivity(jl approach) before fit "
                             "(Privatizer.build does this)")
