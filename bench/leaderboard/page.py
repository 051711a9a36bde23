"""``leaderboard.html``: one self-contained page for a merged ``leaderboard.json``.

:func:`render_page` takes the parsed ``leaderboard.json`` (``docs/leaderboard.md``, schema
version 1) and returns one HTML file that needs nothing else: inline CSS and JavaScript, a
Content-Security-Policy that forbids every network load, and the data embedded once as JSON in a
``<script type="application/json">`` element (every ``<`` written as ``\\u003c``, so no string
can close the element). The header (date, generator, sources, score, conflicts and problems) is
HTML-escaped in Python; the page's script builds the rest from the embedded data, and every
string from the data reaches the DOM as text: through ``textContent`` / ``new Option`` or
through an HTML string in which it was escaped (``& < > " '``). Links are kept only for the
``file:``, ``http:`` and ``https:`` schemes; any other value (``javascript:…``) is shown as text.

Rendering strategy (fast at 10,000 entries):

* **Table.** One row per entry, built as one HTML string of escaped parts assigned with a single
  ``innerHTML`` (each row's HTML is built once and cached). Filtering and sorting run over all
  entries (plain arrays of precomputed keys; stable, numbers by value, missing values last in
  both directions), but only the first :data:`ROW_LIMIT` rows of the result are put in the DOM,
  with a "show all" button. Sorting is one listener on the header row (click, or Enter on a
  focused header); the cell lists (``cells (n)``: hash → files / MLflow links, provenance) are
  collapsed ``<details>``.
* **Scatter.** One privacy–utility SVG per board with visible entries (x = empirical privacy,
  y = utility, both 0..1; each entry's points joined in ε order, Pareto points ringed, the
  board's baselines as black diamonds). Points without a valid privacy measurement
  (``privacy_valid`` false, or no privacy value) are not plotted and the caption says how many;
  ``privacy_valid`` null (unknown) is plotted and the tooltip says so. Without a board filter
  only the first :data:`PLOT_LIMIT` boards (in board order) are drawn, with a button for more;
  choosing a board in the Board filter draws that board. Hovering a point fills one tooltip
  element (one ``mouseover`` listener for all plots).
* **Filters.** Selects for board, dataset, model, mechanism, sensitivity, mapping, suite
  version and audit status; they filter the table and the plots.
* **Query string.** ``?mechanism=tem&sort=score&dir=desc&all=1`` sets the filters (any filter
  id), the sort column (``board``, ``rank``, ``score``, ``model``, ``config``, ``guarantee``,
  ``audit`` = VIOLATION > PASS > not audited, ``epsilon`` = number of ★, ``cells``) and "show
  all" on load; changes are written back with ``history.replaceState`` where the browser
  allows it.
* **State for tests and benchmarks.** ``<body data-rendered-ms>`` is ``performance.now()``
  when the first render is complete (milliseconds since navigation start: HTML and JSON
  parsing included), with ``data-parse-ms`` / ``data-table-ms`` / ``data-plot-ms`` for the
  parts; ``<table data-sorted="score:descending" data-rows data-shown>``; each plot
  ``<svg data-points>``.

Example:
    >>> import json
    >>> board = json.loads(Path("board/leaderboard.json").read_text())
    >>> Path("board/leaderboard.html").write_text(render_page(board))
"""

from __future__ import annotations

import html
import json
import logging
import math
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger(__name__)

SCHEMA = "bench-leaderboard"
"""The ``schema`` value of a leaderboard.json."""

SCHEMA_VERSION = 1
"""The schema version this page was written for (newer versions are rendered with a warning)."""

ROW_LIMIT = 1000
"""Table rows put in the DOM before "show all" (filtering and sorting always use every entry)."""

PLOT_LIMIT = 6
"""Boards plotted without a board filter (a button draws more)."""

DASH = "—"

_SCORES = {
    "hypervolume_gain": "hypervolume gain over the unprivatized baseline: the area of the "
                        "privacy–utility square that the entry's points dominate and the "
                        "baseline of the same dataset and model does not (0..1, higher is "
                        "better)",
}
_INTERVALS = {"t_bootstrap_se95": "95% t interval over n seeds with a bootstrap standard error",
              "bootstrap95": "95% percentile bootstrap interval"}


def _esc(value: object) -> str:
    """HTML-escape a value (quotes included); None as a dash."""
    return DASH if value is None else html.escape(str(value), quote=True)


