"""Regularized Mahalanobis (``mahalanobis``): whitened noise is multivariate Laplace."""

import math

import numpy as np
import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS

from ._stats import P_MIN


def sigma_lambda(space, lam):
    cov = np.cov(space, rowvar=False, ddof=0)
    d = space.shape[1]
    return lam * cov * d / np.trace(cov) + (1 - lam) * np.eye(d)


@pytest.fixture(scope="module")
def skewed():
    """A vocabulary with a strongly anisotropic covariance (so Σ_λ ≠ I matters)."""
    rng = np.random.default_rng(11)
    return rng.normal(size=(300, 6)) * np.array([5.0, 2.0, 1.0, 0.5, 0.2, 0.1])


@pytest.mark.parametrize("eps,lam", [(1.0, 0.2), (4.0, 0.9)])
def test_mahalanobis_whitened_noise_is_multivariate_laplace(skewed, eps, lam):
    m = MECHANISMS.create("mahalanobis", epsilon=eps, lam=lam, rng=12).fit(skewed)
    S = sigma_lambda(skewed, lam)
    np.testing.assert_allclose(m.sigma_lam, S, atol=1e-12)
    np.testing.assert_allclose(m.sqrt_sigma @ m.sqrt_sigma, S, atol=1e-10)
    z = m.perturb(np.zeros(20_000, dtype=np.int64)) - skewed[0]
    w = z @ np.linalg.inv(np.linalg.cholesky(S)).T  # any Σ^{-1/2} gives the same radius
    d = skewed.shape[1]
    r = np.linalg.norm(w, axis=1)
    assert stats.kstest(r, stats.gamma(a=d, scale=1 / eps).cdf).pvalue > P_MIN
    wu = m.whiten(z)
    np.testing.assert_allclose(np.linalg.norm(wu, axis=1), r, rtol=1e-9)
    beta = stats.beta((d - 1) / 2, (d - 1) / 2)
    for axis in (0, d - 1):
        assert stats.kstest((1 + wu[:, axis] / r) / 2, beta.cdf).pvalue > P_MIN
    # the same tests fail for the wrong shape, and for the un-whitened noise
    assert stats.kstest(r, stats.gamma(a=d - 1, scale=1 / eps).cdf).pvalue < P_MIN
    raw = np.linalg.norm(z, axis=1)
    assert stats.kstest((1 + z[:, 0] / raw) / 2, beta.cdf).pvalue < P_MIN


def test_mahalanobis_lambda_zero_is_mvl(skewed):
    m = MECHANISMS.create("mahalanobis", epsilon=2.0, lam=0.0, rng=13).fit(skewed)
    np.testing.assert_allclose(m.sqrt_sigma, np.eye(6), atol=1e-12)
    r = np.linalg.norm(m.noise(20_000), axis=1)
    assert stats.kstest(r, stats.gamma(a=6, scale=0.5).cdf).pvalue > P_MIN


def test_mahalanobis_trace_normalised_and_guarantee(skewed):
    m = MECHANISMS.create("mahalanobis", epsilon=1.0, lam=0.5).fit(skewed)
    assert np.trace(m.sigma_lam) == pytest.approx(6.0)
    lam_min = np.linalg.eigvalsh(m.sigma_lam).min()
    assert m.kappa == pytest.approx(1 / math.sqrt(lam_min))
    assert m.kappa <= 1 / math.sqrt(0.5) + 1e-12
    g = m.guarantee()
    assert g.kind == "metric" and g.multiplier == pytest.approx(m.kappa) and g.proven
    a, b = skewed[0], skewed[1]
    dm = m.metric_distance(a, b)[0]
    assert dm == pytest.approx(math.sqrt((a - b) @ np.linalg.solve(m.sigma_lam, a - b)))
    assert dm <= m.kappa * np.linalg.norm(a - b) + 1e-12


def test_mahalanobis_density_ratio_is_metric_dp(skewed):
    """The exact density ∝ exp(−ε‖Σ^{-1/2}z‖): the ratio at any point is ≤ exp(ε·d_RM)."""
    eps = 1.5
    m = MECHANISMS.create("mahalanobis", epsilon=eps, rng=14).fit(skewed)
    z = skewed[0] + m.noise(2000)
    logp = lambda x: -eps * np.linalg.norm(m.whiten(z - x), axis=1)  # noqa: E731
    ratio = logp(skewed[0]) - logp(skewed[1])
    bound = eps * m.metric_distance(skewed[0], skewed[1])[0]
    assert ratio.max() <= bound + 1e-9 and ratio.max() > 0.5 * bound


def test_mahalanobis_validation(skewed):
    for bad in (-0.1, 1.5, "x", float("nan"), True):
        with pytest.raises(ValueError, match="lam"):
            MECHANISMS.create("mahalanobis", epsilon=1.0, lam=bad)
    flat = np.hstack([skewed, np.zeros((300, 1))])  # rank-deficient covariance
    with pytest.raises(ValueError, match="singular"):
        MECHANISMS.create("mahalanobis", epsilon=1.0, lam=1.0).fit(flat)
    MECHANISMS.create("mahalanobis", epsilon=1.0, lam=0.99).fit(flat)

