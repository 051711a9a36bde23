"""Loss-threshold attack, bootstrap AUC intervals, memorising targets and the MIA validity rule."""

import time

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from bench.attacks import (
    MEMORISING_PARAMS,
    auc_with_ci,
    example_loss,
    loss_threshold_attack,
    membership_inference,
    mia_validity,
)
from bench.attacks.membership import resolve_target_params
from bench.models import MODELS


def _data(n: int, d: int, seed: int):
    """Random labels: the only way to be confident on a document is to have memorised it."""
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(1, d)) for _ in range(n)], rng.integers(0, 2, n)


def _loss_attack(target, Xm, ym, Xn, yn, seed=0):
    return loss_threshold_attack(target.predict_proba(Xm), ym, target.predict_proba(Xn), yn,
                                 seed=seed)


def test_example_loss_is_cross_entropy():
    p = np.array([[0.9, 0.1], [0.2, 0.8], [1.0, 0.0]])
    np.testing.assert_allclose(example_loss(p, np.array([0, 0, 1])),
                               [-np.log(0.9), -np.log(0.2), -np.log(1e-12)])
    y = np.array([[1, 0], [0, 0], [1, 1]])  # multilabel: mean binary cross-entropy
    np.testing.assert_allclose(example_loss(p, y), [-np.log(0.9), -(np.log(0.8) + np.log(0.2)) / 2,
                                                    -(0 + np.log(1e-12)) / 2])
    with pytest.raises(ValueError, match="labels"):
        example_loss(p, np.array([0, 2, 1]))
    with pytest.raises(ValueError, match="shape"):
        example_loss(p, np.ones((3, 3)))


def test_loss_threshold_detects_a_memorising_target():
    """60 random-label points in 64-d are separable: a weakly regularised LR memorises them.

    Its large weights make it confident on non-members too, right on about half of them (random
    labels), so even a perfect loss ranking of members tops out near AUC 0.75-0.8 here.
    """
    Xm, ym = _data(60, 64, 0)
    Xn, yn = _data(60, 64, 1)
    target = MODELS.create("bow", C=100.0).fit(Xm, ym)
    assert (target.predict(Xm) == ym).all()
    m, scores = _loss_attack(target, Xm, ym, Xn, yn)
    assert m["auc"] > 0.7 and m["auc_ci"][0] > 0.6
    assert m["member_loss"] < 0.05 < 1.0 < m["nonmember_loss"]
    assert m["advantage"] > 0.2
    assert scores.shape == (120,)
    assert m["auc"] == pytest.approx(roc_auc_score(np.r_[np.ones(60), np.zeros(60)], scores))


def test_loss_threshold_is_at_chance_when_neither_set_was_seen():
    """The target saw neither 'members' nor non-members: AUC ~ 0.5 and the CI covers 0.5."""
    Xm, ym = _data(200, 64, 0)
    Xn, yn = _data(200, 64, 1)
    Xo, yo = _data(60, 64, 3)
    target = MODELS.create("bow", C=100.0).fit(Xo, yo)
    m, _ = _loss_attack(target, Xm, ym, Xn, yn)
    assert abs(m["auc"] - 0.5) < 0.07
    assert m["auc_ci"][0] < 0.5 < m["auc_ci"][1]


def test_auc_with_ci_is_seeded_contains_the_estimate_and_is_fast():
    rng = np.random.default_rng(0)
    n = 3000
    scores = np.r_[rng.normal(0.2, 1, n), rng.normal(0, 1, n)]
    member = np.r_[np.ones(n, int), np.zeros(n, int)]
    t0 = time.perf_counter()
    auc, (lo, hi) = auc_with_ci(scores, member, n_boot=1000, seed=1)
    assert time.perf_counter() - t0 < 5.0  # vectorised (about 0.5 s)
    assert auc == pytest.approx(roc_auc_score(member, scores))
    assert lo < auc < hi and hi - lo < 0.05
    assert auc_with_ci(scores, member, n_boot=1000, seed=1) == (auc, (lo, hi))
    assert auc_with_ci(scores, member, n_boot=1000, seed=2)[1] != (lo, hi)
    # the vectorised resample AUCs equal sklearn's on the same resamples (ties included): one
    # chunk draws all member indices, then all non-member indices, from default_rng(seed)
    coarse, n_small, n_boot = np.round(scores[n - 300:n + 300], 1), 300, 60
    small = np.r_[np.ones(n_small, int), np.zeros(n_small, int)]
    draw = np.random.default_rng(3)
    i = draw.integers(0, n_small, (n_boot, n_small))
    j = draw.integers(0, n_small, (n_boot, n_small))
    boot = [roc_auc_score(small, np.r_[coarse[:n_small][i[b]], coarse[n_small:][j[b]]])
            for b in range(n_boot)]
    _, ci = auc_with_ci(coarse, small, n_boot=n_boot, seed=3)
    np.testing.assert_allclose(ci, np.quantile(boot, [0.025, 0.975]), rtol=0, atol=1e-12)