def _finite_json(obj: Any) -> Any:
    """The data with non-finite floats as strings (``"inf"``, ``"-inf"``, ``"nan"``).

    ``JSON.parse`` rejects ``Infinity`` and ``NaN``; the page shows ``"inf"`` as ∞.
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, Mapping):
        return {str(k): _finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite_json(v) for v in obj]
    return obj


def embed_json(data: Any) -> str:
    """JSON text that is safe inside ``<script type="application/json">``.

    Every ``<`` is written as ``\\u003c`` (so neither ``</script`` nor ``<!--`` can occur), and
    U+2028 / U+2029 as escapes; non-finite floats become strings (:func:`_finite_json`).
    """
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite_json(data), separators=(",", ":"), allow_nan=False)
    # ensure_ascii (the default) already escapes U+2028/U+2029 and every non-ASCII character
    return text.replace("<", "\\u003c")


def _score_text(score: Any) -> str:
    if not isinstance(score, Mapping):
        return "Score: not described."
    name = score.get("name")
    text = _SCORES.get(name, str(name) if name is not None else "unnamed")
    interval = score.get("interval")
    parts = [f"Score: {text}"]
    if interval is not None:
        iv = _INTERVALS.get(interval, str(interval))
        if score.get("resamples") is not None:
            iv += f" ({score['resamples']} resamples)"
        parts.append(f"interval: {iv}")
    return "; ".join(parts) + "."


def _sources(sources: Any) -> str:
    if not isinstance(sources, list) or not sources:
        return "<p>No sources recorded.</p>"
    rows = []
    for s in sources:
        if not isinstance(s, Mapping):
            continue
        rows.append("<tr>" + "".join(
            f'<td{" class=num" if k in ("cells", "left_out") else ""}>{_esc(s.get(k))}</td>'
            for k in ("id", "kind", "location", "cells", "left_out")) + "</tr>")
    return ('<table class="sources"><thead><tr><th>Source</th><th>Kind</th><th>Location</th>'
            "<th>Cells</th><th>Left out</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table>")


def _details(cls: str, items: list[str], noun: str, note: str) -> str:
    """A collapsible list: ``<details class=cls>`` with ``n noun(s) (note)`` as its summary
    (``items``: escaped ``<li>`` elements)."""
    n = len(items)
    body = f"<ul>{''.join(items)}</ul>" if items else "<p>None.</p>"
    return (f'<details class="{cls}" data-count="{n}"><summary>{n} {noun}'
            f"{'' if n == 1 else 's'} ({note})</summary>{body}</details>")


def _conflicts(conflicts: Any) -> str:
    items = []
    for c in conflicts if isinstance(conflicts, list) else []:
        if not isinstance(c, Mapping):
            items.append(f"<li>{_esc(c)}</li>")
            continue
        srcs = c.get("sources") if isinstance(c.get("sources"), list) else []
        diffs = c.get("differences") if isinstance(c.get("differences"), list) else []
        items.append(f"<li><code>{_esc(c.get('hash'))}</code> {_esc(c.get('name'))} "
                     f"({_esc(', '.join(map(str, srcs)))}): "
                     f"{_esc('; '.join(map(str, diffs)))}</li>")
    return _details("conflicts", items, "conflict",
                    "cells whose sources disagree; left out of the ranking")


def _variants(variants: Any) -> str:
    items = []
    for v in variants if isinstance(variants, list) else []:
        if not isinstance(v, Mapping):
            items.append(f"<li>{_esc(v)}</li>")
            continue
        ranked = v.get("ranked") if isinstance(v.get("ranked"), Mapping) else {}
        others = v.get("others") if isinstance(v.get("others"), list) else []
        spread = "; ".join(
            f"{o.get('source')} on {o.get('platform')}: "
            + "; ".join(map(str, o.get("differences") if isinstance(o.get("differences"), list)
                            else []))
            for o in others if isinstance(o, Mapping))
        items.append(f"<li><code>{_esc(v.get('hash'))}</code> {_esc(v.get('name'))}: ranked "
                     f"with {_esc(ranked.get('source'))} on {_esc(ranked.get('platform'))}; "
                     f"{_esc(spread)}</li>")
    return _details("variants", items, "platform variant", "copies of a cell computed on "
                    "different numeric platforms that differ; ranked with the pinned-CPU copy")


def _verify_text(verify: Any) -> str:
    """The header line on verification by recomputation (saying so when there was none)."""
    if not isinstance(verify, Mapping):
        return '<p class="meta">Not verified by recomputation (bench leaderboard --verify N).</p>'
    counts = verify.get("counts") if isinstance(verify.get("counts"), Mapping) else {}
    refuted = verify.get("refuted_sources")
    refuted = ", ".join(map(str, refuted)) if isinstance(refuted, list) and refuted else "none"
    return (f'<p class="meta">Verified by recomputation: {_esc(verify.get("cells_per_entry"))} '
            f"cell(s) per entry chosen at random (seed {_esc(verify.get('seed'))}) and recomputed "
            f"bit for bit: {_esc(counts.get('verified', 0))} verified (\u2713), "
            f"{_esc(counts.get('refuted', 0))} refuted, {_esc(counts.get('unverified', 0))} "
            "unverified (?); "
            f"refuted sources (their entries unranked): {_esc(refuted)}.</p>")


def _problems(problems: Any) -> str:
    items = [f"<li>{_esc(p)}</li>" for p in (problems if isinstance(problems, list) else [])]
    return _details("problems", items, "problem", "left-out cells and runs")


def _header(board: Mapping[str, Any]) -> str:
    entries = board.get("entries") if isinstance(board.get("entries"), list) else []
    boards = board.get("boards") if isinstance(board.get("boards"), list) else []
    mixed = board.get("allow_mixed_versions")
    mixed_text = ("entries of different suite versions share a board"
                  if mixed else "each suite version has its own boards")
    warn = ""
    version = board.get("schema_version")
    if board.get("schema") != SCHEMA or version != SCHEMA_VERSION:
        warn = (f'<p class="warn">This page was written for {SCHEMA} schema version '
                f"{SCHEMA_VERSION}; the data says {_esc(board.get('schema'))} version "
                f"{_esc(version)}. Unknown keys are ignored.</p>")
    return (f'<header id="meta">{warn}<p class="meta">Generated <time>'
            f"{_esc(board.get('generated'))}</time> by {_esc(board.get('generated_by'))}; "
            f"{len(entries)} entries on {len(boards)} boards; {mixed_text}.</p>"
            f"{_verify_text(board.get('verify'))}"
            f'<p class="meta">{_esc(_score_text(board.get("score")))}</p>'
            f"{_sources(board.get('sources'))}{_conflicts(board.get('conflicts'))}"
            f"{_variants(board.get('platform_variants'))}"
            f"{_problems(board.get('problems'))}</header>")


_NOTE = (
    "One row per entry (model × mechanism × sensitivity approach × mapping on one board = "
    "dataset · utility task · private attribute · suite version). Rank: 1 + the number of "
    "entries of the board whose whole score interval lies above this one's, so overlapping "
    "intervals share a rank; † no interval (ranked by the score alone), ⚠ audit violation "
    "(ranked after every entry that passed or was not audited), — unranked (the reason in "
    "brackets, e.g. no valid privacy measurement). ε: the measured privacy budgets, ★ where the "
    "point is on the board's Pareto front (hover for utility and privacy). Click a column "
    "header to sort (?sort=score&amp;dir=desc sorts on load); the filters apply to the table "
    "and the plots."
)

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em} h2{font-size:1.1em;margin-top:1.5em}
p.meta,p.note{font-size:.85em;color:#444;max-width:80em;margin:.3em 0}
p.warn,ul.warn{color:#8a1f11;font-size:.85em}
details{font-size:.85em;margin:.3em 0}
details.conflicts li,details.problems li,details.variants li{margin:.2em 0}
table{border-collapse:collapse;font-size:.82em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
table.sources{margin:.4em 0} table.sources th{cursor:default;position:static}
#board th{background:#f0f0f0;cursor:pointer;position:sticky;top:0;user-select:none;z-index:1}
#board td{white-space:nowrap} #board td.wrap{white-space:normal;min-width:12em;max-width:22em}
#board th[aria-sort=ascending]::after{content:" \\25B2"}
#board th[aria-sort=descending]::after{content:" \\25BC"}
td.num{text-align:right;font-variant-numeric:tabular-nums}
#board tr:nth-child(even) td{background:#fafafa}
span.flag{color:#8a1f11;cursor:help} span.why{color:#777;font-size:.9em}
#board td.audit-violation{background:#fde0dc;color:#b71c1c;font-weight:bold}
td.audit-pass{color:#1b5e20} td.audit-none{color:#777}
span.eps{margin-right:.4em;cursor:help} span.eps.front{color:#a05a00;font-weight:bold}
#board details{margin:0} #board details ul{margin:.2em 0;padding-left:1.2em}
span.prov{color:#555} span.badlink{color:#8a1f11}
form#filters{display:flex;flex-wrap:wrap;gap:.4em 1em;margin:.6em 0;font-size:.85em}
form#filters select{max-width:18em}
#count{font-size:.85em;color:#444}
#plots{display:flex;flex-wrap:wrap;gap:1em}
figure.plot{margin:0;font-size:.8em} figure.plot figcaption{max-width:420px}
svg .ax{stroke:#444} svg .grid{stroke:#e5e5e5} svg text{font-size:10px;fill:#444}
svg .ln{fill:none;stroke-width:1.2;opacity:.6} svg .pt{stroke:#fff;stroke-width:.8;cursor:help}
svg .pt.pareto{stroke:#000;stroke-width:1.6} svg .base{fill:#000;cursor:help}
#tip{position:fixed;z-index:10;background:#fff;border:1px solid #888;padding:.3em .5em;
font-size:.8em;white-space:pre-line;pointer-events:none;box-shadow:0 1px 4px #0003;max-width:28em}
"""

