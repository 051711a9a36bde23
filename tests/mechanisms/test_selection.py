"""TEM and truncated Gumbel: exact output probabilities, per-call equivalence, metric-DP ratios."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import lambertw

from bench.mechanisms import make_mechanism
from bench.mechanisms.truncated_gumbel import TruncatedGumbel, truncated_poisson_ppf

from ._stats import P_MIN, chi2_pvalue


def pairwise(x):
    return np.linalg.norm(x[:, None] - x[None], axis=2)


# ---------------------------------------------------------------------------------------- TEM

def tem_per_call(x, w, eps, beta, rng):
    """Carvalho et al. 2021, Alg. 2, literally, once (test reference)."""
    n = len(x)
    gamma = (2 / eps) * math.log((1 - beta) * (n - 1) / beta)
    d = np.linalg.norm(x - x[w], axis=1)
    inside = np.nonzero(d <= gamma)[0]
    outside = np.nonzero(d > gamma)[0]
    scores = list(-d[inside])
    if len(outside):
        scores.append(-gamma + 2 * math.log(len(outside)) / eps)
    noisy = np.array(scores) + rng.gumbel(0, 2 / eps, size=len(scores))
    j = int(np.argmax(noisy))
    if j < len(inside):
        return int(inside[j])
    return int(rng.choice(outside))


@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_tem_exact_distribution_and_sampler(tiny, eps):
    m = make_mechanism("tem", epsilon=eps, beta=0.2, rng=10).fit(tiny)
    n = len(tiny)
    gamma = (2 / eps) * math.log((1 - 0.2) * (n - 1) / 0.2)
    assert m.gamma == pytest.approx(gamma)
    D = pairwise(tiny)
    exact = np.exp(-eps / 2 * np.minimum(D, gamma))
    exact /= exact.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m.distribution(np.arange(n)), exact, atol=1e-12)
    for w in range(n):
        draws = m.sample(np.full(20_000, w))
        assert chi2_pvalue(draws, exact[w]) > P_MIN
    # the literal per-call algorithm has the same distribution
    rng = np.random.default_rng(11)
    ref = np.array([tem_per_call(tiny, 2, eps, 0.2, rng) for _ in range(6000)])
    assert chi2_pvalue(ref, exact[2]) > P_MIN


@pytest.mark.parametrize("path", ["sparse", "dense"])
def test_tem_both_sampling_paths_match_the_exact_distribution(space, path):
    """The sparse (L_w only + uniform floor) and dense (full rows) paths, on the same inputs:
    ε = 4, β = 0.2 puts part of the vocabulary inside γ and ~16% of the mass on the floor."""
    unk = space.mean(axis=0, keepdims=True)  # an input-only row, like <unk>
    m = make_mechanism("tem", epsilon=4.0, beta=0.2, rng=21)
    m.path = path
    m.fit(space, input_vectors=np.vstack([space, unk]))
    words = np.array([0, 17, 123, len(space)])
    exact = m.distribution(words)
    inside = (pairwise(np.vstack([space, unk]))[words, : len(space)] < m.gamma).sum(axis=1)
    assert np.all(inside > 1) and np.all(inside < len(space))  # L_w is partial
    ids = np.repeat(words, 30_000)
    out = m.sample(ids)
    for i, w in enumerate(words):
        assert chi2_pvalue(out[ids == w], exact[i]) > P_MIN


def test_tem_auto_path_uses_sparse_for_large_epsilon(space):
    calls = []
    for eps, want in ((40.0, "sparse"), (0.5, "dense")):
        m = make_mechanism("tem", epsilon=eps, rng=22).fit(space)
        m._sample_sparse = lambda d2, mask, n, rows: calls.append("sparse") or rows
        m._sample_dense = lambda d2, rows, cut: calls.append("dense") or rows
        m.sample(np.arange(10))
        assert calls[-1] == want


def test_tem_sampler_detects_wrong_distribution(tiny):
    m = make_mechanism("tem", epsilon=1.0, beta=0.2, rng=12).fit(tiny)
    draws = m.sample(np.full(20_000, 0))
    wrong = np.full(len(tiny), 1 / len(tiny))
    assert chi2_pvalue(draws, wrong) < P_MIN


def test_tem_metric_dp_ratio(tiny):
    eps = 2.0
    m = make_mechanism("tem", epsilon=eps, beta=0.2, rng=13).fit(tiny)
    P = m.distribution(np.arange(len(tiny)))
    D = pairwise(tiny)
    for w in range(len(tiny)):
        for w2 in range(len(tiny)):
            assert np.all(P[w] <= np.exp(eps * D[w, w2]) * P[w2] * (1 + 1e-9))
    # and empirically, with sampling tolerance
    a = np.bincount(m.sample(np.full(40_000, 0)), minlength=5) / 40_000
    b = np.bincount(m.sample(np.full(40_000, 1)), minlength=5) / 40_000
    assert np.all(a <= np.exp(eps * D[0, 1]) * b + 0.02)


def test_tem_independent_per_occurrence_and_seeded(tiny):
    m = make_mechanism("tem", epsilon=0.5, rng=14).fit(tiny)
    out = m.sample(np.zeros(500, dtype=np.int64))
    assert len(np.unique(out)) > 1  # not one draw broadcast to every occurrence
    a = make_mechanism("tem", epsilon=0.5, rng=15).fit(tiny).sample(np.arange(5).repeat(40))
    b = make_mechanism("tem", epsilon=0.5, rng=15).fit(tiny).sample(np.arange(5).repeat(40))
    np.testing.assert_array_equal(a, b)


def test_tem_chunks_many_unique_words(space):
    m = make_mechanism("tem", epsilon=20.0, rng=16).fit(space)
    ids = np.arange(len(space)).repeat(3)  # crosses the 256-word chunk boundary? (200 < 256)
    out = m.sample(np.concatenate([ids, ids]))
    assert out.shape == (1200,) and out.min() >= 0 and out.max() < len(space)


def test_tem_bad_beta():
    with pytest.raises(ValueError, match="beta"):
        make_mechanism("tem", epsilon=1, beta=1.5)


# ------------------------------------------------------------------------- truncated Gumbel

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
    m = make_mechanism("truncated_gumbel", epsilon=12.0, rng=20).fit(tiny)
    assert (m.dmin, m.dmax) == pytest.approx((1.0, math.hypot(2, 4)))
    assert m.b == pytest.approx(tg_b(12.0, 5, 1.0, math.hypot(2, 4)))


@pytest.mark.parametrize("w", [0, 3])
def test_tg_matches_exact_distribution_and_per_call(tiny, w):
    eps = 12.0
    exact, _ = tg_exact(tiny, w, eps)
    assert exact.sum() == pytest.approx(1.0, abs=1e-5)  # quadrature error
    m = make_mechanism("truncated_gumbel", epsilon=eps, rng=21 + w).fit(tiny)
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
    m = make_mechanism("truncated_gumbel", epsilon=12.0, rng=22).fit(tiny)
    g = m.gumbel(50_000)
    assert np.all(np.abs(g) <= m.dmax)
    gum = stats.gumbel_r(scale=m.b)
    lo, hi = gum.cdf(-m.dmax), gum.cdf(m.dmax)
    assert stats.kstest(g, lambda t: (gum.cdf(t) - lo) / (hi - lo)).pvalue > P_MIN


def test_tg_undefined_rule_refuses_with_smallest_epsilon(tiny):
    eps_min = (2 * (1 + math.log(5)) + 3) / 1.0
    with pytest.raises(ValueError, match=f"{eps_min:.4g}"):
        make_mechanism("truncated_gumbel", epsilon=eps_min - 0.01).fit(tiny)
    make_mechanism("truncated_gumbel", epsilon=eps_min + 0.01).fit(tiny)
    with pytest.raises(ValueError, match="undefined"):
        TruncatedGumbel.noise_scale(1.0, 5, 1.0, 4.0)  # alpha <= 0
    with pytest.raises(ValueError, match="minimum inter-word distance is 0"):
        make_mechanism("truncated_gumbel", epsilon=50).fit(np.vstack([tiny, tiny[:1]]))


def test_tg_manual_b_is_reported_unproven(tiny):
    m = make_mechanism("truncated_gumbel", epsilon=1.0, b=2.0, rng=23).fit(tiny)
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
    m = make_mechanism("truncated_gumbel", epsilon=eps, k_cache=2, rng=25).fit(tiny)
    draws = m.sample(np.full(6000, 0))
    assert chi2_pvalue(draws, exact) > P_MIN


def test_tg_independent_and_seeded(tiny):
    m = make_mechanism("truncated_gumbel", epsilon=12.0, rng=26).fit(tiny)
    assert len(np.unique(m.sample(np.zeros(300, dtype=np.int64)))) > 1
    a = make_mechanism("truncated_gumbel", epsilon=12.0, rng=27).fit(tiny).sample(np.arange(5))
    b = make_mechanism("truncated_gumbel", epsilon=12.0, rng=27).fit(tiny).sample(np.arange(5))
    np.testing.assert_array_equal(a, b)
