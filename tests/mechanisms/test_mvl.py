"""Multivariate Laplace (``mvl``): Gamma(d, 1/ε) radius, isotropic direction, calibration."""

import math

import numpy as np
import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS

from ._stats import P_MIN, noise_of


@pytest.mark.parametrize("eps", [0.5, 5.0])
def test_mvl_radius_is_gamma_and_direction_isotropic(space, eps):
    m = MECHANISMS.create("mvl", epsilon=eps, rng=1).fit(space)
    z = noise_of(m)
    d = space.shape[1]
    r = np.linalg.norm(z, axis=1)
    assert stats.kstest(r, stats.gamma(a=d, scale=1 / eps).cdf).pvalue > P_MIN
    # u·e for u uniform on S^{d-1}: (1 + u·e)/2 ~ Beta((d-1)/2, (d-1)/2)
    for axis in (0, d - 1):
        c = z[:, axis] / r
        beta = stats.beta((d - 1) / 2, (d - 1) / 2)
        assert stats.kstest((1 + c) / 2, beta.cdf).pvalue > P_MIN
    # a wrong shape (d - 1) is detected by the same test
    assert stats.kstest(r, stats.gamma(a=d - 1, scale=1 / eps).cdf).pvalue < P_MIN


def test_mvl_calibrated_scales_noise_by_bound(space):
    class Bound:
        name, bound, proven, reason, delta, params = "x", 2.5, True, "", 0.0, {}

    m = MECHANISMS.create("mvl", epsilon=2.0, calibrate=True, rng=2)
    m.bind_sensitivity(Bound())
    m.fit(space)
    r = np.linalg.norm(noise_of(m), axis=1)
    assert stats.kstest(r, stats.gamma(a=space.shape[1], scale=2.5 / 2.0).cdf).pvalue > P_MIN
    g = m.guarantee(Bound())
    assert g.kind == "metric" and g.multiplier == 1.0
    g_uncal = MECHANISMS.create("mvl", epsilon=2.0).fit(space).guarantee(Bound())
    assert g_uncal.multiplier == 2.5


def test_mvl_calibrate_needs_finite_bound():
    class Unbounded:
        name, bound, proven, reason, delta, params = "minmax", math.inf, False, "x", 0.0, {}

    m = MECHANISMS.create("mvl", epsilon=1, calibrate=True)
    with pytest.raises(ValueError, match="finite bound"):
        m.bind_sensitivity(Unbounded())

