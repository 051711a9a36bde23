"""Shared machinery of the sensitivity approaches: the :class:`SensitivityApproach` base, the
registry (build one with ``SENSITIVITY.create(name, **params)``), exact minimum pairwise
distances and shared vector helpers.
"""

from __future__ import annotations

import hashlib
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

_UNIT_ROUNDOFF_F32 = 2.0**-24
_UNIT_ROUNDOFF_F64 = 2.0**-53
_F32_NORMS = (1e-15, 1e15)
"""The range of the largest row norm in which the screening of :func:`min_pairwise_distance`
runs in float32 (float64 outside it): (2·1e15)² stays far below float32's largest number, and
1e-15² far above its underflow (the
absolute error of products that underflow, ~1e-45 each, is then negligible against the
margin, which scales with the largest norm squared)."""


def min_pairwise_distance(
    vectors: np.ndarray, *, row_block: int = 512, col_block: int = 8192
) -> dict[str, Any]:
    """Exact minimum Euclidean distance between two *distinct* rows of ``vectors``.

    This is the denominator of Eq. 4.2 / 4.6 (Riecker 2023), computed over every pair (no
    sampling, no approximate search). Rows that are exactly identical are one point of the domain
    of ``f`` (two words with the same vector): a pair of them has ratio 0/0 in Eq. 2.3 and
    identical mechanism outputs, so it constrains nothing; such rows are collapsed first and
    counted in ``n_duplicate_rows``.

    Method: squared distances ``‖x‖² − 2x·y + ‖y‖²`` from float32 matrix products over the upper
    triangle in blocks. Every pair whose computed value is within a rigorous floating-point error
    bound (``γ_{d+5}·(‖x‖+‖y‖)²`` with float32's unit roundoff, input rounding included,
    doubled; float64 products and ``γ_{d+3}`` where the largest norm is outside
    :data:`_F32_NORMS`) of the running minimum is kept as a candidate; the
    candidates' distances are then recomputed directly as ``‖x − y‖`` (no cancellation), and the
    smallest is returned. The result is therefore the exact minimum up to the final rounding of
    ``‖x − y‖``, with no ad-hoc tolerance.

    Args:
        vectors: ``(n, d)`` finite float array, ``n >= 2``.
        row_block: rows per block.
        col_block: columns per block.

    Returns:
        dict with ``min_distance`` (> 0), ``pair`` (indices ``(i, j)``, ``i < j``, of a closest
        pair in ``vectors``), ``n_points`` (distinct rows), ``n_duplicate_rows``,
        ``n_candidates``, ``seconds``.

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
    ci, cj = _candidate_pairs(uniq, norms2, row_block, col_block)
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


def _candidate_pairs(uniq: np.ndarray, norms2: np.ndarray, row_block: int,
                     col_block: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``, ``i < j``, of the distinct rows ``uniq`` (sorted by their squared
    norms ``norms2``) whose squared distance from the blocked matrix products is within the
    floating-point error margin of the minimum: the exact minimum is among them (see
    :func:`min_pairwise_distance`)."""
    n, d = uniq.shape
    radii = np.sqrt(norms2)
    rmax = float(radii[-1])
    # The products run in float32 (about three times the float64 rate): rounding x, y and ‖y‖²
    # to float32 moves −2x·y + ‖y‖² by at most (2u + u²)(‖x‖+‖y‖)², and the float32 sum of the
    # d + 1 products by γ_{d+1}(‖x‖+‖y‖)² (Higham 2002, Eq. 3.5), u = 2⁻²⁴: within
    # γ_{d+5}·(‖x‖+‖y‖)² together (‖x‖² is added in float64). Only the screening runs in
    # float32; every candidate's distance is recomputed in float64 (min_pairwise_distance).
    # Vectors whose norms leave float32's range (or come near its underflow, where its
    # relative bound no longer holds) are screened in float64: exact inputs, γ_{d+3}, u = 2⁻⁵³.
    f32 = _F32_NORMS[0] < rmax < _F32_NORMS[1]
    dtype, u, k = (np.float32, _UNIT_ROUNDOFF_F32, d + 5) if f32 else \
        (np.float64, _UNIT_ROUNDOFF_F64, d + 3)
    gamma = k * u / (1 - k * u)
    # |computed − exact| <= gamma·(‖x‖+‖y‖)² <= gamma·(2·rmax)² for each pair; a pair can beat
    # the true minimum's computed value only if within twice that of it. Factor 2 for safety.
    margin = 4.0 * gamma * (2.0 * rmax) ** 2
    left = np.hstack([uniq, np.ones((n, 1))]).astype(dtype)  # [x, 1]
    right = np.hstack([-2.0 * uniq, norms2[:, None]]).T.astype(dtype)  # [−2y, ‖y‖²]ᵀ
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
    return ci[keep], cj[keep]


