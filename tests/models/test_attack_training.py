"""Training "properly for an attack": class weights, early stopping on dev, tuned thresholds."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score
from sklearn.utils.class_weight import compute_class_weight

from bench.models import MODELS, LabelInfo
from bench.models.base import (
    IMBALANCE_RATIO,
    MAX_POS_WEIGHT,
    EarlyStopping,
    class_weights,
    tune_thresholds,
)


def _separable(n: int, seed: int, d: int = 8):
    """Two far-apart classes: dev macro-F1 reaches 1.0 after one epoch and then plateaus."""
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(5).normal(size=(2, d)) * 4
    y = rng.integers(0, 2, n)
    return [centers[c] + rng.normal(size=(rng.integers(3, 8), d)) for c in y], y


def _rare_multilabel(n: int, seed: int, rare_shift: float = 1.0, d: int = 8):
    """Label 0 common (~50 %), label 1 rare (~6 %), label 2 never occurs.

    Each label present shifts one coordinate of every token vector (label 0 by 1.0, label 1 by
    ``rare_shift``), the rest is standard normal noise.
    """
    rng = np.random.default_rng(seed)
    Y = np.stack([rng.random(n) < 0.5, rng.random(n) < 0.06, np.zeros(n, bool)], 1)
    X = []
    for row in Y:
        x = rng.normal(size=(rng.integers(4, 10), d))
        x[:, 0] += 1.0 * row[0]
        x[:, 1] += rare_shift * row[1]
        X.append(x)
    return X, Y.astype(np.int64)


# -- class weights -----------------------------------------------------------------------------

def test_class_weights_multilabel_pos_weight():
    Y = np.zeros((1000, 5), np.int64)
    Y[:250, 0] = 1          # 750 / 250 = 3
    Y[:1, 1] = 1            # 999 / 1 clipped to 50
    Y[:, 3] = 1             # no negatives: nothing to balance
    Y[:450, 4] = 1          # 550 / 450: near-balanced
    info = LabelInfo.from_labels(Y)
    np.testing.assert_allclose(class_weights(Y, info, "balanced"),
                               [3.0, MAX_POS_WEIGHT, 1.0, 1.0, 550 / 450])  # 2: no positives
    # auto: only labels imbalanced by more than IMBALANCE_RATIO (2:1) are weighted
    np.testing.assert_allclose(class_weights(Y, info, "auto"), [3.0, MAX_POS_WEIGHT, 1, 1, 1])
    assert class_weights(Y, info, None) is None


def test_class_weights_balanced_matches_sklearn():
    y = np.array([0] * 60 + [1] * 30 + [3] * 10)
    info = LabelInfo.from_labels(y, n_classes=5)
    w = class_weights(y, info, "balanced")
    ref = compute_class_weight("balanced", classes=np.array([0, 1, 3]), y=y)
    np.testing.assert_allclose(w[[0, 1, 3]], ref)
    np.testing.assert_allclose(w[[0, 1, 3]], 100 / (3 * np.array([60, 30, 10])))
    assert w[2] == w[4] == 1.0  # absent classes are never a target
    np.testing.assert_allclose(class_weights(y, info, "auto"), w)  # 60:10 is imbalanced


def test_class_weights_auto_leaves_near_balanced_tasks_unweighted():
    assert IMBALANCE_RATIO == 2.0
    y = np.array([0] * 40 + [1] * 30 + [2] * 21)  # 40 / 21 < 2
    assert class_weights(y, LabelInfo.from_labels(y), "auto") is None
    y = np.array([0] * 43 + [1] * 21)  # 43 / 21 > 2
    np.testing.assert_allclose(class_weights(y, LabelInfo.from_labels(y), "auto"),
                               [64 / 86, 64 / 42])
    with pytest.raises(ValueError, match="class_weight"):
        class_weights(y, LabelInfo.from_labels(y), "sometimes")


@pytest.mark.parametrize("name", ["bow", "lstm"])
def test_class_weighted_loss_predicts_a_rare_label(name):
    """Unweighted, a weak rare label is (almost) never predicted at 0.5; balanced, it is."""
    X, Y = _rare_multilabel(600, 0, rare_shift=0.6)
    params = {"epochs": 6, "lr": 1e-2, "hidden_size": 8, "pooling": "mean"} if name == "lstm" \
        else {}
    plain = MODELS.create(name, class_weight=None, **params).fit(X, Y)
    weighted = MODELS.create(name, **params).fit(X, Y)
    assert plain.predict(X)[:, 1].sum() < 0.25 * Y[:, 1].sum()
    assert weighted.predict(X)[:, 1].sum() >= Y[:, 1].sum()


@pytest.mark.parametrize("name", ["bow", "lstm"])
def test_bad_class_weight_raises(name):
    with pytest.raises(ValueError, match="class_weight must be 'auto', 'balanced' or None"):
        MODELS.create(name, class_weight="weighted")


# -- thresholds ---------------------------------------------------------------------------------

def test_tune_thresholds_picks_best_f1_and_defaults_to_half():
    y = np.array([[1, 0, 0], [0, 0, 1], [1, 0, 1], [0, 0, 0]])
    p = np.array([[.3, .1, .9], [.1, .2, .8], [.25, .6, .7], [.05, .1, .1]])
    t = tune_thresholds(y, p)
    # label 0: F1 = 1 for t in (0.1, 0.25] -> 0.25 (nearest 0.5); label 1: no positive -> 0.5;
    # label 2: best F1 0.8 for every t <= 0.7 -> 0.5
    np.testing.assert_allclose(t, [0.25, 0.5, 0.5])


def test_tuned_thresholds_beat_half_on_held_out_data():
    """A rare label whose probabilities are informative but all below 0.5."""
    rng = np.random.default_rng(0)
    y = np.stack([rng.random(4000) < 0.5, rng.random(4000) < 0.05], 1).astype(int)
    proba = np.clip(np.where(y == 1, 0.7, 0.3) * [1, 0.5] + rng.normal(0, 0.08, y.shape), 0, 1)
    t = tune_thresholds(y[:2000], proba[:2000])
    assert t[1] < 0.5 and abs(t[0] - 0.5) <= 0.1
    info = LabelInfo.from_labels(y)
    tuned = f1_score(y[2000:], info.decide(proba[2000:], t), average="macro", zero_division=0)
    half = f1_score(y[2000:], info.decide(proba[2000:]), average="macro", zero_division=0)
    assert tuned > half + 0.2


def test_lstm_dev_thresholds_beat_half_on_a_rare_label():
    """Unweighted training leaves the rare label's probabilities low; dev thresholds fix it."""
    X, Y = _rare_multilabel(1800, 1)
    tr, dev, te = slice(0, 600), slice(600, 1200), slice(1200, None)
    m = MODELS.create("lstm", class_weight=None, epochs=10, lr=1e-2, hidden_size=8,
                   pooling="mean", seed=0).fit(X[tr], Y[tr], X[dev], Y[dev])
    assert m.thresholds_ is not None and m.thresholds_.shape == (3,)
    assert m.thresholds_[1] < 0.5       # the rare label needs a lower threshold
    assert m.thresholds_[2] == 0.5      # no dev positive: no evidence, 0.5
    proba = m.predict_proba(X[te])
    tuned = m.predict(X[te])
    np.testing.assert_array_equal(tuned, (proba >= m.thresholds_).astype(int))
    at_half = (proba >= 0.5).astype(int)
    f1_tuned = f1_score(Y[te, 1], tuned[:, 1], zero_division=0)
    f1_half = f1_score(Y[te, 1], at_half[:, 1], zero_division=0)
    assert f1_tuned > f1_half + 0.1
    assert f1_score(Y[te], tuned, average="macro", zero_division=0) > f1_score(
        Y[te], at_half, average="macro", zero_division=0)


