"""The reconstructed adversary: its reconstruction is the exact Bayes MAP guess, it finds a
planted attribute through a mechanism, falls to chance on noise, and is ``lexical`` on the
baseline."""

from __future__ import annotations

import numpy as np
import pytest

from bench.attacks.adversary import attribute_adversary, make_adversary, resolve_adversaries
from bench.attacks.lexical import LexicalAdversary
from bench.attacks.reconstructed import ReconstructedAdversary
from bench.embeddings import Embedding
from bench.metrics.classification import macro_f1
from bench.models.base import ModelInputError
from bench.privatize import Privatizer
from bench.results.channels import ChannelStore
from bench.results.layout import channels_dir

N = 50


@pytest.fixture(scope="module")
def toy() -> Embedding:
    """50 distinct words on a quarter-integer grid in 3-D (as tests/attacks/test_informed.py)."""
    rng = np.random.default_rng(0)
    pts: set[tuple[int, ...]] = set()
    while len(pts) < N:
        pts.add(tuple(int(v) for v in rng.integers(-8, 9, 3)))
    return Embedding("toy", [f"w{i}" for i in range(N)], np.array(sorted(pts), float) / 4)


def _tem(toy, eps, seed=1):
    return Privatizer.build(mechanism="tem", epsilon=eps, mapping="none", seed=seed,
                            embedding=toy)


@pytest.mark.parametrize("eps", [1.0, 4.0, 12.0])
def test_the_reconstruction_is_the_map_original_under_the_zipf_prior(toy, eps):
    p = _tem(toy, eps)
    adv = ReconstructedAdversary(privatizer=p)
    outputs = [[f"w{i}" for i in range(N)]]
    got = adv.reconstruct(outputs)[0]
    dist = p.mechanism.distribution(np.arange(N))  # P(o | w), rows w
    prior = 1.0 / (np.arange(N) + 1.0)
    joint = prior[:, None] * dist  # (w, o)
    best = joint.max(axis=0)
    # the MAP original of each output; ties (equal joint) go to the more frequent word
    want = [f"w{int(np.flatnonzero(np.isclose(joint[:, o], best[o], rtol=1e-12))[0])}"
            for o in range(N)]
    assert got == want
    assert adv.params()["channel"] == "exact"
    if eps == 1.0:  # a flat channel: the prior decides, outputs read as the most frequent words
        assert set(got) <= {"w0", "w1", "w2"}


def test_words_outside_the_vocabulary_stay_and_lengths_are_kept(toy):
    adv = ReconstructedAdversary(privatizer=_tem(toy, 50.0))
    docs = [["w3", "<unk>", "W7"], [], ["zzq"]]
    out = adv.reconstruct(docs)
    assert [len(d) for d in out] == [3, 0, 1]
    assert out[0][1] == "<unk>" and out[2] == ["zzq"]
    assert out[0][0] == "w3" and out[0][2] == "w7"  # ε = 50: the channel nearly decides


def _planted(n: int, seed: int, signal: bool = True, k: int = 30):
    """Documents of k words from w15..w49; label 1 documents carry w5 three times."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int64)
    docs = []
    for i in range(n):
        d = [f"w{v}" for v in rng.integers(15, N, k)]
        if (y[i] if signal else rng.random() < 0.4):
            for at in rng.choice(k, 3, replace=False):
                d[at] = "w5"
        docs.append(d)
    return docs, y


def _attack(toy, eps, signal=True, adversary="reconstructed", store=None):
    p = None if eps is None else _tem(toy, eps, seed=0)
    data = [_planted(n, s, signal) for n, s in ((300, 0), (100, 1), (300, 2))]
    X = [d if p is None else p.privatize(d).tokens for d, _ in data]
    provided = {"privatizer": None if eps is None else _tem(toy, eps, seed=1),
                "attribute_words": None, "channel_cache": store}
    adv = make_adversary(adversary, seed=0, n_classes=2, **provided)
    return attribute_adversary(adv, X[0], data[0][1], X[2], data[2][1], X_dev=X[1],
                               y_dev=data[1][1], seed=0), data[2][1]


def test_it_finds_a_planted_attribute_through_the_mechanism(toy, tmp_path):
    store = ChannelStore(channels_dir(tmp_path))
    res, _ = _attack(toy, 6.0, store=store)
    assert not res.chance_level
    assert res.metrics["adversary_macro_f1"] > 0.8
    # a second adversary of the same configuration reads the channel from the cache
    again = ReconstructedAdversary(privatizer=_tem(toy, 6.0, seed=2), channel_cache=store)
    again.reconstruct([["w1"]])
    assert again.params()["channel_cache"] in ("memory", "disk")


def test_chance_when_the_label_is_noise(toy):
    res, y_test = _attack(toy, 6.0, signal=False)
    blind = max(res.metrics["chance_threshold"],
                macro_f1(y_test, np.ones_like(y_test), 2))
    assert res.metrics["adversary_macro_f1"] <= blind + 0.05


def test_chance_when_the_mechanism_erases_the_word(toy):
    res, _ = _attack(toy, 0.01)
    assert res.chance_level


def test_on_the_baseline_it_is_the_lexical_adversary(toy):
    data = [_planted(n, s) for n, s in ((120, 0), (40, 1), (120, 2))]
    rec = ReconstructedAdversary(seed=0).fit(data[0][0], data[0][1], data[1][0], data[1][1])
    lex = LexicalAdversary(seed=0).fit(data[0][0], data[0][1], data[1][0], data[1][1])
    np.testing.assert_array_equal(rec.predict_proba(data[2][0]), lex.predict_proba(data[2][0]))
    assert rec.params()["channel"] == "identity"


def test_it_is_an_adversary_for_text_and_refuses_vectors(toy):
    names, left = resolve_adversaries(["lexical", "reconstructed"], "lstm", "text")
    assert names == ["lexical", "reconstructed"] and left == []
    names, left = resolve_adversaries(["reconstructed"], "lstm", "vectors", decode=True)
    assert names == [] and left[0][0] == "reconstructed"
    vec = Privatizer.build(mechanism="mvl", epsilon=5.0, mapping="none", seed=0, embedding=toy)
    with pytest.raises(ModelInputError):
        ReconstructedAdversary(privatizer=vec)
