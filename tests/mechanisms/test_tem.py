"""TEM (``tem``): exact output probabilities vs both sampling paths and Alg. 2, metric DP."""

import math

import numpy as np
import pytest

from bench.mechanisms import MECHANISMS

from ._stats import P_MIN, chi2_pvalue, pairwise


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
    m = MECHANISMS.create("tem", epsilon=eps, beta=0.2, rng=10).fit(tiny)
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
    m = MECHANISMS.create("tem", epsilon=4.0, beta=0.2, rng=21)
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
        m = MECHANISMS.create("tem", epsilon=eps, rng=22).fit(space)
        m._sample_sparse = lambda d2, mask, n, rows: calls.append("sparse") or rows
        m._sample_dense = lambda d2, rows, cut: calls.append("dense") or rows
        m.sample(np.arange(10))
        assert calls[-1] == want


def test_tem_sampler_detects_wrong_distribution(tiny):
    m = MECHANISMS.create("tem", epsilon=1.0, beta=0.2, rng=12).fit(tiny)
    draws = m.sample(np.full(20_000, 0))
    wrong = np.full(len(tiny), 1 / len(tiny))
    assert chi2_pvalue(draws, wrong) < P_MIN


def test_tem_metric_dp_ratio(tiny):
    eps = 2.0
    m = MECHANISMS.create("tem", epsilon=eps, beta=0.2, rng=13).fit(tiny)
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
    m = MECHANISMS.create("tem", epsilon=0.5, rng=14).fit(tiny)
    out = m.sample(np.zeros(500, dtype=np.int64))
    assert len(np.unique(out)) > 1  # not one draw broadcast to every occurrence
    a = MECHANISMS.create("tem", epsilon=0.5, rng=15).fit(tiny).sample(np.arange(5).repeat(40))
    b = MECHANISMS.create("tem", epsilon=0.5, rng=15).fit(tiny).sample(np.arange(5).repeat(40))
    np.testing.assert_array_equal(a, b)


def test_tem_chunks_many_unique_words(space):
    m = MECHANISMS.create("tem", epsilon=20.0, rng=16).fit(space)
    ids = np.arange(len(space)).repeat(3)  # crosses the 256-word chunk boundary? (200 < 256)
    out = m.sample(np.concatenate([ids, ids]))
    assert out.shape == (1200,) and out.min() >= 0 and out.max() < len(space)


def test_tem_bad_beta():
    with pytest.raises(ValueError, match="beta"):
        MECHANISMS.create("tem", epsilon=1, beta=1.5)