def test_bow_uses_dev_thresholds():
    X, Y = _rare_multilabel(600, 3, rare_shift=0.6)
    m = MODELS.create("bow", class_weight=None).fit(X[:300], Y[:300], X[300:], Y[300:])
    assert m.thresholds_.shape == (3,) and m.thresholds_[2] == 0.5
    assert m.dev_macro_f1_ >= f1_score(Y[300:], (m.predict_proba(X[300:]) >= 0.5).astype(int),
                                       average="macro", zero_division=0)
    np.testing.assert_array_equal(m.predict(X[:5]),
                                  (m.predict_proba(X[:5]) >= m.thresholds_).astype(int))


@pytest.mark.parametrize("name", ["bow", "lstm"])
def test_no_dev_or_no_tuning_means_half(name):
    X, Y = _rare_multilabel(200, 2)
    params = {"epochs": 1, "hidden_size": 4} if name == "lstm" else {}
    assert MODELS.create(name, **params).fit(X, Y).thresholds_ is None
    m = MODELS.create(name, tune_thresholds=False, **params).fit(X, Y, X[:50], Y[:50])
    assert m.thresholds_ is None
    np.testing.assert_array_equal(m.predict(X), (m.predict_proba(X) >= 0.5).astype(int))


# -- early stopping ---------------------------------------------------------------------------