def _brute_force_min_distance(vectors: np.ndarray) -> float:
    """Reference O(n²) minimum distance between distinct rows (for tests; small inputs only)."""
    x = np.asarray(vectors, dtype=np.float64)
    diff = x[:, None, :] - x[None, :, :]
    dist = np.sqrt(np.sum(diff**2, axis=-1))
    dist[dist == 0] = np.inf  # the diagonal and identical rows
    return float(dist.min())


# A handful of fitted arrays is common (one vocabulary, several approaches in a grid); each
# has a minimum and, for truncated_gumbel, a maximum distance.
_STATS_CACHE: dict[tuple[str, str, tuple[int, ...]], Any] = {}
_STATS_CACHE_SIZE = 16


def _cached(what: str, x: np.ndarray, compute: Any) -> Any:
    """``compute(x)``, the last :data:`_STATS_CACHE_SIZE` results kept per process by ``what``
    and the content hash of ``x`` (the oldest dropped first)."""
    key = (what, hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest() + str(x.dtype),
           x.shape)
    if key not in _STATS_CACHE:
        if len(_STATS_CACHE) >= _STATS_CACHE_SIZE:
            _STATS_CACHE.pop(next(iter(_STATS_CACHE)))
        _STATS_CACHE[key] = compute(x)
    return _STATS_CACHE[key]


def _min_distance_logged(x: np.ndarray) -> dict[str, Any]:
    hit = min_pairwise_distance(x)
    logger.info("exact min distance over %d distinct vectors: %.6g (pair %s) in %.2fs",
                hit["n_points"], hit["min_distance"], hit["pair"], hit["seconds"])
    return hit


def min_distance_cached(x: np.ndarray) -> dict[str, Any]:
    """:func:`min_pairwise_distance` of ``x``, the last few kept per process by content hash
    (the sensitivity approaches of a grid, the findings, and every privatizer truncated_gumbel
    builds for a cell -- the corpus', the informed adversary's, the measures' -- read the same
    fitted arrays)."""
    return dict(_cached("min", x, _min_distance_logged))


def max_distance_cached(x: np.ndarray) -> float:
    """:func:`bench.neighbors.max_pairwise_distance` of ``x`` (Δmax), the last few kept per
    process by content hash, as :func:`min_distance_cached`: exact either way, so the cache
    changes nothing but the time."""
    from bench.neighbors import max_pairwise_distance

    return _cached("max", x, max_pairwise_distance)


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
        md = min_distance_cached(data)
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


def _rescale_per_vector(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Per-vector min-max scaling of the coordinates of each row onto [lo, hi].

    A constant row (max = min) has no scale; it is mapped to the midpoint (lo + hi)/2.
    """
    mn = x.min(axis=1, keepdims=True)
    span = x.max(axis=1, keepdims=True) - mn
    unit = np.divide(x - mn, span, out=np.full_like(x, 0.5), where=span > 0)
    return lo + (hi - lo) * unit


def _observed_range(data: np.ndarray) -> tuple[float, float]:
    v_min, v_max = float(data.min()), float(data.max())
    if not v_min < v_max:
        raise ValueError("the observed range is empty: all fitted coordinates are equal")
    return v_min, v_max


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


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
