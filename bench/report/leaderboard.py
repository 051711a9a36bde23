"""Static, self-contained HTML leaderboard (``leaderboard.html``): no network, no external files.

One row per mechanism configuration (dataset × model × sensitivity approach × mechanism ×
mapping, suite version apart); per ε its utility (macro-F1) and empirical privacy (1 − macro-F1
of the strongest adversary, per private attribute, the adversary's name in brackets; "no valid
privacy measurement" where that adversary is at chance on the unprivatized baseline), and where
measured the membership-inference AUC (the strongest attack, with its confidence interval; "no
valid MIA" where not valid) and N_w; all with their 95% interval (``mean ± half-width`` of the
t interval over seeds, ``mean [lo, hi]`` for one seed's bootstrap over the test documents, the
bare mean where there is none; :class:`bench.report.results.Stat`). A privatized value whose
difference from the unprivatized baseline is not significant carries ``ns`` (the rule of the
trade-off tables, :func:`bench.report.tables.delta_test`). Rank columns for utility and each
attribute's privacy rank the rows of one dataset and model at one ε so that entries whose
intervals overlap share a rank, ``rank_i = 1 + #{j : lo_j > hi_i}``
(:func:`bench.report.stats.interval_ranks`); an entry without an interval is ranked by its mean
and flagged ``†``. Invalid privacy is not ranked and takes no part in the Pareto front. The
guarantee type, the seeds and a Pareto marker complete the row: a (configuration, ε) point is
on the Pareto front when no other point of the same dataset, model and attribute has utility
and privacy both at least as high and one of them higher (means; baselines take part). The ★
column lists the ε at which the row is on the front. With ``bench audit`` records
(:mod:`bench.report.audits`) an Audit column gives per ε PASS, VIOLATION (red, with its max
excess, and a banner above the table) or "not audited"; the tooltip holds draws, confidence
and date. Without an audit folder the column is left out.

Columns sort on click (inline JavaScript, stable, numbers by value, missing values last); the
page also sorts on load from the query string, ``leaderboard.html?sort=<column id>&dir=desc``,
through the same click handler. Every string from configurations or data is HTML-escaped.

Example:
    >>> from bench.report.results import load_results, group_cells
    >>> groups, warnings = group_cells(load_results("results").cells)
    >>> Path("leaderboard.html").write_text(render_leaderboard(groups, "quickstart", warnings))
"""

from __future__ import annotations

import html
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bench.report.audits import NOT_AUDITED, AuditSet
from bench.report.privacy import (
    NO_VALID,
    NO_VALID_MIA,
    baseline_index,
    describe_choice,
    group_mia,
    group_privacy,
    tasks_of,
)
from bench.report.results import CellRecord, Group, Stat, dig, fmt_eps, stat
from bench.report.stats import interval_ranks
from bench.report.tables import (
    DASH,
    NS,
    delta_test,
    describe_guarantee,
    fmt_stat,
    interval_note,
    slug,
    utility_ci,
)

logger = logging.getLogger(__name__)


def esc(text: object) -> str:
    """HTML-escape any value (quotes included)."""
    return html.escape(str(text), quote=True)


@dataclass
class Row:
    """One leaderboard row: a mechanism configuration over its ε values."""

    dataset: str
    model: str
    sensitivity: str
    mechanism: str
    mapping: str
    suite: str
    by_eps: dict[float, Group] = field(default_factory=dict)
    pareto: list[float] = field(default_factory=list)

    @property
    def is_baseline(self) -> bool:
        """Whether this is the unprivatized baseline."""
        return self.mechanism == "none"

    @property
    def config(self) -> str:
        """The mechanism with its sensitivity approach and mapping (``Config.mechanism_config``)."""
        return f"{self.mechanism} · sens={self.sensitivity} · map={self.mapping}"

    def records(self) -> list[CellRecord]:
        """Every cell of the row, in ε order."""
        return [r for _e, g in sorted(self.by_eps.items()) for r in g.records]


