"""Token reconstruction: the MAP guess recovers a planted channel's originals and falls to the
prior's chance level when the channel carries no information."""

from __future__ import annotations

import numpy as np

from bench.measures.reconstruction import map_guesses
from bench.mechanisms.channels import DenseChannel

N = 40


def _prior(n=N):
    p = 1.0 / (np.arange(n) + 1.0)
    return p / p.sum()


def test_an_informative_channel_is_inverted_exactly():
    """A permutation channel (o = σ(w) always): the MAP guess of σ(w) is w."""
    rng = np.random.default_rng(0)
    sigma = rng.permutation(N)
    P = np.zeros((N, N))
    P[np.arange(N), sigma] = 1.0
    ch = DenseChannel(np.arange(N), P)
    guesses = map_guesses(ch, _prior(), sigma)
    assert np.array_equal(guesses[:, 0], np.arange(N))


def test_a_channel_without_information_gives_the_prior_top_words():
    """P(o|w) the same for every w: the posterior is the prior, whose top-5 are words 0..4
    (chance level: the rate of the prior's own guesses)."""
    P = np.full((N, N), 1.0 / N)
    ch = DenseChannel(np.arange(N), P)
    guesses = map_guesses(ch, _prior(), np.arange(N))
    assert (guesses == np.arange(5)[None, :]).all()


def test_guesses_match_a_brute_force_posterior():
    rng = np.random.default_rng(1)
    P = rng.random((N, N)) ** 4
    P /= P.sum(axis=1, keepdims=True)
    prior = _prior()
    ch = DenseChannel(np.arange(N), P)
    outs = rng.integers(0, N, 25)
    got = map_guesses(ch, prior, outs)
    post = prior[:, None] * P[:, outs]  # (w, o)
    want = np.argsort(-post, axis=0, kind="stable")[:5].T
    assert np.array_equal(got, want)


def test_an_output_no_candidate_can_produce_is_guessed_to_be_itself():
    P = np.zeros((3, 10))
    P[:, :3] = np.eye(3)
    ch = DenseChannel(np.arange(3), P)
    guesses = map_guesses(ch, np.ones(3) / 3, np.array([1, 7]), k=2)
    assert guesses[0, 0] == 1 and (guesses[1] == 7).all()


def test_the_headline_is_the_strongest_of_map_identity_and_prior():
    from bench.measures.reconstruction import _strongest

    def r(x):
        return {"rate": x, "ci": [x, x]}

    rates = {"map_top1": r(0.02), "map_top5": r(0.07), "unchanged": r(0.0),
             "prior_top1": r(0.07), "prior_top5": r(0.2)}
    assert _strongest(rates, 1)["attack"] == "prior"  # a noisy MAP below chance
    assert _strongest(rates, 5) == {"rate": 0.2, "ci": [0.2, 0.2], "attack": "prior"}
    rates |= {"unchanged": r(0.5), "map_top1": r(0.5), "map_top5": r(0.6)}
    assert _strongest(rates, 1)["attack"] == "map"  # ties: MAP first
    assert _strongest(rates, 5)["attack"] == "map"
