"""Gaussian with clipping (``gaussian``): classic and analytic σ, default δ = 4^-d."""

import math

import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS
from bench.mechanisms.gaussian import analytic_gaussian_sigma

from ._stats import P_MIN, N, noise_of


def test_gaussian_classic_coordinates(space):
    m = MECHANISMS.create("gaussian", epsilon=0.8, C=1.2, delta=1e-5, rng=4).fit(space)
    sigma = math.sqrt(8 * 1.2**2 * math.log(1.25 / 1e-5)) / 0.8
    assert m.sigma == pytest.approx(sigma)
    z = noise_of(m).ravel()[:N]
    assert stats.kstest(z, stats.norm(scale=sigma).cdf).pvalue > P_MIN
    g = m.guarantee()
    assert (g.kind, g.delta) == ("approx", 1e-5)


def test_gaussian_default_delta_is_4_to_minus_d(space):
    m = MECHANISMS.create("gaussian", epsilon=1.0).fit(space)
    assert m.delta == pytest.approx(4.0 ** -space.shape[1])


def test_gaussian_refuses_large_eps_classic_and_analytic_works(space):
    with pytest.raises(ValueError, match="epsilon <= 1"):
        MECHANISMS.create("gaussian", epsilon=2.0)
    m = MECHANISMS.create("gaussian", epsilon=5.0, delta=1e-5, calibration="analytic").fit(space)
    # Balle & Wang (2018) Thm. 8 holds with equality at the returned sigma
    a, b = 2.0 / (2 * m.sigma), 5.0 * m.sigma / 2.0
    lhs = stats.norm.cdf(a - b) - math.exp(5.0) * stats.norm.cdf(-a - b)
    assert lhs == pytest.approx(1e-5, rel=1e-6)


def test_analytic_sigma_is_below_classic_for_eps_le_1():
    for eps in (0.1, 0.5, 1.0):
        classic = math.sqrt(8 * math.log(1.25 / 1e-5)) / eps
        assert analytic_gaussian_sigma(eps, 1e-5, 2.0) < classic

