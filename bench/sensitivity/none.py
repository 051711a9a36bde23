"""``none``: the identity, no sensitivity approach (Riecker 2023, Table 5.2 row "None"). The
bound is ∞: word vectors have an unbounded range, so ε alone fixes the noise.
"""

from __future__ import annotations

import math

import numpy as np

from bench.sensitivity.base import SENSITIVITY, SensitivityApproach

# --------------------------------------------------------------------------------------------
# The approaches
# --------------------------------------------------------------------------------------------


@SENSITIVITY.register()
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
