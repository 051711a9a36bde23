"""The informed adversary: exact Bayes posteriors, sampled channels, attacks, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from bench.attacks.adversary import attribute_adversary
from bench.attacks.informed import (
    ExpChannel,
    InformedAdversary,
    channel_kind,
    supports,
)
from bench.embeddings import Embedding
from bench.metrics.classification import macro_f1
from bench.models.base import ModelInputError
from bench.privatize import Privatizer

N = 50


@pytest.fixture(scope="module")
def toy() -> Embedding:
    """50 distinct words on a quarter-integer grid in 3-D: every squared distance, and so every
    distance, is computed exactly in float64 whatever the formula (the 1e-9 comparisons
    below compare algorithms, not rounding)."""
    rng = np.random.default_rng(0)
    pts: set[tuple[int, ...]] = set()
    while len(pts) < N:
        pts.add(tuple(int(v) for v in rng.integers(-8, 9, 3)))
    return Embedding("toy", [f"w{i}" for i in range(N)], np.array(sorted(pts), float) / 4)


def _zipf(n: int) -> np.ndarray:
    p = 1.0 / (np.arange(n) + 1.0)
    return p / p.sum()


def _brute_posterior(dist: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """P(w | o) by Bayes from the mechanism's own output distribution rows ``dist[w, o]``,
    as ``(o, w)``."""
    joint = prior[:, None] * dist
    with np.errstate(invalid="ignore"):
        return (joint / joint.sum(axis=0, keepdims=True)).T


def _full_posterior(post) -> np.ndarray:
    """The cache's posterior as a dense ``(o, w)`` matrix: top-k excess + floor mass × bg."""
    n = post.n_vocab
    out = np.zeros((n, n))
    np.add.at(out, (np.repeat(np.arange(n), post.top_k), post.top_ids.ravel()),
              post.top_p.ravel())
    if post.B > 0:
        out[:, post.channel.cand] += post.floor_mass[:, None] * (post.pf / post.B)[None, :]
    return out


@pytest.mark.parametrize(("eps", "path"), [(5.0, "auto"), (5.0, "sparse"), (5.0, "dense"),
                                           (1.0, "auto"), (20.0, "auto")])
def test_tem_posterior_is_exact_bayes(toy, eps, path, monkeypatch):
    monkeypatch.setattr(ExpChannel, "path", path)
    p = Privatizer.build(mechanism="tem", epsilon=eps, mapping="none", seed=0, embedding=toy)
    adv = InformedAdversary(privatizer=p, attribute_words=["w3", "w7 w8"], candidates=None,
                            top_k=N)
    post = adv.posterior(np.arange(N))
    truth = _brute_posterior(p.mechanism.distribution(np.arange(N)), _zipf(N))
    np.testing.assert_allclose(_full_posterior(post), truth, atol=1e-9, rtol=0)
    np.testing.assert_allclose(post.attr, truth[:, post.attr_ids], atol=1e-9, rtol=0)
    assert channel_kind(p) == "exact"


def test_posterior_over_a_candidate_subset_and_uniform_prior(toy):
    """Restricting the originals to the top words (+ attribute words) conditions on them."""
    p = Privatizer.build(mechanism="tem", epsilon=3.0, mapping="none", seed=0, embedding=toy)
    adv = InformedAdversary(privatizer=p, attribute_words=["w40"], candidates=20,
                            prior="uniform", top_k=N)
    post = adv.posterior(np.arange(N))
    cand = np.r_[np.arange(20), 40]
    dist = p.mechanism.distribution(cand)
    truth = _brute_posterior(dist, np.full(len(cand), 1 / len(cand)))
    np.testing.assert_allclose(_full_posterior(post)[:, cand], truth, atol=1e-9, rtol=0)
    np.testing.assert_allclose(post.attr[:, 0], truth[:, -1], atol=1e-9, rtol=0)


@pytest.mark.parametrize(("mech", "params"), [("santext", {}), ("custext", {"K": 5})])
def test_other_exact_channels(toy, mech, params):
    p = Privatizer.build(mechanism=mech, epsilon=2.0, mapping="none", seed=0, embedding=toy,
                         mechanism_params=params)
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], candidates=None, top_k=N)
    post = adv.posterior(np.arange(N))
    truth = _brute_posterior(p.mechanism.distribution(np.arange(N)), _zipf(N))
    np.testing.assert_allclose(post.attr[:, 0], np.nan_to_num(truth[:, 3]), atol=1e-9, rtol=0)


