"""Sensitivity approaches: transforms applied to embedding vectors before a DP mechanism.

Each approach is a function ``f`` on embedding vectors plus a bound on its sensitivity in the
sense of Riecker (2023), Definition 2.1.6 / Eq. 2.3 and Eq. 4.2::

    Δ_f = max_{x ≠ y} ‖f(Φ(x)) − f(Φ(y))‖₂ / ‖Φ(x) − Φ(y)‖₂

i.e. a Lipschitz constant of ``f`` with respect to the Euclidean distance of the ORIGINAL vectors.
A mechanism that adds noise calibrated only to ε (not to Δ_f) then gives ``(ε·Δ_f)``-metric DP in
the original space (Riecker 2023, Example 1 and Eq. 5.1). The seven approaches are those of the
thesis, Section 4.5 and Table 5.2:

=======================  ===================================  ======================  ========
name                     transform                            bound                   proven
=======================  ===================================  ======================  ========
``none``                 identity                             ∞ (unbounded range)     yes
``unit_norm``            x / ‖x‖  (Sec. 4.5.1)                2 / min‖x−y‖ (Eq. 4.2)  no
``unit_norm_clip``       x · min(1, C/‖x‖)  (Eq. 4.3)         1 (Eq. 4.4)             yes
``minmax``               per-vector to [−1,1]^d (Sec. 4.5.2)  2√d / min‖x−y‖ (4.6)   no
``observed_range``       per-vector to [v_min,v_max] (4.5.3)  √d(v_max−v_min)/min‖·‖  no
``clip_observed_range``  clip to [v_min,v_max]  (Sec. 4.5.4)  1                       yes*
``jl``                   Gaussian projection  (Sec. 4.5.5)    1+β w.p. ≥ 1−δ (4.10)   yes (δ)
=======================  ===================================  ======================  ========

(*) 1-Lipschitz by construction for any fixed v_min, v_max; the two numbers are statistics of the
fitted vectors (public when fitted on the public vocabulary, the default ``fit_on="vocab"``).

"Estimated" bounds (``proven=False``) divide a bound on the output diameter by the minimum
distance between the *fitted* vectors; they say nothing about pairs of other inputs. With
``fit_on="train"`` the statistics come from the (private) training tokens, as in the thesis, and
every data-dependent bound is labelled as such.

Example:
    >>> from bench.embeddings import load_embedding
    >>> emb = load_embedding("glove-6b-50d", vocab_size=50_000)
    >>> sens = make_sensitivity("unit_norm").fit(emb.vectors)
    >>> space = sens.transform(emb.vectors)             # (50000, 50), rows of unit length
    >>> round(sens.bound, 4), sens.proven               # 2 / min distance, estimated
    (5.6922, False)
    >>> round(sens.stats["min_distance"], 4)             # 'monday' / 'tuesday', exact
    0.3514
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import math
import time
from typing import Any, ClassVar

import numpy as np

from bench.registry import Registry

logger = logging.getLogger(__name__)

FIT_ON = ("vocab", "train")

SENSITIVITY: Registry = Registry("sensitivity approach")


class NotFittedError(RuntimeError):
    """A sensitivity approach was used before :meth:`SensitivityApproach.fit`."""


# --------------------------------------------------------------------------------------------
# Exact minimum pairwise distance
# --------------------------------------------------------------------------------------------

_UNIT_ROUNDOFF = 2.0**-53


def min_pairwise_distance(
    vectors: np.ndarray, *, row_block: int = 512, col_block: int = 8192
) -> dict[str, Any]:
    """Exact minimum Euclidean distance between two *distinct* rows of ``vectors``.

    This is the denominator of Eq. 4.2 / 4.6 (Riecker 2023), computed over every pair (no
    sampling, no approximate search). Rows that are exactly identical are one point of the domain
    of ``f`` (two words with the same vector): a pair of them has ratio 0/0 in Eq. 2.3 and
    identical mechanism outputs, so it constrains nothing; such rows are collapsed first and
    counted in ``n_duplicate_rows``.

    Method: squared distances ``‖x‖² − 2x·y + ‖y‖²`` from float64 matrix products over the upper
    triangle in blocks. Every pair whose computed value is within a rigorous floating-point error
    bound (``γ_{d+3}·(‖x‖+‖y‖)²``, doubled) of the running minimum is kept as a candidate; the
    candidates' distances are then recomputed directly as ``‖x − y‖`` (no cancellation), and the
    smallest is returned. The result is therefore the exact minimum up to the final rounding of
    ``‖x − y‖``, with no ad-hoc tolerance.

    Args:
        vectors: ``(n, d)`` finite float array, ``n >= 2``.
        row_block: rows per block.
        col_block: columns per block.

    Returns:
        dict with ``min_distance`` (> 0), ``pair`` (indices ``(i, j)``, ``i < j``, of a closest
        pair in ``vectors``), ``n_points`` (distinct rows), ``n_duplicate_rows``, ``n_candidates``, ``seconds``.

    Raises:
        ValueError: fewer than two distinct rows, or non-finite values.
    """
    t0 = time.perf_counter()
    x = _as_matrix(vectors, "vectors")
    uniq, first = np.unique(x, axis=0, return_index=True)
    n, d = uniq.shape
    if n < 2:
        raise ValueError("the minimum distance needs at least two distinct vectors")
    norms2 = np.einsum("ij,ij->i", uniq, uniq)
    # Sort by norm: ‖x − y‖ >= |‖x‖ − ‖y‖| lets each row block skip every column whose norm
    # exceeds the block's largest norm by more than the running minimum distance.
    order = np.argsort(norms2, kind="stable")
    uniq, first, norms2 = uniq[order], first[order], norms2[order]
    radii = np.sqrt(norms2)
    rmax = float(radii[-1])
    gamma = (d + 3) * _UNIT_ROUNDOFF / (1 - (d + 3) * _UNIT_ROUNDOFF)
    # |computed − exact| <= gamma·(‖x‖+‖y‖)² <= gamma·(2·rmax)² for each pair; a pair can beat
    # the true minimum's computed value only if within twice that of it. Factor 2 for safety.
    margin = 4.0 * gamma * (2.0 * rmax) ** 2
    left = np.hstack([uniq, np.ones((n, 1))])  # [x, 1]
    right = np.hstack([-2.0 * uniq, norms2[:, None]]).T.copy()  # [−2y, ‖y‖²]ᵀ
    best = math.inf
    cand_i: list[np.ndarray] = []
    cand_j: list[np.ndarray] = []
    cand_v: list[np.ndarray] = []
    for i0 in range(0, n - 1, row_block):
        i1 = min(i0 + row_block, n)
        rows = np.arange(i0, i1)
        j0, j_end = i0, n
        while j0 < j_end:
            j1 = min(j0 + col_block, j_end) if j0 >= i1 else i1  # diagonal block first
            g = left[i0:i1] @ right[:, j0:j1]  # −2x·y + ‖y‖²
            if j0 < i1:  # the diagonal block: keep only j > i
                g[np.arange(j0, j1)[None, :] <= rows[:, None]] = np.inf
            rowmin = g.min(axis=1) + norms2[i0:i1]
            block_min = float(rowmin.min())
            threshold = min(best, block_min) + margin
            hit_rows = np.nonzero(rowmin <= threshold)[0]
            if hit_rows.size:
                sub = g[hit_rows] + norms2[i0 + hit_rows, None]
                ri, cj = np.nonzero(sub <= threshold)
                cand_i.append(rows[hit_rows[ri]])
                cand_j.append(cj + j0)
                cand_v.append(sub[ri, cj])
            best = min(best, block_min)
            # columns with ‖y‖ > max‖x‖ + (an upper bound on the min distance) cannot matter
            reach = math.sqrt(max(best, 0.0) + 2.0 * margin) * (1.0 + 1e-9) + 1e-12 * rmax
            j_end = min(j_end, int(np.searchsorted(radii, radii[i1 - 1] + reach, side="right")))
            j0 = j1
    ci = np.concatenate(cand_i)
    cj = np.concatenate(cand_j)
    cv = np.concatenate(cand_v)
    keep = cv <= best + margin
    ci, cj = ci[keep], cj[keep]
    exact = np.sqrt(np.sum((uniq[ci] - uniq[cj]) ** 2, axis=1))
    k = int(np.argmin(exact))
    a, b = sorted((int(first[ci[k]]), int(first[cj[k]])))
    return {
        "min_distance": float(exact[k]),
        "pair": (a, b),
        "n_points": int(n),
        "n_duplicate_rows": int(x.shape[0] - n),
        "n_candidates": int(ci.size),
        "seconds": time.perf_counter() - t0,
    }


def _brute_force_min_distance(vectors: np.ndarray) -> float:
    """Reference O(n²) minimum distance between distinct rows (for tests; small inputs only)."""
    x = np.asarray(vectors, dtype=np.float64)
    diff = x[:, None, :] - x[None, :, :]
    dist = np.sqrt(np.sum(diff**2, axis=-1))
    dist[dist == 0] = np.inf  # the diagonal and identical rows
    return float(dist.min())


# A handful of fitted arrays is common (one vocabulary, several approaches in a grid).
_STATS_CACHE: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
_STATS_CACHE_SIZE = 8


def _min_distance_cached(x: np.ndarray) -> dict[str, Any]:
    key = (hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest(), x.shape)
    hit = _STATS_CACHE.get(key)
    if hit is None:
        hit = min_pairwise_distance(x)
        logger.info(
            "exact min distance over %d distinct vectors: %.6g (pair %s) in %.2fs",
            hit["n_points"], hit["min_distance"], hit["pair"], hit["seconds"],
        )
        if len(_STATS_CACHE) >= _STATS_CACHE_SIZE:
            _STATS_CACHE.pop(next(iter(_STATS_CACHE)))
        _STATS_CACHE[key] = hit
    return dict(hit)


# --------------------------------------------------------------------------------------------
# Johnson–Lindenstrauss target dimension
# --------------------------------------------------------------------------------------------


def gaussian_width_dim(n_points: int, delta: float = 1e-6, beta: float = 0.9) -> int:
    """Target dimension m for the JL projection of a finite set in the unit ball.

    Riecker 2023, Lemma 4.5.1 with the Ω-constant taken as 1 (as the thesis does) and the
    Gaussian width bounded by Lemma 4.5.2 / Eq. 4.11, ``ω(X) <= √(2 ln|X|)``::

        m = ⌈(√(2 ln|X|) + √(ln(1/δ)))² / β²⌉

    The thesis gets m = 89 for |X| ≈ 75,000, β = 0.9, δ = 1e-6 (Sec. 4.5.5).

    Args:
        n_points: |X|, the number of distinct points (>= 1).
        delta: failure probability in (0, 1).
        beta: distortion in (0, 1).

    Returns:
        The smallest integer m satisfying the inequality.
    """
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 1:
        raise ValueError(f"n_points must be a positive integer, got {n_points!r}")
    _check_open_unit("delta", delta)
    _check_open_unit("beta", beta)
    width = math.sqrt(2.0 * math.log(n_points))
    return int(math.ceil((width + math.sqrt(math.log(1.0 / delta))) ** 2 / beta**2))


def jl_union_failure_probability(n_points: int, m: int, beta: float) -> dict[str, float]:
    """Exact union bound on the JL failure probability over all pairs of ``n_points`` points.

    For a fixed vector v and Φ with i.i.d. N(0, 1/m) entries, ``‖vΦ‖²/‖v‖² ~ χ²_m / m`` exactly,
    so ``P[‖vΦ‖ > (1+β)‖v‖] = P[χ²_m > m(1+β)²]``; a union bound over the ``n(n−1)/2`` difference
    vectors bounds the probability that Δ_{f_Φ} > 1+β on the set (the event of Eq. 4.10) without
    the unspecified constant of Lemma 4.5.1's Ω. ``two_sided`` adds the lower tail (distortion
    below 1−β).

    Returns:
        ``{"expansion": ..., "two_sided": ...}`` (each capped at 1).
    """
    from scipy.stats import chi2

    pairs = n_points * (n_points - 1) / 2.0
    up = float(chi2.sf(m * (1.0 + beta) ** 2, m))
    low = float(chi2.cdf(m * (1.0 - beta) ** 2, m))
    return {"expansion": min(1.0, pairs * up), "two_sided": min(1.0, pairs * (up + low))}


# --------------------------------------------------------------------------------------------
# Base class
# --------------------------------------------------------------------------------------------


class SensitivityApproach:
    """A transform ``f`` applied before a DP mechanism, with a bound on its sensitivity.

    Subclasses set :attr:`name`, :attr:`version`, ``_LIPSCHITZ`` (1-Lipschitz by construction),
    ``_USES_DATA`` (whether fitted statistics enter the transform or the bound) and implement
    ``_fit`` and ``_transform``.

    Attributes:
        name: registry name.
        version: bumped whenever what the approach computes changes.
        params: the constructor parameters, defaults filled in.
    """

    name: ClassVar[str] = ""
    version: ClassVar[int] = 1
    _LIPSCHITZ: ClassVar[bool] = False
    _USES_DATA: ClassVar[bool] = True

    def __init__(self, *, fit_on: str = "vocab") -> None:
        if fit_on not in FIT_ON:
            raise ValueError(f"{self.name}: fit_on must be one of {FIT_ON}, got {fit_on!r}")
        self.params: dict[str, Any] = {"fit_on": fit_on}
        self._fitted = False
        self._dim = 0
        self._out_dim = 0
        self._bound = math.inf
        self._proven = True
        self._reason = ""
        self._delta = 0.0
        self._stats: dict[str, Any] = {}

    # -- public API --------------------------------------------------------------------------

    def fit(
        self, vectors: np.ndarray, fit_vectors: np.ndarray | None = None
    ) -> SensitivityApproach:
        """Compute the statistics and the bound.

        Args:
            vectors: the public vocabulary's original vectors ``(|W|, d)``.
            fit_vectors: with ``fit_on="train"`` only: the vectors of the training data's tokens
                (repeats allowed; identical rows are one point), as in the thesis (Sec. 4.5.1).

        Returns:
            ``self``.
        """
        vocab = _as_matrix(vectors, "vectors")
        fit_on = self.params["fit_on"]
        if fit_on == "vocab":
            if fit_vectors is not None:
                raise ValueError(
                    f"{self.name}: fit_vectors given but fit_on='vocab'; pass fit_on='train' to "
                    "fit on training-data vectors"
                )
            data = vocab
        else:
            if fit_vectors is None:
                raise ValueError(f"{self.name}: fit_on='train' needs fit_vectors")
            data = _as_matrix(fit_vectors, "fit_vectors")
            if data.shape[1] != vocab.shape[1]:
                raise ValueError(
                    f"{self.name}: fit_vectors have dimension {data.shape[1]}, vectors "
                    f"{vocab.shape[1]}"
                )
        self._dim = int(vocab.shape[1])
        self._out_dim = self._dim
        self._bound, self._proven, self._reason, self._delta = math.inf, True, "", 0.0
        self._stats = {"fit_on": fit_on, "n_fitted_rows": int(data.shape[0]), "dim": self._dim}
        self._fit(data)
        if fit_on == "train" and self._USES_DATA:
            why = (
                "estimated on private training data (fit_on='train'): the statistics the "
                "transform/bound use come from the private data, and the bound covers only "
                "pairs of training tokens"
            )
            self._reason = why + (f"; {self._reason}" if self._reason else "")
            self._proven = False
        self._fitted = True
        logger.info(
            "sensitivity %s fitted (%s): bound=%.6g proven=%s delta=%g out_dim=%d",
            self.name, fit_on, self._bound, self._proven, self._delta, self._out_dim,
        )
        return self

    def transform(self, vectors: np.ndarray) -> np.ndarray:
        """Apply ``f`` to a batch ``(n, d)`` (or one vector ``(d,)``); returns float64."""
        self._check_fitted()
        x = np.asarray(vectors, dtype=np.float64)
        if x.ndim not in (1, 2) or x.shape[-1] != self._dim:
            raise ValueError(
                f"{self.name}: expected vectors of shape (n, {self._dim}) or ({self._dim},), got "
                f"{x.shape}"
            )
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{self.name}: non-finite values in the vectors to transform")
        out = self._transform(np.atleast_2d(x))
        return out[0] if x.ndim == 1 else out

    def fit_transform(self, vectors: np.ndarray) -> np.ndarray:
        """``fit(vectors)`` then ``transform(vectors)`` (``fit_on="vocab"`` only)."""
        return self.fit(vectors).transform(vectors)

    @property
    def fitted(self) -> bool:
        """Whether :meth:`fit` has run."""
        return self._fitted

    @property
    def bound(self) -> float:
        """Δ_f (Eq. 2.3 / 4.2): the sensitivity bound; ``math.inf`` when unbounded."""
        self._check_fitted()
        return self._bound

    @property
    def proven(self) -> bool:
        """True when the bound is proven (possibly with failure probability :attr:`delta`)."""
        self._check_fitted()
        return self._proven

    @property
    def reason(self) -> str:
        """Why the bound is only estimated (or its caveats); empty when there are none."""
        self._check_fitted()
        return self._reason

    @property
    def delta(self) -> float:
        """Probability that the bound fails (nonzero only for ``jl``)."""
        self._check_fitted()
        return self._delta

    @property
    def out_dim(self) -> int:
        """Dimension of the transformed vectors."""
        self._check_fitted()
        return self._out_dim

    @property
    def stats(self) -> dict[str, Any]:
        """Fitted statistics (min_distance, v_min, v_max, m, beta, ...)."""
        self._check_fitted()
        return dict(self._stats)

    @property
    def lipschitz(self) -> bool:
        """Whether ``f`` is 1-Lipschitz by construction (for all inputs, not only fitted ones)."""
        return self._LIPSCHITZ

    def describe(self) -> dict[str, Any]:
        """A JSON-serialisable summary; non-finite floats are written as strings (``"inf"``)."""
        self._check_fitted()
        return _jsonable(
            {
                "name": self.name,
                "version": self.version,
                "params": self.params,
                "bound": self._bound,
                "proven": self._proven,
                "reason": self._reason,
                "delta": self._delta,
                "lipschitz": self._LIPSCHITZ,
                "out_dim": self._out_dim,
                "stats": self._stats,
            }
        )

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args})"

    # -- for subclasses ----------------------------------------------------------------------

    def _fit(self, data: np.ndarray) -> None:
        raise NotImplementedError

    def _transform(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise NotFittedError(f"sensitivity approach {self.name!r} is not fitted; call fit()")

    def _estimated_by_min_distance(self, data: np.ndarray, numerator: float, what: str) -> None:
        """bound = numerator / min distance over the fitted vectors (Eq. 4.2, 4.6, Sec. 4.5.3)."""
        md = _min_distance_cached(data)
        self._stats.update(
            {
                "min_distance": md["min_distance"],
                "min_pair": list(md["pair"]),
                "n_points": md["n_points"],
                "n_duplicate_rows": md["n_duplicate_rows"],
                "min_distance_seconds": md["seconds"],
                "diameter_bound": numerator,
            }
        )
        if md["n_duplicate_rows"]:
            logger.warning(
                "%s: %d fitted rows duplicate another row exactly; identical vectors are one point "
                "of the domain of f and are excluded from the minimum distance",
                self.name, md["n_duplicate_rows"],
            )
        self._bound = numerator / md["min_distance"]
        self._proven = False
        self._reason = (
            f"{what} divided by the minimum distance {md['min_distance']:.6g} observed between the "
            f"{md['n_points']} distinct fitted vectors; holds only for pairs of fitted vectors"
        )


# --------------------------------------------------------------------------------------------
# The approaches
# --------------------------------------------------------------------------------------------


@SENSITIVITY.register("none")
class NoSensitivity(SensitivityApproach):
    """Identity: no bound on the output range (Riecker 2023, Table 5.2 row "None": Δ = ∞).

    The ratio of Eq. 2.3 is exactly 1 for the identity (so ``lipschitz`` is True), but the output
    range is unbounded; Table 5.2 reports Δ = ∞ and the mechanisms treat it as the unbounded case
    (their own ε-metric DP guarantee, multiplier 1, in the original space).
    """

    bound_kind = "unbounded (identity)"

    name = "none"
    _LIPSCHITZ = True
    _USES_DATA = False

    def __init__(self, *, fit_on: str = "vocab") -> None:
        super().__init__(fit_on=fit_on)

    def _fit(self, data: np.ndarray) -> None:
        self._bound = math.inf
        self._stats["diameter_bound"] = math.inf

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return x.copy()


def _norms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", x, x))[:, None]


def _unit_normalize(x: np.ndarray) -> np.ndarray:
    """x / ‖x‖₂ row-wise; the zero vector stays 0 (still within distance 1 of the sphere)."""
    n = _norms(x)
    return np.divide(x, n, out=np.zeros_like(x), where=n > 0)


def _ball_project(x: np.ndarray, radius: float) -> np.ndarray:
    """x · min(1, radius/‖x‖₂): Euclidean projection onto the ball of ``radius``."""
    n = _norms(x)
    scale = np.divide(radius, n, out=np.ones_like(n), where=n > radius)
    return x * scale


def _min_norm_stats(data: np.ndarray) -> dict[str, float]:
    n = _norms(data)[:, 0]
    return {"min_norm": float(n.min()), "max_norm": float(n.max())}


@SENSITIVITY.register("unit_norm")
class UnitNorm(SensitivityApproach):
    """Normalization to unit length, ``f_norm(x) = x/‖x‖₂`` (Riecker 2023, Sec. 4.5.1).

    Outputs lie on the unit sphere, so ‖f(x) − f(y)‖ <= 2 (Eq. 4.1; follows from the triangle
    inequality — the thesis' first step ‖a−b‖ <= ‖a+b‖ is not true in general, the conclusion
    is). Dividing by the minimum distance between the fitted vectors gives the estimated bound
    ``Δ <= 2 / min‖Φ(x) − Φ(y)‖`` (Eq. 4.2; thesis: 2/0.7890 = 2.5349 on 300d GloVe training
    tokens). The zero vector is mapped to 0.

    ``stats["bound_min_norm"] = 1/min‖x‖`` is a tighter bound over the same fitted set whenever
    every fitted vector has norm >= r: there x/‖x‖ = P_r(x)/r with P_r the (1-Lipschitz)
    projection onto the ball of radius r. It is recorded, not used, to keep Table 5.2's bound.
    """

    bound_kind = "estimated from data"

    name = "unit_norm"

    def __init__(self, *, fit_on: str = "vocab") -> None:
        super().__init__(fit_on=fit_on)

    def _fit(self, data: np.ndarray) -> None:
        self._estimated_by_min_distance(data, 2.0, "the unit-sphere diameter 2 (Eq. 4.1)")
        norms = _min_norm_stats(data)
        self._stats.update(norms)
        self._stats["bound_min_norm"] = (
            1.0 / norms["min_norm"] if norms["min_norm"] > 0 else math.inf
        )

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return _unit_normalize(x)


@SENSITIVITY.register("unit_norm_clip")
class UnitNormClip(SensitivityApproach):
    """The thesis' "adapted" unit normalization, Eq. 4.3, generalised to radius ``C``.

    ``f(x) = x · min(1, C/‖x‖₂)``: vectors longer than C are scaled onto the sphere of radius C,
    shorter ones are unchanged (C = 1 is Eq. 4.3 exactly). This is the Euclidean projection onto
    a closed convex set, hence 1-Lipschitz for *all* inputs: ‖f(x) − f(y)‖ <= ‖x − y‖ (Eq. 4.4),
    Δ <= 1, proven, with no data statistic. Output diameter 2C.

    Args:
        C: the radius, finite and > 0 (default 1.0).
        fit_on: ``"vocab"`` or ``"train"``; nothing is estimated, so it does not affect the bound.
    """

    bound_kind = "proven (1-Lipschitz)"

    name = "unit_norm_clip"
    _LIPSCHITZ = True
    _USES_DATA = False

    def __init__(self, *, C: float = 1.0, fit_on: str = "vocab") -> None:
        super().__init__(fit_on=fit_on)
        self.params["C"] = _positive_float("C", C, self.name)

    def _fit(self, data: np.ndarray) -> None:
        C = self.params["C"]
        self._bound = 1.0
        self._stats.update(_min_norm_stats(data))
        self._stats["diameter_bound"] = 2.0 * C
        self._stats["frac_clipped"] = float(np.mean(_norms(data)[:, 0] > C))

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return _ball_project(x, self.params["C"])


def _rescale_per_vector(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Per-vector min-max scaling of the coordinates of each row onto [lo, hi].

    A constant row (max = min) has no scale; it is mapped to the midpoint (lo + hi)/2.
    """
    mn = x.min(axis=1, keepdims=True)
    span = x.max(axis=1, keepdims=True) - mn
    unit = np.divide(x - mn, span, out=np.full_like(x, 0.5), where=span > 0)
    return lo + (hi - lo) * unit


