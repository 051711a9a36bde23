"""``clip_observed_range``: clip every coordinate to the observed range [v_min, v_max] of the
fitted vectors (Riecker 2023, Sec. 4.5.4). Bound 1: clipping to a fixed box is 1-Lipschitz (the
two numbers are statistics of the fitted, by default public, vectors).
"""

from __future__ import annotations

import math

import numpy as np

from bench.sensitivity.base import SENSITIVITY, SensitivityApproach, _observed_range


@SENSITIVITY.register()
class ClipObservedRange(SensitivityApproach):
    """Coordinate-wise clipping to the observed range [v_min, v_max] (Riecker 2023, Sec. 4.5.4).

    ``f_clip(x)_i = min(max(x_i, v_min), v_max)``. Each coordinate map is 1-Lipschitz (it is the
    projection onto the box [v_min, v_max]^d, a convex set), so ‖f(x) − f(y)‖ <= ‖x − y‖ for all
    inputs: Δ <= 1 (the conclusion of Eq. 4.8; the thesis' derivation via ‖x‖‖y‖ is not a valid
    expansion of ‖x − y‖², the per-coordinate argument is). v_min, v_max are statistics of the
    fitted vectors: public with ``fit_on="vocab"``, private with ``fit_on="train"``.

    Note that clipping to the range observed on the fitted vectors is the identity on every
    fitted vector (Table 5.2 lists the same Δmax/Δmin as "None").
    """

    bound_kind = "proven (1-Lipschitz)"

    name = "clip_observed_range"
    _LIPSCHITZ = True

    def __init__(self, *, fit_on: str = "vocab") -> None:
        super().__init__(fit_on=fit_on)

    def _fit(self, data: np.ndarray) -> None:
        v_min, v_max = _observed_range(data)
        d = data.shape[1]
        self._bound = 1.0
        self._reason = (
            "1-Lipschitz for any fixed range; v_min/v_max are statistics of the fitted vectors "
            f"({'public vocabulary' if self.params['fit_on'] == 'vocab' else 'training data'})"
        )
        self._stats.update(
            {"v_min": v_min, "v_max": v_max, "diameter_bound": math.sqrt(d) * (v_max - v_min)}
        )

    def _transform(self, x: np.ndarray) -> np.ndarray:
        return np.clip(x, self._stats["v_min"], self._stats["v_max"])
