"""Distribution, independence, clipping and validation tests of the additive mechanisms."""

import math

import numpy as np
import pytest
from scipy import stats

from bench.mechanisms import make_mechanism
from bench.mechanisms.gaussian import analytic_gaussian_sigma

N = 20_000
P_MIN = 1e-3  # seeded draws: a correct sampler passes deterministically, a wrong one fails


def noise_of(mech, n=N):
    return mech.perturb(np.zeros(n, dtype=np.int64)) - mech.prepare(mech.inputs[[0]])


@pytest.mark.parametrize("eps", [0.5, 5.0])
def test_mvl_radius_is_gamma_and_direction_isotropic(space, eps):
    m = make_mechanism("mvl", epsilon=eps, rng=1).fit(space)
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

    m = make_mechanism("mvl", epsilon=2.0, calibrate=True, rng=2)
    m.bind_sensitivity(Bound())
    m.fit(space)
    r = np.linalg.norm(noise_of(m), axis=1)
    assert stats.kstest(r, stats.gamma(a=space.shape[1], scale=2.5 / 2.0).cdf).pvalue > P_MIN
    g = m.guarantee(Bound())
    assert g.kind == "metric" and g.multiplier == 1.0
    g_uncal = make_mechanism("mvl", epsilon=2.0).fit(space).guarantee(Bound())
    assert g_uncal.multiplier == 2.5


def test_laplace_coordinates(space):
    m = make_mechanism("laplace", epsilon=1.5, C=0.7, rng=3).fit(space)
    z = noise_of(m).ravel()[:N]
    scale = 2 * math.sqrt(space.shape[1]) * 0.7 / 1.5
    assert m.scale == pytest.approx(scale)
    assert stats.kstest(z, stats.laplace(scale=scale).cdf).pvalue > P_MIN
    assert stats.kstest(z, stats.laplace(scale=scale * 1.1).cdf).pvalue < P_MIN
    assert m.guarantee().kind == "pure" and m.guarantee().delta == 0


def test_gaussian_classic_coordinates(space):
    m = make_mechanism("gaussian", epsilon=0.8, C=1.2, delta=1e-5, rng=4).fit(space)
    sigma = math.sqrt(8 * 1.2**2 * math.log(1.25 / 1e-5)) / 0.8
    assert m.sigma == pytest.approx(sigma)
    z = noise_of(m).ravel()[:N]
    assert stats.kstest(z, stats.norm(scale=sigma).cdf).pvalue > P_MIN
    g = m.guarantee()
    assert (g.kind, g.delta) == ("approx", 1e-5)


def test_gaussian_default_delta_is_4_to_minus_d(space):
    m = make_mechanism("gaussian", epsilon=1.0).fit(space)
    assert m.delta == pytest.approx(4.0 ** -space.shape[1])


def test_gaussian_refuses_large_eps_classic_and_analytic_works(space):
    with pytest.raises(ValueError, match="epsilon <= 1"):
        make_mechanism("gaussian", epsilon=2.0)
    m = make_mechanism("gaussian", epsilon=5.0, delta=1e-5, calibration="analytic").fit(space)
    # Balle & Wang (2018) Thm. 8 holds with equality at the returned sigma
    a, b = 2.0 / (2 * m.sigma), 5.0 * m.sigma / 2.0
    lhs = stats.norm.cdf(a - b) - math.exp(5.0) * stats.norm.cdf(-a - b)
    assert lhs == pytest.approx(1e-5, rel=1e-6)


def test_analytic_sigma_is_below_classic_for_eps_le_1():
    for eps in (0.1, 0.5, 1.0):
        classic = math.sqrt(8 * math.log(1.25 / 1e-5)) / eps
        assert analytic_gaussian_sigma(eps, 1e-5, 2.0) < classic


