"""RMIA: the score is the fraction of population records the likelihood ratio beats; a target
that memorised its members is found (planted signal), one that never saw them is not (noise)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.attacks.membership import auc_with_ci, model_builder
from bench.measures.rmia import OFFLINE_A, low_fpr_entries, rmia_attack, rmia_scores


def test_scores_match_the_pairwise_definition():
    rng = np.random.default_rng(0)
    p_x, p_z = rng.random(40), rng.random(70)
    p_ref_x, p_ref_z = rng.random((40, 2)), rng.random(70)
    a = OFFLINE_A
    pr_x = (1 + a) / 2 * p_ref_x.mean(axis=1) + (1 - a) / 2
    pr_z = (1 + a) / 2 * p_ref_z + (1 - a) / 2
    lr = (p_x / pr_x)[:, None] / (p_z / pr_z)[None, :]
    np.testing.assert_allclose(rmia_scores(p_x, p_ref_x, p_z, p_ref_z), (lr >= 1.0).mean(axis=1),
                               rtol=0, atol=1e-12)
    # γ = 2: fewer population records beaten
    assert (rmia_scores(p_x, p_ref_x, p_z, p_ref_z, gamma=2.0)
            <= rmia_scores(p_x, p_ref_x, p_z, p_ref_z)).all()
    with pytest.raises(ValueError, match="a must be in"):
        rmia_scores(p_x, p_ref_x, p_z, p_ref_z, a=1.5)


def test_calibration_discounts_records_every_model_gets_right():
    """Two records the target is equally sure of: the one the reference models also find easy
    scores lower than the one only the target gets right."""
    p_z, p_ref_z = np.linspace(0.05, 0.95, 200), np.linspace(0.05, 0.95, 200)
    s = rmia_scores(np.array([0.9, 0.9]), np.array([[0.9, 0.9], [0.2, 0.2]]), p_z, p_ref_z)
    assert s[1] > s[0]


def _corpus(rng, n, vocab=3000, length=12):
    words = [f"w{i}" for i in range(vocab)]
    docs = [[words[j] for j in rng.integers(0, vocab, length)] for _ in range(n)]
    return docs, rng.integers(0, 2, n)  # labels carry no signal: only memorising fits them


@pytest.mark.parametrize("planted", [True, False])
def test_finds_a_memorising_target_and_not_an_unrelated_one(planted):
    rng = np.random.default_rng(1)
    docs, y = _corpus(rng, 1600)
    idx = rng.permutation(1600)
    mem, non, pool, other = idx[:400], idx[400:800], idx[800:1400], idx[1400:]
    build, _ = model_builder("bow", {}, "memorise", [docs[i] for i in mem],
                             (y[mem], y[non], y[pool]))
    trained_on = mem if planted else other  # noise: the target never saw the "members"
    target = build(0).fit([docs[i] for i in trained_on], y[trained_on])
    scores, is_member, n_pop = rmia_attack(target, build, docs, docs, y, mem, non, pool,
                                           np.random.default_rng(2))
    assert n_pop == 600 and is_member.sum() == 400
    auc, (lo, hi) = auc_with_ci(scores, is_member, seed=0)
    low = low_fpr_entries(scores, is_member, seed=0)
    if planted:
        assert lo > 0.8, auc
        assert low["tpr_at_fpr_0.01"]["tpr"] > 0.04  # several times chance (0.01)
    else:
        assert lo < 0.5 < hi, (auc, lo, hi)
        assert low["tpr_at_fpr_0.01"]["tpr"] < 0.06
