"""Attribute adversary and TEM's membership-inference protocol on controlled synthetic data."""

from __future__ import annotations

import numpy as np
import pytest

from bench.attacks import attack_features, attribute_adversary, membership_inference
from bench.models import MODELS


def _docs(n: int, d: int, seed: int, signal: float = 0.0, k: int = 2):
    """n one-to-three-row vector documents; labels shift the mean by ``signal``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    direction = np.random.default_rng(7).normal(size=(k, d))
    X = [rng.normal(size=(rng.integers(1, 4), d)) + signal * direction[c] for c in y]
    return X, y


def test_adversary_recovers_an_exposed_attribute():
    Xtr, ytr = _docs(300, 8, 0, signal=2.0)
    Xte, yte = _docs(200, 8, 1, signal=2.0)
    res = attribute_adversary("bow", Xtr, ytr, Xte, yte, seed=0)
    assert res.metrics["adversary_macro_f1"] > 0.9
    assert res.privacy == pytest.approx(1 - res.metrics["adversary_macro_f1"])
    assert not res.chance_level
    assert res.predictions.shape == (200,)


def test_adversary_on_a_hidden_attribute_is_at_chance():
    Xtr, ytr = _docs(300, 8, 0, signal=0.0)
    Xte, yte = _docs(400, 8, 1, signal=0.0)
    res = attribute_adversary("bow", Xtr, ytr, Xte, yte, seed=0)
    assert res.chance_level
    assert res.privacy > 0.4


def test_adversary_multilabel_and_instance():
    Xtr, ytr = _docs(300, 8, 0, signal=2.0, k=3)
    Xte, yte = _docs(150, 8, 1, signal=2.0, k=3)
    Ytr, Yte = np.eye(3, dtype=int)[ytr], np.eye(3, dtype=int)[yte]
    res = attribute_adversary(MODELS.create("bow"), Xtr, Ytr, Xte, Yte)
    assert len(res.metrics["adversary_per_class_f1"]) == 3
    assert res.metrics["privacy"] < 0.2


def test_attack_features():
    p = np.array([[0.2, 0.8], [0.6, 0.4]])
    np.testing.assert_array_equal(attack_features(p, np.array([1, 0])), p)
    np.testing.assert_array_equal(attack_features(p, None, "sorted"), [[0.8, 0.2], [0.6, 0.4]])
    np.testing.assert_array_equal(attack_features(p, np.array([1, 0]), "output+label"),
                                  [[0.2, 0.8, 0, 1], [0.6, 0.4, 1, 0]])
    with pytest.raises(ValueError):
        attack_features(p, None, "logits")


def _mia_data(n: int, d: int, seed: int):
    """Random labels: the only way to be confident on a document is to have memorised it."""
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(1, d)) for _ in range(n)], rng.integers(0, 2, n)


# 60 documents with random labels in 64 dimensions are linearly separable: the LR memorises
# them (member accuracy 1.0, non-members ~0.5). The attack with the true label as a feature can
# then at best flag "correct and confident" as member: AUC ~0.85 is near its ceiling here.
OVERFIT = {"C": 1.0}


def test_mia_detects_an_overfit_target():
    Xm, ym = _mia_data(60, 64, 0)
    Xn, yn = _mia_data(60, 64, 1)
    Xs, ys = _mia_data(120, 64, 2)
    res = membership_inference("bow", Xm, ym, Xn, yn, Xs, ys, model_params=OVERFIT,
                               features="output+label", seed=0)
    assert res.metrics["target_member_accuracy"] == 1.0  # memorised
    assert res.auc > 0.75
    assert res.accuracy > 0.65
    assert res.metrics["mia_advantage"] > 0.3
    assert res.scores.shape == (120,) and res.is_member.sum() == 60


def test_mia_is_at_chance_when_members_are_not_members():
    """The target never saw the 'members': the attack cannot separate them (AUC ~ 0.5)."""
    Xm, ym = _mia_data(200, 64, 0)
    Xn, yn = _mia_data(200, 64, 1)
    Xs, ys = _mia_data(120, 64, 2)
    Xo, yo = _mia_data(60, 64, 3)
    target = MODELS.create("bow", **OVERFIT).fit(Xo, yo)
    res = membership_inference("bow", Xm, ym, Xn, yn, Xs, ys, model_params=OVERFIT,
                               features="output+label", target=target, seed=0)
    assert res.metrics["shadow_auc"] > 0.8  # the attack itself did learn something
    assert abs(res.auc - 0.5) < 0.08


def test_mia_is_seeded():
    Xm, ym = _mia_data(40, 16, 0)
    Xn, yn = _mia_data(40, 16, 1)
    Xs, ys = _mia_data(80, 16, 2)
    a = membership_inference("bow", Xm, ym, Xn, yn, Xs, ys, seed=5, n_shadow=2)
    b = membership_inference("bow", Xm, ym, Xn, yn, Xs, ys, seed=5, n_shadow=2)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.metrics["n_shadow_examples"] == 160


def test_mia_rejects_bad_arguments():
    X, y = _mia_data(10, 4, 0)
    with pytest.raises(ValueError, match="features"):
        membership_inference("bow", X, y, X, y, X, y, features="nope")
    with pytest.raises(ValueError, match="labels"):
        membership_inference("bow", X, y[:5], X, y, X, y)
    with pytest.raises(ValueError, match="unfitted"):
        membership_inference(MODELS.create("bow").fit(X, y), X, y, X, y, X, y)