def test_auc_with_ci_rejects_bad_input():
    with pytest.raises(ValueError, match="both"):
        auc_with_ci(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        auc_with_ci(np.array([0.0, np.nan]), np.array([1, 0]))
    auc, ci = auc_with_ci(np.array([1.0, 0.0]), np.array([1, 0]), n_boot=0)
    assert auc == 1.0 and np.isnan(ci[0])


def test_membership_inference_reports_both_attacks_and_the_strongest():
    Xm, ym = _data(60, 64, 0)
    Xn, yn = _data(60, 64, 1)
    Xs, ys = _data(120, 64, 2)
    res = membership_inference("bow", Xm, ym, Xn, yn, Xs, ys, target_params={"C": 100.0},
                               n_boot=200, seed=0)
    m = res.metrics
    assert set(m["mia_attacks"]) == {"shadow", "loss_threshold"}
    best = max(m["mia_attacks"], key=lambda a: m["mia_attacks"][a]["auc"])
    assert m["mia_attack"] == best and m["mia_auc"] == m["mia_attacks"][best]["auc"]
    assert m["mia_auc_ci"] == m["mia_attacks"][best]["auc_ci"]
    assert m["mia_auc_ci"][0] <= m["mia_auc"] <= m["mia_auc_ci"][1]
    assert m["mia_shadow_auc"] == m["mia_attacks"]["shadow"]["auc"]
    assert m["mia_accuracy"] == m["mia_attacks"]["shadow"]["accuracy"]  # old keys: shadow
    assert m["target_params"] == {"C": 100.0} and m["n_boot"] == 200
    assert m["mia_attacks"]["loss_threshold"]["auc"] > 0.7
    np.testing.assert_array_equal(res.attack_scores["shadow"], res.scores)
    assert res.attack_scores["loss_threshold"].shape == (120,)
    assert mia_validity(m) == (True, None)


def test_memorising_bow_overfits_text_members():
    """On text, the memorising bow (word features, weak L2) fits its members, the default not."""
    words = ["good", "bad", "film", "movie", "plot", "actor", "great", "dull", "story", "scene",
             "music", "funny", "boring", "long", "short", "fine", "awful", "nice", "cast", "end"]
    rare = [f"w{i}" for i in range(400)]  # OOV ids: a document's fingerprint

    def docs(n, seed):
        r = np.random.default_rng(seed)
        X = [list(r.choice(words, 6)) + list(r.choice(rare, 2)) for _ in range(n)]
        return X, r.integers(0, 2, n)

    Xm, ym = docs(80, 1)
    Xn, yn = docs(80, 2)
    Xs, ys = docs(160, 3)
    assert resolve_target_params("bow", "memorise") == MEMORISING_PARAMS["bow"]
    mem = membership_inference("bow", Xm, ym, Xn, yn, Xs, ys, target_params="memorise",
                               n_boot=200, seed=0).metrics
    base = membership_inference("bow", Xm, ym, Xn, yn, Xs, ys, n_boot=200, seed=0).metrics
    assert mem["target_member_accuracy"] == 1.0
    assert mem["mia_auc_ci"][0] > 0.5 and mia_validity(mem)[0]
    assert mem["mia_auc"] > base["mia_auc"] + 0.1
    assert base["target_params"] == {} and mem["target_params"]["word_features"] is True


def test_target_params_are_validated():
    assert resolve_target_params("bow", None) == {}
    assert "word_features" not in resolve_target_params("bow", "memorise", kind="vectors")
    with pytest.raises(ValueError, match="memorise"):
        resolve_target_params("bow", "overfit")
    with pytest.raises(ValueError, match="no memorising"):
        resolve_target_params("nope", "memorise")
    X, y = _data(10, 4, 0)
    with pytest.raises(ValueError, match="registry name"):
        membership_inference(MODELS.create("bow"), X, y, X, y, X, y, target_params={"C": 2.0})


def test_mia_validity_fires_on_a_chance_level_baseline():
    invalid = {"mia_auc": 0.491, "mia_auc_ci": [0.44, 0.55], "mia_attack": "shadow"}
    ok, reason = mia_validity(invalid)
    assert not ok
    assert "0.49 [0.44, 0.55]" in reason and "not above chance" in reason and "\n" not in reason
    assert mia_validity({"mia": invalid})[0] is False  # a cell's metrics holding the MIA
    assert mia_validity({"mia_auc": 0.7, "mia_auc_ci": [0.5, 0.8]})[0] is False  # lo must be > .5
    assert mia_validity({"mia_auc": 0.7, "mia_auc_ci": [0.62, 0.78]}) == (True, None)
    ok, reason = mia_validity({"mia_auc": 0.9})  # an old result without an interval
    assert not ok and "confidence interval" in reason
    ok, reason = mia_validity({})
    assert not ok and "no MIA" in reason


def test_query_with_original_records_vs_the_privatized_text():
    """Trained on 'privatized' vectors (the original plus heavy independent noise): queried with
    the noisy vectors it saw, a memorising target gives its members away; queried with the
    original records, which is what the attacker holds, it cannot (AUC about 0.5)."""
    rng = np.random.default_rng(5)

    def split(n, seed):
        X, y = _data(n, 64, seed)
        return X, [x + rng.normal(scale=20.0, size=x.shape) for x in X], y

    Om, Pm, ym = split(80, 10)
    On, Pn, yn = split(80, 11)
    Os, Ps, ys = split(160, 12)
    seen = membership_inference("bow", Pm, ym, Pn, yn, Ps, ys, target_params={"C": 100.0},
                                n_boot=200, seed=0).metrics
    orig = membership_inference("bow", Pm, ym, Pn, yn, Ps, ys, target_params={"C": 100.0},
                                n_boot=200, seed=0,
                                query={"members": Om, "nonmembers": On, "shadow": Os}).metrics
    assert seen["mia_auc_ci"][0] > 0.6, seen["mia_auc_ci"]
    assert orig["mia_auc_ci"][0] < 0.5 < orig["mia_auc_ci"][1], orig["mia_auc_ci"]
    with pytest.raises(ValueError, match="query\\['members'\\]"):
        membership_inference("bow", Pm, ym, Pn, yn, Ps, ys, query={"members": Om[:3]})