_JS = r"""
(function () {
  "use strict";
  var ROW_LIMIT = __ROW_LIMIT__, PLOT_LIMIT = __PLOT_LIMIT__;
  var T0 = performance.now();
  var body = document.body;
  function fail(msg) {
    var p = document.getElementById("error");
    p.textContent = msg; p.hidden = false;
    body.setAttribute("data-rendered-ms", performance.now().toFixed(1));
    body.setAttribute("data-error", "1");
  }
  var DATA;
  try {
    DATA = JSON.parse(document.getElementById("leaderboard-data").textContent);
  } catch (err) { fail("The embedded leaderboard data cannot be read: " + err); return; }
  var T_PARSE = performance.now();

  // ------------------------------------------------------------------ helpers
  var ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return ESC[c]; }); }
  function isObj(x) { return x !== null && typeof x === "object" && !Array.isArray(x); }
  function arr(x) { return Array.isArray(x) ? x : []; }
  function num(x) { return typeof x === "number" && isFinite(x) ? x : null; }
  function txt(x) { return x === null || x === undefined ? null : String(x); }
  function f3(x) { var v = num(x); return v === null ? "\u2014" : v.toFixed(3); }
  function withCi(v, ci) {
    var s = f3(v);
    if (num(v) !== null && Array.isArray(ci) && ci.length === 2 && num(ci[0]) !== null &&
        num(ci[1]) !== null) { s += " [" + f3(ci[0]) + ", " + f3(ci[1]) + "]"; }
    return s;
  }
  function fmtEps(e) {
    if (e === "inf" || e === Infinity) { return "\u221e"; }
    var v = num(e); return v === null ? String(e) : String(v);
  }
  function epsVal(e) { return e === "inf" ? Infinity : (num(e) === null ? NaN : e); }
  function safeUrl(u) {
    return typeof u === "string" && /^(https?|file):/i.test(u) ? u : null;
  }
  function link(u, label) {
    if (u === null || u === undefined) { return ""; }
    var ok = safeUrl(u);
    if (ok === null) {
      return '<span class="badlink" title="not a file/http link: not made clickable">' +
        esc(label) + ": " + esc(u) + "</span>";
    }
    return '<a href="' + esc(ok) + '" rel="noopener noreferrer">' + esc(label) + "</a>";
  }

  // ------------------------------------------------------------------ data
  var ENTRIES = arr(DATA.entries).filter(isObj);
  var BOARDS = arr(DATA.boards).filter(isObj);
  var boardById = new Map(), boardIdx = new Map();
  BOARDS.forEach(function (b, k) {
    boardById.set(String(b.id), b); boardIdx.set(String(b.id), k);
  });
  var sourceById = new Map();
  arr(DATA.sources).filter(isObj).forEach(function (s) { sourceById.set(String(s.id), s); });
  function boardText(b) {
    return [b.dataset, b.utility_task, b.private_attribute, b.suite_version]
      .filter(function (x) { return x !== null && x !== undefined && x !== ""; })
      .map(String).join(" \u00b7 ");
  }
  var N = ENTRIES.length;
  var ORD = new Array(N), BTEXT = new Array(N), BIDX = new Array(N);
  (function () {
    var pos = new Map(), k = 0;
    BOARDS.forEach(function (b) {
      arr(b.entries).forEach(function (id) {
        if (!pos.has(String(id))) { pos.set(String(id), k++); }
      });
    });
    ENTRIES.forEach(function (e, i) {
      var p = pos.get(String(e.id));
      ORD[i] = p === undefined ? k + i : p;
      var b = boardById.get(String(e.board));
      BIDX[i] = b ? boardIdx.get(String(e.board)) : -1;
      BTEXT[i] = b ? boardText(b) : boardText({dataset: e.dataset, suite_version: e.suite_version});
    });
  })();
  function configText(e) {
    if (e.config !== null && e.config !== undefined) { return String(e.config); }
    return [e.mechanism, "sens=" + e.sensitivity, "map=" + e.mapping].join(" \u00b7 ");
  }
  function cellsOf(e) {
    var out = [];
    arr(e.points).forEach(function (q) {
      if (isObj(q)) { arr(q.cells).forEach(function (c) { if (isObj(c)) { out.push([q, c]); } }); }
    });
    return out;
  }
  function paretoCount(e) {
    return arr(e.points).filter(function (q) { return isObj(q) && q.pareto === true; }).length;
  }
  var AUDIT_KEY = {"VIOLATION": 2, "PASS": 1, "not audited": 0};

  // ------------------------------------------------------------------ columns
  var COLS = [
    {id: "board", label: "Board", key: function (e, i) { return BTEXT[i]; }},
    {id: "rank", label: "Rank", key: function (e) { return num(e.rank); }},
    {id: "score", label: "Score [95% CI]", key: function (e) { return num(e.score); }},
    {id: "model", label: "Model", key: function (e) { return txt(e.model); }},
    {id: "config", label: "Mechanism \u00b7 sens \u00b7 map", key: configText},
    {id: "guarantee", label: "Guarantee", key: function (e) { return txt(e.guarantee); }},
    {id: "audit", label: "Audit", key: function (e) {
      var v = AUDIT_KEY[e.audit]; return v === undefined ? null : v; }},
    {id: "epsilon", label: "\u03b5 (\u2605 Pareto)", key: function (e) { return paretoCount(e); }},
    {id: "cells", label: "Cells", key: function (e) { return cellsOf(e).length; }}
  ];
  var COL = new Map(COLS.map(function (c) { return [c.id, c]; }));
  var KEYS = new Map();  // column id -> precomputed keys (built on first sort)
  function keysOf(id) {
    if (!KEYS.has(id)) {
      var c = COL.get(id);
      KEYS.set(id, ENTRIES.map(function (e, i) {
        var v = c.key(e, i); return v === undefined ? null : v;
      }));
    }
    return KEYS.get(id);
  }

  // ------------------------------------------------------------------ row html
  function rankCell(e) {
    var r = num(e.rank), flag = txt(e.rank_flag) || "";
    if (r === null) {
      return '<td class="num rank" title="' + esc(flag ? "unranked: " + flag : "unranked") +
        '">\u2014' + (flag ? ' <span class="why">(' + esc(flag) + ")</span>" : "") + "</td>";
    }
    var mark = "";
    if (flag === "no interval") {
      mark = '<span class="flag" title="no interval: ranked by the score alone">\u2020</span>';
    } else if (flag === "audit violation") {
      mark = '<span class="flag" title="audit violation: ranked after every entry that ' +
        'passed or was not audited">\u26a0</span>';
    } else if (flag) {
      mark = '<span class="flag" title="' + esc(flag) + '">*</span>';
    }
    var ver = isObj(e.verification) ? txt(e.verification.status) : null;
    if (ver === "verified") {
      mark += '<span class="flag" title="verified: its recomputed cells are bit-exact">' +
        "\u2713</span>";
    } else if (ver === "unverified") {
      mark += '<span class="flag" title="unverified: no recomputed cell could confirm it">?</span>';
    }
    return '<td class="num rank">' + r + mark + "</td>";
  }
  function scoreCell(e) {
    if (num(e.score) === null) {
      return '<td class="num" title="' + esc("no score" + (e.rank_flag ? ": " + e.rank_flag : "")) +
        '">\u2014</td>';
    }
    var ci = Array.isArray(e.score_ci);
    var n = num(e.score_seeds);
    return '<td class="num"' + (ci ? "" : ' title="no interval"') + ">" +
      esc(withCi(e.score, e.score_ci) + (n === null ? "" : " n=" + n)) + "</td>";
  }
  function auditCell(e) {
    var a = txt(e.audit);
    var cls = a === "VIOLATION" ? "audit-violation" : a === "PASS" ? "audit-pass" : "audit-none";
    return '<td class="' + cls + '">' + esc(a === null ? "\u2014" : a) + "</td>";
  }
  function pointTitle(q) {
    var s = "\u03b5=" + fmtEps(q.epsilon) + ": utility " + withCi(q.utility, q.utility_ci);
    if (q.privacy_valid === false || num(q.privacy) === null) {
      s += ", no valid privacy measurement";
    } else {
      s += ", privacy " + withCi(q.privacy, q.privacy_ci) +
        (q.privacy_valid === true ? "" : " (validity unknown)");
    }
    if (q.adversary !== null && q.adversary !== undefined) { s += " (" + q.adversary + ")"; }
    if (num(q.n_w) !== null) { s += ", N_w " + f3(q.n_w); }
    if (q.pareto === true) { s += ", on the Pareto front"; }
    return s;
  }
  function epsCell(e) {
    var parts = arr(e.points).filter(isObj).map(function (q) {
      var front = q.pareto === true;
      return '<span class="eps' + (front ? " front" : "") + '" title="' + esc(pointTitle(q)) +
        '">' + esc(fmtEps(q.epsilon)) + (front ? "\u2605" : "") + "</span>";
    });
    return "<td>" + parts.join("") + "</td>";
  }
  function provText(p) {
    if (!isObj(p)) { return String(p); }
    var s = sourceById.get(String(p.source));
    var bits = [String(p.source) + (s && s.location !== undefined ? " (" + s.location + ")" : "")];
    if (p.suite_version) { bits.push("suite " + p.suite_version); }
    bits.push("commit " + (p.commit === null || p.commit === undefined ? "\u2014" : p.commit));
    bits.push("machine " + (p.machine === null || p.machine === undefined ? "\u2014" : p.machine));
    bits.push("date " + (p.date === null || p.date === undefined ? "\u2014" : p.date));
    if (p.run_by !== null && p.run_by !== undefined) { bits.push("run by " + p.run_by); }
    if (p.numeric) { bits.push("platform " + p.numeric); }
    return bits.join(", ");
  }
  function cellsCell(e) {
    var cs = cellsOf(e);
    if (!cs.length) { return '<td class="num">0</td>'; }
    var items = cs.map(function (qc) {
      var q = qc[0], c = qc[1];
      var links = [link(c.href, "files"), link(c.mlflow, "MLflow")].filter(Boolean)
        .join(" \u00b7 ");
      var prov = arr(c.provenance).map(provText).join("; ");
      return "<li><code>" + esc(c.hash) + "</code> \u03b5=" + esc(fmtEps(q.epsilon)) +
        (c.seed !== null && c.seed !== undefined ? " seed " + esc(c.seed) : "") +
        (links ? ": " + links : ": no links") +
        (prov ? '<br><span class="prov">' + esc(prov) + "</span>" : "") + "</li>";
    });
    return "<td><details><summary>cells (" + cs.length + ")</summary><ul>" + items.join("") +
      "</ul></details></td>";
  }
  var ROWHTML = new Array(N);
  function rowHtml(i) {
    if (ROWHTML[i] === undefined) {
      var e = ENTRIES[i];
      ROWHTML[i] = '<tr data-i="' + i + '" data-id="' + esc(e.id) + '">' +
        '<td class="wrap">' + esc(BTEXT[i]) + "</td>" + rankCell(e) + scoreCell(e) +
        "<td>" + esc(txt(e.model) === null ? "\u2014" : e.model) + "</td>" +
        "<td>" + esc(configText(e)) + "</td>" +
        "<td>" + esc(txt(e.guarantee) === null ? "\u2014" : e.guarantee) + "</td>" +
        auditCell(e) + epsCell(e) + cellsCell(e) + "</tr>";
    }
    return ROWHTML[i];
  }

  // ------------------------------------------------------------------ filters
  var FILTERS = [
    {id: "board", label: "Board", get: function (e) { return txt(e.board); }},
    {id: "dataset", label: "Dataset", get: function (e) { return txt(e.dataset); }},
    {id: "model", label: "Model", get: function (e) { return txt(e.model); }},
    {id: "mechanism", label: "Mechanism", get: function (e) { return txt(e.mechanism); }},
    {id: "sensitivity", label: "Sensitivity", get: function (e) { return txt(e.sensitivity); }},
    {id: "mapping", label: "Mapping", get: function (e) { return txt(e.mapping); }},
    {id: "suite_version", label: "Suite version",
     get: function (e) { return txt(e.suite_version); }},
    {id: "audit", label: "Audit", get: function (e) { return txt(e.audit); }}
  ];
  var collator = new Intl.Collator(undefined, {numeric: true});
  var state = {filters: {}, sort: null, dir: "ascending", all: false, plots: PLOT_LIMIT};
  var form = document.getElementById("filters");
  FILTERS.forEach(function (f) {
    f.values = ENTRIES.map(function (e) { return f.get(e); });
    var counts = new Map();
    f.values.forEach(function (v) { if (v !== null) { counts.set(v, (counts.get(v) || 0) + 1); } });
    var vals = Array.from(counts.keys());
    if (f.id === "board") {
      vals.sort(function (a, b) {
        var x = boardIdx.has(a) ? boardIdx.get(a) : 1e9;
        var y = boardIdx.has(b) ? boardIdx.get(b) : 1e9;
        return x - y || collator.compare(a, b);
      });
    } else { vals.sort(collator.compare); }
    var label = document.createElement("label");
    label.appendChild(document.createTextNode(f.label + " "));
    var sel = document.createElement("select");
    sel.name = f.id; sel.id = "filter-" + f.id;
    sel.appendChild(new Option("all (" + ENTRIES.length + ")", ""));
    vals.forEach(function (v) {
      var b = f.id === "board" ? boardById.get(v) : null;
      sel.appendChild(new Option((b ? boardText(b) : v) + " (" + counts.get(v) + ")", v));
    });
    f.select = sel; f.known = new Set(vals);
    label.appendChild(sel); form.appendChild(label);
  });

  // ------------------------------------------------------------------ state
  var q = new URLSearchParams(window.location.search);
  FILTERS.forEach(function (f) {
    var v = q.get(f.id);
    if (v !== null && v !== "" && f.known.has(v)) { state.filters[f.id] = v; f.select.value = v; }
  });
  if (q.get("sort") && COL.has(q.get("sort"))) {
    state.sort = q.get("sort");
    state.dir = q.get("dir") === "desc" ? "descending" : "ascending";
  }
  state.all = q.get("all") === "1";
  function writeQuery() {
    var p = new URLSearchParams();
    FILTERS.forEach(function (f) {
      if (state.filters[f.id]) { p.set(f.id, state.filters[f.id]); }
    });
    if (state.sort) {
      p.set("sort", state.sort);
      if (state.dir === "descending") { p.set("dir", "desc"); }
    }
    if (state.all) { p.set("all", "1"); }
    var s = p.toString();
    try {
      history.replaceState(null, "", s ? "?" + s : window.location.pathname);
    } catch (err) { /* some file: URLs refuse it; the page works the same */ }
  }

  // ------------------------------------------------------------------ table
  var table = document.getElementById("board");
  var thead = table.tHead, tbody = table.tBodies[0];
  var hr = document.createElement("tr");
  COLS.forEach(function (c) {
    var th = document.createElement("th");
    th.setAttribute("data-col", c.id); th.setAttribute("scope", "col");
    th.setAttribute("tabindex", "0");
    th.textContent = c.label; hr.appendChild(th);
  });
  thead.appendChild(hr);
  var moreBtn = document.getElementById("show-all");
  var countP = document.getElementById("count");
  var visible = [];  // entry indices passing the filters, in default order
  var shown = [];    // visible, sorted
  var byDefault = ENTRIES.map(function (e, i) { return i; })
    .sort(function (a, b) { return ORD[a] - ORD[b]; });
  function applyFilters() {
    var act = FILTERS.filter(function (f) { return state.filters[f.id]; });
    visible = byDefault.filter(function (i) {
      for (var k = 0; k < act.length; k++) {
        if (act[k].values[i] !== state.filters[act[k].id]) { return false; }
      }
      return true;
    });
  }
  function applySort() {
    shown = visible.slice();
    if (!state.sort) { return; }
    var keys = keysOf(state.sort), sign = state.dir === "descending" ? -1 : 1;
    shown.sort(function (a, b) {
      var x = keys[a], y = keys[b], c = 0;
      if (x === null && y !== null) { return 1; }
      if (y === null && x !== null) { return -1; }
      if (x !== null && y !== null) {
        c = typeof x === "number" && typeof y === "number" ? x - y
          : collator.compare(String(x), String(y));
      }
      return c === 0 ? ORD[a] - ORD[b] : sign * c;
    });
  }
  function renderTable() {
    var n = state.all ? shown.length : Math.min(shown.length, ROW_LIMIT);
    var parts = new Array(n);
    for (var k = 0; k < n; k++) { parts[k] = rowHtml(shown[k]); }
    tbody.innerHTML = parts.join("");
    Array.prototype.forEach.call(hr.cells, function (th) {
      if (th.getAttribute("data-col") === state.sort) { th.setAttribute("aria-sort", state.dir); }
      else { th.removeAttribute("aria-sort"); }
    });
    table.setAttribute("data-sorted", state.sort ? state.sort + ":" + state.dir : "");
    table.setAttribute("data-rows", String(shown.length));
    table.setAttribute("data-shown", String(n));
    countP.textContent = shown.length + " of " + N + " entries match the filters" +
      (n < shown.length ? "; the first " + n + " are shown." : ".");
    moreBtn.hidden = n >= shown.length;
    moreBtn.textContent = "Show all " + shown.length + " rows";
  }
  function onHeader(ev) {
    var th = ev.target.closest("th");
    if (!th || (ev.type === "keydown" && ev.key !== "Enter" && ev.key !== " ")) { return; }
    ev.preventDefault();
    var id = th.getAttribute("data-col");
    state.dir = state.sort === id && state.dir === "ascending" ? "descending" : "ascending";
    state.sort = id;
    applySort(); renderTable(); writeQuery();
  }
  thead.addEventListener("click", onHeader);
  thead.addEventListener("keydown", onHeader);
  moreBtn.addEventListener("click", function () { state.all = true; renderTable(); writeQuery(); });
  form.addEventListener("change", function (ev) {
    var f = FILTERS.find(function (x) { return x.select === ev.target; });
    if (!f) { return; }
    if (ev.target.value) { state.filters[f.id] = ev.target.value; }
    else { delete state.filters[f.id]; }
    state.plots = PLOT_LIMIT;
    applyFilters(); applySort(); renderTable(); renderPlots(); writeQuery();
  });

  // ------------------------------------------------------------------ plots
  var PAL = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
             "#e377c2", "#7f7f7f", "#bcbd22"];
  var W = 420, H = 320, ML = 44, MR = 12, MT = 10, MB = 36;
  function sx(v) { return (ML + Math.min(1, Math.max(0, v)) * (W - ML - MR)).toFixed(1); }
  function sy(v) { return (H - MB - Math.min(1, Math.max(0, v)) * (H - MT - MB)).toFixed(1); }
  function plottable(q) {
    return isObj(q) && q.privacy_valid !== false && num(q.privacy) !== null &&
      num(q.utility) !== null;
  }
  function svgEl(name, attrs, inner) {  // attribute values escaped; inner is markup
    var s = "<" + name;
    Object.keys(attrs).forEach(function (k) { s += " " + k + '="' + esc(attrs[k]) + '"'; });
    return s + ">" + (inner || "") + "</" + name + ">";
  }
  function line(cls, x1, x2, y1, y2) {
    return svgEl("line", {"class": cls, x1: x1, x2: x2, y1: y1, y2: y2});
  }
  function axes() {
    var s = "";
    [0, 0.25, 0.5, 0.75, 1].forEach(function (t) {
      s += line("grid", sx(t), sx(t), sy(0), sy(1)) + line("grid", sx(0), sx(1), sy(t), sy(t)) +
        svgEl("text", {x: sx(t), y: H - MB + 13, "text-anchor": "middle"}, String(t)) +
        svgEl("text", {x: ML - 5, y: +sy(t) + 3, "text-anchor": "end"}, String(t));
    });
    return s + line("ax", sx(0), sx(1), sy(0), sy(0)) + line("ax", sx(0), sx(0), sy(0), sy(1)) +
      svgEl("text", {x: sx(0.5), y: H - 4, "text-anchor": "middle"}, "empirical privacy \u2192") +
      svgEl("text", {transform: "translate(11," + sy(0.5) + ") rotate(-90)",
                     "text-anchor": "middle"}, "utility \u2192");
  }
  var AXES = axes();
  function plotHtml(bk, idx) {
    var b = bk >= 0 ? BOARDS[bk] : null;
    var lines = "", pts = "", npts = 0, skipped = 0;
    idx.forEach(function (i, n) {
      var e = ENTRIES[i], color = PAL[n % PAL.length];
      var ps = arr(e.points).map(function (q, k) { return [q, k]; }).filter(function (qk) {
        if (plottable(qk[0])) { return true; }
        skipped++; return false;
      });
      ps.sort(function (a, c) { return epsVal(a[0].epsilon) - epsVal(c[0].epsilon); });
      if (ps.length > 1) {
        lines += svgEl("polyline", {"class": "ln", stroke: color, points: ps.map(function (qk) {
          return sx(qk[0].privacy) + "," + sy(qk[0].utility); }).join(" ")});
      }
      ps.forEach(function (qk) {
        var front = qk[0].pareto === true;
        pts += svgEl("circle", {"class": front ? "pt pareto" : "pt", "data-i": i, "data-k": qk[1],
                                cx: sx(qk[0].privacy), cy: sy(qk[0].utility),
                                r: front ? 4.5 : 3.5, fill: color});
        npts++;
      });
    });
    var bases = "";
    if (b) {
      arr(b.baselines).forEach(function (base, k) {
        if (!plottable(base)) { return; }
        var x = +sx(base.privacy), y = +sy(base.utility);
        bases += svgEl("rect", {"class": "base", "data-b": bk, "data-k": k, x: x - 4, y: y - 4,
                                width: 8, height: 8, transform: "rotate(45 " + x + " " + y + ")"});
      });
    }
    var title = b ? boardText(b) : "entries without a board";
    var svg = svgEl("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H,
                            "data-points": npts, role: "img",
                            "aria-label": "privacy-utility scatter: " + title},
                    AXES + lines + pts + bases);
    var caption = title + " \u2014 " + idx.length + " entr" + (idx.length === 1 ? "y" : "ies") +
      ", " + npts + " point" + (npts === 1 ? "" : "s") +
      (skipped ? "; " + skipped + " without a valid privacy measurement not plotted" : "") +
      "; \u25c6 unprivatized baseline, ringed: Pareto front";
    return '<figure class="plot" data-board="' + esc(b ? b.id : "") + '">' + svg +
      "<figcaption>" + esc(caption) + "</figcaption></figure>";
  }
  var plots = document.getElementById("plots"), plotNote = document.getElementById("plot-note");
  var plotMore = document.getElementById("more-plots");
  function renderPlots() {
    var groups = new Map();
    visible.forEach(function (i) {
      var k = BIDX[i];
      if (!groups.has(k)) { groups.set(k, []); }
      groups.get(k).push(i);
    });
    var keys = Array.from(groups.keys())
      .sort(function (a, b) { return (a < 0) - (b < 0) || a - b; });
    var take = keys.slice(0, state.plots);
    plots.innerHTML = take.map(function (k) { return plotHtml(k, groups.get(k)); }).join("");
    plots.setAttribute("data-plots", String(take.length));
    plotNote.textContent = keys.length === 0 ? "No entry matches the filters." :
      "Plots of " + take.length + " of the " + keys.length + " boards with matching entries" +
      (take.length < keys.length ? " (choose a board in the Board filter, or draw more)." : ".");
    plotMore.hidden = take.length >= keys.length;
  }
  plotMore.addEventListener("click", function () { state.plots += PLOT_LIMIT; renderPlots(); });
  var tip = document.getElementById("tip");
  function tipLines(t) {
    var k = +t.getAttribute("data-k");
    if (t.classList.contains("base")) {
      var b = BOARDS[+t.getAttribute("data-b")], base = arr(b.baselines)[k];
      return ["unprivatized baseline: " + base.model, boardText(b),
              "utility " + withCi(base.utility, base.utility_ci),
              "privacy " + withCi(base.privacy, base.privacy_ci) +
              (base.adversary ? " (adversary " + base.adversary + ")" : "")];
    }
    var e = ENTRIES[+t.getAttribute("data-i")], q = arr(e.points)[k];
    return [e.model + " \u00b7 " + configText(e), BTEXT[+t.getAttribute("data-i")],
            "\u03b5 = " + fmtEps(q.epsilon),
            "utility " + withCi(q.utility, q.utility_ci),
            "privacy " + withCi(q.privacy, q.privacy_ci) +
              (q.privacy_valid === true ? "" : " (validity unknown)"),
            "adversary " + (txt(q.adversary) === null ? "\u2014" : q.adversary),
            q.pareto === true ? "on the Pareto front \u2605" : "not on the Pareto front",
            "score " + withCi(e.score, e.score_ci) + ", rank " +
              (num(e.rank) === null ? "\u2014" : e.rank) +
              (e.rank_flag ? " (" + e.rank_flag + ")" : "")];
  }
  plots.addEventListener("mouseover", function (ev) {
    var t = ev.target;
    if (!t.classList || !(t.classList.contains("pt") || t.classList.contains("base"))) { return; }
    tip.textContent = tipLines(t).join("\n");
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 300) + "px";
    tip.style.top = (ev.clientY + 12) + "px";
  });
  plots.addEventListener("mouseout", function (ev) {
    var t = ev.target;
    if (t.classList && (t.classList.contains("pt") || t.classList.contains("base"))) {
      tip.hidden = true;
    }
  });

  // ------------------------------------------------------------------ first render
  applyFilters(); applySort();
  var T_T = performance.now(); renderTable(); T_T = performance.now() - T_T;
  var T_P = performance.now(); renderPlots(); T_P = performance.now() - T_P;
  body.setAttribute("data-parse-ms", (T_PARSE - T0).toFixed(1));
  body.setAttribute("data-table-ms", T_T.toFixed(1));
  body.setAttribute("data-plot-ms", T_P.toFixed(1));
  body.setAttribute("data-rendered-ms", performance.now().toFixed(1));
  window.benchLeaderboard = {state: state, entries: ENTRIES};
})();
"""


