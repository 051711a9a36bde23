"""Truncated Laplace (``trlaplace``): exact CDF and support, dummy dims, unproven."""

import math

import numpy as np
import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS

from ._stats import P_MIN, N, noise_of


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_trlaplace_matches_exact_cdf_and_support(space, eps):
    m = MECHANISMS.create("trlaplace", epsilon=eps, C=1.0, rng=5).fit(space)
    d = space.shape[1]
    d1 = 2 * math.sqrt(d)
    assert m.alpha == pytest.approx(eps / d1)
    assert m.A == pytest.approx(-(d1 / eps) * math.log(1 - eps / (2 * 0.25 * math.sqrt(d))))
    z = noise_of(m)
    assert np.all(np.abs(z) <= m.A)
    flat = z.ravel()[:N]
    assert stats.kstest(flat, m.cdf).pvalue > P_MIN
    # the CDF is the normalised truncated Laplace density: check against numerical integration
    xs = np.linspace(-m.A, m.A, 20001)
    pdf = np.exp(-m.alpha * np.abs(xs))
    num = np.concatenate([[0], np.cumsum((pdf[1:] + pdf[:-1]) / 2 * np.diff(xs))])
    np.testing.assert_allclose(m.cdf(xs), num / num[-1], atol=1e-6)
    # B = Δ∞ / δ^{1/d} (Huang et al. 2024, Thm. 3)
    B = 2 * (1 - math.exp(-m.alpha * m.A)) / m.alpha
    assert B == pytest.approx(2.0 / 0.25)


def test_trlaplace_dummy_dimensions(space):
    d = space.shape[1]  # 8: condition eps < sqrt(d)/2 = 1.414
    m = MECHANISMS.create("trlaplace", epsilon=1.0).fit(space)
    assert m.d_eff == d
    m = MECHANISMS.create("trlaplace", epsilon=10.0).fit(space)
    assert m.d_eff == 401  # smallest d' with sqrt(d')/2 > 10
    assert m.describe()["d_eff"] == 401
    assert m.log10_delta == pytest.approx(-401 * math.log10(4))
    assert m.perturb(np.array([0, 1])).shape == (2, d)  # padding dropped
    with pytest.raises(ValueError, match="dummy_dims"):
        MECHANISMS.create("trlaplace", epsilon=10.0, dummy_dims=False).fit(space)


def test_trlaplace_guarantee_is_reported_unproven(space):
    """The stated (ε, δ) of Thm. 3 is refuted by the audit (docs/audit.md): not 'proven'."""
    g = MECHANISMS.create("trlaplace", epsilon=1.0).fit(space).guarantee()
    assert (g.kind, g.proven) == ("approx", False) and "Thm. 3" in g.reason
    assert MECHANISMS.create("laplace", epsilon=1.0).fit(space).guarantee().proven

