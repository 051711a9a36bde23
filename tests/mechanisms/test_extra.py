"""mahalanobis, santext, custext, privemb: exact distributions, references, guarantees."""

import math

import numpy as np
import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS, make_mechanism
from bench.mechanisms.custext import CusText

from ._stats import P_MIN, chi2_pvalue

NEW = ("mahalanobis", "santext", "custext", "privemb")


def pairwise(x):
    return np.linalg.norm(x[:, None] - x[None], axis=2)


@pytest.mark.parametrize("name", NEW)
def test_registered_with_metadata_and_citation(name):
    cls = MECHANISMS.get(name)
    assert cls.description and cls.kind in ("additive", "selection")
    assert cls.guarantee_kind in ("pure", "approx", "metric")
    assert any(y in cls.__doc__ for y in ("2020", "2021", "2023"))


# ------------------------------------------------------------------------------- santext

@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_santext_exact_distribution_and_sampler(tiny, eps):
    m = make_mechanism("santext", epsilon=eps, rng=1).fit(tiny)
    exact = np.exp(-eps / 2 * pairwise(tiny))
    exact /= exact.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m.distribution(np.arange(5)), exact, atol=1e-12)
    for w in range(5):
        assert chi2_pvalue(m.sample(np.full(20_000, w)), exact[w]) > P_MIN
    # the test can fail: the truncated (TEM-like) or the uniform distribution is rejected
    assert chi2_pvalue(m.sample(np.full(20_000, 0)), np.full(5, 0.2)) < P_MIN


def test_santext_per_call_reference_and_many_words(space):
    eps = 4.0
    m = make_mechanism("santext", epsilon=eps, rng=2).fit(space)
    rng = np.random.default_rng(3)
    d = np.linalg.norm(space - space[7], axis=1)
    p = np.exp(-eps / 2 * d)
    p /= p.sum()
    ref = rng.choice(len(space), size=8000, p=p)  # the per-call algorithm, literally
    assert chi2_pvalue(ref, p) > P_MIN
    ids = np.concatenate([np.full(8000, 7), np.arange(len(space)).repeat(2)])
    out = m.sample(ids)
    assert chi2_pvalue(out[:8000], p) > P_MIN
    assert out.min() >= 0 and out.max() < len(space)


def test_santext_metric_dp_ratio_exact(tiny):
    eps = 2.0
    P = make_mechanism("santext", epsilon=eps).fit(tiny).distribution(np.arange(5))
    D = pairwise(tiny)
    for w in range(5):
        for w2 in range(5):
            assert np.all(P[w] <= np.exp(eps * D[w, w2]) * P[w2] * (1 + 1e-9))


def test_santext_large_eps_float32_weights(space):
    m = make_mechanism("santext", epsilon=200.0, rng=4).fit(space)
    assert np.all(m.sample(np.arange(len(space))) == np.arange(len(space)))


def test_santext_seeded_and_independent(tiny):
    a = make_mechanism("santext", epsilon=1.0, rng=5).fit(tiny).sample(np.zeros(300, int))
    b = make_mechanism("santext", epsilon=1.0, rng=5).fit(tiny).sample(np.zeros(300, int))
    np.testing.assert_array_equal(a, b)
    assert len(np.unique(a)) > 1
    g = make_mechanism("santext", epsilon=1.0).fit(tiny).guarantee()
    assert (g.kind, g.multiplier, g.proven) == ("metric", 1.0, True)


# ------------------------------------------------------------------------------- custext

def custext_reference(x, K):
    """Chen et al. 2023's f_map, literally: greedy sets of K nearest unassigned words."""
    n = len(x)
    free = list(range(n))
    groups = []
    while free:
        seed = free[0]
        d = np.linalg.norm(x[free] - x[seed], axis=1)
        order = np.argsort(d, kind="stable")[:K]
        g = [free[i] for i in order]
        groups.append(sorted(g))
        free = [w for w in free if w not in g]
    return groups


def custext_probs(x, members, xin, eps):
    d = np.linalg.norm(x[members] - xin, axis=1)
    span = d.max() - d.min()
    s = -(d - d.min()) / span if span > 0 else np.zeros_like(d)
    p = np.exp(eps * s / 2)
    return p / p.sum()


@pytest.mark.parametrize("K", [1, 7, 20])
def test_custext_partition_matches_reference(space, K):
    m = make_mechanism("custext", epsilon=1.0, K=K, rng=6).fit(space)
    got = sorted(sorted(g.tolist()) for g in m.members)
    assert got == sorted(custext_reference(space, K))
    assert sum(len(g) for g in m.members) == len(space)  # a partition
    assert all(len(g) == K for g in m.members[:-1])


def test_custext_exact_probabilities_and_sampler(space):
    eps, K = 3.0, 10
    m = make_mechanism("custext", epsilon=eps, K=K, rng=7).fit(space)
    for w in (0, 13, 150):
        members = m.members[m.group[w]]
        ref = np.zeros(len(space))
        ref[members] = custext_probs(space, members, space[w], eps)
        np.testing.assert_allclose(m.distribution(np.array([w]))[0], ref, atol=1e-12)
        draws = m.sample(np.full(20_000, w))
        assert set(np.unique(draws)) <= set(members.tolist())
        assert chi2_pvalue(draws, ref) > P_MIN
        assert chi2_pvalue(draws, (ref > 0) / (ref > 0).sum()) < P_MIN  # not uniform