@SENSITIVITY.register("minmax")
class MinMax(SensitivityApproach):
    """Per-vector min-max normalization to [−1, 1]^d (Riecker 2023, Sec. 4.5.2).

    ``g_norm(x) = 2·(x − min x)/(max x − min x) − 1`` with min/max over the coordinates of x.
    Every coordinate lies in [−1, 1], so ‖g(x) − g(y)‖ <= 2√d (Eq. 4.5) and the estimated bound is
    ``Δ <= 2√d / min‖Φ(x) − Φ(y)‖`` (Eq. 4.6; thesis 43.9050 for d = 300). A constant vector
    is mapped to 0.
    """

    bound_kind = "estimated from data"

    name = "minmax"

    def __init__(self, *, fit_on: str = "vocab") -> None:
        super().__init__(fit_on=fit_on)

    def _fit(self, data: np.ndarray) -> None:
        d = data.shape[1]
        self._estimated_by_min_distance(data, 2.0 * math.sqrt(d), "2√d (Eq. 4.5)")

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return _rescale_per_vector(x, -1.0, 1.0)


def _observed_range(data: np.ndarray) -> tuple[float, float]:
    v_min, v_max = float(data.min()), float(data.max())
    if not v_min < v_max:
        raise ValueError("the observed range is empty: all fitted coordinates are equal")
    return v_min, v_max


