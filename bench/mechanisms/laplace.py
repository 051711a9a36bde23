"""Additive mechanisms: multivariate Laplace (metric DP) and the canonical-DP mechanisms of
Huang et al. (2024) with norm clipping: Laplace, Gaussian and high-dimensional truncated Laplace.

Every mechanism draws noise independently for every token occurrence.

Example:
    >>> mech = TruncatedLaplace(epsilon=1.0, C=1.0, rng=0).fit(space)
    >>> noisy = mech.perturb(ids)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from bench.guarantee import Guarantee
from bench.mechanisms.base import (
    MECHANISMS,
    AdditiveMechanism,
    check_delta,
    check_positive,
    data_dependent,
    metric_guarantee,
    sensitivity_multiplier,
)


@MECHANISMS.register("mvl")
class MultivariateLaplace(AdditiveMechanism):
    """Multivariate Laplace / CMP mechanism (Feyisetan et al. 2020; Riecker 2023, Def. 2.1.5).

    Noise density p(z) ∝ exp(−ε‖z‖₂) in ℝ^d, sampled as η = l·u with u uniform on the unit sphere
    and l ~ Gamma(shape d, scale 1/ε). Guarantees ε·d_X metric DP w.r.t. the Euclidean distance
    of the space the noise is added in (Thm. 2.1.1). Through a sensitivity transform f with
    Lipschitz bound Δ_f this is (Δ_f·ε)·d metric DP in the original embedding space (Riecker
    2023, Eq. 5.1) — the thesis' default (``calibrate=False``). With ``calibrate=True`` the noise
    is instead p(z) ∝ exp(−ε‖z‖/Δ_f) (l ~ Gamma(d, Δ_f/ε); Feyisetan & Kasiviswanathan 2021) and
    the guarantee is ε·d metric DP in the original space.

    Args:
        epsilon: ε > 0.
        calibrate: scale the noise by the sensitivity bound (needs a finite bound).
        rng: NumPy Generator or seed.
    """

    name = "mvl"
    description = "multivariate Laplace (CMP): eta = l*u, l ~ Gamma(d, 1/eps)"
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, calibrate: bool = False, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        if not isinstance(calibrate, bool):
            raise ValueError(f"mvl: calibrate must be true or false, got {calibrate!r}")
        self.calibrate = calibrate
        self.scale_factor = 1.0  # Δ_f when calibrated (set by bind_sensitivity)
        self.params = {"calibrate": calibrate}

    def bind_sensitivity(self, sensitivity) -> None:
        """With ``calibrate=True``, take Δ_f from the approach (refused when unbounded)."""
        if not self.calibrate:
            return
        mult, _, _, _ = sensitivity_multiplier(sensitivity)
        if not math.isfinite(mult) or mult <= 0:
            raise ValueError("mvl: calibrate=true needs a sensitivity approach with a finite bound")
        self.scale_factor = mult

    @property
    def scale(self) -> float:
        """Gamma scale of the noise radius: Δ_f/ε (calibrated) or 1/ε."""
        return self.scale_factor / self.epsilon

    def noise(self, n: int) -> np.ndarray:
        d = self.space.shape[1]
        u = self.rng.standard_normal((n, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        radius = self.rng.gamma(shape=d, scale=self.scale, size=n)
        return u * radius[:, None]

    def guarantee(self, sensitivity=None) -> Guarantee:
        return metric_guarantee(self.epsilon, sensitivity, calibrated=self.calibrate)


class _Clipped(AdditiveMechanism):
    """Canonical-DP mechanisms: CLIPEmb(w) = φ(w)·min(1, C/‖φ(w)‖₂) (Huang et al. 2024, Eq. 1).

    Clipping is part of the mechanism, so the canonical guarantee holds for every pair of words
    whatever sensitivity approach ran before it.
    """

    def __init__(self, *, epsilon: float, C: float = 1.0, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        self.C = check_positive(C, "C (clipping norm)", self.name)
        self.params = {"C": self.C}

    def prepare(self, x: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            factor = np.minimum(1.0, self.C / norms)
        return x * factor

    @property
    def dim(self) -> int:
        return self.space.shape[1]

    def _canonical(self, kind: str, delta: float, sensitivity) -> Guarantee:
        proven, reason = True, ""
        if data_dependent(sensitivity):
            proven, reason = False, "sensitivity transform fitted on private training data"
        log10 = math.log10(delta) if delta > 0 else getattr(self, "log10_delta", None)
        return Guarantee(kind, self.epsilon, delta=delta, proven=proven, reason=reason,
                         log10_delta=log10 if kind == "approx" else None)


@MECHANISMS.register("laplace")
class ClippedLaplace(_Clipped):
    """Laplace mechanism with norm clipping (Huang et al. 2024, Thm. 1): ε-DP.

    Each coordinate of CLIPEmb(w) gets i.i.d. Lap(Δ₁/ε) noise with Δ₁ = 2√d·C (the L1
    sensitivity of vectors in the L2 ball of radius C).
    """

    name = "laplace"
    description = "clipped embedding + Lap(2 sqrt(d) C / eps) per coordinate"
    guarantee_kind = "pure"

    @property
    def delta1(self) -> float:
        """Δ₁ = 2√d·C."""
        return 2.0 * math.sqrt(self.dim) * self.C

    @property
    def scale(self) -> float:
        """Laplace scale Δ₁/ε."""
        return self.delta1 / self.epsilon

    def noise(self, n: int) -> np.ndarray:
        return self.rng.laplace(0.0, self.scale, size=(n, self.dim))

    def guarantee(self, sensitivity=None) -> Guarantee:
        return self._canonical("pure", 0.0, sensitivity)


def _delta_from(delta: Any, d: int, name: str) -> float:
    """δ: a number in (0, 1) or the paper's default ``"4^-d"`` (Huang et al. 2024, Sec. 6.1)."""
    if isinstance(delta, str):
        if delta.replace(" ", "") in ("4^-d", "4**-d", "1/4^d"):
            return 4.0 ** (-d)
        raise ValueError(f"{name}: delta must be a number in (0, 1) or '4^-d', got {delta!r}")
    return check_delta(delta, name)


