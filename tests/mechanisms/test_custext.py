"""CusText (``custext``): K-word partition, exact probabilities vs sampler, ε-DP per set."""

import math

import numpy as np
import pytest

from bench.mechanisms import MECHANISMS
from bench.mechanisms.custext import CusText

from ._stats import P_MIN, chi2_pvalue


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
    m = MECHANISMS.create("custext", epsilon=1.0, K=K, rng=6).fit(space)
    got = sorted(sorted(g.tolist()) for g in m.members)
    assert got == sorted(custext_reference(space, K))
    assert sum(len(g) for g in m.members) == len(space)  # a partition
    assert all(len(g) == K for g in m.members[:-1])


def test_custext_exact_probabilities_and_sampler(space):
    eps, K = 3.0, 10
    m = MECHANISMS.create("custext", epsilon=eps, K=K, rng=7).fit(space)
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
    m = MECHANISMS.create("custext", epsilon=eps, K=8, rng=8).fit(space)
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
    m = MECHANISMS.create("custext", epsilon=1.0, K=5, rng=9).fit(space, np.vstack([space, extra]))
    nearest = int(np.argmin(np.linalg.norm(space - extra, axis=1)))
    assert m.input_group[len(space)] == m.group[nearest]
    out = m.sample(np.full(500, len(space)))
    assert set(out.tolist()) <= set(m.members[m.group[nearest]].tolist())


def test_custext_validation_and_seed(tiny):
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="K"):
            MECHANISMS.create("custext", epsilon=1.0, K=bad)
    ids = np.arange(5).repeat(9)
    a = MECHANISMS.create("custext", epsilon=1.0, K=3, rng=10).fit(tiny).sample(ids)
    b = MECHANISMS.create("custext", epsilon=1.0, K=3, rng=10).fit(tiny).sample(ids)
    np.testing.assert_array_equal(a, b)
    assert isinstance(MECHANISMS.create("custext", epsilon=1.0), CusText)

