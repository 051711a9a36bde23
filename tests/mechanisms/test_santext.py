"""SanText (``santext``): exact distribution vs sampler and per-call, metric-DP ratio."""

import numpy as np
import pytest

from bench.mechanisms import MECHANISMS

from ._stats import P_MIN, chi2_pvalue, pairwise


@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_santext_exact_distribution_and_sampler(tiny, eps):
    m = MECHANISMS.create("santext", epsilon=eps, rng=1).fit(tiny)
    exact = np.exp(-eps / 2 * pairwise(tiny))
    exact /= exact.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m.distribution(np.arange(5)), exact, atol=1e-12)
    for w in range(5):
        assert chi2_pvalue(m.sample(np.full(20_000, w)), exact[w]) > P_MIN
    # the test can fail: the truncated (TEM-like) or the uniform distribution is rejected
    assert chi2_pvalue(m.sample(np.full(20_000, 0)), np.full(5, 0.2)) < P_MIN


def test_santext_per_call_reference_and_many_words(space):
    eps = 4.0
    m = MECHANISMS.create("santext", epsilon=eps, rng=2).fit(space)
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
    P = MECHANISMS.create("santext", epsilon=eps).fit(tiny).distribution(np.arange(5))
    D = pairwise(tiny)
    for w in range(5):
        for w2 in range(5):
            assert np.all(P[w] <= np.exp(eps * D[w, w2]) * P[w2] * (1 + 1e-9))


def test_santext_large_eps_float32_weights(space):
    m = MECHANISMS.create("santext", epsilon=200.0, rng=4).fit(space)
    assert np.all(m.sample(np.arange(len(space))) == np.arange(len(space)))


def test_santext_seeded_and_independent(tiny):
    a = MECHANISMS.create("santext", epsilon=1.0, rng=5).fit(tiny).sample(np.zeros(300, int))
    b = MECHANISMS.create("santext", epsilon=1.0, rng=5).fit(tiny).sample(np.zeros(300, int))
    np.testing.assert_array_equal(a, b)
    assert len(np.unique(a)) > 1
    g = MECHANISMS.create("santext", epsilon=1.0).fit(tiny).guarantee()
    assert (g.kind, g.multiplier, g.proven) == ("metric", 1.0, True)

