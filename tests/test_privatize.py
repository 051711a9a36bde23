"""The corpus pipeline on the real public vocabulary (GloVe 6B 50d, first 5,000 words)."""

import numpy as np
import pytest

from bench.embeddings import load_embedding, tokenize
from bench.privatize import InvalidCombination, Privatizer

DOCS = [tokenize("The government said the economy grew by two percent last year."),
        tokenize("Qwzxv moved the market, said the minister."), []]


@pytest.fixture(scope="module")
def emb():
    return load_embedding("glove-6b-50d", vocab_size=5000)


COMBOS = [("mvl", "nearest", 50.0, {}), ("mvl", "vickrey", 50.0, {}),
          ("laplace", "nearest", 1.0, {}), ("gaussian", "nearest", 0.5, {}),
          ("trlaplace", "nearest", 1.0, {}), ("tem", "none", 5.0, {}),
          ("truncated_gumbel", "none", 150.0, {})]


@pytest.mark.parametrize("mech,mapping,eps,params", COMBOS, ids=[c[0] + "-" + c[1] for c in COMBOS])
@pytest.mark.parametrize("sens", ["none", "unit_norm_clip", "jl"])
def test_every_text_combination_runs(emb, mech, mapping, eps, params, sens):
    if mech == "truncated_gumbel" and sens != "none":
        eps = 2000.0  # Δmin shrinks in the transformed spaces; Alg. 1 needs a larger ε
    p = Privatizer.build(mechanism=mech, epsilon=eps, mapping=mapping, sensitivity=sens,
                         seed=1, embedding=emb, mechanism_params=params)
    out = p.privatize(DOCS)
    assert [len(t) for t in out.tokens] == [len(d) for d in DOCS]
    vocab = set(emb.words)
    assert all(w in vocab for doc in out.tokens for w in doc)  # outputs are public words
    assert "qwzxv" not in {w for doc in out.tokens for w in doc}  # OOV never leaks
    assert out.n_oov == 1 and 0.0 <= out.n_w <= 1.0
    assert p.guarantee().kind in ("metric", "pure", "approx")


def test_oov_keep_passes_through_and_is_flagged(emb):
    p = Privatizer.build(mechanism="mvl", epsilon=1.0, embedding=emb, oov="keep", seed=0)
    out = p.privatize(DOCS)
    assert out.tokens[1][0] == "qwzxv"
    assert out.oov_leaks and p.describe()["oov_leaks"]


def test_vector_output(emb):
    p = Privatizer.build(mechanism="mvl", epsilon=5.0, mapping="none", embedding=emb, seed=0)
    out = p.privatize(DOCS)
    assert out.tokens is None and [v.shape for v in out.vectors] == [(12, 50), (9, 50), (0, 50)]
    with pytest.raises(ValueError, match="vector output"):
        out.texts()


def test_selection_with_mapping_is_refused(emb):
    with pytest.raises(InvalidCombination, match="does not apply"):
        Privatizer.build(mechanism="tem", epsilon=1.0, mapping="nearest", embedding=emb)


@pytest.mark.parametrize(("mech", "natural"), [("tem", "none"), ("mvl", "nearest")])
def test_mapping_defaults_to_the_mechanisms_natural_one(emb, mech, natural):
    p = Privatizer.build(mechanism=mech, epsilon=10.0, embedding=emb)
    assert p.mapping.name == natural and p.privatize([["the", "bank"]]).tokens is not None


@pytest.mark.parametrize("bad", ["just", ["The central bank raised rates"], b"bytes",
                                 [["the"], "bank"], [[1, 2]], 5])
def test_strings_are_refused_where_token_lists_are_expected(emb, bad):
    p = Privatizer.build(mechanism="tem", epsilon=10.0, embedding=emb)
    with pytest.raises(TypeError, match="token|list"):
        p.privatize(bad)  # a string would otherwise be privatized letter by letter