def analytic_gaussian_sigma(epsilon: float, delta: float, l2_sensitivity: float) -> float:
    """Smallest σ of the analytic Gaussian mechanism (Balle & Wang 2018, Thm. 8).

    Solves Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) = δ for σ (the left side decreases in σ).
    """

    def excess(sigma: float) -> float:
        a = l2_sensitivity / (2 * sigma)
        b = epsilon * sigma / l2_sensitivity
        return ndtr(a - b) - math.exp(epsilon) * ndtr(-a - b) - delta

    lo, hi = 1e-12 * l2_sensitivity, l2_sensitivity
    while excess(hi) > 0:
        hi *= 2.0
    return brentq(excess, lo, hi, xtol=1e-14 * l2_sensitivity, rtol=1e-12, maxiter=500)


@MECHANISMS.register("gaussian")
class ClippedGaussian(_Clipped):
    """Gaussian mechanism with norm clipping (Huang et al. 2024, Thm. 2): (ε, δ)-DP.

    ``calibration="classic"``: η ~ N(0, σ²I), σ² = 8C²·ln(1.25/δ)/ε² — valid only for ε ≤ 1
    (larger ε is refused). ``calibration="analytic"``: the exact σ of Balle & Wang (2018) for the
    L2 sensitivity 2C, valid for every ε. Default δ = 4^−d as in Huang et al. (2024, Sec. 6.1).
    """

    name = "gaussian"
    description = "clipped embedding + N(0, 8C^2 ln(1.25/delta)/eps^2 I) (classic, eps<=1) or analytic"
    guarantee_kind = "approx"

    def __init__(self, *, epsilon: float, C: float = 1.0, delta: float | str = "4^-d",
                 calibration: str = "classic", rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, C=C, rng=rng)
        if calibration not in ("classic", "analytic"):
            raise ValueError(f"gaussian: calibration must be 'classic' or 'analytic', "
                             f"got {calibration!r}")
        if calibration == "classic" and self.epsilon > 1:
            raise ValueError(f"gaussian: the classic calibration holds only for epsilon <= 1 "
                             f"(Huang et al. 2024, Thm. 2), got {self.epsilon}; use "
                             f"calibration: analytic for larger epsilon")
        _delta_from(delta, 1, self.name)  # validate now, not at fit time
        self._delta_spec = delta
        self.calibration = calibration
        self.params = {"C": self.C, "delta": delta, "calibration": calibration}

    def _fit(self) -> None:
        self.delta = _delta_from(self._delta_spec, self.dim, self.name)
        if self.calibration == "classic":
            self.sigma = math.sqrt(8 * self.C**2 * math.log(1.25 / self.delta)) / self.epsilon
        else:
            self.sigma = analytic_gaussian_sigma(self.epsilon, self.delta, 2 * self.C)

    def noise(self, n: int) -> np.ndarray:
        return self.rng.normal(0.0, self.sigma, size=(n, self.dim))

    def guarantee(self, sensitivity=None) -> Guarantee:
        self._check_fitted()
        return self._canonical("approx", self.delta, sensitivity)


