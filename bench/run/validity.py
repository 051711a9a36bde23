"""The deltas stage: whether a cell's privacy and membership measurements are valid, and its
Δutility, Δprivacy and trade-off against the matching unprivatized baseline (Riecker 2023,
Sec. 4.2).

A measurement is valid only where the strongest attack beats chance on the baseline; elsewhere
Δprivacy and the trade-off are ``None`` with the reason, never a silent zero.

Example:
    >>> add_deltas(metrics, baseline_metrics)["vs_baseline"]["delta_utility"]
"""

from __future__ import annotations


def mark_mia_validity(metrics: dict, baseline: dict | None) -> dict:
    """Set ``mia_valid`` / ``mia_invalid_reason``: an MIA measures something only if its
    strongest attack on the unprivatized model is clearly above AUC 0.5
    (:func:`bench.attacks.membership.mia_validity`); ``None`` without a baseline MIA."""
    from bench.attacks.membership import mia_validity

    if "mia" not in metrics:
        return metrics
    if baseline is None or "mia" not in baseline:
        ok, reason = None, "no unprivatized baseline with membership inference to check against"
    else:
        ok, reason = mia_validity(baseline["mia"])
    metrics["mia"]["mia_valid"], metrics["mia"]["mia_invalid_reason"] = ok, reason
    return metrics


def mark_privacy_validity(metrics: dict, baseline: dict | None) -> dict:
    """Set ``privacy_valid`` / ``privacy_invalid_reason`` on every privacy task of ``metrics``.

    The rule (:func:`bench.attacks.adversary.privacy_validity`): a privacy measurement exists
    only if the strongest adversary beats chance on the unprivatized baseline. ``baseline`` is
    the baseline cell's metrics (for a baseline cell: its own); ``None`` = no baseline run.
    """
    from bench.attacks.adversary import privacy_validity

    for name, p in metrics.get("privacy", {}).items():
        ok, reason = privacy_validity(_baseline_task(p, baseline, name))
        p["privacy_valid"], p["privacy_invalid_reason"] = ok, reason
    return metrics


def _baseline_task(p: dict, baseline: dict | None, task: str) -> dict | None:
    """The baseline's privacy of ``task`` over the adversaries this cell ran (see
    :func:`bench.attacks.adversary.restrict`)."""
    from bench.attacks.adversary import restrict

    pb = None if baseline is None else baseline.get("privacy", {}).get(task)
    return restrict(pb, list(p.get("by_adversary", {})))


def add_deltas(metrics: dict, baseline: dict | None) -> dict:
    """Δutility, Δprivacy and the trade-off vs the matching baseline (Riecker 2023, Sec. 4.2).

    Δprivacy and the trade-off are computed only where the privacy measurement is valid (the
    strongest adversary beats chance on the baseline); elsewhere they are ``None`` with the
    reason, never a silent zero.
    """
    from bench.metrics.classification import deltas

    mark_privacy_validity(metrics, baseline)
    mark_mia_validity(metrics, baseline)
    if baseline is None or "utility" not in baseline:
        return metrics
    out = {}
    u, ub = metrics["utility"]["macro_f1"], baseline["utility"]["macro_f1"]
    for name, p in metrics.get("privacy", {}).items():
        pb = _baseline_task(p, baseline, name)  # the same adversaries on both sides
        if p.get("privacy_valid") and pb is not None:
            out[name] = deltas(u, ub, p["privacy"], pb["privacy"]) | {
                "privacy_valid": True, "reason": None}
        else:
            out[name] = {"delta_utility": u - ub, "delta_privacy": None, "tradeoff": None,
                         "privacy_valid": p.get("privacy_valid"),
                         "reason": p.get("privacy_invalid_reason")}
    metrics["vs_baseline"] = {"delta_utility": u - ub, "by_privacy_task": out}
    return metrics