def rows_by_config(groups: Sequence[Group]) -> list[Row]:
    """The groups (one configuration at one ε each) gathered into rows over ε, sorted."""
    rows: dict[tuple, Row] = {}
    for g in groups:
        c = g.config
        key = (c.dataset, c.model, c.sensitivity, c.mechanism != "none", c.mechanism, c.mapping,
               c.suite_version)
        row = rows.setdefault(key, Row(c.dataset, c.model, c.sensitivity, c.mechanism,
                                       c.mapping, c.suite_version))
        row.by_eps[c.epsilon] = g
    return [rows[k] for k in sorted(rows)]


def _tasks(groups: Sequence[Group]) -> list[str]:
    return tasks_of(groups)


def _u(g: Group) -> Stat | None:
    return g.stat(lambda m: m["utility"]["macro_f1"], utility_ci)


def _p(g: Group, task: str) -> Stat | None:
    """Privacy over the seeds where it is a valid (or not judged) measurement."""
    return group_privacy(g, task).stat


def _by_adversary_tip(g: Group, task: str) -> str:
    """``macro-F1 by adversary: informed 0.410, lexical 0.450`` (means over seeds)."""
    names = sorted({n for r in g.records
                    for n in (dig(r.metrics, "privacy", task, "by_adversary") or {})})
    parts = []
    for n in names:
        s = stat(dig(r.metrics, "privacy", task, "by_adversary", n, "adversary_macro_f1")
                 for r in g.records)
        if s is not None:
            parts.append(f"{n} {s.mean:.3f}")
    return ("adversary macro-F1: " + ", ".join(parts)) if parts else ""


def _ns(g: Group, key: str, task: str | None,
        base_index: Mapping[str, list[CellRecord]] | None) -> str:
    """`` ns`` (a span) where a privatized value does not differ significantly from its baseline."""
    if base_index is None or g.config.is_baseline:
        return ""
    t = delta_test(g, key, task, base_index)
    if t.stat is None or t.sig.significant is not False:
        return ""
    tip = (f"Δ vs the unprivatized baseline {fmt_stat(t.stat, signed=True)}: not significant "
           f"({t.sig.rule}, {t.sig.n} seed{'s' if t.sig.n != 1 else ''})")
    return f' <span class="ns" title="{esc(tip)}">{NS}</span>'


def _utility_td(g: Group | None, base_index: Mapping[str, list[CellRecord]] | None) -> str:
    """Utility with its interval and, where not significantly different from the baseline, ns."""
    if g is None:
        return _td(None)
    s = _u(g)
    v = "" if s is None else repr(round(s.mean, 9))
    text = esc(fmt_stat(s)) + (_ns(g, "delta_utility", None, base_index) if s else "")
    return f'<td class="num" data-v="{esc(v)}">{text}</td>'


def _privacy_td(g: Group | None, task: str,
                base_index: Mapping[str, list[CellRecord]] | None = None) -> str:
    """Privacy with its interval and adversary, or "no valid privacy measurement"."""
    if g is None:
        return _td(None)
    gp = group_privacy(g, task)
    tip = [t for t in (_by_adversary_tip(g, task), *gp.reasons) if t]
    title = f' title="{esc("; ".join(tip))}"' if tip else ""
    if gp.status == "invalid":
        return f'<td class="num invalid" data-v=""{title}>{esc(NO_VALID)}</td>'
    s = gp.stat
    v = "" if s is None else repr(round(s.mean, 9))
    text = esc(fmt_stat(s))
    if s is not None:
        text += _ns(g, "delta_privacy", task, base_index)
    if s is not None and gp.adversary:
        text += f' <span class="adv">({esc(gp.adversary)})</span>'
    if gp.status == "partial":
        text += (f' <span class="invalid">{esc(NO_VALID)} in {gp.n_invalid}/{gp.n} seeds'
                 "</span>")
    return f'<td class="num" data-v="{esc(v)}"{title}>{text}</td>'


