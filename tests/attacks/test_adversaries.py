"""The adversary suite: the lexical adversary, the registry, the headline (strongest attack)
and the rule that a privacy measurement needs an adversary that beats chance on the baseline."""

import numpy as np
import pytest

from bench.attacks.adversary import (
    ADVERSARIES,
    ADVERSARY_NEEDS,
    DEFAULT_ADVERSARIES,
    adversary_needs,
    attribute_adversary,
    headline,
    make_adversary,
    privacy_validity,
    resolve_adversaries,
)
from bench.attacks.lexical import LexicalAdversary, word_ngrams
from bench.registry import UnknownNameError

FILLER = ("the of and to in a is that for it as was with be by on not he this are or his "
          "from at which but have an they you were her she there been one all we their has "
          "would when if so no will more can who about up out them some time could into two "
          "then do first any my now like our over than other new also only see just these "
          "people may after most very well made way back where years much your because good "
          "through down how should each even state those day too work year world still "
          "life").split()


def planted_corpus(n: int, seed: int, *, planted: bool = True, length: int = 60,
                   word: str = "china", rate: float = 0.3):
    """``n`` documents of filler words; the attribute is 1 iff ``word`` was planted in it.

    With ``planted=False`` the label is drawn the same way but the word is never written: no
    adversary can read it (the noise case).
    """
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < rate).astype(np.int64)
    docs = []
    for label in y:
        doc = list(rng.choice(FILLER, size=length))
        if planted and label:
            doc[int(rng.integers(length))] = word
        docs.append(doc)
    return docs, y


def split3(docs, y):
    n = len(docs)
    a, b = int(0.6 * n), int(0.8 * n)
    return (docs[:a], y[:a]), (docs[a:b], y[a:b]), (docs[b:], y[b:])


@pytest.mark.parametrize("name", ["lexical", "bow"])
def test_adversary_reads_a_planted_word_and_fails_on_noise(name):
    docs, y = planted_corpus(600, seed=1)
    (Xtr, ytr), (Xd, yd), (Xte, yte) = split3(docs, y)
    adv = make_adversary(name, seed=0, n_classes=2)
    res = attribute_adversary(adv, Xtr, ytr, Xte, yte, X_dev=Xd, y_dev=yd, n_classes=2)
    assert not res.chance_level
    if name == "lexical":  # the word is the attribute: a lexical model reads it exactly
        assert res.metrics["adversary_macro_f1"] > 0.95

    docs, y = planted_corpus(600, seed=1, planted=False)
    (Xtr, ytr), (Xd, yd), (Xte, yte) = split3(docs, y)
    res = attribute_adversary(make_adversary(name, seed=0, n_classes=2), Xtr, ytr, Xte, yte,
                              X_dev=Xd, y_dev=yd, n_classes=2)
    assert res.chance_level


def test_lexical_multilabel_reads_rare_words_in_long_documents():
    """One entity word in a 400-word document, each label in ~8% of documents: the L1 choice
    on dev finds it (an L2 tf-idf model dilutes a single word in a long document)."""
    rng = np.random.default_rng(3)
    n, words = 700, ("iraq", "china", "bush")
    Y = (rng.random((n, 3)) < 0.08).astype(np.int64)
    docs = []
    for row in Y:
        doc = list(rng.choice(FILLER, size=400))
        for j in np.flatnonzero(row):
            doc[int(rng.integers(400))] = words[j]
        docs.append(doc)
    (Xtr, ytr), (Xd, yd), (Xte, yte) = split3(docs, Y)
    adv = LexicalAdversary(seed=0).fit(Xtr, ytr, Xd, yd)
    res = attribute_adversary(adv, Xtr, ytr, Xte, yte, X_dev=Xd, y_dev=yd)
    assert res.metrics["adversary_macro_f1"] > 0.9
    assert adv.params()["chosen_penalty"] in ("l1", "l2")