@SENSITIVITY.register("observed_range")
class ObservedRange(SensitivityApproach):
    """Normalization to the observed range [v_min, v_max] (Riecker 2023, Sec. 4.5.3).

    The thesis defines ``h_norm`` only as normalizing "to an interval determined based on the
    observed range" analogously to Sec. 4.5.2, with v_min, v_max the smallest and largest
    coordinate value of the fitted vectors, and bounds every output coordinate by that interval
    (Eq. 4.7). Our reading, the per-vector analogue of ``g_norm``::

        h_norm(x) = v_min + (v_max − v_min) · (x − min x) / (max x − min x)

    (a constant vector goes to the midpoint). Then ‖h(x) − h(y)‖ <= √d (v_max − v_min) (Eq. 4.7)
    and ``Δ <= √d (v_max − v_min) / min‖Φ(x) − Φ(y)‖`` — estimated (thesis: 125.8031 with
    [−3.0639, 2.6668] and d = 300).
    """

    bound_kind = "estimated from data"

    name = "observed_range"

    def __init__(self, *, fit_on: str = "vocab") -> None:
        super().__init__(fit_on=fit_on)

    def _fit(self, data: np.ndarray) -> None:
        v_min, v_max = _observed_range(data)
        self._stats.update({"v_min": v_min, "v_max": v_max})
        d = data.shape[1]
        self._estimated_by_min_distance(
            data, math.sqrt(d) * (v_max - v_min), "√d·(v_max − v_min) (Eq. 4.7)"
        )

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return _rescale_per_vector(x, self._stats["v_min"], self._stats["v_max"])


