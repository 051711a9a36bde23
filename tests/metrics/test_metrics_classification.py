"""Utility, empirical privacy, deltas and the chance-level check against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from bench.metrics import (
    METRICS,
    chance_level,
    classification_scores,
    deltas,
    empirical_privacy,
    is_chance_level,
    macro_f1,
)

Y = np.array([0, 0, 1, 1, 2])
P = np.array([0, 1, 1, 1, 0])
# class 0: TP 1, FP 1, FN 1 -> F1 0.5; class 1: TP 2, FP 1, FN 0 -> 0.8; class 2: 0
HAND_MACRO = (0.5 + 0.8 + 0.0) / 3


def test_multiclass_by_hand():
    s = classification_scores(Y, P)
    assert s["macro_f1"] == pytest.approx(HAND_MACRO)
    assert s["accuracy"] == pytest.approx(3 / 5)
    assert s["per_class_f1"] == pytest.approx([0.5, 0.8, 0.0])
    assert s["n"] == 5


def test_n_classes_counts_absent_classes():
    y, p = np.array([0, 1]), np.array([0, 1])
    assert macro_f1(y, p) == pytest.approx(1.0)
    assert macro_f1(y, p, n_classes=4) == pytest.approx(0.5)


def test_privacy_is_one_minus_adversary_f1():
    e = empirical_privacy(Y, P)
    assert e["privacy"] == pytest.approx(1 - HAND_MACRO)
    assert e["adversary_macro_f1"] == pytest.approx(HAND_MACRO)
    assert e["adversary_accuracy"] == pytest.approx(0.6)


def test_multilabel_by_hand():
    y = np.array([[1, 0], [1, 1], [0, 1], [0, 0]])
    p = np.array([[1, 0], [0, 1], [0, 0], [1, 0]])
    # label 0: TP 1, FP 1, FN 1 -> 0.5; label 1: TP 1, FP 0, FN 1 -> 2/3
    e = empirical_privacy(y, p)
    assert e["adversary_per_class_f1"] == pytest.approx([0.5, 2 / 3])
    assert e["privacy"] == pytest.approx(1 - (0.5 + 2 / 3) / 2)
    assert e["adversary_accuracy"] == pytest.approx(1 / 4)  # exact match: row 0 only
    assert e["adversary_label_accuracy"] == pytest.approx(5 / 8)  # 2 + 1 + 1 + 1 of 8


def test_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        macro_f1(Y, P[:3])


def test_deltas_and_tradeoff():
    d = deltas(utility_priv=0.8, utility_base=0.9, privacy_priv=0.3, privacy_base=0.1)
    assert d["delta_utility"] == pytest.approx(-0.1)
    assert d["delta_privacy"] == pytest.approx(0.2)
    assert d["tradeoff"] == pytest.approx(0.1)
    assert deltas(0.5, 0.9, 0.2, 0.1)["tradeoff"] == pytest.approx(-0.3)


def test_chance_level_balanced_binary():
    y = np.array([0, 1] * 100)
    c = chance_level(y, n_sim=2000, seed=0)
    # majority guesser: F1(class 0) = 2*100/(200+100), class 1 gets 0 -> 1/3
    assert c.majority == pytest.approx(1 / 3)
    assert c.stratified == pytest.approx(0.5, abs=0.01)
    assert c.uniform == pytest.approx(0.5, abs=0.01)
    assert 0.52 < c.threshold < 0.62  # the 95 % quantile of n=200 coin flips
    assert is_chance_level(0.5, c)
    assert not is_chance_level(0.9, c)


def test_chance_level_imbalanced_uses_majority():
    y_train = np.array([0] * 95 + [1] * 5)
    y = np.array([0] * 95 + [1] * 5)
    c = chance_level(y, y_train, seed=0)
    # majority: class 0 F1 = 2*95/(100+95), class 1 = 0
    assert c.majority == pytest.approx((2 * 95 / 195) / 2)
    # stratified with p = (0.95, 0.05): expected F1s ~ (0.95, 0.05) -> ~0.5
    assert c.stratified == pytest.approx(0.5, abs=0.03)
    assert c.best == max(c.majority, c.stratified, c.uniform)
    assert c.threshold >= c.majority


def test_chance_level_multiclass_uniform_by_formula():
    """Uniform guessing over k balanced classes: expected per-class F1 ~ 1/k."""
    y = np.repeat(np.arange(4), 250)
    c = chance_level(y, seed=1)
    assert c.uniform == pytest.approx(0.25, abs=0.01)
    assert c.majority == pytest.approx(2 * 250 / 1250 / 4)


def test_chance_level_multilabel():
    rng = np.random.default_rng(0)
    y = (rng.random((300, 3)) < np.array([0.5, 0.2, 0.05])).astype(int)
    c = chance_level(y, seed=0)
    perfect = macro_f1(y, y)
    assert not is_chance_level(perfect, c)
    # uniform (each label with prob. 1/2): F1_j = 2 q_j * 0.5 / (q_j + 0.5)
    q = y.mean(axis=0)
    assert c.uniform == pytest.approx(np.mean(2 * q * 0.5 / (q + 0.5)), abs=0.02)


def test_chance_level_seeded():
    y = np.array([0, 1, 2] * 20)
    assert chance_level(y, seed=3) == chance_level(y, seed=3)


def test_metric_directions():
    assert METRICS.get("macro_f1").higher_is_better
    assert METRICS.get("privacy").higher_is_better
    assert not METRICS.get("adversary_macro_f1").higher_is_better
    assert not METRICS.get("mia_auc").higher_is_better
    assert METRICS.get("bleu").upper == 100.0
    for name in METRICS:
        info = METRICS.get(name)
        assert info.name == name and info.description


def test_chance_level_counts_the_everything_present_guesser():
    """Rare multilabel labels: predicting every label present scores 2p/(1+p) per label,
    above the stratified/majority guessers; a signal-free classifier that drifts there must
    still count as chance."""
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    y = (rng.random((400, 4)) < np.array([0.3, 0.4, 0.5, 0.35])).astype(int)
    ch = chance_level(y, y, seed=0)
    everything = f1_score(y, np.ones_like(y), average="macro")
    assert ch.constant == pytest.approx(everything)
    assert ch.threshold >= everything > ch.stratified
    assert is_chance_level(everything, ch)


def test_chance_level_constant_guesser_multiclass():
    y = np.array([0] * 50 + [1] * 30 + [2] * 20)
    ch = chance_level(y, y, seed=0)
    assert ch.constant == pytest.approx(max(ch.majority, 2 * 0.5 / 1.5 / 3))
    assert ch.threshold >= ch.constant


@pytest.mark.parametrize("kind", ["multiclass", "multiclass_k", "multilabel"])
def test_bootstrap_macro_f1_matches_literal_resampling(kind):
    """The one-matrix-product bootstrap equals macro-F1 recomputed by scikit-learn on each
    resample (the same multinomial counts, documents repeated)."""
    from bench.metrics.classification import bootstrap_macro_f1, macro_f1

    rng = np.random.default_rng(3)
    n = 60
    if kind == "multilabel":
        y = (rng.random((n, 4)) < 0.3).astype(int)
        p = np.where(rng.random((n, 4)) < 0.8, y, 1 - y)
        k = None
    else:
        y = rng.integers(0, 4, n)
        p = np.where(rng.random(n) < 0.7, y, rng.integers(0, 4, n))
        k = 5 if kind == "multiclass_k" else None  # class 4 never occurs: counts as F1 = 0
    lo, hi = bootstrap_macro_f1(y, p, k, n_boot=200, seed=11)
    w = np.random.default_rng(11).multinomial(n, np.full(n, 1.0 / n), size=200)
    scores = []
    for b in range(200):
        idx = np.repeat(np.arange(n), w[b])
        scores.append(macro_f1(y[idx], p[idx], k))
    want = np.quantile(scores, [0.025, 0.975])
    assert (lo, hi) == pytest.approx(tuple(want), abs=1e-12)
    assert lo <= macro_f1(y, p, k) <= hi


def test_bootstrap_interval_shrinks_with_more_documents_and_is_seeded():
    from bench.metrics.classification import bootstrap_macro_f1

    rng = np.random.default_rng(0)
    widths = []
    for n in (50, 2000):
        y = rng.integers(0, 3, n)
        p = np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n))
        lo, hi = bootstrap_macro_f1(y, p, seed=1)
        assert bootstrap_macro_f1(y, p, seed=1) == (lo, hi)
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 3
    s = classification_scores(y, p, seed=1)
    assert s["macro_f1_ci95"] == list(bootstrap_macro_f1(y, p, seed=1))
    e = empirical_privacy(y, p, seed=1)
    lo, hi = s["macro_f1_ci95"]
    assert e["privacy_ci95"] == pytest.approx([1 - hi, 1 - lo])
