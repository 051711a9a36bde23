"""Truncated Gumbel (``truncated_gumbel``): exact probabilities vs sampler and Alg. 1."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import lambertw

from bench.mechanisms import MECHANISMS
from bench.mechanisms.truncated_gumbel import TruncatedGumbel, truncated_poisson_ppf

from ._stats import P_MIN, chi2_pvalue, pairwise


def tg_b(eps, n, dmin, dmax):
    alpha = (eps - 2 * (1 + math.log(n)) / dmin) / 3
    return 2 * dmax / min(lambertw(2 * alpha * dmax).real, math.log(alpha * dmin))


def tg_exact(x, w, eps):
    """Exact output distribution of Riecker 2023 Alg. 1 by numerical integration."""
    D = pairwise(x)
    n = len(x)
    iu = np.triu_indices(n, 1)
    dmin, dmax = D[iu].min(), D[iu].max()
    b = tg_b(eps, n, dmin, dmax)
    order = np.argsort(D[w], kind="stable")
    assert order[0] == w
    d = D[w, order]
    F = lambda t: np.exp(-np.exp(-t / b))  # noqa: E731
    lo, hi = F(-dmax), F(dmax)
    Fc = lambda t: np.clip((F(np.clip(t, -dmax, dmax)) - lo) / (hi - lo), 0, 1)  # noqa: E731
    f = lambda t: np.where(np.abs(t) <= dmax,  # noqa: E731
                           np.exp(-t / b - np.exp(-t / b)) / b / (hi - lo), 0.0)
    xs = np.linspace(-dmax, d.max() + dmax, 200_001)
    lam = math.log(n)
    pk = stats.poisson.pmf(np.arange(1, n + 1), lam)
    pk /= pk.sum()
    probs = np.zeros(n)
    for k in range(1, n + 1):
        for j in range(k):
            integrand = f(xs - d[j])
            for i in range(k):
                if i != j:
                    integrand = integrand * (1 - Fc(xs - d[i]))
            probs[order[j]] += pk[k - 1] * np.trapezoid(integrand, xs)
    return probs, b


def tg_per_call(x, w, eps, rng):
    """Riecker 2023, Alg. 1, literally, once (test reference; rejection-sampled truncation)."""
    D = pairwise(x)
    n = len(x)
    iu = np.triu_indices(n, 1)
    dmin, dmax = D[iu].min(), D[iu].max()
    b = tg_b(eps, n, dmin, dmax)
    while True:
        k = rng.poisson(math.log(n))
        if 1 <= k <= n:
            break
    order = np.argsort(D[w], kind="stable")[:k]
    g = []
    while len(g) < k:
        v = rng.gumbel(0, b)
        if abs(v) <= dmax:
            g.append(v)
    return int(order[np.argmin(D[w, order] + np.array(g))])


def test_tg_noise_scale_formula(tiny):
    m = MECHANISMS.create("truncated_gumbel", epsilon=12.0, rng=20).fit(tiny)
    assert (m.dmin, m.dmax) == pytest.approx((1.0, math.hypot(2, 4)))
    assert m.b == pytest.approx(tg_b(12.0, 5, 1.0, math.hypot(2, 4)))


@pytest.mark.parametrize("w", [0, 3])
def test_tg_matches_exact_distribution_and_per_call(tiny, w):
    eps = 12.0
    exact, _ = tg_exact(tiny, w, eps)
    assert exact.sum() == pytest.approx(1.0, abs=1e-5)  # quadrature error
    m = MECHANISMS.create("truncated_gumbel", epsilon=eps, rng=21 + w).fit(tiny)
    draws = m.sample(np.full(30_000, w))
    assert chi2_pvalue(draws, exact) > P_MIN
    rng = np.random.default_rng(31 + w)
    ref = np.array([tg_per_call(tiny, w, eps, rng) for _ in range(6000)])
    assert chi2_pvalue(ref, exact) > P_MIN
    assert chi2_pvalue(draws, np.full(5, 0.2)) < P_MIN  # the test can fail


def test_tg_metric_dp_ratio(tiny):
    eps = 12.0
    D = pairwise(tiny)
    P = np.array([tg_exact(tiny, w, eps)[0] for w in range(len(tiny))])
    assert np.all(P > 0)
    for w in range(5):
        for w2 in range(5):
            assert np.all(P[w] <= np.exp(eps * D[w, w2]) * P[w2] + 1e-6)


def test_tg_truncated_noise_support_and_cdf(tiny):
    m = MECHANISMS.create("truncated_gumbel", epsilon=12.0, rng=22).fit(tiny)
    g = m.gumbel(50_000)
    assert np.all(np.abs(g) <= m.dmax)
    gum = stats.gumbel_r(scale=m.b)
    lo, hi = gum.cdf(-m.dmax), gum.cdf(m.dmax)
    assert stats.kstest(g, lambda t: (gum.cdf(t) - lo) / (hi - lo)).pvalue > P_MIN


def test_tg_undefined_rule_refuses_with_smallest_epsilon(tiny):
    eps_min = (2 * (1 + math.log(5)) + 3) / 1.0
    with pytest.raises(ValueError, match=f"{eps_min:.4g}"):
        MECHANISMS.create("truncated_gumbel", epsilon=eps_min - 0.01).fit(tiny)
    MECHANISMS.create("truncated_gumbel", epsilon=eps_min + 0.01).fit(tiny)
    with pytest.raises(ValueError, match="undefined"):
        TruncatedGumbel.noise_scale(1.0, 5, 1.0, 4.0)  # alpha <= 0
    with pytest.raises(ValueError, match="minimum inter-word distance is 0"):
        MECHANISMS.create("truncated_gumbel", epsilon=50).fit(np.vstack([tiny, tiny[:1]]))


def test_tg_manual_b_is_reported_unproven(tiny):
    m = MECHANISMS.create("truncated_gumbel", epsilon=1.0, b=2.0, rng=23).fit(tiny)
    assert m.b == 2.0
    g = m.guarantee()
    assert not g.proven and "by hand" in g.reason


def test_truncated_poisson_ppf():
    lam, high = math.log(50), 50
    rng = np.random.default_rng(24)
    k = truncated_poisson_ppf(rng.random(50_000), lam, high)
    assert k.min() >= 1 and k.max() <= high
    pk = stats.poisson.pmf(np.arange(1, high + 1), lam)
    pk /= pk.sum()
    assert chi2_pvalue(k - 1, pk) > P_MIN


def test_tg_long_k_fallback_is_exact(tiny):
    """k_cache=2 forces the k > k_cache path often; distribution must not change."""
    eps = 12.0
    exact, _ = tg_exact(tiny, 0, eps)
    m = MECHANISMS.create("truncated_gumbel", epsilon=eps, k_cache=2, rng=25).fit(tiny)
    draws = m.sample(np.full(6000, 0))
    assert chi2_pvalue(draws, exact) > P_MIN


def test_tg_independent_and_seeded(tiny):
    m = MECHANISMS.create("truncated_gumbel", epsilon=12.0, rng=26).fit(tiny)
    assert len(np.unique(m.sample(np.zeros(300, dtype=np.int64)))) > 1
    a = MECHANISMS.create("truncated_gumbel", epsilon=12.0, rng=27).fit(tiny).sample(np.arange(5))
    b = MECHANISMS.create("truncated_gumbel", epsilon=12.0, rng=27).fit(tiny).sample(np.arange(5))
    np.testing.assert_array_equal(a, b)