@SENSITIVITY.register("clip_observed_range")
class ClipObservedRange(SensitivityApproach):
    """Coordinate-wise clipping to the observed range [v_min, v_max] (Riecker 2023, Sec. 4.5.4).

    ``f_clip(x)_i = min(max(x_i, v_min), v_max)``. Each coordinate map is 1-Lipschitz (it is the
    projection onto the box [v_min, v_max]^d, a convex set), so ‖f(x) − f(y)‖ <= ‖x − y‖ for all
    inputs: Δ <= 1 (the conclusion of Eq. 4.8; the thesis' derivation via ‖x‖‖y‖ is not a valid
    expansion of ‖x − y‖², the per-coordinate argument is). v_min, v_max are statistics of the
    fitted vectors: public with ``fit_on="vocab"``, private with ``fit_on="train"``.

    Note that clipping to the range observed on the fitted vectors is the identity on every
    fitted vector (Table 5.2 lists the same Δmax/Δmin as "None").
    """

    bound_kind = "proven (1-Lipschitz)"

    name = "clip_observed_range"
    _LIPSCHITZ = True

    def __init__(self, *, fit_on: str = "vocab") -> None:
        super().__init__(fit_on=fit_on)

    def _fit(self, data: np.ndarray) -> None:
        v_min, v_max = _observed_range(data)
        d = data.shape[1]
        self._bound = 1.0
        self._reason = (
            "1-Lipschitz for any fixed range; v_min/v_max are statistics of the fitted vectors "
            f"({'public vocabulary' if self.params['fit_on'] == 'vocab' else 'training data'})"
        )
        self._stats.update(
            {"v_min": v_min, "v_max": v_max, "diameter_bound": math.sqrt(d) * (v_max - v_min)}
        )

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return np.clip(x, self._stats["v_min"], self._stats["v_max"])