def _mia_td(g: Group | None) -> str:
    """MIA AUC: headline (strongest attack) with its CI (one seed), or "no valid MIA"."""
    gm = group_mia(g) if g is not None else None
    if gm is None:
        return _td(None)
    tip = [t for t in ("; ".join(gm.cis), *gm.reasons) if t]
    title = f' title="{esc("; ".join(tip))}"' if tip else ""
    if gm.n_invalid == gm.n:
        return f'<td class="num invalid" data-v=""{title}>{esc(NO_VALID_MIA)}</td>'
    s = gm.stat
    v = "" if s is None else repr(round(s.mean, 9))
    text = esc(fmt_stat(s))  # one seed: the bootstrap interval [lo, hi]
    if gm.attack:
        text += f' <span class="adv">({esc(gm.attack)})</span>'
    if gm.n_invalid:
        text += (f' <span class="invalid">{esc(NO_VALID_MIA)} in {gm.n_invalid}/{gm.n} seeds'
                 "</span>")
    return f'<td class="num" data-v="{esc(v)}"{title}>{text}</td>'


def _nw(g: Group) -> Stat | None:
    return g.stat(lambda m: m["n_w"] if m.get("n_w") is not None else m["rewrite"]["n_w"])


RankKey = tuple[int, str]
"""(row index, rank column id)."""


def rank_entries(rows: Sequence[Row], tasks: Sequence[str]
                 ) -> dict[RankKey, tuple[int, bool]]:
    """Interval ranks per ε of utility and each attribute's privacy: ``{(row, col): (rank, ok)}``.

    Entries compete within the same dataset, model and suite version at the same ε (the rows
    of one column that are comparable); ``ok`` is False where the entry had no interval and is
    ranked by its mean alone. Invalid privacy (and missing values) get no rank. Rule:
    :func:`bench.report.stats.interval_ranks` (higher is better for both).
    """
    pools: dict[tuple, list[tuple[int, Stat]]] = {}
    for i, row in enumerate(rows):
        for eps, g in row.by_eps.items():
            eid = _eid(eps)
            u = _u(g)
            if u is not None:
                pools.setdefault((row.dataset, row.model, row.suite, f"utility_rank_eps{eid}"),
                                 []).append((i, u))
            for t in tasks:
                gp = group_privacy(g, t)
                if gp.status != "invalid" and gp.stat is not None:
                    pools.setdefault((row.dataset, row.model, row.suite,
                                      f"privacy_{slug(t)}_rank_eps{eid}"), []).append(
                        (i, gp.stat))
    out: dict[RankKey, tuple[int, bool]] = {}
    for (_ds, _m, _s, col), entries in pools.items():
        ranks = interval_ranks([s.bounds for _i, s in entries])
        for (i, s), r in zip(entries, ranks):
            out[(i, col)] = (r, s.has_interval)
    return out


def _rank_td(rank: tuple[int, bool] | None) -> str:
    if rank is None:
        return f'<td class="num rank" data-v="">{esc(DASH)}</td>'
    r, ok = rank
    if ok:
        return f'<td class="num rank" data-v="{r}">{r}</td>'
    return (f'<td class="num rank" data-v="{r}" title="no interval: ranked by the mean alone">'
            f"{r}†</td>")


def _eid(eps: float) -> str:
    return "inf" if math.isinf(eps) else slug(f"{eps:g}")


def pareto_points(rows: Sequence[Row], tasks: Sequence[str]) -> None:
    """Fill ``row.pareto`` with the ε where the row is not dominated (per dataset/model/task)."""
    pts: dict[tuple, list[tuple[float, float, Row, float]]] = {}
    for row in rows:
        for eps, g in row.by_eps.items():
            u = _u(g)
            for t in tasks:
                p = _p(g, t)
                if u is not None and p is not None:
                    pts.setdefault((row.dataset, row.model, t, row.suite), []).append(
                        (u.mean, p.mean, row, eps))
    for cands in pts.values():
        for u, p, row, eps in cands:
            dominated = any(u2 >= u and p2 >= p and (u2 > u or p2 > p)
                            for u2, p2, _r, _e in cands)
            if not dominated and eps not in row.pareto:
                row.pareto.append(eps)
    for row in rows:
        row.pareto.sort()


