"""``unit_norm_clip``: clip to norm C, x·min(1, C/‖x‖) (Riecker 2023, Eq. 4.3). Proven bound 1
(Eq. 4.4): the projection onto a ball is 1-Lipschitz.
"""

from __future__ import annotations

import numpy as np

from bench.sensitivity.base import (
    SENSITIVITY,
    SensitivityApproach,
    _ball_project,
    _min_norm_stats,
    _norms,
    _positive_float,
)


@SENSITIVITY.register()
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