def test_early_stopping_counts_patience():
    stop = EarlyStopping(patience=2)
    assert [stop.update(s, None) for s in (0.5, 0.7, 0.7, 0.6)] == [False, False, False, True]
    assert stop.best_epoch == 2 and stop.best_score == 0.7
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(patience=0)


def test_lstm_early_stopping_stops_and_restores_best_epoch():
    X, y = _separable(200, 0)
    Xd, yd = _separable(60, 1)
    params = {"lr": 0.05, "hidden_size": 8, "seed": 0}
    m = MODELS.create("lstm", epochs=20, patience=2, **params).fit(X, y, Xd, yd)
    assert m.dev_macro_f1_ == 1.0
    # dev F1 cannot improve on 1.0: stopped `patience` epochs after the best one
    assert m.epochs_run_ == m.best_epoch_ + 2 < 20
    # the kept weights are the best epoch's (the same seed trained that many epochs, no dev)
    ref = MODELS.create("lstm", epochs=m.best_epoch_, **params).fit(X, y)
    np.testing.assert_allclose(m.predict_proba(Xd), ref.predict_proba(Xd), atol=1e-6)
    last = MODELS.create("lstm", epochs=m.epochs_run_, **params).fit(X, y)
    assert not np.allclose(m.predict_proba(Xd), last.predict_proba(Xd), atol=1e-4)


def test_lstm_without_dev_or_early_stopping_trains_all_epochs():
    X, y = _separable(100, 0)
    assert MODELS.create("lstm", epochs=4, hidden_size=4).fit(X, y).epochs_run_ == 4
    m = MODELS.create("lstm", epochs=4, hidden_size=4, early_stopping=False).fit(X, y, X[:30],
                                                                              y[:30])
    assert m.epochs_run_ == 4


def test_transformer_early_stops_and_tunes_thresholds():
    """Tiny synthetic multilabel case (the transformer is slow on CPU)."""
    words = [("the team won the match", [1, 0]), ("shares fell on the market", [0, 1]),
             ("the striker scored a goal", [1, 0]), ("the bank raised rates", [0, 1]),
             ("a quiet day with nothing", [0, 0])]
    X = [s.split() for s, _ in words] * 6
    Y = np.array([lab for _, lab in words] * 6)
    m = MODELS.create("transformer", epochs=2, patience=1, batch_size=16, max_length=16,
                   lr=1e-4, seed=0).fit(X, Y, X[:10], Y[:10])
    assert 1 <= m.best_epoch_ <= m.epochs_run_ <= 2
    assert m.thresholds_.shape == (2,)
    np.testing.assert_array_equal(m.predict(X[:5]),
                                  (m.predict_proba(X[:5]) >= m.thresholds_).astype(int))
    assert MODELS.create("transformer").version == "2"