def _guarantee(row: Row) -> str:
    texts = []
    for _eps, g in sorted(row.by_eps.items()):
        for r in g.records:
            gd = r.metrics.get("guarantee")
            if row.mechanism == "none" and not gd:
                t = "none (no privatization)"
            else:
                t = describe_guarantee(gd)
                if gd and gd.get("proven") is False:
                    t += " (estimated)"
            if t not in texts:
                texts.append(t)
    return " / ".join(texts) or DASH


def _audit_td(row: Row, audits: AuditSet) -> str:
    """The audit cell: one entry per ε (PASS, VIOLATION with its excess, not audited)."""
    if row.mechanism == "none":
        return f'<td class="audit" data-v="">{esc(DASH)}</td>'
    parts, worst = [], 0
    for eps, g in sorted(row.by_eps.items()):
        rec, key = audits.lookup(g)
        where = f"ε={fmt_eps(eps)}"
        if rec is None:
            tip = f"{where}: no audit record with key {key}" if key else where
            parts.append(f'<span class="audit-none" title="{esc(tip)}">'
                         f"{esc(NOT_AUDITED)} {esc(where)}</span>")
            continue
        worst = max(worst, 2 if rec.violation else 1)
        cls = "audit-violation" if rec.violation else "audit-pass"
        text = f"⚠ {rec.status} {where} ({rec.excess_text()})" if rec.violation \
            else f"{rec.status} {where}"
        parts.append(f'<span class="{cls}" title="{esc(where + ": " + rec.detail())}">'
                     f"{esc(text)}</span>")
    cls = {2: "audit audit-violation", 1: "audit", 0: "audit"}[worst]
    return f'<td class="{cls}" data-v="{worst}">' + "<br>".join(parts) + "</td>"


