"""Gaussian with norm clipping (``gaussian``; Huang et al. 2024, Thm. 2): (ε, δ)-DP.

Clip to norm C, add N(0, σ²I): the classic calibration σ = 2C·√(2 ln(1.25/δ))/ε for
ε ≤ 1, or the analytic Gaussian mechanism (Balle & Wang 2018) for any ε; map back.
Noise is drawn independently for every token occurrence (the public code's departures are options
without a guarantee: :mod:`bench.mechanisms.departures`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS
from bench.mechanisms.clipped import ClippedMechanism, delta_from


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


@MECHANISMS.register()
class ClippedGaussian(ClippedMechanism):
    """Gaussian mechanism with norm clipping (Huang et al. 2024, Thm. 2): (ε, δ)-DP.

    ``calibration="classic"``: η ~ N(0, σ²I), σ² = 8C²·ln(1.25/δ)/ε² — valid only for ε ≤ 1
    (larger ε is refused). ``calibration="analytic"``: the exact σ of Balle & Wang (2018) for the
    L2 sensitivity 2C, valid for every ε. Default δ = 4^−d as in Huang et al. (2024, Sec. 6.1).
    ``clip``, ``noise_shared``, ``batch_sentences``, ``allow_no_guarantee``: the public code's
    departures (:class:`~bench.mechanisms.clipped.ClippedMechanism`).
    """

    name = "gaussian"
    description = ("clipped embedding + N(0, 8C^2 ln(1.25/delta)/eps^2 I) (classic, eps<=1) "
                   "or analytic")
    guarantee_kind = "approx"

    def __init__(self, *, epsilon: float, C: float = 1.0, delta: float | str = "4^-d",
                 calibration: str = "classic", clip: bool = True, noise_shared: str = "token",
                 batch_sentences: int | None = None, allow_no_guarantee: bool = False,
                 rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, C=C, clip=clip, noise_shared=noise_shared,
                         batch_sentences=batch_sentences,
                         allow_no_guarantee=allow_no_guarantee, rng=rng)
        if calibration not in ("classic", "analytic"):
            raise ValueError(f"gaussian: calibration must be 'classic' or 'analytic', "
                             f"got {calibration!r}")
        if calibration == "classic" and self.epsilon > 1:
            raise ValueError(f"gaussian: the classic calibration holds only for epsilon <= 1 "
                             f"(Huang et al. 2024, Thm. 2), got {self.epsilon}; use "
                             f"calibration: analytic for larger epsilon")
        delta_from(delta, 1, self.name)  # validate now, not at fit time
        self._delta_spec = delta
        self.calibration = calibration
        self.params = {"C": self.C, "delta": delta, "calibration": calibration,
                       **self.departures}

    def _fit(self) -> None:
        self.delta = delta_from(self._delta_spec, self.dim, self.name)
        if self.calibration == "classic":
            self.sigma = math.sqrt(8 * self.C**2 * math.log(1.25 / self.delta)) / self.epsilon
        else:
            self.sigma = analytic_gaussian_sigma(self.epsilon, self.delta, 2 * self.C)

    def noise(self, n: int) -> np.ndarray:
        """``n`` vectors of i.i.d. N(0, σ²) noise, shape ``(n, d)``."""
        return self.rng.normal(0.0, self.sigma, size=(n, self.dim))

    def guarantee(self, sensitivity=None) -> Guarantee:
        """(ε, δ)-DP for every pair of words (see the class docstring)."""
        self._check_fitted()
        return self._canonical("approx", self.delta, sensitivity)