def test_sampled_channel_within_sampling_tolerance(toy):
    p = Privatizer.build(mechanism="tem", epsilon=5.0, mapping="none", seed=0, embedding=toy)
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], candidates=None, top_k=N,
                            channel="sampled", n_samples=4000, smoothing=0.01)
    post = adv.posterior(np.arange(N))
    assert adv.params()["channel"] == "sampled"
    truth = _brute_posterior(p.mechanism.distribution(np.arange(N)), _zipf(N))
    err = np.abs(_full_posterior(post) - truth).max()
    assert err < 0.05
    # and it is an estimate, not the exact channel
    assert err > 1e-6


def test_posteriors_computed_once_per_unique_output_word(toy, monkeypatch):
    p = Privatizer.build(mechanism="tem", epsilon=5.0, mapping="none", seed=0, embedding=toy)
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], features="attribute")
    seen: list[int] = []
    adv.posterior(np.array([0]))  # build the channel
    orig = type(adv._post.channel).excess

    def counting(self, outputs):
        seen.extend(np.asarray(outputs).tolist())
        return orig(self, outputs)

    monkeypatch.setattr(type(adv._post.channel), "excess", counting)
    docs = [[f"w{i % 7}" for i in range(40)] for _ in range(6)]
    y = np.array([[0], [1], [0], [1], [0], [1]])
    adv.fit(docs, y, docs, y)
    adv.predict(docs + [["w9", "w9", "w9"]])
    assert sorted(seen) == [1, 2, 3, 4, 5, 6, 9]  # each unique output word once (w0 before)


# ------------------------------------------------------------------------------ attacks

def _planted(n: int, seed: int, words=("w5",), k: int = 30, signal: bool = True):
    """Documents of k random words; label j = 1 plants words[j] (a phrase) at a random place,
    replacing words (every document has the same length: privatization keeps lengths)."""
    rng = np.random.default_rng(seed)
    y = (rng.random((n, len(words))) < 0.4).astype(np.int64)
    docs = []
    for i in range(n):
        d = [f"w{v}" for v in rng.integers(15, N, k)]
        lab = y[i] if signal else (rng.random(len(words)) < 0.4)
        for j, phrase in enumerate(words):
            if lab[j]:
                ph = phrase.split()
                at = int(rng.integers(0, k - len(ph) + 1))
                d[at:at + len(ph)] = ph
        docs.append(d)
    return docs, y


def _attack(toy, eps, signal=True, words=("w5", "w9 w10"), mechanism="tem", mapping="none",
            **kw):
    p = None if eps is None else Privatizer.build(mechanism=mechanism, epsilon=eps,
                                                  mapping=mapping, seed=0, embedding=toy)
    pa = None if eps is None else Privatizer.build(mechanism=mechanism, epsilon=eps,
                                                   mapping=mapping, seed=1, embedding=toy)
    data = [_planted(n, s, words, signal=signal) for n, s in ((300, 0), (100, 1), (300, 2))]
    X = [d if p is None else p.privatize(d).tokens for d, _ in data]
    adv = InformedAdversary(privatizer=pa, attribute_words=list(words), seed=0, **kw)
    return attribute_adversary(adv, X[0], data[0][1], X[2], data[2][1], X_dev=X[1],
                               y_dev=data[1][1], seed=0)


def test_beats_chance_at_large_epsilon(toy):
    res = _attack(toy, 30.0)
    assert not res.chance_level
    assert res.metrics["adversary_macro_f1"] > 0.8


def _label_blind(res, y_test: np.ndarray) -> float:
    """The best label-blind guesser: the chance threshold, or "every label on" (multilabel
    macro-F1 rewards it; a classifier without signal picked on dev F1 drifts towards it)."""
    return max(res.metrics["chance_threshold"], macro_f1(y_test, np.ones_like(y_test)))


def test_chance_at_tiny_epsilon(toy):
    res = _attack(toy, 0.01)
    y_test = _planted(300, 2, ("w5", "w9 w10"))[1]
    assert res.metrics["adversary_macro_f1"] <= _label_blind(res, y_test) + 0.02
    assert res.metrics["adversary_macro_f1"] < _attack(toy, 30.0).metrics["adversary_macro_f1"]


def test_chance_when_the_word_is_noise(toy):
    res = _attack(toy, 30.0, signal=False)
    y_test = _planted(300, 2, ("w5", "w9 w10"))[1]
    assert res.metrics["adversary_macro_f1"] <= _label_blind(res, y_test) + 0.02


def test_sampled_channel_attack_beats_chance(toy):
    res = _attack(toy, 8.0, mechanism="mvl", mapping="nearest", n_samples=200)
    assert res.model.params()["channel"] == "sampled"
    assert not res.chance_level


