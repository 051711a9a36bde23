"""``unit_norm``: normalise to unit length, x/‖x‖ (Riecker 2023, Sec. 4.5.1). Bound 2/min‖x−y‖
over the fitted vectors (Eq. 4.2): an estimate, not proven for other inputs.
"""

from __future__ import annotations

import math

import numpy as np

from bench.sensitivity.base import (
    SENSITIVITY,
    SensitivityApproach,
    _min_norm_stats,
    _unit_normalize,
)


@SENSITIVITY.register()
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
