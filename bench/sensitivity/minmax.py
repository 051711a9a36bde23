"""``minmax``: rescale each vector to [−1, 1]^d (Riecker 2023, Sec. 4.5.2). Bound 2√d/min‖x−y‖
(Eq. 4.6): an estimate over the fitted vectors.
"""

from __future__ import annotations

import math

import numpy as np

from bench.sensitivity.base import SENSITIVITY, SensitivityApproach, _rescale_per_vector


@SENSITIVITY.register()
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
