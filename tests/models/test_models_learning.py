"""The models learn: a real two-topic BBC task, vector input, multilabel, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score

from bench.models import MODELS


def _f1(y, p):
    return f1_score(y, p, average="macro")


def test_bow_learns_bbc(bbc_two_topics):
    Xtr, ytr, Xte, yte = bbc_two_topics
    assert _f1(yte, MODELS.create("bow").fit(Xtr, ytr).predict(Xte)) > 0.9


def test_bow_learns_vectors(vectors3):
    Xtr, ytr, Xte, yte = vectors3
    assert _f1(yte, MODELS.create("bow").fit(Xtr, ytr).predict(Xte)) > 0.9


def test_bow_mean_skips_oov():
    from bench.models.base import public_embedding
    from bench.models.bow import mean_vectors

    emb = public_embedding()
    feats = mean_vectors([["the", "qqzzxxnotaword"], [], ["the"]], "text", emb)
    np.testing.assert_allclose(feats[0], emb.vectors[emb.word_to_id["the"]])
    np.testing.assert_allclose(feats[1], 0.0)
    np.testing.assert_allclose(feats[0], feats[2])


def test_lstm_learns_bbc(bbc_two_topics):
    Xtr, ytr, Xte, yte = bbc_two_topics
    model = MODELS.create("lstm", epochs=8, lr=3e-3, max_len=100, pooling="mean", seed=0)
    assert _f1(yte, model.fit(Xtr, ytr).predict(Xte)) > 0.8


def test_lstm_learns_vectors(vectors3):
    Xtr, ytr, Xte, yte = vectors3
    model = MODELS.create("lstm", epochs=10, lr=1e-2, hidden_size=16, seed=0)
    assert _f1(yte, model.fit(Xtr, ytr).predict(Xte)) > 0.8


def test_lstm_is_deterministic_and_seeded(vectors3):
    Xtr, ytr, Xte, _ = vectors3
    p1 = MODELS.create("lstm", epochs=1, seed=3).fit(Xtr, ytr).predict_proba(Xte)
    p2 = MODELS.create("lstm", epochs=1, seed=3).fit(Xtr, ytr).predict_proba(Xte)
    p3 = MODELS.create("lstm", epochs=1, seed=4).fit(Xtr, ytr).predict_proba(Xte)
    np.testing.assert_array_equal(p1, p2)
    assert not np.allclose(p1, p3)


def test_lstm_truncates_to_max_len():
    """Tokens after max_len cannot change the prediction."""
    X = [["good"] * 5, ["bad"] * 5] * 8
    y = np.array([1, 0] * 8)
    m = MODELS.create("lstm", epochs=2, max_len=5, hidden_size=8, seed=0).fit(X, y)
    a = m.predict_proba([["good"] * 5, ["bad"] * 5])
    b = m.predict_proba([["good"] * 5 + ["bad"] * 9, ["bad"] * 5 + ["good"] * 3])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_lstm_last_state_ignores_padding(make_vectors):
    """A document's output does not depend on the other documents in its batch."""
    X, y = make_vectors(40, d=6, k=2)
    m = MODELS.create("lstm", epochs=1, hidden_size=8, seed=0).fit(X, y)
    alone = np.vstack([m.predict_proba([x]) for x in X[:6]])
    np.testing.assert_allclose(m.predict_proba(X[:6]), alone, atol=1e-5)


@pytest.mark.parametrize("name", ["bow", "lstm"])
def test_multilabel(name, vectors3):
    Xtr, ytr, Xte, yte = vectors3
    Ytr = np.stack([ytr == 0, ytr == 1, np.zeros_like(ytr)], axis=1).astype(np.int64)
    Yte = np.stack([yte == 0, yte == 1, np.zeros_like(yte)], axis=1).astype(np.int64)
    params = {"epochs": 10, "lr": 1e-2, "hidden_size": 16} if name == "lstm" else {}
    m = MODELS.create(name, seed=0, **params).fit(Xtr, Ytr)
    proba = m.predict_proba(Xte)
    pred = m.predict(Xte)
    assert proba.shape == pred.shape == Yte.shape
    np.testing.assert_array_equal(pred, (proba >= 0.5).astype(int))
    assert f1_score(Yte[:, :2], pred[:, :2], average="macro") > 0.8
    assert pred[:, 2].sum() == 0  # a label that never occurs is never predicted


