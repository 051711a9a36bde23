"""``reconstruction_lm`` (the attacker with a language-model prior, bench.measures.
reconstruction_lm): where the channel leaves a word ambiguous and the context fixes it, the LM
prior beats the unigram attacker; on a channel that carries nothing it falls to chance; in a
grid the record lands beside ``reconstruction`` and is never below the unigram attacker."""

from __future__ import annotations

import numpy as np

from bench.measures.reconstruction_lm import (
    cross_fitted,
    lm_guesses,
    mixture_guesses,
    strongest,
    unigram_candidates,
)
from bench.mechanisms.channels import DenseChannel
from tests.measures.helpers import measures_by_mechanism

PROSE = [
    "the prime minister said on tuesday that the economy grew faster than expected last year",
    "the film is a warm and funny story about a family that learns to live together again",
    "shares in the company fell sharply after it warned that profits would be lower this year",
    "the team won the match in the final minute with a goal from their young striker",
    "the bank raised interest rates for the third time this year to slow rising prices",
    "the singer released her new album on friday and will tour europe in the summer",
]


def _setup(channel_of, seed=0):
    """The prose's vocabulary, a channel over it (``channel_of(n, rng)``: an (n, n) matrix
    P[w, o]), privatized documents drawn from it and the unigram candidates under a uniform
    prior."""
    rng = np.random.default_rng(seed)
    docs = [s.split() for s in PROSE]
    words = np.array(sorted({w for d in docs for w in d}), dtype=object)
    w2i = {w: i for i, w in enumerate(words)}
    n = len(words)
    P = channel_of(n, rng)
    ch = DenseChannel(np.arange(n), P)
    orig = [np.array([w2i[w] for w in d]) for d in docs]
    outp = [np.array([rng.choice(n, p=P[w]) for w in d]) for d in orig]
    uniq, inv = np.unique(np.concatenate(outp), return_inverse=True)
    ids, ll, lp = unigram_candidates(ch, np.full(n, 1.0 / n), uniq)
    bounds = np.cumsum([0] + [len(d) for d in outp])
    index = [inv[bounds[i]:bounds[i + 1]] for i in range(len(outp))]
    return words, orig, outp, ids, ll, lp, index


def _pairs(n, rng):
    """Each word is published as itself or as its partner, with probability 1/2 each: the
    channel cannot tell the two apart, the sentence can."""
    perm = rng.permutation(n)
    P = np.zeros((n, n))
    for a, b in zip(perm[0::2], perm[1::2], strict=False):
        P[a, [a, b]] = P[b, [a, b]] = 0.5
    if n % 2:
        P[perm[-1], perm[-1]] = 1.0
    return P


def test_unigram_candidates_are_the_map_order_with_their_likelihoods():
    from bench.measures.reconstruction import map_guesses

    rng = np.random.default_rng(3)
    P = rng.random((30, 30)) ** 4
    P /= P.sum(axis=1, keepdims=True)
    prior = 1.0 / (np.arange(30) + 1.0)
    prior /= prior.sum()
    ch = DenseChannel(np.arange(30), P)
    outs = rng.integers(0, 30, 12)
    ids, ll, lp = unigram_candidates(ch, prior, outs, k=8)
    assert np.array_equal(ids[:, :5], map_guesses(ch, prior, outs))
    assert np.allclose(ll, np.log(P[ids, outs[:, None]]))
    assert np.allclose(lp, np.log(prior[ids]))
    # with the LM's weight at 0 the mixture is the unigram attacker, whatever the LM says
    noise = rng.normal(size=ids.shape) * 10
    assert np.array_equal(mixture_guesses(noise, lp, ll, ids, 0.0), ids[:, :5])
    # at 1 the unigram prior drops out: a uniform prior leaves the channel alone to rank
    flat = mixture_guesses(np.zeros(ids.shape), lp, ll, ids, 1.0)
    assert np.array_equal(flat, np.take_along_axis(ids, np.argsort(-ll, axis=1,
                                                                   kind="stable")[:, :5], 1))


