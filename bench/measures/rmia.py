"""``mia_rmia``: a per-example calibrated membership attack with reference models (RMIA).

Zarifzadeh, Liu & Shokri 2024 ("Low-Cost High-Power Membership Inference Attacks", ICML,
Sec. 3; the offline variant of their Sec. 4 and appendix) test each record x against
*population* records z: with Pr(x|θ) the target's probability of x's true label,

    LR(x, z) = [Pr(x|θ) / Pr(x)] / [Pr(z|θ) / Pr(z)],
    Score(x) = Pr_z( LR(x, z) ≥ γ )           (the fraction of population records z),

where Pr(x) is the probability of x's label averaged over reference models -- models trained
like the target on population data. The **offline** attack has only reference models that did
not train on x (OUT models) and approximates the average over IN and OUT models by

    Pr(x) = ½ [ (1 + a) · mean_OUT Pr(x|θ_ref) + (1 − a) ],

a linear map the authors fit on reference models (``a``; :data:`OFFLINE_A` = 0.3, the default of
the authors' Privacy Meter, not tuned here). Dividing by Pr(x) calibrates each record: a record
every model gets right scores no higher for it, a record only a model that trained on it gets
right does. Comparing with z, rather than thresholding the ratio, makes the test robust to how
confident the model is overall.

Here (the threat model of :mod:`bench.attacks.membership`): the target is the membership
stage's own target model (trained on the privatized members TR1); the reference models are
:data:`N_REFERENCE` models of the same architecture and training settings (the ``memorise``
overrides where the target has them), trained on the two complementary seeded halves of the
privatized shadow pool (TE1 + TE2). Every member and non-member is OUT for both; the population
records z are the shadow pool's, each with the reference model that did not train on it; the
target never saw them. Queries use the text the membership stage queries with (the originals
for text cells, ``mia_query``). γ = 1. Reported: the attack's AUC on members vs non-members with
its 95% stratified bootstrap interval, TPR at 1% and 0.1% FPR with intervals
(:mod:`bench.measures.mia_low_fpr`), and the membership stage's strongest AUC beside it. Chance:
AUC 0.5, TPR@α = α.

Cost: two fits of the target's model on half the shadow pool each -- about the membership
stage's own cost (one shadow model and one target, plus its attack MLP).

Example:
    >>> rmia_scores(p_x, p_ref_x, p_z, p_ref_z)  # members high
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bench.measures.base import Measure, MeasureInput, measure_seed
from bench.measures.mia_low_fpr import FPRS, tpr_at_fpr, tpr_at_fpr_ci

OFFLINE_A = 0.3
"""The offline coefficient ``a`` (Privacy Meter's default; Zarifzadeh et al. tune it on
reference models)."""
GAMMA = 1.0
"""The likelihood-ratio threshold γ of Score(x)."""
N_REFERENCE = 2
"""Reference models: one per half of the shadow pool."""


def rmia_scores(p_x: np.ndarray, p_ref_x: np.ndarray, p_z: np.ndarray, p_ref_z: np.ndarray,
                a: float = OFFLINE_A, gamma: float = GAMMA) -> np.ndarray:
    """RMIA's Score(x) for every x (see the module docstring).

    Args:
        p_x: ``(n,)`` the target's probability of each x's true label.
        p_ref_x: ``(n, K)`` the OUT reference models' probabilities of the same.
        p_z: ``(m,)`` the target's probability of each population record's label.
        p_ref_z: ``(m,)`` or ``(m, K')`` the OUT reference models' probabilities of the same.
        a: the offline coefficient.
        gamma: the threshold on LR(x, z).

    Returns:
        ``(n,)`` the fraction of population records z with LR(x, z) ≥ γ (higher: member).
    """
    if not 0.0 <= a <= 1.0:
        raise ValueError(f"rmia: a must be in [0, 1], got {a}")
    p_ref_x = np.atleast_2d(np.asarray(p_ref_x, dtype=np.float64).T).T
    p_ref_z = np.atleast_2d(np.asarray(p_ref_z, dtype=np.float64).T).T
    pr_x = (1 + a) / 2 * p_ref_x.mean(axis=1) + (1 - a) / 2
    pr_z = (1 + a) / 2 * p_ref_z.mean(axis=1) + (1 - a) / 2
    ratio_x = np.asarray(p_x, dtype=np.float64) / pr_x
    ratio_z = np.sort(np.asarray(p_z, dtype=np.float64) / pr_z)
    if len(ratio_z) == 0:
        raise ValueError("rmia: no population records")
    # LR(x, z) >= γ  <=>  ratio_z <= ratio_x / γ: count them by a binary search
    return np.searchsorted(ratio_z, ratio_x / gamma, side="right") / len(ratio_z)


def _skip(cell: Any) -> str | None:
    if not cell.settings.get("mia"):
        return "the grid runs no membership inference (settings.mia)"
    return None


def _true_label_probability(model: Any, docs: list, y: np.ndarray) -> np.ndarray:
    """exp(−loss) of each document's true label(s): the probability of the label (multilabel:
    the geometric mean over the labels of the probability of their values)."""
    from bench.attacks.membership import example_loss

    return np.exp(-example_loss(model.predict_proba(docs), y))


def rmia_attack(target: Any, build: Any, train_docs: list, query_docs: list, y: np.ndarray,
                mem: np.ndarray, non: np.ndarray, pool: np.ndarray, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Offline RMIA on ``target`` (see the module docstring).

    Args:
        target: the fitted target model (trained on ``train_docs[mem]``).
        build: ``build(seed)`` -> an unfitted model trained like the target.
        train_docs: every document as the models are trained on it (privatized).
        query_docs: every document as the attacker queries with it (parallel).
        y: every document's label(s).
        mem, non, pool: indices of the members, the non-members and the population (shadow)
            pool, disjoint.
        rng: draws the pool's halves and the reference models' seeds.

    Returns:
        ``(scores, is_member, n_population)``: Score(x) for the members then the non-members.
    """
    def sub(docs: list, idx: np.ndarray) -> list:
        return [docs[i] for i in idx]

    def p_true(model: Any, idx: np.ndarray) -> np.ndarray:
        return _true_label_probability(model, sub(query_docs, idx), y[idx])

    perm = rng.permutation(len(pool))
    halves = (pool[perm[: len(pool) // 2]], pool[perm[len(pool) // 2:]])
    seeds = rng.integers(0, 2**31 - 1, N_REFERENCE)
    refs = [build(int(sd)).fit(sub(train_docs, h), y[h]) for sd, h in zip(seeds, halves)]
    x = np.concatenate([mem, non])
    p_ref_x = np.column_stack([p_true(r, x) for r in refs])
    # each population record with the reference model that did not train on it
    p_ref_z = np.concatenate([p_true(refs[1], halves[0]), p_true(refs[0], halves[1])])
    z = np.concatenate(halves)
    scores = rmia_scores(p_true(target, x), p_ref_x, p_true(target, z), p_ref_z)
    is_member = np.r_[np.ones(len(mem), int), np.zeros(len(non), int)]
    return scores, is_member, len(z)


def low_fpr_entries(scores: np.ndarray, is_member: np.ndarray, seed: Any) -> dict[str, Any]:
    """TPR at each of :data:`FPRS` with its interval, chance and whether it is resolved."""
    n_non = int((np.asarray(is_member) == 0).sum())
    return {f"tpr_at_fpr_{alpha:g}": {
        "tpr": tpr_at_fpr(scores, is_member, alpha),
        "ci": list(tpr_at_fpr_ci(scores, is_member, alpha, seed)),
        "chance": alpha, "resolved": bool(n_non >= round(1.0 / alpha))} for alpha in FPRS}


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``mia_rmia`` record of a cell (see the module docstring)."""
    from bench.attacks.membership import auc_with_ci, model_builder

    if ctx.mia is None:
        raise ValueError("mia_rmia: the membership stage did not run")
    t0 = time.perf_counter()
    cell, split, s = ctx.cell, ctx.ds.splits, ctx.cell.settings
    y = np.asarray(ctx.ds.utility_task.labels)
    mem, non, pool = (np.asarray(split[p]) for p in ("mia_members", "mia_nonmembers",
                                                      "mia_shadow"))
    # the records as the membership stage queried them (the originals for text cells)
    query_with = s.get("mia_query", "original") if cell.output == "text" else "privatized"
    queries = ctx.docs if query_with == "original" and not cell.is_baseline else ctx.corpus
    build, _ = model_builder(
        cell.model, cell.model_kwargs(),
        "memorise" if s.get("mia_target", "memorise") == "memorise" else None,
        [ctx.corpus[i] for i in mem], (y[mem], y[non], y[pool]))
    rng = np.random.default_rng(measure_seed(cell.seed, "mia_rmia"))
    scores, is_member, n_pop = rmia_attack(ctx.mia.target, build, ctx.corpus, queries, y, mem,
                                           non, pool, rng)
    if not np.array_equal(is_member, np.asarray(ctx.mia.is_member)):
        raise ValueError("mia_rmia: the membership stage scored other records")
    auc, ci = auc_with_ci(scores, is_member, seed=int(rng.integers(0, 2**31 - 1)))
    out: dict[str, Any] = {
        "auc": auc, "auc_ci": list(ci), "chance_auc": 0.5,
        "stage_auc": float(ctx.mia.metrics["mia_auc"]),
        "stage_attack": ctx.mia.metrics["mia_attack"],
        "n_members": len(mem), "n_nonmembers": len(non), "n_population": n_pop,
        "n_reference_models": N_REFERENCE, "offline_a": OFFLINE_A, "gamma": GAMMA,
        "query": query_with,
        **low_fpr_entries(scores, is_member, int(rng.integers(0, 2**31 - 1))),
        "seconds": time.perf_counter() - t0}
    return out


MIA_RMIA = Measure(
    "mia_rmia", "1", "membership inference by RMIA with two offline reference models: AUC and "
    "TPR at 1% and 0.1% FPR (Zarifzadeh et al. 2024)", compute, _skip, needs=frozenset({"mia"}))
"""The ``mia_rmia`` measure."""
