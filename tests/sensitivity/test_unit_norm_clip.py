"""``unit_norm_clip`` (Riecker 2023, Eq. 4.3): clipping to radius C, short rows kept."""

from __future__ import annotations

import numpy as np
import pytest

from bench.sensitivity import (
    SENSITIVITY,
)


def test_unit_norm_clip_radius(glove):
    s = SENSITIVITY.create("unit_norm_clip", C=5.0).fit(glove)
    out = s.transform(glove)
    n_in, n_out = np.linalg.norm(glove, axis=1), np.linalg.norm(out, axis=1)
    assert np.all(n_out <= 5.0 + 1e-12)
    short = n_in <= 5.0
    assert short.any() and (~short).any()
    np.testing.assert_array_equal(out[short], glove[short])
    np.testing.assert_allclose(n_out[~short], 5.0, rtol=1e-12)
    assert s.stats["frac_clipped"] == pytest.approx(np.mean(~short))
    assert s.stats["diameter_bound"] == 10.0