@pytest.mark.parametrize("eps", [0.1, 1.0])
def test_trlaplace_matches_exact_cdf_and_support(space, eps):
    m = make_mechanism("trlaplace", epsilon=eps, C=1.0, rng=5).fit(space)
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
    m = make_mechanism("trlaplace", epsilon=1.0).fit(space)
    assert m.d_eff == d
    m = make_mechanism("trlaplace", epsilon=10.0).fit(space)
    assert m.d_eff == 401  # smallest d' with sqrt(d')/2 > 10
    assert m.describe()["d_eff"] == 401
    assert m.log10_delta == pytest.approx(-401 * math.log10(4))
    assert m.perturb(np.array([0, 1])).shape == (2, d)  # padding dropped
    with pytest.raises(ValueError, match="dummy_dims"):
        make_mechanism("trlaplace", epsilon=10.0, dummy_dims=False).fit(space)


@pytest.mark.parametrize("name", ["laplace", "gaussian", "trlaplace"])
def test_clipping(space, name):
    m = make_mechanism(name, epsilon=0.5, C=1.0).fit(space)
    x = m.prepare(space)
    norms = np.linalg.norm(x, axis=1)
    assert np.all(norms <= 1.0 + 1e-12)
    small = space / np.linalg.norm(space, axis=1, keepdims=True) * 0.5
    np.testing.assert_allclose(m.prepare(small), small)


@pytest.mark.parametrize("name", ["mvl", "laplace", "gaussian", "trlaplace"])
def test_independent_noise_per_occurrence(space, name):
    m = make_mechanism(name, epsilon=0.5, rng=6).fit(space)
    out = m.perturb(np.zeros(2000, dtype=np.int64))
    z = out - out.mean(axis=0)
    assert len(np.unique(out[:, 0])) == 2000  # no shared noise vector
    # consecutive occurrences uncorrelated
    r = np.corrcoef(z[:-1, 0], z[1:, 0])[0, 1]
    assert abs(r) < 0.1


@pytest.mark.parametrize("name", ["mvl", "laplace", "gaussian", "trlaplace"])
def test_same_seed_same_output(space, name):
    ids = np.arange(50)
    a = make_mechanism(name, epsilon=0.5, rng=7).fit(space).perturb(ids)
    b = make_mechanism(name, epsilon=0.5, rng=7).fit(space).perturb(ids)
    c = make_mechanism(name, epsilon=0.5, rng=8).fit(space).perturb(ids)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name", ["mvl", "laplace", "gaussian", "trlaplace", "tem",
                                  "truncated_gumbel"])
@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf"), "1", True, None])
def test_invalid_epsilon(name, eps):
    with pytest.raises(ValueError, match="epsilon"):
        make_mechanism(name, epsilon=eps)


@pytest.mark.parametrize("name", ["gaussian", "trlaplace"])
@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, float("nan"), "abc"])
def test_invalid_delta(name, delta):
    with pytest.raises(ValueError, match="delta"):
        make_mechanism(name, epsilon=0.5, delta=delta)


def test_invalid_parameters():
    with pytest.raises(ValueError, match="C"):
        make_mechanism("laplace", epsilon=1, C=0)
    with pytest.raises(ValueError, match="calibration"):
        make_mechanism("gaussian", epsilon=1, calibration="fancy")
    with pytest.raises(ValueError, match="unknown or missing parameter"):
        make_mechanism("mvl", epsilon=1, sigma=3)
    with pytest.raises(ValueError, match="did you mean 'mvl'"):
        make_mechanism("mvll", epsilon=1)


def test_mvl_calibrate_needs_finite_bound():
    class Unbounded:
        name, bound, proven, reason, delta, params = "minmax", math.inf, False, "x", 0.0, {}

    m = make_mechanism("mvl", epsilon=1, calibrate=True)
    with pytest.raises(ValueError, match="finite bound"):
        m.bind_sensitivity(Unbounded())


def test_trlaplace_guarantee_is_reported_unproven(space):
    """The stated (ε, δ) of Thm. 3 is refuted by the audit (docs/audit.md): not 'proven'."""
    g = make_mechanism("trlaplace", epsilon=1.0).fit(space).guarantee()
    assert (g.kind, g.proven) == ("approx", False) and "Thm. 3" in g.reason
    assert make_mechanism("laplace", epsilon=1.0).fit(space).guarantee().proven
