"""Trade-off tables (Riecker 2023, Tables 5.1–6.4) and the Δ tests behind them.

:func:`tradeoff_tables` — one table per sensitivity approach; rows mapping × mechanism × model ×
dataset × ε × private attribute; columns Adversary (the attack privacy is read from: the
strongest by default), then the anchored scores (:mod:`bench.analysis.anchored`: Utility
retained, Privacy gained, Trade-off = retained × gained), then the thesis' columns Change in
Utility, Change in Privacy and its trade-off (= ΔU + ΔP, Riecker 2023, Sec. 4.2; labels from
:data:`bench.metrics.METRICS`). A Δ not distinguishable from zero carries the marker ``ns``
(:func:`delta_test`: paired t over seeds, or overlapping bootstrap intervals for one seed).
Favourable rows (the anchored trade-off above 0 beyond its interval, no seed's utility at
chance) have their trade-off in bold; cells whose utility model or adversary is no better than
chance are kept and flagged (the thesis leaves them out of Tables 5.1–6.4). Where the privacy
measurement is not valid (the adversary is at chance on the unprivatized baseline) the privacy
columns read "no valid privacy measurement" and there is no trade-off. Where the privacy
columns rest on fewer seeds than the row (some seeds' measurement is not valid), n says so.

Example:
    >>> from bench.analysis.results import load_results, group_cells
    >>> groups, _ = group_cells(load_results("results").cells)
    >>> for table in tradeoff_tables(groups):
    ...     print(table.markdown())
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.analysis.anchored import VERSION as ANCHORED_VERSION
from bench.analysis.anchored import group_anchored, has_reference
from bench.analysis.privacy import (
    NO_VALID,
    GroupPrivacy,
    baseline_index,
    baseline_of,
    describe_choice,
    group_privacy,
    tasks_of,
)
from bench.analysis.results import CellRecord, Group, Stat, fmt_eps, to_float
from bench.analysis.stats import Significance, delta_significance
from bench.metrics import METRICS
from bench.report.table import (
    Table,
    Value,
    csv_num,
    fmt_delta,
    fmt_stat,
    interval_note,
    slug,
    unique_name,
)
from bench.results.sections import AttributeDelta, CellMetrics

TRADEOFF_NOTES = [
    (
    "Anchored at chance and at the unprivatized baseline of the same dataset, model and seed "
    "(bench.analysis.anchored): utility retained = (U − C) / (U_base − C) and privacy gained = "
    "(A_base − A) / (A_base − C), each clipped to [0, 1] (U: macro-F1 of the utility model, "
    "A: macro-F1 of the attack, C: the labels' chance threshold); trade-off = retained × "
    "gained, 0 for the unchanged text and for output that ignores its input. Privacy = "
    "{privacy}."
    ),
    (
    "Thesis columns (Riecker 2023, Sec. 4.2): change = privatized − baseline of the same seed; "
    "its trade-off = Δutility + Δprivacy, which rewards output that carries nothing (utility "
    "falls only to chance while privacy rises to its maximum)."
    ),
    (
    "Bold: favourable — the anchored trade-off is above 0 beyond its interval and no seed's "
    "utility is at chance. Flag: no better than chance (utility model or adversary); such rows "
    "are kept and flagged (the thesis leaves them out)."
    ),
    "{interval}",
    (
    "ns: the Δ is not significantly different from 0. With n ≥ 2 seeds: the paired t interval "
    "of the per-seed differences (privatized − the baseline of the same seed, which shares its "
    "data split and model seed) contains 0; that is the interval shown. With one seed: the "
    "privatized and the baseline bootstrap intervals overlap (conservative: overlapping "
    "intervals do not prove that there is no difference); a Δ of one seed has no interval of "
    "its own, and its trade-off is not judged. Flag \"no interval\": one seed without bootstrap "
    "intervals, so no Δ could be judged."
    ),
    (
    "Adversary: the attack the privacy is read from (per seed where it differs). Privacy "
    f"gained, Δprivacy and both trade-offs exist only where the privacy measurement is valid "
    f"(the adversary beats chance on the unprivatized baseline); elsewhere \"{NO_VALID}\" and "
    "no trade-off. n: the seeds of the row; \"(privacy: k)\" where the privacy columns rest on "
    "fewer of them (the seeds whose privacy measurement is valid)."
    ),
]
"""Notes under every trade-off table; ``{privacy}`` is filled by ``describe_choice``,
``{interval}`` by :func:`interval_note`."""


ANCHORED = ("utility_retained", "privacy_gained", "anchored_tradeoff")
"""The anchored columns (:mod:`bench.analysis.anchored`), first."""
THESIS = ("delta_utility", "delta_privacy", "tradeoff")
"""The thesis' columns (Riecker 2023, Sec. 4.2), after them."""
REFERENCE = ("reference_retained", "reference_tradeoff")
"""The anchored columns of the reference classifier's utility (cells with the
``reference_utility`` measure), between the two."""
REFERENCE_NOTE = (
    "Reference columns: the same anchored scores with the utility of the reference classifier "
    "(tf-idf + logistic regression, C and penalty chosen on dev: the reference_utility "
    "measure, docs/measures.md), which no failed training of the utility model can move.")