def test_transformer_fine_tunes_and_predicts():
    sport = ["the team won the match", "a late goal won the cup final",
             "the striker scored twice", "the coach praised his players"]
    money = ["shares fell on the stock market", "the bank raised interest rates",
             "profits rose in the third quarter", "investors sold the company shares"]
    X = [s.split() for s in (sport + money) * 8]
    y = np.array(([0] * 4 + [1] * 4) * 8)
    params = {"epochs": 1, "batch_size": 16, "max_length": 32, "lr": 1e-4, "seed": 0}
    m = MODELS.create("transformer", **params).fit(X, y)
    proba = m.predict_proba(X[:8])
    assert proba.shape == (8, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    assert m.predict(X[:8]).shape == (8,)
    # the embeddings stay frozen (Riecker 2023, Sec. 4.3), the encoder was updated
    emb = m.net_.base_model.embeddings.word_embeddings.weight
    assert not emb.requires_grad
    p2 = MODELS.create("transformer", **params).fit(X, y).predict_proba(X[:8])
    np.testing.assert_allclose(proba, p2, atol=1e-6)


def test_lstm_select_on_dev_keeps_best_epoch(vectors3):
    """With dev selection the kept model is at least as good on dev as the last epoch's."""
    Xtr, ytr, Xte, yte = vectors3
    params = {"epochs": 4, "lr": 0.05, "hidden_size": 8, "seed": 1}
    last = MODELS.create("lstm", **params).fit(Xtr, ytr)
    best = MODELS.create("lstm", select_on_dev=True, **params).fit(Xtr, ytr, Xte, yte)
    assert _f1(yte, best.predict(Xte)) >= _f1(yte, last.predict(Xte))


def test_lstm_refuses_other_input_kind_after_fit(vectors3):
    Xtr, ytr, _, _ = vectors3
    m = MODELS.create("lstm", epochs=1, hidden_size=4).fit(Xtr[:20], ytr[:20])
    with pytest.raises(ValueError, match="fitted on vectors"):
        m.predict([["a", "b"]])


@pytest.mark.parametrize("kind", ["text", "vectors"])
def test_lstm_runs_on_the_device_numeric_names(monkeypatch, vectors3, kind):
    """The LSTM trains and predicts on :func:`bench.numeric.torch_device`'s device (``cuda``
    under ``BENCH_NUMERIC=native`` where torch sees a GPU; ``cpu`` when pinned). Here the
    device string is ``cpu:0``, so every tensor and module move of the GPU path is taken, and
    the model is bit for bit the default CPU one (multilabel included: its pos_weight moves
    too)."""
    import bench.models.lstm as lstm_mod

    if kind == "text":
        Xtr = [["good", "film"] * 3, ["bad", "plot"] * 4] * 10
        ytr = np.array([[1, 0], [0, 1]] * 10)
        Xte = Xtr[:4]
    else:
        Xtr, ytr, Xte, _ = vectors3
    params = {"epochs": 2, "seed": 3, "hidden_size": 8}
    ref = MODELS.create("lstm", **params).fit(Xtr, ytr, Xtr, ytr).predict_proba(Xte)
    monkeypatch.setattr(lstm_mod, "torch_device", lambda: "cpu:0")
    m = MODELS.create("lstm", **params).fit(Xtr, ytr, Xtr, ytr)
    assert m.device_ == "cpu:0"
    assert {str(p.device) for p in m.net_.parameters()} == {"cpu"}
    np.testing.assert_array_equal(m.predict_proba(Xte), ref)


def test_lstm_restarts_keep_the_best_run_on_dev(vectors3):
    Xtr, ytr, Xte, yte = vectors3
    Xdev, ydev = Xte[: len(Xte) // 2], yte[: len(yte) // 2]
    params = {"epochs": 2, "lr": 1e-2, "hidden_size": 8, "seed": 5}
    one = MODELS.create("lstm", **params).fit(Xtr, ytr, Xdev, ydev)
    three = MODELS.create("lstm", restarts=3, **params).fit(Xtr, ytr, Xdev, ydev)
    # run 0 is the single run itself (seed 5), bit for bit
    assert three.restart_dev_macro_f1_[0] == one.dev_macro_f1_
    assert len(three.restart_dev_macro_f1_) == 3
    assert len({three.restart_seed(r) for r in range(3)}) == 3
    assert three.dev_macro_f1_ == max(three.restart_dev_macro_f1_)
    kept = three.restart_dev_macro_f1_.index(max(three.restart_dev_macro_f1_))  # first best
    assert three.restart_ == kept
    again = MODELS.create("lstm", restarts=1, **{**params, "seed": three.restart_seed(kept)})
    np.testing.assert_array_equal(
        again.fit(Xtr, ytr, Xdev, ydev).predict_proba(Xte), three.predict_proba(Xte))
    # without dev data there is nothing to choose on: one run
    nodev = MODELS.create("lstm", restarts=3, **params).fit(Xtr, ytr)
    assert nodev.restart_dev_macro_f1_ == [None] and nodev.restart_ == 0
    with pytest.raises(ValueError, match="restarts"):
        MODELS.create("lstm", restarts=0)