def test_custext_scores_minus_n_equal_one_minus_n(space):
    """s = −n and s = 1 − n differ by a constant inside the set: same probabilities."""
    members = np.arange(10)
    d = np.linalg.norm(space[members] - space[0], axis=1)
    n = (d - d.min()) / (d.max() - d.min())
    a, b = np.exp(2.0 * -n / 2), np.exp(2.0 * (1 - n) / 2)
    np.testing.assert_allclose(a / a.sum(), b / b.sum())
    assert custext_probs(space, members, space[0], 2.0) == pytest.approx(a / a.sum())


def test_custext_eps_dp_within_set_and_none_across(space):
    eps = 2.0
    m = make_mechanism("custext", epsilon=eps, K=8, rng=8).fit(space)
    P = m.distribution(np.arange(len(space)))
    for g in m.members[:5]:
        for a in g:
            for b in g:
                assert np.all(P[a] <= math.exp(eps) * P[b] * (1 + 1e-12))
    a, b = m.members[0][0], m.members[1][0]
    assert not m.same_scope(np.array([a]), np.array([b]))[0]
    assert np.all(P[a] * P[b] == 0)  # disjoint supports: no guarantee across sets
    g = m.guarantee()
    assert g.kind == "pure" and not g.proven and "same K-word output set" in g.reason


def test_custext_input_only_row_joins_nearest_group(space):
    extra = space.mean(axis=0, keepdims=True)
    m = make_mechanism("custext", epsilon=1.0, K=5, rng=9).fit(space, np.vstack([space, extra]))
    nearest = int(np.argmin(np.linalg.norm(space - extra, axis=1)))
    assert m.input_group[len(space)] == m.group[nearest]
    out = m.sample(np.full(500, len(space)))
    assert set(out.tolist()) <= set(m.members[m.group[nearest]].tolist())


def test_custext_validation_and_seed(tiny):
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="K"):
            make_mechanism("custext", epsilon=1.0, K=bad)
    a = make_mechanism("custext", epsilon=1.0, K=3, rng=10).fit(tiny).sample(np.arange(5).repeat(9))
    b = make_mechanism("custext", epsilon=1.0, K=3, rng=10).fit(tiny).sample(np.arange(5).repeat(9))
    np.testing.assert_array_equal(a, b)
    assert isinstance(make_mechanism("custext", epsilon=1.0), CusText)


# --------------------------------------------------------------------------- mahalanobis

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
    m = make_mechanism("mahalanobis", epsilon=eps, lam=lam, rng=12).fit(skewed)
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
    m = make_mechanism("mahalanobis", epsilon=2.0, lam=0.0, rng=13).fit(skewed)
    np.testing.assert_allclose(m.sqrt_sigma, np.eye(6), atol=1e-12)
    r = np.linalg.norm(m.noise(20_000), axis=1)
    assert stats.kstest(r, stats.gamma(a=6, scale=0.5).cdf).pvalue > P_MIN


def test_mahalanobis_trace_normalised_and_guarantee(skewed):
    m = make_mechanism("mahalanobis", epsilon=1.0, lam=0.5).fit(skewed)
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
    m = make_mechanism("mahalanobis", epsilon=eps, rng=14).fit(skewed)
    z = skewed[0] + m.noise(2000)
    logp = lambda x: -eps * np.linalg.norm(m.whiten(z - x), axis=1)  # noqa: E731
    ratio = logp(skewed[0]) - logp(skewed[1])
    bound = eps * m.metric_distance(skewed[0], skewed[1])[0]
    assert ratio.max() <= bound + 1e-9 and ratio.max() > 0.5 * bound


def test_mahalanobis_validation(skewed):
    for bad in (-0.1, 1.5, "x", float("nan"), True):
        with pytest.raises(ValueError, match="lam"):
            make_mechanism("mahalanobis", epsilon=1.0, lam=bad)
    flat = np.hstack([skewed, np.zeros((300, 1))])  # rank-deficient covariance
    with pytest.raises(ValueError, match="singular"):
        make_mechanism("mahalanobis", epsilon=1.0, lam=1.0).fit(flat)
    make_mechanism("mahalanobis", epsilon=1.0, lam=0.99).fit(flat)


# ------------------------------------------------------------------------------- privemb

def test_privemb_requires_jl_and_calibrates():
    from bench.embeddings import Embedding
    from bench.privatize import Privatizer

    rng = np.random.default_rng(15)
    emb = Embedding("toy", [f"w{i}" for i in range(400)], rng.normal(size=(400, 8)) * 2)
    with pytest.raises(ValueError, match="jl"):
        Privatizer.build(mechanism="privemb", epsilon=1.0, embedding=emb)
    with pytest.raises(ValueError, match="bind_sensitivity"):
        make_mechanism("privemb", epsilon=1.0).fit(emb.vectors)
    p = Privatizer.build(mechanism="privemb", epsilon=2.0, sensitivity="jl",
                         sensitivity_params={"normalize": "clip"}, embedding=emb, seed=1)
    m = p.mechanism
    bound = p.sensitivity.bound
    assert m.calibrate and m.scale == pytest.approx(bound / 2.0)
    r = np.linalg.norm(m.noise(20_000), axis=1)
    dim = m.space.shape[1]
    assert stats.kstest(r, stats.gamma(a=dim, scale=bound / 2.0).cdf).pvalue > P_MIN
    assert stats.kstest(r, stats.gamma(a=dim, scale=1 / 2.0).cdf).pvalue < P_MIN
    g = p.guarantee()
    assert g.kind == "metric" and g.multiplier == 1.0 and g.delta == p.sensitivity.delta