def _td(s: Stat | None, digits: int = 3) -> str:
    v = "" if s is None else repr(round(s.mean, 9))
    return f'<td class="num" data-v="{esc(v)}">{esc(fmt_stat(s, digits))}</td>'


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em} p.note{font-size:.85em;color:#444;max-width:70em}
table{border-collapse:collapse;font-size:.82em}
th,td{border:1px solid #ccc;padding:.25em .5em;white-space:nowrap}
th{background:#f0f0f0;cursor:pointer;position:sticky;top:0;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"} th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums} tr:nth-child(even) td{background:#fafafa}
td.pareto{color:#a05a00;font-weight:bold} ul.warn{color:#8a1f11;font-size:.85em}
span.ns{color:#777;font-size:.85em} td.rank{color:#555}
span.adv{color:#555;font-size:.9em} td.invalid,span.invalid{color:#8a1f11;font-style:italic}
"""

_AUDIT_CSS = """
#leaderboard td.audit-violation{background:#fde0dc;border:2px solid #b71c1c}
span.audit-violation{color:#fff;background:#b71c1c;font-weight:bold;padding:0 .3em}
span.audit-pass{color:#1b5e20} span.audit-none{color:#777}
p.violation{color:#fff;background:#b71c1c;font-weight:bold;padding:.4em .6em;max-width:70em}
"""

_JS = """
(function () {
  "use strict";
  var table = document.getElementById("leaderboard");
  var body = table.tBodies[0];
  Array.prototype.forEach.call(body.rows, function (r, i) { r.setAttribute("data-i", i); });
  function key(row, idx) {
    var td = row.cells[idx];
    var v = td.getAttribute("data-v");
    if (v !== null) { return v === "" ? null : parseFloat(v); }
    return td.textContent;
  }
  function sortBy(th, dir) {
    var idx = th.cellIndex;
    var rows = Array.prototype.slice.call(body.rows);
    var sign = dir === "descending" ? -1 : 1;
    rows.sort(function (a, b) {
      var x = key(a, idx), y = key(b, idx), c = 0;
      if (x === null && y !== null) { return 1; }
      if (y === null && x !== null) { return -1; }
      if (x !== null && y !== null) {
        if (typeof x === "number" && typeof y === "number") { c = x - y; }
        else { c = String(x).localeCompare(String(y)); }
      }
      if (c === 0) { return a.getAttribute("data-i") - b.getAttribute("data-i"); }
      return sign * c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      h.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", dir);
    table.setAttribute("data-sorted", th.getAttribute("data-col") + ":" + dir);
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    th.addEventListener("click", function () {
      sortBy(th, th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending");
    });
  });
  var q = new URLSearchParams(window.location.search);
  var col = q.get("sort");
  if (col) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      if (th.getAttribute("data-col") !== col) { return; }
      th.click();
      if (q.get("dir") === "desc") { th.click(); }
    });
  }
})();
"""


# Long (~115 lines) on purpose: it writes the page top to bottom (head, banner, header rows,
# body rows, script) as one template; the row and cell builders above hold the logic.
def render_leaderboard(groups: Sequence[Group], title: str = "",
                       warnings: Sequence[str] = (), audits: AuditSet | None = None,
                       adversary: str | None = None) -> str:
    """The leaderboard page (one self-contained HTML string).

    Args:
        groups: aggregated configurations (:func:`bench.report.results.group_cells`).
        title: page title (e.g. the grid name).
        warnings: shown above the table (e.g. mixed suite versions).
        audits: ``bench audit`` records (:func:`bench.report.audits.load_audits`); adds the
            ``audit`` column (and a banner when an audit found a violation). None: no column.
        adversary: the adversary choice the cells were selected with
            (:func:`bench.report.privacy.select_privacy`; the note only).

    Returns:
        The HTML text.
    """
    rows = rows_by_config(groups)
    tasks = _tasks(groups)
    pareto_points(rows, tasks)
    ranks = rank_entries(rows, tasks)
    base_index = baseline_index(r for g in groups for r in g.records)
    eps_all = sorted({e for r in rows for e in r.by_eps})
    has_auc = any(group_mia(g) is not None for g in groups)
    has_nw = any(_nw(g) is not None for g in groups if not g.config.is_baseline)
    cols: list[tuple[str, str]] = [("dataset", "Dataset"), ("model", "Model"),
                                   ("mechanism", "Mechanism"), ("sensitivity", "Sensitivity"),
                                   ("mapping", "Mapping"), ("guarantee", "Guarantee")]
    if audits is not None:
        cols.append(("audit", "Audit"))
    for e in eps_all:
        et = fmt_eps(e)
        eid = _eid(e)
        cols.append((f"utility_eps{eid}", f"Utility ε={et}"))
        cols.append((f"utility_rank_eps{eid}", f"Utility rank ε={et}"))
        for t in tasks:
            cols.append((f"privacy_{slug(t)}_eps{eid}", f"Privacy ({t}) ε={et}"))
            cols.append((f"privacy_{slug(t)}_rank_eps{eid}", f"Privacy ({t}) rank ε={et}"))
        if has_auc:
            cols.append((f"mia_auc_eps{eid}", f"MIA AUC ε={et}"))
        if has_nw:
            cols.append((f"n_w_eps{eid}", f"N_w ε={et}"))
    cols += [("seeds", "Seeds"), ("pareto", "Pareto ★")]
    head = "".join(f'<th data-col="{esc(cid)}" scope="col">{esc(label)}</th>'
                   for cid, label in cols)
    body = []
    for i, r in enumerate(rows):
        tds = [f"<td>{esc(x)}</td>" for x in (r.dataset, r.model, r.mechanism, r.sensitivity,
                                              r.mapping, _guarantee(r))]
        if audits is not None:
            tds.append(_audit_td(r, audits))
        for e in eps_all:
            g = r.by_eps.get(e)
            eid = _eid(e)
            tds.append(_utility_td(g, base_index))
            tds.append(_rank_td(ranks.get((i, f"utility_rank_eps{eid}"))))
            for t in tasks:
                tds.append(_privacy_td(g, t, base_index))
                tds.append(_rank_td(ranks.get((i, f"privacy_{slug(t)}_rank_eps{eid}"))))
            if has_auc:
                tds.append(_mia_td(g))
            if has_nw:
                tds.append(_td(_nw(g) if g and not g.config.is_baseline else None))
        seeds = sorted({s for g in r.by_eps.values() for s in g.seeds})
        tds.append(f'<td class="num" data-v="{len(seeds)}">{esc(" ".join(map(str, seeds)))}'
                   "</td>")
        star = ("★ " + ", ".join(f"ε={fmt_eps(e)}" for e in r.pareto)) if r.pareto else ""
        tds.append(f'<td class="pareto" data-v="{len(r.pareto)}">{esc(star)}</td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    warn = ""
    if warnings:
        warn = '<ul class="warn">' + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>"
    heading = f"{title} leaderboard" if title else "Leaderboard"
    note = ("Utility: macro-F1 of the utility model. Privacy: "
            + esc(describe_choice(adversary)) + ", higher is more private; the adversary in "
            "brackets (hover for every adversary's macro-F1); &quot;" + esc(NO_VALID)
            + "&quot; where that adversary is at chance on the unprivatized baseline. MIA AUC: "
            "membership-inference ROC AUC of the strongest attack (lower is better), its "
            "confidence interval in square brackets (one seed; hover for each seed's), "
            "&quot;" + esc(NO_VALID_MIA) + "&quot; where the measurement is not valid. "
            "N_w: fraction of words unchanged. Values: " + esc(interval_note()) + " "
            "ns: the privatized value does not differ significantly from the unprivatized "
            "baseline of the same dataset and model (n ≥ 2 seeds: the paired t interval of the "
            "per-seed differences contains 0; one seed: the two bootstrap intervals overlap, a "
            "conservative rule; hover for the Δ). Ranks (utility, privacy per attribute): among "
            "the rows of the same dataset and model at the same ε, rank = 1 + the number of "
            "entries whose whole interval lies above this entry's, so entries whose intervals "
            "overlap share a rank (ranks may skip: 1, 1, 3); †: no interval, ranked by the "
            "mean alone. "
            "★: not dominated in (utility, privacy) means within the same dataset, model and "
            "attribute, at the listed ε. Click a column header to sort; "
            "?sort=&lt;column&gt;&amp;dir=desc sorts on load.")
    css, banner = _CSS, ""
    if audits is not None:
        css += _AUDIT_CSS
        note += (" Audit: the <code>bench audit</code> status of the mechanism configuration "
                 "(mechanism, ε, parameters, sensitivity approach) per ε; PASS = no evidence "
                 "against the claimed guarantee at the audit's sample size, VIOLATION = an "
                 "empirical lower bound on the privacy loss exceeds the claim (max excess = "
                 "lower bound − claim); hover for draws, confidence and date.")
        bad = sorted({f"{g.config.mechanism} ε={fmt_eps(g.config.epsilon)} "
                      f"(sens={g.config.sensitivity})" for g in groups
                      if (rec := audits.match(g)) is not None and rec.violation})
        if bad:
            banner = ("<p class=\"violation\">⚠ Privacy audit VIOLATION: the claimed guarantee "
                      "does not hold for " + esc(", ".join(bad)) + " (see the Audit column)."
                      "</p>\n")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
            f"<title>{esc(heading)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
            f"<h1>{esc(heading)}</h1>\n{banner}<p class=\"note\">{note}</p>\n{warn}\n"
            f"<table id=\"leaderboard\">\n<thead><tr>{head}</tr></thead>\n<tbody>\n"
            + "\n".join(body) + "\n</tbody>\n</table>\n"
            f"<script>{_JS}</script>\n</body>\n</html>\n")


__all__ = ["esc", "pareto_points", "rank_entries", "render_leaderboard"]
