"""Which adversary a report reads, whether its privacy measurement is valid, and the MIA headline.

The runner writes, per cell and private attribute, its privacy record (``m.attribute(task)``,
:class:`bench.results.sections.AttributePrivacy`): the *headline*
``privacy = 1 − max adversary macro-F1`` (the strongest attack, its name in ``adversary``),
every adversary's numbers in ``by_adversary``, and ``privacy_valid`` (False: the strongest
adversary is at chance on the unprivatized baseline, so no privacy measurement exists; None: no
baseline). ``m.vs_baseline.attribute(task)`` has Δprivacy and the trade-off
only where privacy is valid.

:func:`select_privacy` rewrites the cells a report reads so that every table, plot and the
leaderboard read one shape, ``m.attribute(task)`` with ``privacy``, ``adversary``,
``privacy_valid`` and ``privacy_invalid_reason``:

* ``adversary=None`` (the default, the headline): the runner's numbers as written;
* ``adversary="model"``: the cell's own model as the adversary (the thesis' same-model attack,
  Riecker 2023, Sec. 4.2), from ``by_adversary[<model>]``;
* ``adversary="<name>"``: that adversary, from ``by_adversary[<name>]``.

With an adversary named, Δprivacy and the trade-off are recomputed against the baseline cell's
``by_adversary[<name>]`` (same dataset, model, settings, suite version, data and seed), and
validity is judged for that adversary on the baseline: valid when its macro-F1 there is above
its chance threshold.

Cells written before there were several adversaries (no ``by_adversary``, no
``privacy_valid``) are read as one adversary named after the cell's model, validity unknown.

Example:
    >>> from bench.analysis.results import load_results, group_cells
    >>> cells = select_privacy(load_results("results").cells, adversary="model")
    >>> groups, _ = group_cells(cells)
    >>> gp = group_privacy(groups[1], "entities")
    >>> gp.adversary, gp.status_text(), gp.stat.mean
    ('lstm', 'valid', 0.7)
"""

from __future__ import annotations

import difflib
import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.analysis.baseline import BaselineIndex
from bench.analysis.results import (
    CellRecord,
    Group,
    ReportError,
    Stat,
    component,
    fmt_interval,
    stat,
    to_float,
)
from bench.results.sections import (
    AdversaryResult,
    AttributeDelta,
    AttributePrivacy,
    CellMetrics,
    Deltas,
)

HEADLINE = "headline"
"""``adversary`` value of the default: the strongest adversary (same as None)."""

OWN_MODEL = "model"
"""``adversary`` value for the cell's own model as the adversary (the thesis layout)."""

NO_VALID = "no valid privacy measurement"
"""Shown instead of a privacy number or Δprivacy where privacy is not valid."""

NO_VALID_MIA = "no valid MIA"
"""Shown instead of the MIA AUC where the membership-inference measurement is not valid."""

_PER_ADVERSARY = ("privacy", "adversary_macro_f1", "adversary_accuracy",
                  "adversary_per_class_f1", "n", "chance_threshold", "chance_level")


# --------------------------------------------------------------------------------------------
# Per cell
# --------------------------------------------------------------------------------------------


def model_name(rec: CellRecord) -> str:
    """The cell's utility model (the name an old single-adversary cell's adversary gets)."""
    return component(rec.spec, "model")[0]


def adversary_results(rec: CellRecord, task: str) -> dict[str, AdversaryResult]:
    """Every adversary's result on one attribute (old cells: ``{<model>: the entry}``)."""
    m = rec.sections
    if task not in m.attributes:
        return {}
    p = m.attribute(task)
    if p.by_adversary:
        return {str(k): v for k, v in p.by_adversary.items() if isinstance(v, AdversaryResult)}
    name = str(p.adversary or model_name(rec))
    return {name: AdversaryResult.make(**{k: getattr(p, k) for k in _PER_ADVERSARY if p.has(k)})}


def available_adversaries(cells: Iterable[CellRecord]) -> list[str]:
    """Sorted names of every adversary any cell ran (old cells: their model)."""
    names: set[str] = set()
    for r in cells:
        for task in r.sections.privacy:
            names |= set(adversary_results(r, task))
    return sorted(names)


