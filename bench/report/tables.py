"""Report tables: trade-off (Riecker 2023), rewrite (Huang et al. 2024), guarantees (Table 5.2).

Each builder returns :class:`Table` objects that render to Markdown, LaTeX (booktabs) and CSV.
The Markdown and LaTeX files show rounded numbers (3 decimals; BLEU 2) with their 95% interval
(:class:`bench.report.results.Stat`): ``mean ± half-width`` of the Student-t interval over
n ≥ 2 seeds, ``mean [lo, hi]`` for one seed's bootstrap interval over the test documents, the
bare mean where there is no interval; the CSV holds the same rows in tidy form with 6
decimals, the std, the interval ends (``*_ci_lo``, ``*_ci_hi``) and the seed count. Everything
is sorted in a stable order, so the same results give byte-identical files.

* :func:`tradeoff_tables` — one table per sensitivity approach; rows mapping × mechanism ×
  model × dataset × ε × private attribute; columns Adversary (the attack privacy is read from:
  the strongest by default), Change in Utility, Change in Privacy, Trade-off (= ΔU + ΔP,
  Riecker 2023, Sec. 4.2). A Δ not distinguishable from zero carries the marker ``ns``
  (:func:`delta_test`: paired t over seeds, or overlapping bootstrap intervals for one seed).
  Favourable trade-offs (> 0) in bold; cells whose utility model or
  adversary is no better than chance are kept and flagged (the thesis leaves them out of
  Tables 5.1–6.4). Where the privacy measurement is not valid (the adversary is at chance on
  the unprivatized baseline) Change in Privacy reads "no valid privacy measurement" and there
  is no trade-off.
* :func:`rewrite_tables` — one table per dataset; rows N_w, ROUGE-1, BLEU, BERTScore (and a
  model's loss where reported); column groups mechanism × ε plus the non-private column; best
  value per ε in bold (Huang et al. 2024, Tables 1–3).
* :func:`guarantee_table` — per sensitivity approach × mechanism: sensitivity bound, the noise
  parameters actually used, the guarantee and whether it is proven (Riecker 2023, Table 5.2).

Example:
    >>> from bench.report.results import load_results, group_cells
    >>> groups, _ = group_cells(load_results("results").cells)
    >>> for table in tradeoff_tables(groups):
    ...     print(table.markdown())
"""

from __future__ import annotations

import csv
import io
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.report.privacy import (
    NO_VALID,
    GroupPrivacy,
    baseline_index,
    baseline_of,
    describe_choice,
    group_privacy,
    tasks_of,
)
from bench.report.results import (
    CellRecord,
    Group,
    Stat,
    dig,
    fmt_eps,
    fmt_interval,
    round_text,
    stat,
    to_float,
)
from bench.report.stats import Significance, delta_significance

logger = logging.getLogger(__name__)

DASH = "—"
"""Shown where there is no value."""


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def fmt_stat(s: Stat | None, digits: int = 3, signed: bool = False) -> str:
    """``mean ± half-width`` (t over seeds), ``mean [lo, hi]`` (one run's bootstrap) or ``mean``.

    Rounded; :data:`DASH` for no value (:func:`bench.report.results.fmt_interval`).
    """
    return fmt_interval(s, digits, signed, DASH)


NS = "ns"
"""Marker after a Δ that is not significantly different from zero (:func:`delta_test`)."""


def fmt_delta(s: Stat | None, sig: Significance | None, digits: int = 3) -> str:
    """A signed Δ with its interval and, where it is not significant, the :data:`NS` marker."""
    text = fmt_stat(s, digits, signed=True)
    if s is not None and sig is not None and sig.significant is False:
        text += f" {NS}"
    return text


def interval_note() -> str:
    """What every interval in the report is (the notes under tables, the leaderboard).

    The resample count is the runner's, :data:`bench.metrics.classification.BOOTSTRAP_RESAMPLES`.
    """
    from bench.metrics.classification import BOOTSTRAP_RESAMPLES

    return (f"95% interval: t over n seeds; single run: bootstrap over test documents "
            f"({BOOTSTRAP_RESAMPLES:,} resamples). Shown as mean ± half-width of the Student-t "
            "interval, mean ± t(0.975, n−1)·s/√n, for n ≥ 2 seeds; as mean [lo, hi] for one "
            "seed's percentile bootstrap; the bare mean where there is no interval (cells from "
            "before suite 0.3.0, metrics without a bootstrap).")


def csv_num(x: float | None) -> str:
    """A CSV number: 6 decimals, empty for None, ``inf`` for infinity."""
    if x is None:
        return ""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    return round_text(x, 6, False)


@dataclass
class Value:
    """One displayed table cell."""

    text: str
    """The text (plain; renderers escape it)."""
    bold: bool = False
    """Whether it is highlighted."""