@SENSITIVITY.register("jl")
class JohnsonLindenstrauss(SensitivityApproach):
    """Unit normalization, then a Gaussian random projection (Riecker 2023, Sec. 4.5.5).

    ``f_Φ(x) = n(x) Φ`` with Φ a (d, m) matrix of i.i.d. N(0, 1/m) entries drawn from
    ``numpy.random.default_rng(seed)`` and ``n(x) = x/‖x‖`` (the thesis) or, with
    ``normalize="clip"``, the projection onto the unit ball (Eq. 4.3). m is the smallest integer
    with ``m >= (√(2 ln|X|) + √ln(1/δ))² / β²`` (Lemma 4.5.1 with Lemma 4.5.2, Eq. 4.11;
    :func:`gaussian_width_dim`), |X| the number of distinct fitted points. Sensitivity
    ``Δ <= 1 + β`` with probability >= 1 − δ over Φ (Eq. 4.10; thesis: m = 89, P[Δ <= 1.9] >=
    0.999999), for pairs of fitted points only.

    Two points the thesis leaves implicit, checked here:

    * Lemma 4.5.1 hides an unspecified constant in Ω(·). We therefore also compute the exact
      union bound ``C(|X|,2)·P[χ²_m > m(1+β)²]`` (:func:`jl_union_failure_probability`) and
      report ``proven=True`` only if it is <= δ.
    * 1+β bounds the ratio against ‖n(x) − n(y)‖, not ‖x − y‖. It transfers to the original
      space because n is 1-Lipschitz on X: always for ``normalize="clip"``, and for x/‖x‖ when
      every fitted vector has norm >= 1 (there x/‖x‖ equals the ball projection). Otherwise
      the bound becomes ``(1+β)·max(1, L)`` with L = min(2/min‖x−y‖, 1/min‖x‖), estimated.

    To cover the ``<unk>`` input row, fit on ``Embedding.input_vectors()``.

    Args:
        beta: distortion β in (0, 1), default 0.9.
        delta: failure probability δ in (0, 1), default 1e-6.
        m: target dimension override (int >= 1); default from the formula.
        seed: seed of the projection matrix (int >= 0), default 0.
        normalize: ``"unit_norm"`` (x/‖x‖, thesis) or ``"clip"`` (x·min(1, 1/‖x‖)).
        fit_on: ``"vocab"`` or ``"train"``.
    """

    bound_kind = "proven w.p. 1-delta"

    name = "jl"

    def __init__(
        self,
        *,
        beta: float = 0.9,
        delta: float = 1e-6,
        m: int | None = None,
        seed: int = 0,
        normalize: str = "unit_norm",
        fit_on: str = "vocab",
    ) -> None:
        super().__init__(fit_on=fit_on)
        _check_open_unit("beta", beta, self.name)
        _check_open_unit("delta", delta, self.name)
        if m is not None and (isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1):
            raise ValueError(f"{self.name}: m must be a positive integer or None, got {m!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"{self.name}: seed must be a non-negative integer, got {seed!r}")
        if normalize not in ("unit_norm", "clip"):
            raise ValueError(
                f"{self.name}: normalize must be 'unit_norm' or 'clip', got {normalize!r}"
            )
        self.params.update(
            {
                "beta": float(beta),
                "delta": float(delta),
                "m": None if m is None else int(m),
                "seed": int(seed),
                "normalize": normalize,
            }
        )
        self._matrix: np.ndarray | None = None

    @property
    def matrix(self) -> np.ndarray:
        """The (d, m) projection matrix Φ (read-only view)."""
        self._check_fitted()
        view = self._matrix.view()
        view.flags.writeable = False
        return view

    def _normalize(self, x: np.ndarray) -> np.ndarray:
        if self.params["normalize"] == "clip":
            return _ball_project(x, 1.0)
        return _unit_normalize(x)

    def _fit(self, data: np.ndarray) -> None:
        p = self.params
        beta, delta = p["beta"], p["delta"]
        d = data.shape[1]
        normed = self._normalize(data)
        n_points = int(np.unique(normed, axis=0).shape[0])
        m_required = gaussian_width_dim(max(n_points, 1), delta, beta)
        m = p["m"] if p["m"] is not None else m_required
        rng = np.random.default_rng(p["seed"])
        self._matrix = rng.normal(0.0, 1.0 / math.sqrt(m), size=(d, m))
        self._out_dim = m
        union = jl_union_failure_probability(n_points, m, beta)
        norms = _min_norm_stats(data)
        self._stats.update(
            {
                "n_points": n_points,
                "m": m,
                "m_required": m_required,
                "beta": beta,
                "delta": delta,
                "seed": p["seed"],
                "matrix_sha256": hashlib.sha256(
                    np.ascontiguousarray(self._matrix, dtype="<f8").tobytes()
                ).hexdigest(),
                "increases_dimension": m > d,
                "union_failure_probability": union["expansion"],
                "union_failure_probability_two_sided": union["two_sided"],
                "bound_normalized_space": 1.0 + beta,
                "diameter_bound": 2.0 * (1.0 + beta),
                **norms,
            }
        )
        if m > d:
            logger.warning(
                "jl: target dimension m=%d exceeds the input dimension d=%d (|X|=%d, beta=%g, "
                "delta=%g): the projection increases the dimension",
                m, d, n_points, beta, delta,
            )
        if m < m_required:
            logger.warning("jl: m=%d is below the Gaussian-width bound %d", m, m_required)
        self._delta = delta
        reasons = []
        proven = True
        if union["expansion"] > delta:
            proven = False
            reasons.append(
                f"union bound on the failure probability {union['expansion']:.3g} exceeds "
                f"delta={delta:g} for m={m}"
            )
        if p["normalize"] == "clip" or norms["min_norm"] >= 1.0:
            self._bound = 1.0 + beta
        else:
            md = _min_distance_cached(data)
            lip = min(2.0 / md["min_distance"], 1.0 / norms["min_norm"] if norms["min_norm"] > 0
                      else math.inf)
            self._stats["min_distance"] = md["min_distance"]
            self._stats["normalization_lipschitz_estimate"] = lip
            self._bound = (1.0 + beta) * max(1.0, lip)
            proven = False
            reasons.append(
                f"x/‖x‖ is not 1-Lipschitz on the fitted vectors (min norm "
                f"{norms['min_norm']:.4g} < 1); (1+β)·max(1, {lip:.4g}) uses the observed minimum "
                "distance/norm; use normalize='clip' for a proven 1+β"
            )
        self._proven = proven
        self._reason = "; ".join(reasons)

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return self._normalize(x) @ self._matrix


# --------------------------------------------------------------------------------------------
# Factory and helpers
# --------------------------------------------------------------------------------------------


def make_sensitivity(name: str, **params: Any) -> SensitivityApproach:
    """Construct the sensitivity approach registered as ``name`` with ``params``.

    Raises:
        UnknownNameError: (a ``ValueError``) for an unknown name, with did-you-mean suggestions.
        ValueError: for an unknown or invalid parameter.
    """
    cls = SENSITIVITY.get(name)
    allowed = [
        p.name
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(
            f"sensitivity approach {name!r}: unknown parameter(s) {', '.join(unknown)}; "
            f"allowed: {', '.join(allowed)}"
        )
    return cls(**params)


def _as_matrix(vectors: Any, what: str) -> np.ndarray:
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 1:
        raise ValueError(f"{what} must be a 2-D array with at least 2 rows, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} contain NaN or inf")
    return x


def _check_open_unit(name: str, value: Any, owner: str = "") -> None:
    prefix = f"{owner}: " if owner else ""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(f"{prefix}{name} must be a number in (0, 1), got {value!r}")
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"{prefix}{name} must be in (0, 1), got {value!r}")


def _positive_float(name: str, value: Any, owner: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(f"{owner}: {name} must be a positive number, got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{owner}: {name} must be finite and > 0, got {value!r}")
    return v


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf" if v < 0 else "nan")
    return obj