def test_the_lms_weight_is_fitted_on_the_other_fold():
    """λ is chosen on the other fold's documents: the weight whose guesses are right there
    guesses this fold, a weight that is right only on this fold is never chosen for it, and
    ties go to the smaller weight (the unigram attacker)."""
    rng = np.random.default_rng(0)
    n = 400
    orig = rng.integers(0, 50, n)
    doc = np.repeat(np.arange(40), 10)
    wrong = (orig + 1)[:, None] * np.ones((1, 5), np.int64)
    right = orig[:, None] * np.ones((1, 5), np.int64)
    even = (doc % 2 == 0)[:, None]
    # λ = 1 is right everywhere; λ = 0 nowhere
    g, lam = cross_fitted({0.0: wrong, 1.0: right}, orig, doc)
    assert lam == [1.0, 1.0] and (g[:, 0] == orig).all()
    # λ = 0.5 is right on the even documents only: it is chosen for the odd ones (fitted on
    # the even), and wrongly so -- it never guesses the fold it was fitted on
    g, lam = cross_fitted({0.0: wrong, 0.5: np.where(even, right, wrong)}, orig, doc)
    assert lam == [0.0, 0.5] and not (g[:, 0] == orig).any()
    g, lam = cross_fitted({0.0: right, 0.25: right, 1.0: wrong}, orig, doc)
    assert lam == [0.0, 0.0]


def test_context_resolves_what_the_channel_leaves_ambiguous(lm):
    words, orig, outp, ids, ll, lp, index = _setup(_pairs)
    by_lambda = {lam: np.concatenate(g)
                 for lam, g in lm_guesses(lm, words, outp, ids, ll, lp, index).items()}
    o = np.concatenate(orig)
    unigram = (ids[np.concatenate(index), 0] == o).mean()
    assert 0.35 < unigram < 0.75                 # a coin flip per ambiguous word
    assert (by_lambda[0.0][:, 0] == o).mean() == unigram   # λ = 0: the unigram attacker
    with_lm = (by_lambda[1.0][:, 0] == o).mean()
    assert with_lm > unigram + 0.15, (with_lm, unigram)
    doc = np.repeat(np.arange(len(orig)), [len(d) for d in orig])
    g, lam = cross_fitted(by_lambda, o, doc)
    assert min(lam) > 0 and (g[:, 0] == o).mean() > unigram + 0.15, lam


def test_a_channel_without_information_leaves_the_lm_at_chance(lm):
    words, orig, outp, ids, ll, lp, index = _setup(lambda n, rng: np.full((n, n), 1.0 / n))
    g = np.concatenate(lm_guesses(lm, words, outp, ids, ll, lp, index, lambdas=(1.0,))[1.0])
    o = np.concatenate(orig)
    chance = np.bincount(o).max() / len(o)       # always guessing the most frequent word
    assert (g[:, 0] == o).mean() <= chance + 0.03


def test_the_headline_is_never_below_the_unigram_attacker():
    def r(x):
        return {"rate": x, "ci": [x, x]}

    rates = {"lm_top1": r(0.3), "lm_top5": r(0.5), "map_top1": r(0.4), "map_top5": r(0.5),
             "unchanged": r(0.2), "prior_top1": r(0.05), "prior_top5": r(0.1)}
    assert strongest(rates, 1)["attack"] == "map"
    assert strongest(rates, 5) == {"rate": 0.5, "ci": [0.5, 0.5], "attack": "lm"}  # ties: lm


GRID = """
name: lmprior
axes:
  dataset: [{name: bbc, subsample: 80, max_tokens: 30}]
  model: [bow]
  mechanism: [{name: tem, beta: 0.001}, no_information]
  epsilon: [6]
  seed: [0]
settings:
  vocab_size: 3000
  metrics: [utility]
  measures: [reconstruction, reconstruction_lm]
"""


def test_in_a_grid_the_record_sits_beside_reconstruction(lm, tmp_path):
    got = measures_by_mechanism(tmp_path, GRID, 3)
    assert "reconstruction_lm" not in got["none"]  # the baseline's text is the original
    tem, nothing = got["tem"]["reconstruction_lm"], got["no_information"]["reconstruction_lm"]
    for rec in (tem, nothing):
        assert rec["top1"]["rate"] >= rec["map_top1"]["rate"]
        assert rec["top1"]["rate"] >= rec["chance_top1"]
        assert rec["model"] == "smollm2-135m-instruct-q4_1" and rec["n_tokens"] > 150
        assert len(rec["lm_lambda"]) == 2 and "lm_alone_top1" in rec
    assert tem["map_top1"]["rate"] > nothing["top1"]["rate"] + 0.2   # tem at ε = 6 leaks
    assert nothing["lm_top1"]["rate"] <= nothing["chance_top1"] + 0.05
