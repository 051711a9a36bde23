"""Multivariate Laplace (``mvl``; Feyisetan et al. 2020; Riecker 2023, Def. 2.1.5): metric DP.

Add noise with density p(z) ∝ exp(−ε‖z‖₂) to the (sensitivity-transformed) word vector, drawn
as a direction uniform on the unit sphere times a radius l ~ Gamma(d, 1/ε) (with
``calibrate=True``: exp(−ε‖z‖/Δ_f), l ~ Gamma(d, Δ_f/ε)), then map back with a mapping. Noise
is drawn independently for every token occurrence.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import (
    MECHANISMS,
    AdditiveMechanism,
    metric_guarantee,
    sensitivity_multiplier,
)


@MECHANISMS.register()
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
        """``n`` noise vectors l·u (u uniform on the unit sphere), shape ``(n, d)``."""
        d = self.space.shape[1]
        u = self.rng.standard_normal((n, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        radius = self.rng.gamma(shape=d, scale=self.scale, size=n)
        return u * radius[:, None]

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε·d metric DP, through Δ_f unless calibrated (see the class docstring)."""
        return metric_guarantee(self.epsilon, sensitivity, calibrated=self.calibrate)