def test_lexical_bad_parameters():
    with pytest.raises(ValueError, match="C must be > 0"):
        LexicalAdversary(C=0)
    with pytest.raises(ValueError, match="C_grid"):
        LexicalAdversary(C_grid=[])
    with pytest.raises(ValueError, match="penalties"):
        LexicalAdversary(penalties=["l3"])
    with pytest.raises(ValueError, match="min_df"):
        LexicalAdversary(min_df=0)


def test_lexical_refuses_vectors():
    from bench.models.base import ModelInputError

    X = [np.zeros((3, 4)), np.ones((2, 4))]
    with pytest.raises(ModelInputError, match="text"):
        LexicalAdversary().fit(X, np.array([0, 1]))


def test_lexical_tiny_corpus_and_same_seed_same_output():
    X = [["a", "b"], ["c", "d"], ["a", "x"], ["c", "y"]]
    y = np.array([0, 1, 0, 1])
    p1 = LexicalAdversary(seed=0).fit(X, y).predict_proba(X)
    p2 = LexicalAdversary(seed=0).fit(X, y).predict_proba(X)
    assert np.array_equal(p1, p2) and np.allclose(p1.sum(axis=1), 1)


def test_word_ngrams():
    assert word_ngrams(["United", "States", "x"]) == ["united", "states", "x", "united states",
                                                      "states x"]


def test_registry_and_resolution():
    assert {"lexical", "informed", "bow", "lstm", "transformer"} <= set(ADVERSARIES.names())
    assert DEFAULT_ADVERSARIES == ("lexical", "model", "informed")
    names, left = resolve_adversaries(None, "bow", "text")
    assert names == ["lexical", "bow", "informed"] and left == []
    names, left = resolve_adversaries(None, "lstm", "vectors")  # privatized vectors: no words
    assert names == ["lstm"] and {n for n, _ in left} == {"lexical", "informed"}
    assert "reads text" in left[0][1]
    # decode_vectors: the text-only adversaries read the decoded words; informed (which needs
    # the mechanism's channel over words) is still left out, saying why
    names, left = resolve_adversaries(None, "lstm", "vectors", decode=True)
    assert names == ["lexical", "lstm"] and [n for n, _ in left] == ["informed"]
    assert "no channel over words" in left[0][1]
    assert resolve_adversaries(None, "bow", "text", decode=True) == (
        ["lexical", "bow", "informed"], [])  # text output: nothing to decode
    names, _ = resolve_adversaries(["lexical", "model", "lexical", "bow"], "bow", "text")
    assert names == ["lexical", "bow"]
    with pytest.raises(UnknownNameError, match="did you mean 'lexical'"):
        resolve_adversaries(["lexcal"], "bow", "text")


def _m(f1, thr=0.5):
    return {"privacy": 1 - f1, "adversary_macro_f1": f1, "chance_threshold": thr,
            "chance_level": f1 <= thr, "fit_seconds": 1.0, "predict_seconds": 0.5}


def test_headline_is_the_strongest_attack():
    h = headline({"lstm": _m(0.4), "lexical": _m(0.9), "informed": _m(0.7)})
    assert h["adversary"] == "lexical" and h["privacy"] == pytest.approx(0.1)
    assert h["adversary_macro_f1"] == 0.9 and set(h["by_adversary"]) == {"lstm", "lexical",
                                                                         "informed"}
    assert h["seconds"] == pytest.approx(4.5) and "fit_seconds" not in h
    with pytest.raises(ValueError):
        headline({})


def test_privacy_validity_rule():
    ok, why = privacy_validity(headline({"lexical": _m(0.9)}))
    assert ok is True and why is None
    ok, why = privacy_validity(headline({"lexical": _m(0.45), "lstm": _m(0.3)}))
    assert ok is False and "lexical" in why and "0.450" in why and "chance" in why
    ok, why = privacy_validity(None)
    assert ok is None and "baseline" in why
    # above the threshold, but the interval over test documents reaches down to it: not valid
    m = _m(0.6) | {"adversary_macro_f1_ci95": [0.48, 0.7]}
    ok, why = privacy_validity(headline({"lexical": m}))
    assert ok is False and "interval [0.480, 0.700]" in why and "0.500" in why
    m = _m(0.6) | {"adversary_macro_f1_ci95": [0.52, 0.7]}
    assert privacy_validity(headline({"lexical": m})) == (True, None)