@dataclass
class Table:
    """A rendered-agnostic table."""

    name: str
    """File stem (``tradeoff_none``)."""
    title: str
    """Caption."""
    columns: list[str]
    """Column headers (Markdown and CSV-like flat form)."""
    rows: list[list[Value]]
    """Display rows."""
    records: list[dict[str, str]]
    """Tidy CSV rows (every row has the same keys, in order)."""
    notes: list[str] = field(default_factory=list)
    """Footnotes (legend, warnings)."""
    align: str = ""
    """LaTeX column alignment, one letter per column (default: first ``l``, rest ``r``)."""
    groups: list[tuple[str, int]] | None = None
    """LaTeX column-group header row: (label, span) covering every column."""
    sub_columns: list[str] | None = None
    """LaTeX second header row under :attr:`groups` (default: :attr:`columns`)."""
    merge: int = 0
    """Leading columns whose value is left blank when equal to the row above (thesis layout)."""

    def _display_rows(self) -> list[list[Value]]:
        out, prev = [], None
        for row in self.rows:
            shown = list(row)
            if prev is not None:
                for i in range(self.merge):
                    if [v.text for v in row[: i + 1]] == [v.text for v in prev[: i + 1]]:
                        shown[i] = Value("")
                    else:
                        break
            out.append(shown)
            prev = row
        return out

    def markdown(self) -> str:
        """GitHub-flavoured Markdown: title, table, notes."""
        def cell(v: Value) -> str:
            t = md_text(v.text)
            return f"**{t}**" if v.bold and t else t

        lines = [f"# {md_text(self.title)}", ""]
        lines.append("| " + " | ".join(md_text(c) for c in self.columns) + " |")
        aligns = self.align or "l" + "r" * (len(self.columns) - 1)
        lines.append("|" + "|".join(":---" if a == "l" else "---:" for a in aligns) + "|")
        for row in self._display_rows():
            lines.append("| " + " | ".join(cell(v) for v in row) + " |")
        if not self.rows:
            lines.append("| " + " | ".join(["(no results)"] + [""] * (len(self.columns) - 1))
                         + " |")
        if self.notes:
            lines.append("")
            lines.extend(f"{md_text(n)}  " if i < len(self.notes) - 1 else md_text(n)
                         for i, n in enumerate(self.notes))
        return "\n".join(lines) + "\n"

    def latex(self) -> str:
        """A ``table`` float with a booktabs ``tabular``, caption and notes."""
        aligns = self.align or "l" + "r" * (len(self.columns) - 1)
        lines = ["% generated by bench report; requires \\usepackage{booktabs}",
                 "\\begin{table}[ht]", "\\centering", "\\small",
                 f"\\begin{{tabular}}{{{aligns}}}", "\\toprule"]
        if self.groups:
            heads, rules, col = [], [], 1
            for label, span in self.groups:
                if span == 1:
                    heads.append(tex_escape(label))
                else:
                    heads.append(f"\\multicolumn{{{span}}}{{c}}{{{tex_escape(label)}}}")
                if label:
                    rules.append(f"\\cmidrule(lr){{{col}-{col + span - 1}}}")
                col += span
            lines.append(" & ".join(heads) + " \\\\")
            if rules:
                lines.append(" ".join(rules))
            lines.append(" & ".join(tex_escape(c) for c in (self.sub_columns or self.columns))
                         + " \\\\")
        else:
            lines.append(" & ".join(tex_escape(c) for c in self.columns) + " \\\\")
        lines.append("\\midrule")
        for row in self._display_rows():
            cells = [f"\\textbf{{{tex_escape(v.text)}}}" if v.bold and v.text
                     else tex_escape(v.text) for v in row]
            lines.append(" & ".join(cells) + " \\\\")
        if not self.rows:
            lines.append(f"\\multicolumn{{{len(self.columns)}}}{{l}}{{(no results)}} \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        if self.notes:
            lines.append("\\par\\smallskip\\footnotesize")
            lines.append(" \\\\\n".join(tex_escape(n) for n in self.notes))
        lines += [f"\\caption{{{tex_escape(self.title)}}}",
                  f"\\label{{tab:{re.sub(r'[^A-Za-z0-9:_-]', '-', self.name)}}}",
                  "\\end{table}"]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """The tidy records as CSV (``\\n`` line ends)."""
        return csv_text(self.records)

    def write(self, folder: Path) -> list[Path]:
        """Write ``<name>.md``, ``<name>.tex`` and ``<name>.csv`` into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for ext, text in (("md", self.markdown()), ("tex", self.latex()), ("csv", self.csv())):
            p = folder / f"{self.name}.{ext}"
            p.write_text(text, encoding="utf-8", newline="\n")
            paths.append(p)
        return paths


_LINE_BREAKS = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|!])")


def md_text(text: str) -> str:
    """``text`` as plain text in GitHub-flavoured Markdown, whatever it holds.

    Names in a report come from grid files and results folders, i.e. from whoever wrote them:
    they must never become links, images, HTML or a new table row. Every line break (``\r``,
    ``\n``, Unicode separators) becomes a space; ``\\ ` * _ [ ] | !`` are backslash-escaped
    (no link, image, code span, emphasis or table cell can start); ``& < >`` become entities
    (no HTML, no ``<url>`` autolink); and ``://`` and ``www.`` are broken with an entity so
    that GitHub's bare-URL autolinks do not fire.
    """
    text = _LINE_BREAKS.sub(" ", str(text))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return text.replace("://", "&#58;//").replace("www.", "www&#46;")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(records: list[dict]) -> str:
    """Records as CSV (``\n`` line ends; the first record's keys are the columns), every
    field through :func:`csv_cell`; empty without records."""
    if not records:
        return ""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(k) for k in records[0]])
    w.writerows([csv_cell(r.get(k, "")) for k in records[0]] for r in records)
    return buf.getvalue()


def csv_cell(value: object) -> object:
    """A CSV field that no spreadsheet runs as a formula: a text starting with ``= + - @``,
    a tab or a carriage return gets a leading ``'`` (OWASP's advice for CSV injection);
    numbers, including negative ones and the report's number texts (``-0.759``), stay as
    they are."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


_TEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}"}
_TEX_UNICODE = {"±": r"\ensuremath{\pm}", "ε": r"\ensuremath{\varepsilon}",
                "∞": r"\ensuremath{\infty}", "≈": r"\ensuremath{\approx}",
                "↑": r"\ensuremath{\uparrow}", "↓": r"\ensuremath{\downarrow}",
                "·": r"\ensuremath{\cdot}", "Δ": r"\ensuremath{\Delta}",
                "δ": r"\ensuremath{\delta}", "γ": r"\ensuremath{\gamma}",
                "θ": r"\ensuremath{\theta}", "≤": r"\ensuremath{\le}",
                "≥": r"\ensuremath{\ge}", "×": r"\ensuremath{\times}",
                "★": r"\ensuremath{\star}", "√": r"\ensuremath{\surd}", "−": "-", "—": "---",
                "–": "--", "†": r"\dag{}"}


def tex_escape(text: str) -> str:
    """Escape LaTeX specials and map the Unicode symbols the report uses to math."""
    out = []
    for ch in text:
        if ch in _TEX_SPECIAL:
            out.append(_TEX_SPECIAL[ch])
        elif ch in _TEX_UNICODE:
            out.append(_TEX_UNICODE[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")  # anything else would break pdflatex
    return "".join(out)


def slug(text: str) -> str:
    """A file-name-safe form of a label."""
    s = re.sub(r"[^A-Za-z0-9.-]+", "_", text.replace("=", "-")).strip("_.")
    return s[:80] or "x"


# --------------------------------------------------------------------------------------------
# Trade-off tables (Riecker 2023, Tables 5.1–6.4)
# --------------------------------------------------------------------------------------------

TRADEOFF_NOTES = [
    (
    "Change = privatized − unprivatized baseline of the same dataset, model and seed: utility = "
    "macro-F1 of the utility model, privacy = {privacy}; "
    "trade-off = Δutility + Δprivacy (Riecker 2023, Sec. 4.2)."
    ),
    (
    "Bold: favourable trade-off (> 0). Flag: no better than chance (utility model or "
    "adversary); such rows are kept and flagged (the thesis leaves them out)."
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
    "Adversary: the attack the privacy is read from (per seed where it differs). Δprivacy and the "
    f"trade-off exist only where the privacy measurement is valid (the adversary beats chance on "
    f"the unprivatized baseline); elsewhere \"{NO_VALID}\" and no trade-off."
    ),
]
"""Notes under every trade-off table; ``{privacy}`` is filled by ``describe_choice``,
``{interval}`` by :func:`interval_note`."""


def _privacy_tasks(g: Group) -> list[str]:
    return tasks_of([g])


def delta_utility(m: Mapping[str, Any], task: str | None = None) -> Any:
    """A cell's Δutility vs its baseline (per attribute where given, else the cell's)."""
    vs = m["vs_baseline"]
    if task is not None:
        return vs["by_privacy_task"][task]["delta_utility"]
    if vs.get("delta_utility") is not None:
        return vs["delta_utility"]
    for entry in (vs.get("by_privacy_task") or {}).values():
        if isinstance(entry, Mapping) and entry.get("delta_utility") is not None:
            return entry["delta_utility"]
    return None


def utility_ci(m: Mapping[str, Any]) -> Any:
    """A cell's bootstrap interval of the utility macro-F1 (None in older cells)."""
    return m["utility"]["macro_f1_ci95"]


def privacy_ci(task: str) -> Callable[[Mapping[str, Any]], Any]:
    """Getter of a cell's bootstrap interval of the privacy read on ``task`` (None if absent)."""
    return lambda m: m["privacy"][task]["privacy_ci95"]


@dataclass
class DeltaTest:
    """A Δ vs the baseline over seeds and whether it differs from zero."""

    stat: Stat | None
    """The Δ over the paired seeds (t interval for n ≥ 2; no interval for one seed)."""
    sig: Significance
    """:func:`bench.report.stats.delta_significance` of the per-seed differences."""


def delta_test(g: Group, key: str, task: str | None = None,
               base_index: Mapping[str, list[CellRecord]] | None = None) -> DeltaTest:
    """Δ (``delta_utility``, ``delta_privacy`` or ``tradeoff``) of a configuration, and its test.

    The per-seed differences are the cells' own ``vs_baseline`` deltas (privatized − the
    baseline of the same seed: paired by seed). n ≥ 2: the paired t interval
    (:func:`bench.report.stats.delta_significance`). One seed: the cell's bootstrap interval
    of the metric against its baseline cell's (found in ``base_index``,
    :func:`bench.report.privacy.baseline_index`); the trade-off has no such rule.

    Args:
        g: a privatized configuration.
        key: which Δ.
        task: the private attribute (None: Δutility of the cell, for the leaderboard).
        base_index: baselines of the report's cells (needed for the one-seed rule).
    """
    if key == "delta_utility":
        def get(m: Mapping[str, Any]) -> Any:
            return delta_utility(m, task)
    else:
        def get(m: Mapping[str, Any]) -> Any:
            return m["vs_baseline"]["by_privacy_task"][task][key]
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


def _value(get: Callable[[Mapping[str, Any]], Any], rec: CellRecord) -> Any:
    try:
        v = get(rec.metrics)
    except (KeyError, TypeError, IndexError, AttributeError):
        return None
    if isinstance(v, (list, tuple)):
        return v
    f = to_float(v)
    return f if math.isfinite(f) else None


def _flag(g: Group, task: str, has_delta: bool, gp: GroupPrivacy | None = None) -> str:
    n = len(g.records)
    parts = []
    u = g.count(lambda m: m["utility"]["chance_level"] is True)
    a = g.count(lambda m: m["privacy"][task]["chance_level"] is True)
    for what, k in (("utility", u), ("adversary", a)):
        if k:
            parts.append(f"{what} ≈ chance" + (f" ({k}/{n} seeds)" if n > 1 else ""))
    missing = g.count(lambda m: m["privacy"][task].get("missing") is True)
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

    Privacy is read from ``metrics["privacy"][task]`` as :func:`bench.report.privacy.
    select_privacy` left it (default: the headline, the strongest adversary); the Adversary
    column names it. Where the privacy measurement is not valid (the adversary is at chance on
    the baseline) Change in Privacy reads :data:`bench.report.privacy.NO_VALID` and there is no
    trade-off.

    Args:
        groups: aggregated configurations (:func:`bench.report.results.group_cells`).
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
    for sens in sorted(by_sens):
        rows, records, invalid = [], [], {}
        for g in by_sens[sens]:
            for task in _privacy_tasks(g):
                row, record = _tradeoff_row(g, task, sens, base_index, invalid)
                rows.append(row)
                records.append(record)
        name = _unique(f"tradeoff_{slug(sens)}", used)
        who = "" if adversary is None else f" (adversary: {adversary})"
        title = f"{title_prefix}Privacy-utility trade-off{who}, sensitivity approach: {sens}"
        notes = [TRADEOFF_NOTES[0].format(privacy=describe_choice(adversary)),
                 TRADEOFF_NOTES[1], interval_note(), *TRADEOFF_NOTES[3:]]
        notes += [f"{NO_VALID.capitalize()} for {ds} / {task}: {'; '.join(why)}."
                  for (ds, task), why in sorted(invalid.items())]
        tables.append(Table(name, title, ["Mapping", "Mechanism", "Model", "Dataset", "ε",
                                          "Attribute", "Adversary", "Change in Utility",
                                          "Change in Privacy", "Trade-off", "n", "Flag"],
                            rows, records, notes, align="llllrllrrrrl", merge=4))
    return tables


def _tradeoff_row(g: Group, task: str, sens: str, base_index: Mapping[str, list[CellRecord]],
                  invalid: dict[tuple[str, str], list[str]]
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
    favourable = to is not None and float(fmt_stat(to).split()[0]) > 0
    n = len(g.records)
    dp_text = NO_VALID if gp.status == "invalid" else fmt_delta(dp, tp.sig)
    rules = sorted({t.sig.rule for t in (tu, tp, tt) if t.sig.rule})
    for why in gp.reasons:
        invalid.setdefault((c.dataset, task), [])
        if why not in invalid[(c.dataset, task)]:
            invalid[(c.dataset, task)].append(why)
    row = [Value(c.mapping), Value(c.mechanism), Value(c.model),
           Value(c.dataset), Value(fmt_eps(c.epsilon)), Value(task),
           Value(gp.adversary),
           Value(fmt_delta(du, tu.sig)), Value(dp_text),
           Value(fmt_delta(to, tt.sig), bold=favourable),
           Value(str(n)), Value(flag)]
    record = {
        "sensitivity": sens, "mapping": c.mapping, "mechanism": c.mechanism,
        "model": c.model, "dataset": c.dataset, "epsilon": fmt_eps(c.epsilon)
        .replace("∞", "inf"), "attribute": task, "adversary": gp.adversary,
        "suite_version": c.suite_version,
        "n_seeds": str(n), "seeds": " ".join(map(str, g.seeds)),
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


def _unique(name: str, used: set[str]) -> str:
    base, i = name, 2
    while name in used:
        name, i = f"{base}_{i}", i + 1
    used.add(name)
    return name


# --------------------------------------------------------------------------------------------
# Rewrite tables (Huang et al. 2024, Tables 1–3)
# --------------------------------------------------------------------------------------------

REWRITE_METRICS: tuple[tuple[str, str, int, float], ...] = (
    ("n_w", "N_w", 3, 1.0),
    ("rouge1", "ROUGE-1", 3, 1.0),
    ("bleu", "BLEU", 2, 100.0),
    ("bertscore", "BERTScore", 3, 1.0),
)
"""(key in ``metrics.rewrite``, label, decimals, value of the identity rewrite)."""


def higher_is_better(metric: str) -> bool:
    """Direction of a metric from :data:`bench.metrics.METRICS` (loss: lower is better)."""
    if "loss" in metric:
        return False
    try:
        from bench.metrics import METRICS

        return bool(METRICS.get(metric).higher_is_better)
    except Exception:  # noqa: BLE001 - an unregistered metric: assume higher is better
        return True


def _loss(m: Mapping[str, Any]) -> Any:
    for path in (("utility", "loss"), ("rewrite", "loss"), ("utility", "test_loss")):
        v = dig(m, *path)
        if v is not None:
            return v
    return None


def rewrite_tables(groups: Sequence[Group], title_prefix: str = "") -> list[Table]:
    """Rewrite tables, one per dataset with rewrite metrics.

    Rewrite metrics depend on the privatized corpus, not on the model: configurations that
    differ only in the model are pooled, one value per seed (the first model's cell). A loss row
    is added per model that reports one (``utility.loss``).

    Args:
        groups: aggregated configurations.
        title_prefix: prepended to each title.

    Returns:
        Tables named ``rewrite_<dataset>``.
    """
    by_ds: dict[str, list[Group]] = {}
    for g in groups:
        by_ds.setdefault(g.config.dataset, []).append(g)
    tables, used = [], set()
    for ds in sorted(by_ds):
        table = _rewrite_table(ds, [g for g in by_ds[ds] if g.config.rewriter == "none"],
                               title_prefix, used)
        if table is not None:
            tables.append(table)
        for rw in sorted({g.config.rewriter for g in by_ds[ds]} - {"none"}):
            table = _rewriter_table(ds, rw, [g for g in by_ds[ds] if g.config.rewriter == rw],
                                    title_prefix, used)
            if table is not None:
                tables.append(table)
    return tables


REWRITER_METRICS: tuple[tuple[str, str, int], ...] = (
    ("loss", "Loss", 3),
    ("rouge1", "ROUGE-1", 3),
    ("bleu", "BLEU", 2),
    ("n_w", "N_w", 3),
    ("bertscore", "BERTScore", 3),
)
"""Rows of a rewriter's table, in the order of Huang et al. (2024, Tables 1-3): (key in
``metrics.rewrite`` and ``metrics.rewrite_reference``, label, decimals)."""


def _rewriter_table(ds: str, rw: str, gs: list[Group], title_prefix: str, used: set[str]
                    ) -> Table | None:
    """The rewrite table of the cells of one dataset rewritten by ``rw`` (TrLaplace layout):
    Loss, ROUGE-1, BLEU, N_w, BERTScore per mechanism and ε; the Original ε=∞ column is the
    same rewriter on unperturbed embeddings (``metrics.rewrite_reference``, measured)."""
    priv = [g for g in gs if any("rewrite" in r.metrics for r in g.records)]
    if not priv:
        return None
    cols, _loss_by = _rewrite_columns(priv)
    col_keys = sorted(cols, key=lambda k: (k[0], k[1]))
    ref_by_seed = {r.seed: r.metrics["rewrite_reference"] for c in cols.values()
                   for r in c.values() if r.metrics.get("rewrite_reference")}
    columns = ["Metric", "Original ε=∞"] + [f"{m} ε={fmt_eps(e)}" for m, e in col_keys]
    groups_hdr = [("", 1), ("Original", 1)]
    for m, _e in col_keys:
        if groups_hdr[-1][0] == m:
            groups_hdr[-1] = (m, groups_hdr[-1][1] + 1)
        else:
            groups_hdr.append((m, 1))
    sub = ["Privacy budget ε", "∞"] + [fmt_eps(e) for _m, e in col_keys]
    rows, records = [], []
    for key, label, digits in REWRITER_METRICS:
        stats = [stat(r.metrics["rewrite"].get(key) for r in cols[k].values()) for k in col_keys]
        if all(s is None for s in stats):
            continue
        orig = stat(ref.get(key) for ref in ref_by_seed.values())
        row, recs = _rewrite_row(ds, key, label, digits, orig, stats, col_keys)
        rows.append(row)
        records += [{"rewriter": rw, **rec} for rec in recs]
    name = _unique(f"rewrite_{slug(ds)}_{slug(rw)}", used)
    return Table(name, f"{title_prefix}Rewrite metrics, dataset: {ds}, rewriter: {rw}",
                 columns, rows, records, _rewriter_notes(rw, cols), groups=groups_hdr,
                 sub_columns=sub)


def _rewriter_notes(rw: str, cols: dict[tuple[str, float], dict[int, CellRecord]]
                    ) -> list[str]:
    """The notes under a rewriter's table."""
    recs = [r for c in cols.values() for r in c.values()]
    info = recs[0].metrics.get("rewriter") or {}
    notes = [(f"The privatized embeddings are rewritten to text by the {rw} rewriter "
              f"(Huang et al. 2024, Sec. 6 and App. A; bench.rewriters), trained on "
              f"{info.get('corpus', '?')!s} ({info.get('docs', '?')} documents, "
              f"fit_on: {info.get('fit_on', '?')}), then compared with the original test "
              "documents: loss = the rewriter's reconstruction loss (mean per-token "
              "cross-entropy, nats, of the original words given the privatized vectors), "
              "ROUGE-1 recall and BERTScore F1 in [0, 1], corpus BLEU in [0, 100], N_w = "
              "fraction of words unchanged."),
             ("Original: the same rewriter trained and applied on the unperturbed embeddings "
              "(measured, one per seed). Bold: best value per ε (where at least two "
              "mechanisms share that ε)."),
             ("Values: mean ± half-width of the 95% t interval over n seeds, "
              "mean ± t(0.975, n−1)·s/√n; a single run shows the bare value.")]
    void = sorted({r.metrics["rewriter"].get("void_reason") for r in recs
                   if (r.metrics.get("rewriter") or {}).get("guarantee_void")})
    if void:
        notes.append("Guarantee void: " + "; ".join(void) + ".")
    n_docs = sorted({int(to_float(r.metrics["rewrite"].get("n_docs"), 0)) for r in recs})
    if n_docs:
        notes.append(f"Documents per cell: {', '.join(map(str, n_docs))}.")
    return notes


def _rewrite_table(ds: str, gs: list[Group], title_prefix: str, used: set[str]) -> Table | None:
    """The rewrite table of one dataset (None where no privatized cell has rewrite metrics)."""
    priv = [g for g in gs if not g.config.is_baseline
            and any("rewrite" in r.metrics for r in g.records)]
    if not priv:
        return None
    cols, loss_by = _rewrite_columns(priv)
    col_keys = sorted(cols, key=lambda k: (k[0], k[1]))
    base = {g.config.model: g for g in gs if g.config.is_baseline}
    models = sorted({g.config.model for g in gs
                     if any(_loss(r.metrics) is not None for r in g.records)})
    columns = ["Metric", "Original ε=∞"] + [f"{m} ε={fmt_eps(e)}" for m, e in col_keys]
    groups_hdr = [("", 1), ("Original", 1)]
    for m, _e in col_keys:
        if groups_hdr[-1][0] == m:
            groups_hdr[-1] = (m, groups_hdr[-1][1] + 1)
        else:
            groups_hdr.append((m, 1))
    sub = ["Privacy budget ε", "∞"] + [fmt_eps(e) for _m, e in col_keys]
    rows, records = [], []
    for key, label, digits, orig, stats in _rewrite_metric_rows(cols, col_keys, models, base,
                                                                loss_by):
        row, recs = _rewrite_row(ds, key, label, digits, orig, stats, col_keys)
        rows.append(row)
        records += recs
    name = _unique(f"rewrite_{slug(ds)}", used)
    return Table(name, f"{title_prefix}Rewrite metrics, dataset: {ds}", columns,
                 rows, records, _rewrite_notes(cols), groups=groups_hdr, sub_columns=sub)


def _rewrite_columns(priv: list[Group]
                     ) -> tuple[dict[tuple[str, float], dict[int, CellRecord]],
                                dict[tuple[str, str, float], list[CellRecord]]]:
    """The columns, (mechanism label, ε) -> {seed: record} pooled over models (the first
    model's cell per seed), and every record by (model, mechanism label, ε) for the loss rows.
    The label names the sensitivity and the mapping where those vary."""
    vary_sens = len({g.config.sensitivity for g in priv}) > 1
    vary_map = len({g.config.mapping for g in priv}) > 1

    def mech_label(g: Group) -> str:
        lab = g.config.mechanism
        if vary_sens:
            lab += f" sens={g.config.sensitivity}"
        if vary_map:
            lab += f" map={g.config.mapping}"
        return lab

    cols: dict[tuple[str, float], dict[int, CellRecord]] = {}
    loss_by: dict[tuple[str, str, float], list[CellRecord]] = {}
    for g in sorted(priv, key=lambda g: (mech_label(g), g.config.epsilon, g.config.model)):
        key = (mech_label(g), g.config.epsilon)
        for r in g.records:
            if "rewrite" in r.metrics:
                cols.setdefault(key, {}).setdefault(r.seed, r)
            loss_by.setdefault((g.config.model, *key), []).append(r)
    return cols, loss_by


def _rewrite_metric_rows(cols: dict[tuple[str, float], dict[int, CellRecord]],
                         col_keys: list[tuple[str, float]], models: list[str],
                         base: dict[str, Group],
                         loss_by: dict[tuple[str, str, float], list[CellRecord]]
                         ) -> list[tuple[str, str, int, Stat | None, list[Stat | None]]]:
    """(metric key, label, decimals, original value, one stat per column) of every rewrite
    metric some column has, then a loss row per model that reports one."""
    metric_rows: list[tuple[str, str, int, Stat | None, list[Stat | None]]] = []
    for key, label, digits, ident in REWRITE_METRICS:
        stats = [stat(r.metrics["rewrite"].get(key) for r in cols[k].values())
                 for k in col_keys]
        if all(s is None for s in stats):
            continue
        metric_rows.append((key, label, digits, Stat(ident, None, 0), stats))
    for model in models:
        stats = [stat(_loss(r.metrics) for r in loss_by.get((model, *k), []))
                 for k in col_keys]
        bs = base[model].stat(_loss) if model in base else None
        metric_rows.append(("loss", f"Loss ({model})", 3, bs, stats))
    return metric_rows


def _rewrite_row(ds: str, key: str, label: str, digits: int, orig: Stat | None,
                 stats: list[Stat | None], col_keys: list[tuple[str, float]]
                 ) -> tuple[list[Value], list[dict[str, str]]]:
    """One metric: the table row (best value per ε in bold) and a CSV record per column."""
    hib = higher_is_better(key)
    shown = [fmt_stat(s, digits) for s in stats]
    best: set[int] = set()
    for eps in sorted({e for _m, e in col_keys}):
        idx = [i for i, (_m, e) in enumerate(col_keys) if e == eps
               and stats[i] is not None]
        if len(idx) < 2:
            continue
        vals = {i: float(round_text(stats[i].mean, digits, False)) for i in idx}
        target = max(vals.values()) if hib else min(vals.values())
        best |= {i for i, v in vals.items() if v == target}
    orig_text = DASH if orig is None else (
        round_text(orig.mean, digits, False) + ("" if orig.n else " (identity)"))
    arrow = "↑" if hib else "↓"
    row = ([Value(f"{label} {arrow}"), Value(orig_text)]
           + [Value(t, bold=i in best) for i, t in enumerate(shown)])
    records = []
    for i, (m, e) in enumerate(col_keys):
        s = stats[i]
        records.append({"dataset": ds, "metric": label, "higher_is_better":
                        str(hib).lower(), "mechanism": m,
                        "epsilon": fmt_eps(e).replace("∞", "inf"),
                        "mean": csv_num(s.mean if s else None),
                        "std": csv_num(s.std if s else None),
                        "ci_lo": csv_num(s.lo if s and s.has_interval else None),
                        "ci_hi": csv_num(s.hi if s and s.has_interval else None),
                        "n_seeds": str(s.n if s else 0),
                        "best": str(i in best).lower(),
                        "original": csv_num(orig.mean if orig else None)})
    return row, records


def _rewrite_notes(cols: dict[tuple[str, float], dict[int, CellRecord]]) -> list[str]:
    """The notes under a rewrite table (what the metrics are; documents per cell)."""
    notes = [("Rewrite metrics between the original and the privatized test documents "
             "(Huang et al. 2024, Sec. 6): N_w = fraction of words unchanged, ROUGE-1 recall "
             "and BERTScore F1 in [0, 1], corpus BLEU in [0, 100]."),
             ("Original: the unprivatized text compared with itself (identity values, not "
             "measured); loss: the baseline model's. Bold: best value per ε (where at least "
             "two mechanisms share that ε)."),
             ("Values: mean ± half-width of the 95% t interval over n seeds, "
              "mean ± t(0.975, n−1)·s/√n; a single run has no interval here (rewrite "
              "metrics carry no bootstrap interval) and shows the bare value.")]
    n_docs = sorted({int(to_float(r.metrics["rewrite"].get("n_docs"), 0))
                     for c in cols.values() for r in c.values()})
    if n_docs:
        notes.append(f"Documents per cell: {', '.join(map(str, n_docs))}.")
    return notes


# --------------------------------------------------------------------------------------------
# Guarantee table (Riecker 2023, Table 5.2)
# --------------------------------------------------------------------------------------------


def privatizer_of(rec: CellRecord) -> tuple[dict[str, Any] | None, str]:
    """The privatizer description a cell recorded (``metrics.privatization.privatizer``).

    Only the cell itself is read (never the runner's corpus cache, which is not part of a
    committed reference), so a report is a function of the cells alone.

    Returns:
        ``(privatizer dict or None, "metrics" | "")``.
    """
    p = dig(rec.metrics, "privatization", "privatizer")
    if isinstance(p, Mapping):
        return dict(p), "metrics"
    return None, ""


def _g4(v: Any) -> str:
    f = to_float(v)
    if isinstance(v, bool) or (math.isnan(f) and not isinstance(v, (int, float))):
        return str(v).lower() if isinstance(v, bool) else str(v)
    if math.isinf(f):
        return "∞"
    return f"{f:.4g}"


def describe_guarantee(g: Mapping[str, Any] | None) -> str:
    """Guarantee with a symbolic ε: ``ε-DP``, ``(2.535·ε, δ=1e-06)-DP``, ``ε·d metric DP``."""
    if not g:
        return DASH
    kind = g.get("kind")
    if kind == "none":
        return "none"
    m = to_float(g.get("multiplier"), 1.0)
    eps = "ε" if m == 1 else f"{m:.4g}·ε"
    delta = to_float(g.get("delta"), 0.0)
    l10 = g.get("log10_delta")
    dl = f"1e{to_float(l10):.1f}" if l10 is not None else f"{delta:.3g}"
    has_delta = delta > 0 or l10 is not None
    if kind == "pure":
        text = f"{eps}-DP"
    elif kind == "approx":
        text = f"({eps}, δ={dl})-DP"
    else:
        text = f"{eps}·d metric DP" if not has_delta else f"({eps}·d, δ={dl}) metric DP"
        if g.get("metric"):
            text += f" [{g['metric']}]"
    return text


def _bound_text(sens: Mapping[str, Any] | None) -> str:
    if not sens:
        return DASH
    b = to_float(sens.get("bound"))
    text = "Δ = ∞ (unbounded)" if math.isinf(b) else (f"Δ ≤ {b:.4g}" if math.isfinite(b)
                                                       else DASH)
    d = to_float(sens.get("delta"), 0.0)
    if d > 0:
        text += f" w.p. 1−δ, δ={d:.3g}"
    if sens.get("proven") is False:
        text += " (estimated)"
    return text


def _noise_params(rec: CellRecord, priv: Mapping[str, Any] | None) -> dict[str, str]:
    if priv is not None:
        mech = {k: v for k, v in (priv.get("mechanism") or {}).items()
                if k not in ("name", "version", "epsilon")}
        out = {k: _g4(v) for k, v in mech.items()}
        dim = dig(priv, "sensitivity", "out_dim")
        if dim is not None:
            out["d"] = _g4(dim)
        return out
    params = (rec.spec.get("mechanism") or {}).get("params") or {}
    return {k: _g4(v) + " (spec)" for k, v in params.items()}


def guarantee_table(groups: Sequence[Group], title_prefix: str = "") -> Table:
    """Theoretical guarantees per sensitivity approach × mechanism (Riecker 2023, Table 5.2).

    Noise parameters come from the privatizer description the cell recorded
    (:func:`privatizer_of`), else from the spec (marked ``(spec)``). Parameters that depend on ε
    (or differ between datasets) are listed per ε.

    Args:
        groups: aggregated configurations.
        title_prefix: prepended to the title.

    Returns:
        The table ``guarantees``.
    """
    by_key: dict[tuple[str, str], list[tuple[float, CellRecord]]] = {}
    for g in groups:
        if g.config.is_baseline:
            continue
        for r in g.records:
            by_key.setdefault((g.config.sensitivity, g.config.mechanism), []).append(
                (g.config.epsilon, r))
    rows, records = [], []
    for (sens, mech) in sorted(by_key):
        items = sorted(by_key[(sens, mech)], key=lambda t: (t[0], t[1].seed, t[1].hash))
        row, record = _guarantee_row(sens, mech, items)
        rows.append(row)
        records.append(record)
    notes = [("Guarantee per token, with ε the configured budget (Riecker 2023, Table 5.2; "
             "Eq. 5.1 for the multiplier of a sensitivity bound the noise is not calibrated "
             "to). \"estimated from data\": a bound in the guarantee is estimated, not proven."),
             ("Noise parameters: as used by the runs (the privatizer description in each "
             "cell); d = dimension after the sensitivity transform; \"(spec)\": only the "
             "configured parameters were available.")]
    return Table("guarantees", f"{title_prefix}Theoretical privacy guarantees",
                 ["Sensitivity approach", "Sensitivity bound", "Mechanism", "Noise parameters",
                  "Privacy guarantee", "Proven"], rows, records, notes, align="llllll", merge=2)


def _guarantee_row(sens: str, mech: str, items: list[tuple[float, CellRecord]]
                   ) -> tuple[list[Value], dict[str, str]]:
    """One sensitivity approach × mechanism from its cells ``items`` ((ε, record), sorted):
    the table row and its CSV record."""
    bounds, guars, proven, reasons, sources = [], [], [], [], set()
    noise: dict[str, list[tuple[float, str]]] = {}
    for eps, r in items:
        priv, src = privatizer_of(r)
        sources.add(src or "spec")
        _add(bounds, _bound_text(priv.get("sensitivity") if priv else None))
        g = r.metrics.get("guarantee") or dig(r.metrics, "privatization", "guarantee")
        _add(guars, describe_guarantee(g))
        if g and g.get("void"):  # a rewriter trained on the evaluated data (bench.rewriters)
            _add(proven, "void")
            _add(reasons, str(g.get("void_reason") or "void"))
        elif g:
            ok = g.get("proven") is not False
            _add(proven, "proven" if ok else "estimated from data")
            if not ok and g.get("reason"):
                _add(reasons, str(g["reason"]))
        for k, v in _noise_params(r, priv).items():
            if (eps, v) not in noise.setdefault(k, []):
                noise[k].append((eps, v))
    bounds = [b for b in bounds if b != DASH] or [DASH]
    guars = [g for g in guars if g != DASH] or [DASH]
    noise_text = _noise_text(noise)
    status = " / ".join(proven) or DASH
    if reasons:
        status += ": " + "; ".join(reasons)
    row = [Value(sens), Value(" / ".join(bounds)), Value(mech), Value(noise_text),
           Value(" / ".join(guars)), Value(status)]
    record = {"sensitivity": sens, "sensitivity_bound": " / ".join(bounds),
              "mechanism": mech, "noise_parameters": noise_text,
              "guarantee": " / ".join(guars), "proven": status,
              "source": "+".join(sorted(sources)), "n_cells": str(len(items))}
    return row, record


def _noise_text(noise: dict[str, list[tuple[float, str]]]) -> str:
    """Noise parameters as text: one value, or the values per ε where they differ."""
    parts = []
    for k in sorted(noise):
        vals = noise[k]
        if len({v for _e, v in vals}) == 1:
            parts.append(f"{k} = {vals[0][1]}")
        else:
            parts.append(f"{k} = " + ", ".join(f"{v} (ε={fmt_eps(e)})" for e, v in vals))
    return "; ".join(parts) or DASH


def _add(lst: list[str], item: str) -> None:
    if item not in lst:
        lst.append(item)
