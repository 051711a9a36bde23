"""Laplace with norm clipping (``laplace``; Huang et al. 2024, Thm. 1): ε-DP.

Clip the word vector to norm C (:mod:`bench.mechanisms.clipped`), add i.i.d. Laplace noise
of scale 2C√d/ε per coordinate (the L1 sensitivity of the clipped ball), map back.
Noise is drawn independently for every token occurrence (the public code's departures are options
without a guarantee: :mod:`bench.mechanisms.departures`).
"""

from __future__ import annotations

import math

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS
from bench.mechanisms.clipped import ClippedMechanism


@MECHANISMS.register()
class ClippedLaplace(ClippedMechanism):
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
        """``n`` vectors of i.i.d. Lap(Δ₁/ε) noise, shape ``(n, d)``."""
        return self.rng.laplace(0.0, self.scale, size=(n, self.dim))

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε-DP for every pair of words (Huang et al. 2024, Thm. 1)."""
        return self._canonical("pure", 0.0, sensitivity)