def resolve_adversary(adversary: str | None, cells: Sequence[CellRecord]) -> str | None:
    """Normalize the report option: None for the headline, ``"model"`` or a known name.

    Raises:
        ReportError: a name no cell ran (with the close matches and the names there are).
    """
    if adversary is None or adversary == HEADLINE:
        return None
    if adversary == OWN_MODEL:
        return OWN_MODEL
    known = available_adversaries(cells)
    if adversary in known or not cells:
        return adversary
    close = difflib.get_close_matches(adversary, known, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ReportError(f"adversary {adversary!r} was run on no cell of these results{hint} "
                      f"(adversaries: {', '.join(known) or 'none'}; or {HEADLINE!r} for the "
                      f"strongest, {OWN_MODEL!r} for the cell's own model)")


def judge(entry: AdversaryResult | None, who: str) -> tuple[bool | None, str | None]:
    """Validity of one adversary judged on the baseline: its macro-F1 above its chance threshold.

    The rule of :func:`bench.attacks.adversary.privacy_validity`, for one named adversary.
    """
    if entry is None:
        return None, f"adversary {who} was not run on the unprivatized baseline"
    f1 = to_float(entry.adversary_macro_f1)
    thr = to_float(entry.chance_threshold)
    if math.isfinite(f1) and math.isfinite(thr):
        from bench.attacks.adversary import privacy_validity

        return privacy_validity({"adversary_macro_f1": f1, "chance_threshold": thr,
                                 "adversary_macro_f1_ci95": entry.adversary_macro_f1_ci95},
                                who=f"adversary {who}")
    if entry.chance_level is True:
        return False, f"adversary {who} is at chance on the unprivatized text: {NO_VALID}"
    if entry.chance_level is False:
        return True, None
    return None, f"adversary {who}: no macro-F1 / chance threshold on the baseline"


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def baseline_index(cells: Iterable[CellRecord]) -> BaselineIndex[CellRecord]:
    """The baseline cells, indexed by the one pairing rule (:mod:`bench.analysis.baseline`)."""
    index: BaselineIndex[CellRecord] = BaselineIndex()
    for r in cells:
        if r.is_baseline:
            index.add(r.spec, r.dataset_hash, r, r.suite_version, hash=r.hash)
    return index


def baseline_of(rec: CellRecord, index: BaselineIndex[CellRecord]) -> CellRecord | None:
    """The baseline of a cell (itself for a baseline): :meth:`BaselineIndex.find`."""
    if rec.is_baseline:
        return rec
    return index.find(rec.spec, rec.dataset_hash, rec.suite_version)


def _normalize_headline(rec: CellRecord) -> CellMetrics:
    m = rec.sections
    model = model_name(rec)
    privacy = dict(m.privacy)
    deltas = dict(m.vs_baseline.by_privacy_task)
    for task in m.attributes:
        p = m.attribute(task)
        if not p.has("by_adversary"):
            p = p.with_values(by_adversary=adversary_results(rec, task))
        defaults = {"adversary": model, "privacy_valid": None, "privacy_invalid_reason": None}
        p = p.with_values(**{k: v for k, v in defaults.items() if not p.has(k)})
        privacy[task] = p
        d = deltas.get(task)
        if isinstance(d, AttributeDelta) and p.privacy_valid is False:
            # never a Δ of an invalid measurement
            deltas[task] = d.with_values(delta_privacy=None, tradeoff=None)
    m = m.with_values(privacy=privacy) if m.has("privacy") else m
    if m.has("vs_baseline") and m.vs_baseline.has("by_privacy_task"):
        m = m.with_values(vs_baseline=m.vs_baseline.with_values(by_privacy_task=deltas))
    return m


def _named_entry(entry: AdversaryResult | None, name: str) -> AttributePrivacy:
    """An adversary's result as the attribute's privacy record (``missing``: not run here)."""
    if entry is None:
        return AttributePrivacy.make(privacy=None, adversary=name, missing=True)
    kept = {k: v for k, v in entry.to_dict().items() if k not in ("fit_seconds", "predict_seconds")}
    p = AttributePrivacy.from_dict(kept)
    assert p is not None
    return p.with_values(adversary=name)


def _select_named(rec: CellRecord, name: str, base: CellRecord | None) -> CellMetrics:
    from bench.attacks.adversary import base_adversary

    m = rec.sections
    by_task: dict[str, AttributeDelta] = {}
    privacy = dict(m.privacy)
    u = to_float(m.utility.macro_f1)
    ub = to_float(base.sections.utility.macro_f1) if base is not None else math.nan
    for task in sorted(m.privacy):
        by = adversary_results(rec, task)
        # on the baseline a static attack is its base attack (original text both ways)
        entry = by.get(name) or (by.get(base_adversary(name)) if rec.is_baseline else None)
        # a static attack is the baseline's attack of its base name (trained and tested on the
        # original text there, as the adaptive one is)
        bentry = (adversary_results(base, task).get(base_adversary(name))
                  if base is not None else None)
        if base is None:
            ok, reason = None, "no unprivatized baseline to check the adversary against"
        else:
            ok, reason = judge(bentry, name)
        if entry is None:
            ok, reason = None, f"adversary {name} was not run on this cell"
        privacy[task] = _named_entry(entry, name).with_values(
            by_adversary=by, privacy_valid=ok, privacy_invalid_reason=reason)
        if rec.is_baseline:
            continue
        if base is None:  # the runner's deltas are the headline's: keep only Δutility
            du0 = m.vs_baseline.attribute(task).delta_utility
            if du0 is not None:
                by_task[task] = AttributeDelta.make(
                    delta_utility=du0, delta_privacy=None, tradeoff=None, privacy_valid=None,
                    reason=reason)
            continue
        du = u - ub if math.isfinite(u) and math.isfinite(ub) else None
        dp = None
        if ok and entry is not None and bentry is not None:
            p, pb = to_float(entry.privacy), to_float(bentry.privacy)
            dp = p - pb if math.isfinite(p) and math.isfinite(pb) else None
        by_task[task] = AttributeDelta.make(
            delta_utility=du, delta_privacy=dp,
            tradeoff=du + dp if du is not None and dp is not None else None,
            privacy_valid=ok, reason=reason)
    if m.has("privacy"):
        m = m.with_values(privacy=privacy)
    if base is not None and not rec.is_baseline:
        du_all = u - ub if math.isfinite(u) and math.isfinite(ub) else None
        m = m.with_values(vs_baseline=Deltas.make(delta_utility=du_all, by_privacy_task=by_task))
    elif m.has("vs_baseline"):
        m = m.with_values(vs_baseline=m.vs_baseline.with_values(by_privacy_task=by_task))
    return m


def select_privacy(cells: Sequence[CellRecord], adversary: str | None = None
                   ) -> list[CellRecord]:
    """The cells with their privacy records (and the deltas) read for one adversary choice.

    Args:
        cells: the cells as read (:func:`bench.analysis.results.load_results`).
        adversary: None or ``"headline"`` (the strongest adversary, as the runner wrote it),
            ``"model"`` (the cell's own model) or an adversary's name.

    Returns:
        New records (the metrics are copies; the input is not changed), same order.

    Raises:
        ReportError: an adversary name no cell ran.
    """
    adversary = resolve_adversary(adversary, cells)
    index = baseline_index(cells) if adversary is not None else {}
    out = []
    for r in cells:
        if adversary is None:
            m = _normalize_headline(r)
        else:
            name = model_name(r) if adversary == OWN_MODEL else adversary
            m = _select_named(r, name, baseline_of(r, index))
        out.append(CellRecord(r.hash, r.spec, m.to_dict(), r.folder))
    return out


def describe_choice(adversary: str | None) -> str:
    """How privacy is measured under an adversary choice (for notes and axis labels)."""
    if adversary is None or adversary == HEADLINE:
        return "1 − macro-F1 of the strongest adversary (max over the adversaries run)"
    if adversary == OWN_MODEL:
        return "1 − macro-F1 of the cell's own model as the adversary (thesis layout)"
    return f"1 − macro-F1 of the adversary {adversary}"


# --------------------------------------------------------------------------------------------
# Per configuration (seeds pooled)
# --------------------------------------------------------------------------------------------


def adversary_text(names: Sequence[str]) -> str:
    """The winning adversary over seeds: ``lexical``, or ``informed 1/2, lexical 1/2``."""
    names = [n for n in names if n]
    if not names:
        return ""
    counts = Counter(names)
    if len(counts) == 1:
        return names[0]
    n = len(names)
    return ", ".join(f"{a} {k}/{n}" for a, k in sorted(counts.items(), key=lambda t: (-t[1],
                                                                                       t[0])))


@dataclass
class GroupPrivacy:
    """One configuration's privacy on one attribute, over its seeds."""

    stat: Stat | None
    """Privacy over the seeds whose measurement is not invalid (None: none), with its 95%
    interval (t over seeds; one seed: the cell's ``privacy_ci95`` bootstrap interval)."""
    adversary: str
    """The adversary (the winner, per seed counts where they differ)."""
    n: int
    """Seeds with this attribute."""
    n_invalid: int = 0
    """Seeds whose privacy is not valid (``privacy_valid`` False)."""
    n_unknown: int = 0
    """Seeds whose validity is unknown (old cells, no baseline, adversary not run there)."""
    reasons: list[str] = field(default_factory=list)
    """Why privacy is not valid (distinct, in seed order)."""

    @property
    def status(self) -> str:
        """``valid``, ``invalid`` (every seed), ``partial`` (some seeds) or ``unknown``."""
        if self.n and self.n_invalid == self.n:
            return "invalid"
        if self.n_invalid:
            return "partial"
        return "unknown" if self.n_unknown or not self.n else "valid"

    @property
    def valid(self) -> bool | None:
        """True (every seed valid), False (every seed invalid), None otherwise."""
        return {"valid": True, "invalid": False}.get(self.status)

    def status_text(self) -> str:
        """``valid``, :data:`NO_VALID` (with ``k/n seeds`` where partial) or ``unknown``."""
        if self.status == "partial":
            return f"{NO_VALID} ({self.n_invalid}/{self.n} seeds)"
        return NO_VALID if self.status == "invalid" else self.status


def group_privacy(g: Group, task: str) -> GroupPrivacy:
    """Privacy of a configuration on one attribute (cells from :func:`select_privacy`)."""
    vals, cis, names, reasons = [], [], [], []
    n = n_bad = n_unknown = 0
    for r in g.records:
        if task not in r.sections.attributes:
            continue
        p = r.sections.attribute(task)
        n += 1
        names.append(str(p.adversary or model_name(r)))
        ok = p.privacy_valid
        if ok is False:
            n_bad += 1
            why = str(p.privacy_invalid_reason or NO_VALID)
            if why not in reasons:
                reasons.append(why)
            continue
        if ok is None:
            n_unknown += 1
        vals.append(p.privacy)
        cis.append(p.privacy_ci95)
    return GroupPrivacy(stat(vals, cis), adversary_text(names), n, n_bad, n_unknown, reasons)


def tasks_of(groups: Iterable[Group]) -> list[str]:
    """Sorted private attributes of any cell."""
    tasks: set[str] = set()
    for g in groups:
        for r in g.records:
            tasks |= set(r.sections.privacy) | set(r.sections.vs_baseline.by_privacy_task)
    return sorted(tasks)


def validity_rows(groups: Sequence[Group]) -> list[dict[str, str]]:
    """Per dataset × model × attribute: is privacy valid, judged on the baseline, and why not.

    Rows come from the baseline configurations (the baseline carries its own check); dataset ×
    model × attribute combinations of privatized configurations without a baseline get a row
    saying so. Values are text (Markdown-free).
    """
    rows: dict[tuple[str, str, str], dict[str, str]] = {}
    for g in groups:
        if not g.config.is_baseline:
            continue
        c = g.config
        for task in tasks_of([g]):
            gp = group_privacy(g, task)
            f1 = g.stat(lambda m, t=task: m.attribute(t).adversary_macro_f1,
                        lambda m, t=task: m.attribute(t).adversary_macro_f1_ci95)
            thr = g.stat(lambda m, t=task: m.attribute(t).chance_threshold)
            if gp.status == "unknown":
                found = [str(r.sections.attribute(task).privacy_invalid_reason or "")
                         for r in g.records]
                why = "; ".join(dict.fromkeys(w for w in found if w)) or (
                    "validity not recorded (cells from before the validity check)")
            else:
                why = "; ".join(gp.reasons)
            rows[(c.dataset, c.model, task)] = {
                "dataset": c.dataset, "model": c.model, "attribute": task,
                "adversary": gp.adversary, "macro_f1": _fmt(f1), "chance_threshold": _fmt(thr),
                "valid": {"valid": "yes", "invalid": "no", "partial":
                          f"no ({gp.n_invalid}/{gp.n} seeds)"}.get(gp.status, "unknown"),
                "reason": why}
    for g in groups:
        c = g.config
        for task in tasks_of([g]):
            if not c.is_baseline and (c.dataset, c.model, task) not in rows:
                rows[(c.dataset, c.model, task)] = {
                    "dataset": c.dataset, "model": c.model, "attribute": task, "adversary": "",
                    "macro_f1": "", "chance_threshold": "", "valid": "unknown",
                    "reason": "no unprivatized baseline in these results"}
    return [rows[k] for k in sorted(rows)]


def _fmt(s: Stat | None) -> str:
    return fmt_interval(s, 3, False, "")


# --------------------------------------------------------------------------------------------
# Membership inference
# --------------------------------------------------------------------------------------------


def mia_auc(m: CellMetrics) -> Any:
    """The headline MIA AUC of a cell (:attr:`bench.results.sections.Membership.headline_auc`),
    or None."""
    return m.mia.headline_auc


@dataclass
class GroupMIA:
    """One configuration's membership-inference AUC over its seeds."""

    stat: Stat | None
    """AUC over the seeds whose MIA is not invalid, with its 95% interval (t over seeds; one
    seed: the headline AUC's bootstrap interval ``mia_auc_ci``)."""
    ci: tuple[float, float] | None
    """The headline AUC's confidence interval (one seed only)."""
    attack: str
    """The headline attack (per seed counts where they differ)."""
    n: int
    """Seeds with an MIA."""
    n_invalid: int = 0
    """Seeds whose MIA is not valid (``mia_valid`` False)."""
    cis: list[str] = field(default_factory=list)
    """Per seed: ``seed s: [lo, hi]``."""
    reasons: list[str] = field(default_factory=list)
    """Why the MIA is not valid."""


def group_mia(g: Group) -> GroupMIA | None:
    """The MIA of a configuration (None: no cell ran one)."""
    vals, val_cis, attacks, cis, reasons, ci1 = [], [], [], [], [], None
    n = n_bad = 0
    for r in g.records:
        mia = r.sections.mia
        auc = mia.headline_auc
        if auc is None or not r.sections.has("mia"):
            continue
        n += 1
        attacks.append(str(mia.mia_attack or ""))
        ci = mia.mia_auc_ci
        ci_ok = isinstance(ci, (list, tuple)) and len(ci) == 2
        if ci_ok:
            lo, hi = to_float(ci[0]), to_float(ci[1])
            cis.append(f"seed {r.seed}: [{lo:.3f}, {hi:.3f}]")
            ci1 = (lo, hi)
        if mia.mia_valid is False:
            n_bad += 1
            why = str(mia.mia_invalid_reason or NO_VALID_MIA)
            if why not in reasons:
                reasons.append(why)
            continue
        vals.append(auc)
        val_cis.append(ci if ci_ok else None)
    if not n:
        return None
    return GroupMIA(stat(vals, val_cis), ci1 if n == 1 and len(cis) == 1 else None,
                    adversary_text(attacks), n, n_bad, cis, reasons)


__all__ = [
    "HEADLINE",
    "NO_VALID",
    "NO_VALID_MIA",
    "OWN_MODEL",
    "GroupMIA",
    "GroupPrivacy",
    "adversary_results",
    "adversary_text",
    "available_adversaries",
    "baseline_of",
    "describe_choice",
    "group_mia",
    "group_privacy",
    "judge",
    "mia_auc",
    "resolve_adversary",
    "select_privacy",
    "tasks_of",
    "validity_rows",
]
