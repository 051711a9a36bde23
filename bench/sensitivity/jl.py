"""``jl``: unit normalization, then a Gaussian random projection (Johnson-Lindenstrauss;
Riecker 2023, Sec. 4.5.5). Bound 1+β with probability ≥ 1−δ over the draw of the projection,
for pairs of fitted points (Eq. 4.10).
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from bench.sensitivity.base import (
    SENSITIVITY,
    SensitivityApproach,
    _ball_project,
    _check_open_unit,
    _min_norm_stats,
    _unit_normalize,
    logger,
    min_distance_cached,
)

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


@SENSITIVITY.register()
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
        """Draw Φ with m from the Gaussian-width bound (or the override), record the stats."""
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
        self._set_bound(data, union, norms, m)

    def _set_bound(self, data: np.ndarray, union: dict[str, float], norms: dict[str, float],
                   m: int) -> None:
        """Bound, ``proven`` and reason: 1+β (Eq. 4.10), proven only if the exact union bound is
        <= δ and the normalization is 1-Lipschitz on the fitted vectors (see the class)."""
        p = self.params
        beta, delta = p["beta"], p["delta"]
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
            md = min_distance_cached(data)
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