def render_page(board: Mapping[str, Any]) -> str:
    """The leaderboard page for a parsed ``leaderboard.json`` (one self-contained HTML string).

    Args:
        board: the parsed leaderboard (``docs/leaderboard.md``, schema version 1). A
            different ``schema`` / ``schema_version`` is rendered with a warning line; keys
            the page does not know are ignored (and embedded like the rest).

    Returns:
        The HTML text (UTF-8; no network access, no external files).

    Raises:
        TypeError: ``board`` is not a mapping.
    """
    if not isinstance(board, Mapping):
        raise TypeError(f"board must be the parsed leaderboard.json (a dict), got "
                        f"{type(board).__name__}")
    if board.get("schema") != SCHEMA or board.get("schema_version") != SCHEMA_VERSION:
        logger.warning("leaderboard data is %r version %r; the page was written for %s "
                       "version %d", board.get("schema"), board.get("schema_version"),
                       SCHEMA, SCHEMA_VERSION)
    js = _JS.replace("__ROW_LIMIT__", str(ROW_LIMIT)).replace("__PLOT_LIMIT__", str(PLOT_LIMIT))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>Leaderboard</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        "<h1>Leaderboard</h1>\n" + _header(board) + "\n"
        f'<p class="note">{_NOTE}</p>\n'
        '<p id="error" class="warn" hidden></p>\n'
        '<form id="filters"></form>\n'
        '<p id="count"></p>\n'
        '<table id="board"><thead></thead><tbody></tbody></table>\n'
        '<p><button type="button" id="show-all" hidden>Show all rows</button></p>\n'
        "<h2>Privacy–utility</h2>\n"
        '<p class="note" id="plot-note"></p>\n<div id="plots"></div>\n'
        '<p><button type="button" id="more-plots" hidden>Draw more boards</button></p>\n'
        '<div id="tip" role="tooltip" hidden></div>\n'
        '<script type="application/json" id="leaderboard-data">' + embed_json(board)
        + "</script>\n"
        f"<script>{js}</script>\n</body>\n</html>\n")


__all__ = ["PLOT_LIMIT", "ROW_LIMIT", "SCHEMA", "SCHEMA_VERSION", "embed_json", "render_page"]
