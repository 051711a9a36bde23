"""The `autoencoder` rewriter: reconstructs a small synthetic corpus from clean embeddings,
degrades monotonically as the noise grows, is seeded, and refuses bad input."""

import numpy as np
import pytest

from bench.embeddings import UNK, Embedding
from bench.metrics.rewrite import n_w
from bench.rewriters import REWRITERS
from bench.rewriters.autoencoder import AutoencoderRewriter

WORDS = [f"w{i}" for i in range(40)]


@pytest.fixture(scope="module")
def embedding():
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(WORDS) + 10, 16))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)  # unit norm, like clipped vectors
    return Embedding("toy", WORDS + [f"x{i}" for i in range(10)], vecs)


def corpus(n, seed):
    """Random 'sentences' over 40 words, lengths 4-12 (no language model can guess them)."""
    rng = np.random.default_rng(seed)
    return [list(rng.choice(WORDS, size=rng.integers(4, 13))) for _ in range(n)]


def vectors(docs, emb, sigma, seed):
    rng = np.random.default_rng(seed)
    table = emb.input_vectors()
    return [table[emb.encode(d)[0]] + sigma * rng.normal(size=(len(d), emb.dim)) for d in docs]


def fit(docs, emb, sigma, epochs=12, seed=0):
    rw = REWRITERS.create("autoencoder", hidden_size=48, epochs=epochs, batch_size=32, seed=seed)
    return rw.fit(vectors(docs, emb, sigma, seed=1), docs, emb)


def test_registered_and_listed():
    assert "autoencoder" in REWRITERS.names()
    assert REWRITERS.get("autoencoder") is AutoencoderRewriter


def test_reconstructs_clean_embeddings_almost_perfectly(embedding):
    train, test = corpus(400, 0), corpus(60, 1)
    rw = fit(train, embedding, 0.0)
    out = rw.rewrite(vectors(test, embedding, 0.0, seed=2))
    assert [len(o) for o in out] == [len(t) for t in test]
    assert n_w(test, out) > 0.97
    assert rw.loss(vectors(test, embedding, 0.0, seed=2), test) < 0.2


def test_degrades_monotonically_with_noise(embedding):
    """N_w of the rewrite falls and the reconstruction loss rises as the noise grows; at
    noise far above the signal (unit-norm vectors, sigma 3 per coordinate) it is near chance
    (1/40 words)."""
    train, test = corpus(400, 0), corpus(80, 1)
    nws, losses = [], []
    for sigma in (0.0, 0.15, 0.4, 3.0):
        rw = fit(train, embedding, sigma)
        noisy_test = vectors(test, embedding, sigma, seed=3)
        nws.append(n_w(test, rw.rewrite(noisy_test)))
        losses.append(rw.loss(noisy_test, test))
    assert all(a > b for a, b in zip(nws, nws[1:])), nws
    assert all(a < b for a, b in zip(losses, losses[1:])), losses
    assert nws[-1] < 0.15


def test_same_seed_same_rewrite_other_seed_other_model(embedding):
    train, test = corpus(150, 0), corpus(20, 1)
    x = vectors(test, embedding, 0.5, seed=2)
    a = fit(train, embedding, 0.5, epochs=2, seed=0).rewrite(x)
    b = fit(train, embedding, 0.5, epochs=2, seed=0).rewrite(x)
    c = fit(train, embedding, 0.5, epochs=2, seed=1)
    assert a == b
    assert c.loss(x, test) != fit(train, embedding, 0.5, epochs=2, seed=0).loss(x, test)


def test_output_vocabulary_comes_from_the_training_corpus(embedding):
    """Words the training corpus never has are never written; OOV targets are <unk>."""
    train = [["w1", "w2", "w3", "zzz"]] * 30
    rw = REWRITERS.create("autoencoder", hidden_size=16, epochs=3, seed=0)
    rw.fit(vectors(train, embedding, 0.0, seed=0), train, embedding)
    assert rw.vocab_ == [UNK, "w1", "w2", "w3"]
    out = rw.rewrite(vectors(corpus(10, 5), embedding, 0.0, seed=0))
    assert {w for doc in out for w in doc} <= {UNK, "w1", "w2", "w3"}


def test_empty_documents_rewrite_to_empty(embedding):
    train = corpus(50, 0)
    rw = fit(train, embedding, 0.0, epochs=1)
    out = rw.rewrite([np.zeros((0, embedding.dim)), vectors([["w1", "w2"]], embedding, 0, 0)[0]])
    assert out[0] == [] and len(out[1]) == 2