def _privacy_tasks(g: Group) -> list[str]:
    return tasks_of([g])


def delta_utility(m: CellMetrics, task: str | None = None) -> Any:
    """A cell's Δutility vs its baseline (per attribute where given, else the cell's)."""
    vs = m.vs_baseline
    if task is not None:
        return vs.attribute(task).delta_utility
    if vs.delta_utility is not None:
        return vs.delta_utility
    for entry in vs.by_privacy_task.values():
        if isinstance(entry, AttributeDelta) and entry.delta_utility is not None:
            return entry.delta_utility
    return None


def utility_ci(m: CellMetrics) -> Any:
    """A cell's bootstrap interval of the utility macro-F1 (None in older cells)."""
    return m.utility.macro_f1_ci95


def privacy_ci(task: str) -> Callable[[CellMetrics], Any]:
    """Getter of a cell's bootstrap interval of the privacy read on ``task`` (None if absent)."""
    return lambda m: m.attribute(task).privacy_ci95


@dataclass
class DeltaTest:
    """A Δ vs the baseline over seeds and whether it differs from zero."""

    stat: Stat | None
    """The Δ over the paired seeds (t interval for n ≥ 2; no interval for one seed)."""
    sig: Significance
    """:func:`bench.analysis.stats.delta_significance` of the per-seed differences."""


def delta_test(g: Group, key: str, task: str | None = None,
               base_index: Mapping[str, list[CellRecord]] | None = None) -> DeltaTest:
    """Δ (``delta_utility``, ``delta_privacy`` or ``tradeoff``) of a configuration, and its test.

    The per-seed differences are the cells' own ``vs_baseline`` deltas (privatized − the
    baseline of the same seed: paired by seed). n ≥ 2: the paired t interval
    (:func:`bench.analysis.stats.delta_significance`). One seed: the cell's bootstrap interval
    of the metric against its baseline cell's (found in ``base_index``,
    :func:`bench.analysis.privacy.baseline_index`); the trade-off has no such rule.

    Args:
        g: a privatized configuration.
        key: which Δ.
        task: the private attribute (None: Δutility of the cell, for the leaderboard).
        base_index: baselines of the report's cells (needed for the one-seed rule).
    """
    if key == "delta_utility":
        def get(m: CellMetrics) -> Any:
            return delta_utility(m, task)
    else:
        def get(m: CellMetrics) -> Any:
            return getattr(m.vs_baseline.attribute(str(task)), key)
    s = g.stat(get)
    diffs = [_value(get, r) for r in g.records]
    ci_priv = ci_base = None
    paired = [r for r, d in zip(g.records, diffs) if d is not None]
    if len(paired) == 1 and base_index is not None and key != "tradeoff":
        rec = paired[0]
        base = baseline_of(rec, base_index)
        ci = utility_ci if key == "delta_utility" else privacy_ci(str(task))
        ci_priv = _value(ci, rec)
        ci_base = _value(ci, base) if base is not None else None
    if key == "tradeoff" and len(paired) == 1:
        return DeltaTest(s, Significance(None, "", 1))
    return DeltaTest(s, delta_significance([d for d in diffs if d is not None], ci_priv,
                                           ci_base))