def test_bag_features_for_a_multiclass_attribute(toy):
    """No attribute words: the posterior-expected bag of words reads a class-specific word."""
    rng = np.random.default_rng(0)

    def data(n):
        y = rng.integers(0, 3, n)
        docs = [[f"w{v}" for v in rng.integers(15, N, 20)] + [f"w{c + 2}"] for c in y]
        return docs, y

    p = Privatizer.build(mechanism="tem", epsilon=30.0, mapping="none", seed=0, embedding=toy)
    pa = Privatizer.build(mechanism="tem", epsilon=30.0, mapping="none", seed=1, embedding=toy)
    (Xtr, ytr), (Xd, yd), (Xte, yte) = data(300), data(100), data(300)
    priv = [p.privatize(x).tokens for x in (Xtr, Xd, Xte)]
    adv = InformedAdversary(privatizer=pa, seed=0, n_classes=3)
    res = attribute_adversary(adv, priv[0], ytr, priv[2], yte, X_dev=priv[1], y_dev=yd,
                              n_classes=3, seed=0)
    assert adv.features_ == "bag"
    assert not res.chance_level and res.metrics["adversary_macro_f1"] > 0.8


def test_identity_baseline_reads_the_words_and_skips_oov():
    docs = [["the", "war", "in", "iraq", "zzqxoov"], ["the", "trade", "with", "china"]] * 20
    y = np.array([[1, 0], [0, 1]] * 20)
    adv = InformedAdversary(attribute_words=["iraq", "china"], features="attribute")
    adv.fit(docs, y, docs, y)
    np.testing.assert_array_equal(adv.predict(docs), y)
    assert adv.params()["channel"] == "identity"


def test_a_mechanism_that_passes_its_input_is_read_as_the_baseline():
    """The known answer `identity` publishes the text: the informed adversary reads it as it
    reads the unprivatized baseline (every word of the baseline's vocabulary the token itself),
    so identity's
    privacy lands exactly on the baseline's. Through its exact channel over the most frequent
    candidates only, words beyond them gave no evidence and identity scored a privacy "gain"
    (debates2016, seed 2: informed 0.656 against 0.694 on the baseline)."""
    rng = np.random.default_rng(0)
    filler = ["the", ",", ".", "of", "to", "and", "in", "a"]  # among GloVe's 10 most frequent
    cls = ["government", "music", "football"]  # far beyond them

    def data(n):  # the class is a word beyond the 10 candidates
        y = rng.integers(0, 3, n)
        docs = [[filler[v] for v in rng.integers(0, len(filler), 12)] + [cls[c]] for c in y]
        return docs, y

    (Xtr, ytr), (Xd, yd), (Xte, yte) = data(200), data(80), data(200)
    ident = Privatizer.build(mechanism="identity", epsilon=1.0, seed=0)
    out = {}
    for name, priv in (("baseline", None), ("identity", ident)):
        adv = InformedAdversary(privatizer=priv, seed=0, n_classes=3, candidates=10)
        adv.fit(Xtr, ytr, Xd, yd)
        out[name] = (adv.predict(Xte), adv.params()["channel"])
    np.testing.assert_array_equal(out["identity"][0], out["baseline"][0])
    assert out["identity"][1] == out["baseline"][1] == "identity"
    assert macro_f1(yte, out["identity"][0]) > 0.9


# ------------------------------------------------------------------------------ configuration

def test_vectors_are_refused_with_a_clear_error(toy):
    vec = Privatizer.build(mechanism="mvl", epsilon=5.0, mapping="none", seed=0, embedding=toy)
    with pytest.raises(ModelInputError, match="vectors"):
        InformedAdversary(privatizer=vec)
    adv = InformedAdversary(attribute_words=["w1"])
    with pytest.raises(ModelInputError, match="vectors"):
        adv.fit([np.zeros((3, 3))] * 4, np.array([[0], [1], [0], [1]]))


def test_supports_and_channel_kind(toy):
    assert supports("selection", "text") is None
    assert supports("additive", "text") is None
    assert supports("tem", "text") is None
    assert "vectors" in supports("additive", "vectors")
    assert "unknown" in supports("no_such_mechanism", "text")
    assert channel_kind(None) == "identity"
    mvl = Privatizer.build(mechanism="mvl", epsilon=5.0, mapping="nearest", seed=0,
                           embedding=toy)
    assert channel_kind(mvl) == "sampled"


@pytest.mark.parametrize("bad", [{"prior": "empirical"}, {"features": "nope"},
                                 {"candidates": 0}, {"n_samples": 0}, {"smoothing": 0},
                                 {"channel": "guess"}, {"C_grid": []},
                                 {"features": "attribute"}])
def test_bad_parameters(bad):
    with pytest.raises(ValueError):
        InformedAdversary(**bad)
