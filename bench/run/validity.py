"""The deltas stage: whether a cell's privacy and membership measurements are valid, and its
Δutility, Δprivacy and trade-off against the matching unprivatized baseline (Riecker 2023,
Sec. 4.2).

A measurement is valid only where the strongest attack beats chance on the baseline; elsewhere
Δprivacy and the trade-off are ``None`` with the reason, never a silent zero.

Example:
    >>> upgrade(add_deltas(metrics, baseline_metrics)).vs_baseline.delta_utility
"""

from __future__ import annotations

from bench.results.sections import (
    AttributeDelta,
    AttributePrivacy,
    CellMetrics,
    Deltas,
    set_sections,
    upgrade,
)


def mark_mia_validity(metrics: dict, baseline: dict | None) -> dict:
    """Set ``mia_valid`` / ``mia_invalid_reason``: an MIA measures something only if its
    strongest attack on the unprivatized model is clearly above AUC 0.5
    (:func:`bench.attacks.membership.mia_validity`); ``None`` without a baseline MIA."""
    from bench.attacks.membership import mia_validity

    if not upgrade(metrics).has("mia"):
        return metrics
    base = None if baseline is None else upgrade(baseline)
    if base is None or not base.has("mia"):
        ok, reason = None, "no unprivatized baseline with membership inference to check against"
    else:
        ok, reason = mia_validity(base.mia)
    return set_sections(metrics, mia=upgrade(metrics).mia.with_values(
        mia_valid=ok, mia_invalid_reason=reason))


def mark_privacy_validity(metrics: dict, baseline: dict | None) -> dict:
    """Set ``privacy_valid`` / ``privacy_invalid_reason`` on every privacy task of ``metrics``.

    The rule (:func:`bench.attacks.adversary.privacy_validity`): a privacy measurement exists
    only if the strongest adversary beats chance on the unprivatized baseline. ``baseline`` is
    the baseline cell's metrics (for a baseline cell: its own); ``None`` = no baseline run.
    """
    from bench.attacks.adversary import privacy_validity

    m, base = upgrade(metrics), None if baseline is None else upgrade(baseline)
    if not m.attributes:
        return metrics
    privacy = dict(m.privacy)
    for name in m.attributes:
        ok, reason = privacy_validity(_baseline_task(m.attribute(name), base, name))
        privacy[name] = m.attribute(name).with_values(privacy_valid=ok,
                                                      privacy_invalid_reason=reason)
    return set_sections(metrics, privacy=privacy)


def _baseline_task(p: AttributePrivacy, base: CellMetrics | None, task: str
                   ) -> AttributePrivacy | None:
    """The baseline's privacy of ``task`` over the adversaries this cell ran (see
    :func:`bench.attacks.adversary.restrict`); None when the baseline did not measure it."""
    from bench.attacks.adversary import restrict

    if base is None or task not in base.attributes:
        return None
    return restrict(base.attribute(task), list(p.by_adversary))


def add_deltas(metrics: dict, baseline: dict | None) -> dict:
    """Δutility, Δprivacy and the trade-off vs the matching baseline (Riecker 2023, Sec. 4.2).

    Δprivacy and the trade-off are computed only where the privacy measurement is valid (the
    strongest adversary beats chance on the baseline); elsewhere they are ``None`` with the
    reason, never a silent zero.
    """
    from bench.metrics.classification import deltas

    mark_privacy_validity(metrics, baseline)
    mark_mia_validity(metrics, baseline)
    base = None if baseline is None else upgrade(baseline)
    if base is None or not base.has("utility"):
        return metrics
    m = upgrade(metrics)
    out = {}
    u, ub = m.utility.macro_f1, base.utility.macro_f1
    for name in m.attributes:
        p = m.attribute(name)
        pb = _baseline_task(p, base, name)  # the same adversaries on both sides
        if p.privacy_valid and pb is not None:
            out[name] = AttributeDelta.make(**deltas(u, ub, p.privacy, pb.privacy),
                                            privacy_valid=True, reason=None)
        else:
            out[name] = AttributeDelta.make(
                delta_utility=u - ub, delta_privacy=None, tradeoff=None,
                privacy_valid=p.privacy_valid, reason=p.privacy_invalid_reason)
    return set_sections(metrics, vs_baseline=Deltas.make(delta_utility=u - ub,
                                                          by_privacy_task=out))