def _value(get: Callable[[CellMetrics], Any], rec: CellRecord) -> Any:
    v = get(rec.sections)
    if isinstance(v, (list, tuple)):
        return v
    f = to_float(v)
    return f if math.isfinite(f) else None


def _flag(g: Group, task: str, has_delta: bool, gp: GroupPrivacy | None = None) -> str:
    n = len(g.records)
    parts = []
    u = g.count(lambda m: m.utility.chance_level is True)
    a = g.count(lambda m: m.attribute(task).chance_level is True)
    for what, k in (("utility", u), ("adversary", a)):
        if k:
            parts.append(f"{what} ≈ chance" + (f" ({k}/{n} seeds)" if n > 1 else ""))
    missing = g.count(lambda m: m.attribute(task).missing is True)
    if missing:
        who = gp.adversary if gp is not None else "the adversary"
        parts.append(f"{who} not run" + (f" ({missing}/{n} seeds)" if n > 1 else ""))
    if gp is not None and gp.status in ("invalid", "partial"):
        parts.append("adversary ≈ chance on the baseline"
                     + (f" ({gp.n_invalid}/{gp.n} seeds)" if gp.status == "partial" else ""))
    if not has_delta:
        parts.append("no baseline")
    return "; ".join(parts)


def tradeoff_tables(groups: Sequence[Group], title_prefix: str = "",
                    adversary: str | None = None) -> list[Table]:
    """Trade-off tables, one per sensitivity approach (baselines are the reference, not rows).

    Privacy is read from the attribute's privacy record (``m.attribute(task)``) as
    :func:`bench.analysis.privacy.select_privacy` left it (default: the headline, the strongest
    adversary); the Adversary column names it. Where the privacy measurement is not valid (the
    adversary is at chance on the baseline) Change in Privacy reads
    :data:`bench.analysis.privacy.NO_VALID` and there is no trade-off.

    Args:
        groups: aggregated configurations (:func:`bench.analysis.results.group_cells`).
        title_prefix: prepended to each title (e.g. the grid name).
        adversary: the adversary choice the cells were selected with (titles and notes only).

    Returns:
        Tables named ``tradeoff_<sensitivity>``, sorted by sensitivity label.
    """
    by_sens: dict[str, list[Group]] = {}
    for g in groups:
        if not g.config.is_baseline:
            by_sens.setdefault(g.config.sensitivity, []).append(g)
    tables, used = [], set()
    base_index = baseline_index(r for g in groups for r in g.records)
    ref = has_reference(r for g in groups for r in g.records)
    for sens in sorted(by_sens):
        rows, records, invalid = [], [], {}
        for g in by_sens[sens]:
            for task in _privacy_tasks(g):
                row, record = _tradeoff_row(g, task, sens, base_index, invalid, ref)
                rows.append(row)
                records.append(record)
        name = unique_name(f"tradeoff_{slug(sens)}", used)
        who = "" if adversary is None else f" (adversary: {adversary})"
        title = f"{title_prefix}Privacy-utility trade-off{who}, sensitivity approach: {sens}"
        notes = [TRADEOFF_NOTES[0].format(privacy=describe_choice(adversary)),
                 *TRADEOFF_NOTES[1:3], interval_note(), *TRADEOFF_NOTES[4:]]
        notes += [f"{NO_VALID.capitalize()} for {ds} / {task}: {'; '.join(why)}."
                  for (ds, task), why in sorted(invalid.items())]
        cols = [METRICS.get(k).label for k in ANCHORED + (REFERENCE if ref else ()) + THESIS]
        if ref:
            notes.insert(1, REFERENCE_NOTE)
        tables.append(Table(name, title, ["Mapping", "Mechanism", "Model", "Dataset", "ε",
                                          "Attribute", "Adversary", *cols, "n", "Flag"],
                            rows, records, notes,
                            align="llllrll" + "r" * (len(cols) + 1) + "l", merge=4))
    return tables