TRAIN = {"train_embeddings": True, "allow_no_guarantee": True}


def test_train_embeddings_reproduces_the_public_codes_trained_table(embedding):
    """``train_embeddings`` (model.py: nn.Embedding from GloVe in Adam, noise added to its
    rows): the table grows against fixed noise, and the rewrite reads the private words --
    the same privatized vectors give different text for different original words."""
    train, test = corpus(400, 0), corpus(40, 1)
    noisy = vectors(train, embedding, 3.0, seed=1)
    rw = REWRITERS.create("autoencoder", hidden_size=48, epochs=12, batch_size=32, seed=0, **TRAIN)
    rw.fit(noisy, train, embedding)
    assert rw.reads_tokens and rw.void_reasons() and rw.params["train_embeddings"] is True
    table = rw.net_.words.weight.detach().cpu().numpy()[1:-1]
    assert np.linalg.norm(table, axis=1).mean() > 1.5  # from unit-norm public vectors
    frozen = fit(train, embedding, 3.0)  # the same pairs, seed and epochs; the table frozen
    assert not frozen.reads_tokens and frozen.void_reasons() == []
    assert "train_embeddings" not in frozen.params
    np.testing.assert_array_equal(frozen.net_.words.weight.detach().cpu().numpy(),
                                  frozen.word_table_)
    x = vectors(test, embedding, 3.0, seed=2)
    other = [[WORDS[(WORDS.index(w) + 1) % len(WORDS)] for w in doc] for doc in test]
    assert rw.rewrite(x, test) != rw.rewrite(x, other)
    with pytest.raises(ValueError, match="pass tokens"):
        rw.rewrite(x)
    # the grown table carries the words through noise that drowns them for the frozen one
    assert n_w(test, rw.rewrite(x, test)) > n_w(test, frozen.rewrite(x)) + 0.03


def test_train_embeddings_needs_its_acknowledgement(embedding):
    with pytest.raises(ValueError, match="add allow_no_guarantee: true"):
        REWRITERS.create("autoencoder", train_embeddings=True)
    with pytest.raises(ValueError, match="without a departure"):
        REWRITERS.create("autoencoder", allow_no_guarantee=True)
    with pytest.raises(ValueError, match="must be true or false"):
        REWRITERS.create("autoencoder", train_embeddings="yes", allow_no_guarantee=True)
    rw = REWRITERS.create("autoencoder", epochs=1, hidden_size=8, **TRAIN)
    with pytest.raises(ValueError, match="keeps the dimension"):
        rw.fit([np.zeros((2, 7))], [["w1", "w2"]], embedding)


@pytest.mark.parametrize("params, match", [
    ({"epochs": 0}, "epochs"), ({"hidden_size": 1.5}, "hidden_size"), ({"dropout": 1.0}, "dropout"),
    ({"lr": 0}, "lr"), ({"beta1": 1.0}, "beta1"), ({"max_vocab": True}, "max_vocab"),
    ({"corpus": ""}, "corpus"), ({"grad_clip": 0}, "grad_clip"),
])
def test_bad_parameters_are_refused(params, match):
    with pytest.raises(ValueError, match=match):
        REWRITERS.create("autoencoder", **params)


def test_bad_input_is_refused(embedding):
    rw = REWRITERS.create("autoencoder", epochs=1, hidden_size=8)
    with pytest.raises(RuntimeError, match="not fitted"):
        rw.rewrite([np.zeros((2, embedding.dim))])
    with pytest.raises(ValueError, match="at least one document"):
        rw.fit([], [], embedding)
    with pytest.raises(ValueError, match="2 vectors but 3 tokens"):
        rw.fit([np.zeros((2, 16))], [["a", "b", "c"]], embedding)
    with pytest.raises(ValueError, match="privatized vectors"):
        rw.fit([["w1"]], [["w1"]], embedding)
    rw.fit(vectors([["w1", "w2"]] * 4, embedding, 0, 0), [["w1", "w2"]] * 4, embedding)
    with pytest.raises(ValueError, match="16-d"):
        rw.rewrite([np.zeros((2, 7))])
    with pytest.raises(TypeError, match="rewriter 'autoencoder'"):
        REWRITERS.create("autoencoder", nope=1)