@MECHANISMS.register("trlaplace")
class TruncatedLaplace(_Clipped):
    """High-dimensional truncated Laplace mechanism (Huang et al. 2024, Thm. 3): (ε, δ)-DP.

    Each coordinate i.i.d. with density ∝ exp(−α|x|) on [−A, A], α = ε/Δ₁, Δ₁ = 2√d·C,
    A = −(Δ₁/ε)·ln(1 − ε/(2δ^{1/d}√d)); requires ε < 2δ^{1/d}√d. Default δ = 4^−d (Sec. 6.1),
    i.e. δ^{1/d} = 1/4 and the condition ε < √d/2.

    For larger ε, the paper's dummy-dimension trick (Sec. 4, after Remark 1): pad the clipped
    vector with zero coordinates to the smallest d′ ≥ d that satisfies the condition, add the
    noise in d′ dimensions, drop the padding (post-processing). All parameters (Δ₁, α, A and,
    for the default, δ = 4^−d′) are then those of dimension d′; the padding's noise is never
    drawn since it is discarded. ``d_eff`` and the resulting (ε, δ) are recorded.

    Sampling is exact, by inverse CDF: |x| = −ln(1 − U·(1 − e^{−αA}))/α, with a fair random sign.
    """

    name = "trlaplace"
    description = "clipped embedding + truncated Laplace on [-A, A] per coordinate"
    guarantee_kind = "approx"
    version = "2"  # 2: the guarantee is reported as not proven (see UNPROVEN)

    def __init__(self, *, epsilon: float, C: float = 1.0, delta: float | str = "4^-d",
                 dummy_dims: bool = True, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, C=C, rng=rng)
        _delta_from(delta, 1, self.name)  # validate now, not at fit time
        self._delta_spec = delta
        self.dummy_dims = bool(dummy_dims)
        self.params = {"C": self.C, "delta": delta, "dummy_dims": self.dummy_dims}

    def _log_delta(self, d: int) -> float:
        """ln δ for dimension d (the default 4^−d underflows a float for d > 537)."""
        if isinstance(self._delta_spec, str):
            _delta_from(self._delta_spec, 1, self.name)  # validates the spelling
            return -d * math.log(4.0)
        return math.log(check_delta(self._delta_spec, self.name))

    def _root(self, d: int) -> float:
        """δ^{1/d}."""
        return math.exp(self._log_delta(d) / d)

    def _condition(self, d: int) -> tuple[bool, float]:
        limit = 2.0 * self._root(d) * math.sqrt(d)
        return self.epsilon < limit, math.exp(self._log_delta(d))

    def _fit(self) -> None:
        d = self.dim
        ok, delta = self._condition(d)
        if not ok and not self.dummy_dims:
            raise ValueError(f"trlaplace: epsilon must be < 2·delta^(1/d)·sqrt(d) = "
                             f"{2 * self._root(d) * math.sqrt(d):.4g} for d={d} (Huang et al. "
                             f"2024, Thm. 3); enable dummy_dims for larger epsilon")
        d_eff = d
        if not ok:  # 2·δ(d′)^{1/d′}·√d′ increases with d′: exponential then binary search
            hi = 2 * d
            while not self._condition(hi)[0]:
                hi *= 2
                if hi > 10**15:
                    raise ValueError("trlaplace: no dimension satisfies the condition for this "
                                     "epsilon and delta")
            lo = hi // 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if self._condition(mid)[0] else (mid, hi)
            d_eff = hi
            ok, delta = self._condition(d_eff)
        self.d_eff = d_eff
        self.delta = delta
        self.log10_delta = self._log_delta(d_eff) / math.log(10.0)
        self.delta1 = 2.0 * math.sqrt(d_eff) * self.C
        self.alpha = self.epsilon / self.delta1
        self.A = -(self.delta1 / self.epsilon) * math.log1p(
            -self.epsilon / (2.0 * self._root(d_eff) * math.sqrt(d_eff)))

    def noise(self, n: int) -> np.ndarray:
        shape = (n, self.dim)
        u = self.rng.random(shape)
        mass = -math.expm1(-self.alpha * self.A)  # 1 − e^{−αA}
        mag = -np.log1p(-u * mass) / self.alpha
        sign = np.where(self.rng.random(shape) < 0.5, -1.0, 1.0)
        return np.minimum(mag, self.A) * sign

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """Exact CDF of one noise coordinate (for tests)."""
        x = np.clip(np.asarray(x, dtype=np.float64), -self.A, self.A)
        a, A = self.alpha, self.A
        z = 1.0 - math.exp(-a * A)
        return np.where(x < 0, 0.5 * (np.exp(-a * np.abs(x)) - math.exp(-a * A)) / z,
                        0.5 + 0.5 * (1.0 - np.exp(-a * x)) / z)

    def describe(self) -> dict:
        out = super().describe()
        if self.space is not None:
            out.update(d_eff=self.d_eff, delta_value=self.delta, log10_delta=self.log10_delta,
                       A=self.A, alpha=self.alpha)
        return out

    UNPROVEN = ("Huang et al. 2024, Thm. 3 bounds the chance that all d coordinates leave the "
                "overlap of the two truncated supports ((δ^{1/d})^d = δ), but one coordinate "
                "suffices for an unbounded loss; `bench audit` finds violations at ε = 1, d = 50 "
                "(docs/audit.md), so the stated δ is not a proven bound")

    def guarantee(self, sensitivity=None) -> Guarantee:
        self._check_fitted()
        g = self._canonical("approx", self.delta, sensitivity)
        reason = "; ".join(r for r in (self.UNPROVEN, g.reason) if r)
        return Guarantee(g.kind, g.epsilon, delta=g.delta, proven=False, reason=reason,
                         log10_delta=g.log10_delta)