def test_same_seed_same_text_and_noise_per_occurrence(emb):
    docs = [["the"] * 300]
    a = Privatizer.build(mechanism="mvl", epsilon=8.0, embedding=emb, seed=3).privatize(docs)
    b = Privatizer.build(mechanism="mvl", epsilon=8.0, embedding=emb, seed=3).privatize(docs)
    c = Privatizer.build(mechanism="mvl", epsilon=8.0, embedding=emb, seed=4).privatize(docs)
    assert a.tokens == b.tokens and a.tokens != c.tokens
    assert len(set(a.tokens[0])) > 1  # 300 occurrences of one word: not one shared draw


def test_large_epsilon_keeps_words_small_epsilon_changes_them(emb):
    docs = [tokenize("the president of the united states spoke to the press on monday")]
    hi = Privatizer.build(mechanism="mvl", epsilon=500.0, embedding=emb, seed=0).privatize(docs)
    lo = Privatizer.build(mechanism="mvl", epsilon=0.5, embedding=emb, seed=0).privatize(docs)
    assert hi.n_w == 1.0 and lo.n_w < 0.3


def test_guarantee_labels(emb):
    g = Privatizer.build(mechanism="mvl", epsilon=1.0, sensitivity="unit_norm",
                         embedding=emb).guarantee()
    assert g.kind == "metric" and not g.proven and g.multiplier > 1
    g = Privatizer.build(mechanism="mvl", epsilon=1.0, sensitivity="unit_norm_clip",
                         embedding=emb).guarantee()
    assert g.proven and g.multiplier == 1
    g = Privatizer.build(mechanism="mvl", epsilon=1.0, sensitivity="jl",
                         embedding=emb).guarantee()
    assert g.delta == pytest.approx(1e-6) and g.multiplier == pytest.approx(1.9)
    g = Privatizer.build(mechanism="laplace", epsilon=1.0, sensitivity="unit_norm",
                         embedding=emb).guarantee()
    assert (g.kind, g.proven) == ("pure", True)


def test_privatize_ids_rejects_out_of_range(emb):
    p = Privatizer.build(mechanism="mvl", epsilon=1.0, embedding=emb)
    with pytest.raises(ValueError, match="out of range"):
        p.privatize_ids(np.array([emb.size + 5]))


def test_noise_shared_per_batch_of_sentences_as_the_public_code(emb):
    """``noise_shared: batch``: one noise vector per batch of at most B equal-length documents
    (the public code's broadcast), so differences within a batch are noise-free."""
    docs = [tokenize("the cat sat"), tokenize("a dog ran"), tokenize("one bird flew"),
            tokenize("the market fell sharply"), tokenize("in paris")]
    params = {"C": 0.005, "noise_shared": "batch", "batch_sentences": 2,
              "allow_no_guarantee": True}
    p = Privatizer.build(mechanism="laplace", epsilon=1.0, mapping="none", embedding=emb,
                         seed=0, mechanism_params=params)
    out = p.privatize(docs)
    clean = emb.input_vectors()
    noise = [v - p.mechanism.prepare(clean[emb.encode(d)[0]]) for v, d in zip(out.vectors, docs)]
    # docs 0 and 1 (length 3) share a batch, doc 2 (length 3) starts the next one (B = 2)
    for i in (1, 2):
        np.testing.assert_allclose(noise[0][i], noise[0][0], atol=1e-12)
    np.testing.assert_allclose(noise[1], noise[0], atol=1e-12)
    assert not np.allclose(noise[2][0], noise[0][0])
    assert not np.allclose(noise[3][0], noise[4][0])  # other lengths, other batches
    per_token = p.noise_batches(np.array([3, 3, 3, 4, 2])).tolist()
    assert per_token == [1] * 6 + [2] * 3 + [3] * 4 + [0] * 2
    assert p.guarantee().void and out.guarantee.void
    # the rule: independent noise per token, no batches
    q = Privatizer.build(mechanism="laplace", epsilon=1.0, mapping="none", embedding=emb)
    assert q.noise_batches(np.array([3, 3])) is None
