"""``mia_low_fpr``: membership inference as the true-positive rate at a low false-positive rate.

Carlini et al. 2022 ("Membership Inference Attacks From First Principles", IEEE S&P, Sec. III)
argue that an attack's average-case AUC hides whether it identifies *any* member with
confidence, and report the TPR at a fixed low FPR (1%, 0.1%) read off the ROC curve. For each
attack of the cell's membership stage (:mod:`bench.attacks.membership`: shadow model,
loss threshold) and for the strongest of them, this measure reports

    TPR@α = max { TPR(τ) : FPR(τ) ≤ α }   over the thresholds τ of the attack's scores,

with a 95% stratified percentile-bootstrap interval (members and non-members resampled
separately, as the AUC's interval is). With n non-members the smallest non-zero FPR is 1/n:
below it only thresholds with no false positive count, so ``resolved`` says whether
n ≥ 1/α. Chance level: TPR@α = α (an attack that guesses).

Example:
    >>> tpr_at_fpr(scores, is_member, 0.01)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.measures.base import Measure, MeasureInput, measure_seed

FPRS = (0.01, 0.001)
"""The false-positive rates reported."""
N_BOOT = 1000
"""Bootstrap resamples of each interval."""


def tpr_at_fpr(scores: np.ndarray, is_member: np.ndarray, alpha: float) -> float:
    """The largest TPR of a threshold whose FPR is at most ``alpha`` (members score high)."""
    s = np.asarray(scores, dtype=np.float64)
    m = np.asarray(is_member).astype(bool)
    non = np.sort(s[~m])[::-1]
    n_non = len(non)
    allowed = int(np.floor(alpha * n_non + 1e-12))  # false positives allowed
    # the threshold must exceed the (allowed + 1)-th highest non-member score
    if allowed >= n_non:
        return 1.0
    bound = non[allowed]
    return float((s[m] > bound).mean())


def tpr_at_fpr_ci(scores: np.ndarray, is_member: np.ndarray, alpha: float, seed: Any
                  ) -> tuple[float, float]:
    """95% stratified percentile-bootstrap interval of :func:`tpr_at_fpr` (members and
    non-members resampled separately, :data:`N_BOOT` times)."""
    s = np.asarray(scores, dtype=np.float64)
    m = np.asarray(is_member).astype(bool)
    mem, non = np.sort(s[m]), np.sort(s[~m])
    rng = np.random.default_rng(seed)
    bm = mem[rng.integers(0, len(mem), (N_BOOT, len(mem)))]
    bn = np.sort(non[rng.integers(0, len(non), (N_BOOT, len(non)))], axis=1)[:, ::-1]
    allowed = int(np.floor(alpha * len(non) + 1e-12))
    if allowed >= len(non):
        return 1.0, 1.0
    bound = bn[:, allowed]
    above = (bm > bound[:, None]).mean(axis=1)  # members strictly above it, per resample
    lo, hi = np.quantile(above, [0.025, 0.975])
    return float(lo), float(hi)


def low_fpr_record(attack_scores: dict[str, np.ndarray], is_member: np.ndarray, seed: Any
                   ) -> dict[str, Any]:
    """TPR at each of :data:`FPRS` for every attack and the strongest (see the module)."""
    n_non = int((~np.asarray(is_member).astype(bool)).sum())
    out: dict[str, Any] = {"n_members": int(np.asarray(is_member).astype(bool).sum()),
                           "n_nonmembers": n_non, "by_attack": {}}
    for name, scores in attack_scores.items():
        out["by_attack"][name] = {
            _key(a): {"tpr": tpr_at_fpr(scores, is_member, a),
                      "ci": list(tpr_at_fpr_ci(scores, is_member, a, seed))} for a in FPRS}
    for a in FPRS:
        best = max(out["by_attack"], key=lambda n: out["by_attack"][n][_key(a)]["tpr"])
        out[_key(a)] = dict(out["by_attack"][best][_key(a)], attack=best, chance=a,
                            resolved=bool(n_non >= round(1.0 / a)))
    return out


def _key(alpha: float) -> str:
    return f"tpr_at_fpr_{alpha:g}"


def _skip(cell: Any) -> str | None:
    if not cell.settings.get("mia"):
        return "the grid runs no membership inference (settings.mia)"
    return None


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``mia_low_fpr`` record of a cell, from its membership stage's attack scores."""
    if ctx.mia is None:
        raise ValueError("mia_low_fpr: the membership stage did not run")
    return low_fpr_record(ctx.mia.attack_scores, ctx.mia.is_member,
                          measure_seed(ctx.cell.seed, "mia_low_fpr"))


MIA_LOW_FPR = (Measure(
    "mia_low_fpr", "1", "membership inference: TPR at 1% and 0.1% FPR of every attack "
    "(Carlini et al. 2022)", compute, _skip, needs=frozenset({"mia"})))
"""The ``mia_low_fpr`` measure."""
