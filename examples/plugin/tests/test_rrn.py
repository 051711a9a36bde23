"""Tests of the `rrn` plugin mechanism: sampled vs exact distribution, the ε-DP ratio inside a
candidate set, zero probability outside it, bad parameters, seeding, the entry point, and the
exact channel that the informed adversary uses instead of sampling.

Run after installing the plugin: ``pip install -e examples/plugin && pytest examples/plugin/tests``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from bench_rrn import RandomizedResponseNeighbours as RRN


@pytest.fixture(scope="module")
def space():
    return np.random.default_rng(0).normal(size=(30, 4))


def test_registered_through_the_entry_point():
    from bench.mechanisms import MECHANISMS

    assert MECHANISMS.get("rrn") is RRN
    assert MECHANISMS.origin("rrn").startswith("bench-rrn ")


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_bad_k_raises(k):
    with pytest.raises(ValueError, match="rrn: k must be a positive integer"):
        RRN(epsilon=1.0, k=k)


def test_k_must_be_below_the_vocabulary_size(space):
    with pytest.raises(ValueError, match="k must be < |W|"):
        RRN(epsilon=1.0, k=30).fit(space)


def test_exact_distribution_is_randomized_response(space):
    eps, k = 1.5, 3
    mech = RRN(epsilon=eps, k=k, rng=0).fit(space)
    dist = mech.distribution(np.arange(30))
    assert np.allclose(dist.sum(axis=1), 1.0)
    assert np.allclose(dist[np.arange(30), np.arange(30)], math.exp(eps) / (math.exp(eps) + k))
    assert np.all((dist > 0).sum(axis=1) == k + 1)
    # the k positive non-kept entries are the k nearest other words
    d = np.linalg.norm(space[:, None] - space[None], axis=2)
    np.fill_diagonal(d, np.inf)
    nearest = np.sort(np.argsort(d, axis=1)[:, :k], axis=1)
    others = dist.copy()
    others[np.arange(30), np.arange(30)] = 0
    assert np.array_equal(np.sort(np.argsort(-others, axis=1)[:, :k], axis=1), nearest)


def test_sampled_distribution_matches_the_exact_one(space):
    mech = RRN(epsilon=1.0, k=4, rng=7).fit(space)
    n = 100_000
    for w in (0, 11, 29):
        freq = np.bincount(mech.sample(np.full(n, w)), minlength=30) / n
        p = mech.distribution(np.array([w]))[0]
        tol = 5 * np.sqrt(p * (1 - p) / n) + 1e-12  # ~5 standard errors per output
        assert np.all(np.abs(freq - p) <= tol), (w, freq, p)


def test_ratio_bounded_inside_a_candidate_set_and_unbounded_outside(space):
    eps = 0.8
    mech = RRN(epsilon=eps, k=1, rng=0).fit(space)  # k = 1: mutual nearest neighbours share C
    dist = mech.distribution(np.arange(30))
    pairs = [(a, b) for a in range(30) for b in range(a + 1, 30)]
    inside = [(a, b) for a, b in pairs if mech.same_scope(np.array([a]), np.array([b]))[0]]
    assert inside, "some mutual nearest neighbours exist"
    for a, b in inside:
        assert np.all(dist[a] <= math.exp(eps) * dist[b] + 1e-15)
        assert np.all(dist[b] <= math.exp(eps) * dist[a] + 1e-15)
    a, b = next((a, b) for a, b in pairs if (a, b) not in inside)
    assert np.any((dist[a] > 0) & (dist[b] == 0))  # an output only one of them can produce
    g = mech.guarantee()
    assert g.kind == "pure" and not g.proven and "same candidate set" in g.reason


def test_same_seed_same_output_and_input_only_rows(space):
    inputs = np.vstack([space, space.mean(axis=0)])  # a `<unk>`-like input-only row
    a = RRN(epsilon=2.0, k=2, rng=3).fit(space, inputs)
    b = RRN(epsilon=2.0, k=2, rng=3).fit(space, inputs)
    ids = np.array([0, 5, 30, 30, 7])
    assert np.array_equal(a.sample(ids), b.sample(ids))
    w = int(np.argmin(np.linalg.norm(space - inputs[30], axis=1)))
    assert np.array_equal(a.distribution(np.array([30]))[0], a.distribution(np.array([w]))[0])
    assert a.same_scope(np.array([30]), np.array([w]))[0]


def test_exact_channel_is_the_distribution_and_informed_uses_it(monkeypatch):
    from bench.attacks import informed, informed_channel
    from bench.embeddings import Embedding
    from bench.privatize import Privatizer

    emb = Embedding("toy", [f"w{i}" for i in range(30)],
                    np.random.default_rng(0).normal(size=(30, 4)))
    p = Privatizer.build(mechanism="rrn", epsilon=2.0, mapping="none", seed=0, embedding=emb,
                         mechanism_params={"k": 3})
    words = np.array([0, 7, 29])
    assert np.allclose(p.mechanism.channel(words).toarray(), p.mechanism.distribution(words),
                       atol=1e-15, rtol=0)
    assert type(p.mechanism).has_channel() and informed.channel_kind(p) == "exact"

    def no_sampling(*a, **k):
        raise AssertionError("the informed adversary sampled although rrn has a channel")

    monkeypatch.setattr(informed_channel, "_sampled_channel", no_sampling)
    adv = informed.InformedAdversary(privatizer=p, attribute_words=["w3"], candidates=None)
    post = adv.posterior(np.arange(30))
    dist = p.mechanism.distribution(np.arange(30))  # Bayes with the Zipf prior, by hand
    prior = 1.0 / np.arange(1, 31)
    truth = prior[3] * dist[3] / (prior[:, None] * dist).sum(axis=0)
    assert adv.params()["channel"] == "exact"
    assert np.allclose(post.attr[:, 0], truth, atol=1e-12, rtol=0)