def test_validity_fires_on_random_labels():
    """An attribute unrelated to the text: the strongest adversary is at chance, so the
    measurement is declared invalid instead of reporting 'perfect privacy'."""
    docs, _ = planted_corpus(500, seed=2)
    y = np.random.default_rng(9).integers(0, 2, size=500)
    (Xtr, ytr), (Xd, yd), (Xte, yte) = split3(docs, y)
    by = {}
    for name in ("lexical", "bow"):
        r = attribute_adversary(make_adversary(name, seed=0, n_classes=2), Xtr, ytr, Xte, yte,
                                X_dev=Xd, y_dev=yd, n_classes=2)
        by[name] = r.metrics
    ok, why = privacy_validity(headline(by))
    assert ok is False and "no valid privacy measurement" in why


def test_make_adversary_errors():
    with pytest.raises(UnknownNameError):
        make_adversary("nope", seed=0)
    with pytest.raises(TypeError, match="adversary 'lexical'"):
        make_adversary("lexical", seed=0, params={"bogus": 1})
    with pytest.raises(TypeError, match="unknown keyword"):
        make_adversary("lexical", seed=0, secret_labels=[1])


class NeedsPrivatizer(LexicalAdversary):
    """A toy adversary that declares it needs the privatizer (and keeps what it got)."""

    name = "toy_needs_privatizer"
    needs = frozenset({"privatizer"})

    def __init__(self, *, privatizer=None, **kw):
        super().__init__(**kw)
        self.privatizer = privatizer


class NeedsTheImpossible(LexicalAdversary):
    name = "toy_needs_oracle"
    needs = frozenset({"original_text"})


def test_adversaries_get_what_they_declare(monkeypatch):
    """No adversary is special-cased by name: each gets exactly what its class declares."""
    monkeypatch.setitem(ADVERSARIES._entries, "toy_needs_privatizer", NeedsPrivatizer)
    monkeypatch.setitem(ADVERSARIES._entries, "toy_needs_oracle", NeedsTheImpossible)
    offered = {"privatizer": "the privatizer", "attribute_words": ["china"]}
    assert adversary_needs("lexical") == frozenset()
    assert adversary_needs("informed") == frozenset({"privatizer", "attribute_words",
                                                      "channel_cache"})
    assert make_adversary("toy_needs_privatizer", seed=0, **offered).privatizer == \
        "the privatizer"
    assert isinstance(make_adversary("lexical", seed=0, **offered), LexicalAdversary)
    informed = make_adversary("informed", seed=0, attribute_words=("china",))
    assert informed.privatizer is None and informed.attribute_words == ["china"]
    with pytest.raises(ValueError, match=r"needs \['original_text'\], which the runner does "
                                         "not provide"):
        make_adversary("toy_needs_oracle", seed=0)
    assert set(ADVERSARY_NEEDS) == {"privatizer", "attribute_words", "channel_cache"}


def test_lexical_multiclass_reads_one_word_per_class():
    """A 4-class attribute (e.g. speaker identity) written as one word per class."""
    rng = np.random.default_rng(4)
    n, words = 600, ("alpha", "bravo", "charlie", "delta")
    y = rng.integers(0, 4, n)
    docs = []
    for label in y:
        doc = list(rng.choice(FILLER, size=50))
        doc[int(rng.integers(50))] = words[label]
        docs.append(doc)
    (Xtr, ytr), (Xd, yd), (Xte, yte) = split3(docs, y)
    adv = LexicalAdversary(seed=0, n_classes=4)
    res = attribute_adversary(adv, Xtr, ytr, Xte, yte, X_dev=Xd, y_dev=yd, n_classes=4)
    assert res.metrics["adversary_macro_f1"] > 0.95
    proba = adv.predict_proba(Xte)
    assert proba.shape == (len(Xte), 4) and np.allclose(proba.sum(axis=1), 1)
