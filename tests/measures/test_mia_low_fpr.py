"""TPR at low FPR: a perfect attack reaches TPR 1, a guessing one TPR ≈ α; the value matches
the ROC curve."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_curve

from bench.measures.mia_low_fpr import low_fpr_record, tpr_at_fpr


def test_separated_scores_reach_tpr_one():
    s = np.r_[np.linspace(2, 3, 200), np.linspace(0, 1, 2000)]
    m = np.r_[np.ones(200), np.zeros(2000)]
    assert tpr_at_fpr(s, m, 0.001) == 1.0


def test_random_scores_give_tpr_near_alpha():
    rng = np.random.default_rng(0)
    s, m = rng.random(40_000), np.r_[np.ones(20_000), np.zeros(20_000)]
    rec = low_fpr_record({"a": s}, m, seed=0)
    for alpha in (0.01, 0.001):
        entry = rec[f"tpr_at_fpr_{alpha:g}"]
        assert entry["tpr"] == pytest.approx(alpha, abs=alpha)  # within a factor 2
        assert entry["ci"][0] <= alpha <= entry["ci"][1] + alpha / 2
        assert entry["resolved"] and entry["chance"] == alpha


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_the_roc_curve(seed):
    rng = np.random.default_rng(seed)
    m = rng.random(3000) < 0.5
    s = rng.normal(size=3000) + 0.8 * m
    fpr, tpr, _ = roc_curve(m, s)
    for alpha in (0.01, 0.05):
        assert tpr_at_fpr(s, m, alpha) == pytest.approx(tpr[fpr <= alpha].max())


def test_the_strongest_attack_is_the_headline_and_small_samples_are_flagged():
    rng = np.random.default_rng(4)
    m = np.r_[np.ones(100), np.zeros(100)]
    weak, strong = rng.random(200), np.r_[np.full(100, 5.0), rng.random(100)]
    rec = low_fpr_record({"weak": weak, "strong": strong}, m, seed=0)
    assert rec["tpr_at_fpr_0.01"]["attack"] == "strong"
    assert rec["tpr_at_fpr_0.01"]["tpr"] == 1.0
    assert not rec["tpr_at_fpr_0.001"]["resolved"]  # 100 non-members: FPR steps of 1%