def _tradeoff_row(g: Group, task: str, sens: str, base_index: Mapping[str, list[CellRecord]],
                  invalid: dict[tuple[str, str], list[str]], ref: bool = False
                  ) -> tuple[list[Value], dict[str, str]]:
    """One configuration × private attribute: the table row and its CSV record. Why its
    privacy measurement is not valid goes into ``invalid`` (by dataset and attribute)."""
    c = g.config
    tu, tp, tt = (delta_test(g, k, task, base_index)
                  for k in ("delta_utility", "delta_privacy", "tradeoff"))
    gp = group_privacy(g, task)
    if gp.status == "invalid":
        tp = tt = DeltaTest(None, Significance(None, ""))
    du, dp, to = tu.stat, tp.stat, tt.stat
    flag = _flag(g, task, du is not None, gp)
    unjudged = [t for t in (tu, tp) if t.stat is not None
                and t.sig.significant is None]
    if unjudged:
        flag = "; ".join(x for x in (flag, "no interval") if x)
    an = group_anchored(g, task, base_index)
    if gp.status == "invalid":
        an = an.without_privacy()
    favourable = an.favourable
    ref_values, ref_record = [], {}
    if ref:
        ra = group_anchored(g, task, base_index, utility="reference")
        rt = ra.tradeoff if gp.status != "invalid" else None
        ref_values = [Value(fmt_stat(ra.retained)),
                      Value(NO_VALID if gp.status == "invalid" else fmt_stat(rt),
                            bold=gp.status != "invalid" and ra.favourable)]
        ref_record = {**_csv_stat("reference_retained", ra.retained),
                      **_csv_stat("reference_tradeoff", rt),
                      "reference_favourable": str(gp.status != "invalid"
                                                  and ra.favourable).lower()}
    n = len(g.records)
    n_text = str(n)
    if dp is not None and dp.n < n:
        n_text += f" (privacy: {dp.n})"
    dp_text = NO_VALID if gp.status == "invalid" else fmt_delta(dp, tp.sig)
    g_text = NO_VALID if gp.status == "invalid" else fmt_stat(an.gained)
    rules = sorted({t.sig.rule for t in (tu, tp, tt) if t.sig.rule})
    for why in gp.reasons:
        invalid.setdefault((c.dataset, task), [])
        if why not in invalid[(c.dataset, task)]:
            invalid[(c.dataset, task)].append(why)
    row = [Value(c.mapping), Value(c.mechanism), Value(c.model),
           Value(c.dataset), Value(fmt_eps(c.epsilon)), Value(task),
           Value(gp.adversary),
           Value(fmt_stat(an.retained)), Value(g_text),
           Value(fmt_stat(an.tradeoff), bold=favourable),
           *ref_values,
           Value(fmt_delta(du, tu.sig)), Value(dp_text), Value(fmt_delta(to, tt.sig)),
           Value(n_text), Value(flag)]
    record = {
        "sensitivity": sens, "mapping": c.mapping, "mechanism": c.mechanism,
        "model": c.model, "dataset": c.dataset, "epsilon": fmt_eps(c.epsilon)
        .replace("∞", "inf"), "attribute": task, "adversary": gp.adversary,
        "suite_version": c.suite_version,
        "n_seeds": str(n), "seeds": " ".join(map(str, g.seeds)),
        "n_seeds_privacy": str(an.n_privacy if gp.status != "invalid" else 0),
        **_csv_stat("utility_retained", an.retained),
        **_csv_stat("privacy_gained", an.gained),
        **_csv_stat("anchored_tradeoff", an.tradeoff),
        "anchored_version": ANCHORED_VERSION, **ref_record,
        **_csv_stat("delta_utility", du, tu.sig),
        **_csv_stat("delta_privacy", dp, tp.sig),
        **_csv_stat("tradeoff", to, tt.sig), "significance_rule": "; ".join(rules),
        "favourable": str(favourable).lower(),
        "privacy_valid": {True: "true", False: "false"}.get(gp.valid, ""),
        "privacy_status": gp.status_text(), "flag": flag}
    return row, record


def _csv_stat(name: str, s: Stat | None, sig: Significance | None = None) -> dict[str, str]:
    out = {f"{name}_mean": csv_num(s.mean if s else None),
           f"{name}_std": csv_num(s.std if s else None),
           f"{name}_ci_lo": csv_num(s.lo if s and s.has_interval else None),
           f"{name}_ci_hi": csv_num(s.hi if s and s.has_interval else None)}
    if sig is not None:
        out[f"{name}_significant"] = {True: "true", False: "false"}.get(
            sig.significant if s is not None else None, "")
    return out
