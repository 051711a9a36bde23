"""``leaderboard.html``: one self-contained page for a ``leaderboard.json``.

The one page of both leaderboards: ``bench leaderboard`` (many sources merged) and the per-grid
page of ``bench report`` (:mod:`bench.leaderboard.report_page`, one folder). :func:`render_page`
takes the parsed ``leaderboard.json`` (``docs/leaderboard.md``, schema version 1) and returns one
HTML file that needs nothing else: CSS and JavaScript inlined from this package's data files
(``static/leaderboard.css``, ``static/leaderboard.js``, read with :mod:`importlib.resources`), a
Content-Security-Policy that forbids every network load, and the data embedded once as JSON in a
``<script type="application/json">`` element (every ``<`` written as ``\\u003c``, so no string
can close the element). The header (date, generator, sources, score, conflicts and problems) is
HTML-escaped in Python; the page's script builds the rest from the embedded data, and every
string from the data reaches the DOM as text: through ``textContent`` / ``new Option`` or
through an HTML string in which it was escaped (``& < > " '``). Links are kept only for the
``file:``, ``http:`` and ``https:`` schemes; any other value (``javascript:…``) is shown as text.

Layout (everything fits a 1,280 px window: long names wrap, toggles open inside their cells):

* **Header.** The counts (entries, boards; suite versions only where there are several), the
  privacy measure, the score; the sources (and verification) behind a toggle; conflicts,
  platform variants and problems listed where there are some; a red banner naming every entry
  with an audit VIOLATION (and its ε).
* **Table.** One row per entry, built as one HTML string of escaped parts assigned with a single
  ``innerHTML`` (each row's HTML is built once and cached). Columns: rank, the configuration's
  short name (the mechanism, and the sensitivity approach, mapping and suite version where
  they differ on its board; the full configuration on hover), model, score with its interval,
  ε (the values with ★ Pareto / ⚠ audit marks; opened, or with "values at each ε" ticked,
  each ε's means of utility U, privacy P, N_w and MIA AUC), guarantee, audit, signer, and the
  cell lists (``cells (n)``: hash → files / MLflow links, provenance) as collapsed
  ``<details>``. Unsorted, the rows are grouped by board: a heading row per board (its title
  in words -- the board's ``title``, :mod:`bench.leaderboard.titles` --, what its
  configurations share, its ``settings`` behind a toggle) followed by its unprivatized
  baseline rows. Rows of the known-answer mechanisms (:data:`KNOWN_ANSWERS`: the baseline,
  ``identity``, ``constant`` / ``no_information``) are marked as the ends of the scale.
  Filtering and sorting run over all entries (plain arrays of precomputed keys; stable,
  numbers by value, missing values last in both directions; a third click on a header goes
  back to the grouped order), but only the first :data:`ROW_LIMIT` rows of the result are put
  in the DOM, with a "show all" button. Sorted, each row names its board.
* **Scatter.** One privacy–utility SVG per board with visible entries (x = empirical privacy,
  y = utility, both 0..1; each entry's points joined in ε order in its colour -- after ten
  colours dashed, then dotted --, Pareto points ringed, the board's baselines as black
  diamonds; a board without a private attribute is not drawn), with a caption that says what
  is drawn and a legend (each configuration drawn, with its ε range; the baseline; the
  Pareto ring). Points without a valid privacy measurement (``privacy_valid`` false, or no
  privacy value) are not plotted and the caption says how many; ``privacy_valid`` null
  (unknown) is plotted and the tooltip says so. Without a board filter only the first
  :data:`PLOT_LIMIT` boards (in board order) are drawn, with a button for more; choosing a
  board in the Board filter draws that board. Hovering a point fills one tooltip element
  (one ``mouseover`` listener for all plots).
* **Filters.** Selects for board, dataset, model, mechanism, sensitivity, mapping, suite
  version, audit status and signer; they filter the table and the plots.
* **Query string.** ``?mechanism=tem&sort=score&dir=desc&all=1&eps=1`` sets the filters (any
  filter id), the sort column (``rank``, ``config``, ``model``, ``score``, ``epsilon`` =
  number of ★, ``guarantee``, ``audit`` = VIOLATION > PASS > not audited, ``signed``,
  ``cells``), "show all" and the open ε values on load; changes are written back with
  ``history.replaceState`` where the browser allows it.
* **State for tests and benchmarks.** ``<body data-rendered-ms>`` is ``performance.now()``
  when the first render is complete (milliseconds since navigation start: HTML and JSON
  parsing included), with ``data-parse-ms`` / ``data-table-ms`` / ``data-plot-ms`` for the
  parts; ``<table data-sorted="score:descending" data-rows data-shown>`` (``class="grouped"``
  when grouped by board); each plot ``<svg data-points>`` and ``<ul class="legend">``.

Example:
    >>> import json
    >>> board = json.loads(Path("board/leaderboard.json").read_text())
    >>> Path("board/leaderboard.html").write_text(render_page(board))
"""

from __future__ import annotations

import functools
import html
import json
import logging
import math
from collections.abc import Mapping
from importlib import resources
from typing import Any

from bench.analysis.privacy import describe_choice

logger = logging.getLogger(__name__)

SCHEMA = "bench-leaderboard"
"""The ``schema`` value of a leaderboard.json."""

SCHEMA_VERSION = 2
"""The schema version this page was written for (newer versions are rendered with a warning)."""

ROW_LIMIT = 1000
"""Table rows put in the DOM before "show all" (filtering and sorting always use every entry)."""

PLOT_LIMIT = 6
"""Boards plotted without a board filter (a button draws more)."""

DASH = "—"

_SCORES = {
    "anchored_hypervolume": "the area of the square of privacy gained × utility retained "
                            "(each 0 at the unprivatized baseline's end and 1 at the ideal, "
                            "seed by seed against the baseline of the same seed) that the "
                            "entry's points dominate: 0 for the identity and for output that "
                            "ignores its input (0..1, higher is better)",
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


def finite_json(obj: Any) -> Any:
    """The data with non-finite floats as strings (``"inf"``, ``"-inf"``, ``"nan"``).

    ``JSON.parse`` rejects ``Infinity`` and ``NaN``; the page shows ``"inf"`` as ∞.
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, Mapping):
        return {str(k): finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    return obj


def embed_json(data: Any) -> str:
    """JSON text that is safe inside ``<script type="application/json">``.

    Every ``<`` is written as ``\\u003c`` (so neither ``</script`` nor ``<!--`` can occur), and
    U+2028 / U+2029 as escapes; non-finite floats become strings (:func:`finite_json`).
    """
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(finite_json(data), separators=(",", ":"), allow_nan=False)
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
            f'<td{" class=num" if k in _NUMERIC else ""}>{_esc(s.get(k))}</td>'
            for k in ("id", "kind", "location", "cells", "left_out", "unsealed", "signed"))
            + "</tr>")
    return ('<table class="sources"><thead><tr><th>Source</th><th>Kind</th><th>Location</th>'
            "<th>Cells</th><th>Left out</th><th>Unsealed</th><th>Signed</th></tr></thead>"
            "<tbody>" + "".join(rows) + "</tbody></table>")


_NUMERIC = ("cells", "left_out", "unsealed", "signed")


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


def _violations(entries: list[Any]) -> str:
    """The red banner naming every entry with an audit VIOLATION ('' when there is none)."""
    bad = []
    for e in entries:
        if not isinstance(e, Mapping) or e.get("audit") != "VIOLATION":
            continue
        points = e.get("points") if isinstance(e.get("points"), list) else []
        eps = [_eps_text(q.get("epsilon")) for q in points
               if isinstance(q, Mapping) and q.get("audit") == "VIOLATION"]
        where = f" at ε={', '.join(eps)}" if eps else ""
        text = f"{e.get('model')} · {e.get('config')}{where} ({e.get('dataset')})"
        if text not in bad:
            bad.append(text)
    if not bad:
        return ""
    return ('<p class="violation">⚠ Privacy audit VIOLATION: the claimed guarantee does not '
            f"hold for {_esc('; '.join(bad))} (see the Audit column).</p>")


def _eps_text(eps: Any) -> str:
    if eps == "inf" or (isinstance(eps, float) and math.isinf(eps)):
        return "∞"
    return f"{eps:g}" if isinstance(eps, (int, float)) else str(eps)


def _generated(board: Mapping[str, Any]) -> str:
    """``Generated <date> by <bench version>; `` where the document is stamped."""
    when, who = board.get("generated"), board.get("generated_by")
    if when is None and who is None:
        return ""
    return f"Generated <time>{_esc(when)}</time> by {_esc(who)}; "


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _versions_text(board: Mapping[str, Any], entries: list[Any], boards: list[Any]) -> str:
    """What the page says about suite versions: nothing unless there are several."""
    if board.get("allow_mixed_versions"):
        versions = {str(e.get("suite_version") or "") for e in entries if isinstance(e, Mapping)}
        return (" Entries of different suite versions share a board (each is labelled with "
                "its version)." if len(versions) > 1 else "")
    versions = {str(b.get("suite_version") or "") for b in boards if isinstance(b, Mapping)}
    if len(versions) > 1:
        return (f" The cells come from {len(versions)} suite versions, which are never ranked "
                "together: each has its own boards.")
    return ""


def _sources_details(board: Mapping[str, Any]) -> str:
    """The sources (and, unless verified, the note that nothing was recomputed), collapsed."""
    sources = board.get("sources") if isinstance(board.get("sources"), list) else []
    cells = sum(s.get("cells") for s in sources if isinstance(s, Mapping)
                and isinstance(s.get("cells"), int) and not isinstance(s.get("cells"), bool))
    verified = isinstance(board.get("verify"), Mapping)
    return (f'<details class="sources"><summary>{_plural(len(sources), "source")} '
            f"({_plural(cells, 'cell')})"
            f"{'' if verified else '; not verified by recomputation'}</summary>"
            f"{'' if verified else _verify_text(None)}{_sources(sources)}</details>")


def _listed(conflicts: Any, variants: Any, problems: Any) -> str:
    """Conflicts, platform variants and problems: each listed where there are some; one line
    saying there are none otherwise."""
    n = [len(x) if isinstance(x, list) else 0 for x in (conflicts, variants, problems)]
    if not any(n):
        return '<p class="meta">No conflicts, platform variants or problems.</p>'
    return ((_conflicts(conflicts) if n[0] else "") + (_variants(variants) if n[1] else "")
            + (_problems(problems) if n[2] else ""))


def _header(board: Mapping[str, Any]) -> str:
    entries = board.get("entries") if isinstance(board.get("entries"), list) else []
    boards = board.get("boards") if isinstance(board.get("boards"), list) else []
    warn = ""
    version = board.get("schema_version")
    if board.get("schema") != SCHEMA or version != SCHEMA_VERSION:
        warn = (f'<p class="warn">This page was written for {SCHEMA} schema version '
                f"{SCHEMA_VERSION}; the data says {_esc(board.get('schema'))} version "
                f"{_esc(version)}. Unknown keys are ignored.</p>")
    adversary = board.get("privacy_adversary")
    privacy = describe_choice(None if adversary is None else str(adversary))
    verified = _verify_text(board.get("verify")) if isinstance(board.get("verify"), Mapping) \
        else ""
    return (f'<header id="meta">{warn}{_violations(entries)}<p class="meta">'
            f"{_generated(board)}{len(entries)} {'entry' if len(entries) == 1 else 'entries'} on "
            f"{_plural(len(boards), 'board')}."
            f"{_esc(_versions_text(board, entries, boards))}</p>"
            f'<p class="meta">Privacy: {_esc(privacy)}.</p>'
            f'<p class="meta">{_esc(_score_text(board.get("score")))}</p>'
            f"{verified}{_sources_details(board)}"
            + _listed(board.get("conflicts"), board.get("platform_variants"),
                      board.get("problems")) + "</header>")


KNOWN_ANSWERS: dict[str, dict[str, str]] = {
    "none": {"end": "privacy", "label": "unprivatized baseline",
             "text": "known answer: the output is the input, the privacy-0 end of the scale "
                     "(and the utility to reach)"},
    "identity": {"end": "privacy", "label": "identity",
                 "text": "known answer: the output is the input, the privacy-0 end of the "
                         "scale"},
    "constant": {"end": "utility", "label": "no information",
                 "text": "known answer: the output carries no information about the input, "
                         "the utility-0 end of the scale"},
    "no_information": {"end": "utility", "label": "no information",
                       "text": "known answer: the output carries no information about the "
                               "input, the utility-0 end of the scale"},
}
"""Mechanisms whose scores are known in advance (``docs/design.md``: a score is anchored at both
ends): the page marks their rows as the ends of the scale. ``end``: which score is 0 there
(``privacy``: an output equal to its input; ``utility``: an output without information);
``label`` and ``text``: what the row's mark says. The one place that names them."""

_NOTE = (
    "One row per configuration (mechanism × sensitivity approach × mapping × model) on a board "
    "(dataset · utility task · private attribute); a configuration's name shows what differs "
    "between the configurations of its board (hover for the full configuration), and the "
    "board's heading what they share. Rows marked “privacy-0 end” / “utility-0 end” are known "
    "answers that mark the ends of the scale: the unprivatized baseline (◆; the output is the "
    "input: privacy 0) and, where run, a mechanism whose output is the input or carries no "
    "information about it (utility 0). Rank: 1 + the number "
    "of entries of the board whose whole score interval lies above this one's, so "
    "overlapping intervals share a rank; † no interval (ranked by the score alone), ⚠ audit "
    "violation (ranked after every entry that passed or was not audited), — unranked (the "
    "reason in brackets, e.g. no valid privacy measurement). ε: the measured privacy "
    "budgets; open one (or tick “values at each ε”) for its means over seeds of utility (U), "
    "privacy (P), N_w (the fraction of words unchanged) and the membership-inference AUC "
    "(MIA) where measured; ★ where the point is on the board's Pareto front, ⚠ where its "
    "audit found a violation (hover for the intervals, the adversary and the audit). A board "
    "without a private attribute lists configurations that measure none (membership "
    "inference only), unranked. Click a column header to sort across boards "
    "(?sort=score&amp;dir=desc sorts on load; without a sort the rows are grouped by board); "
    "the filters apply to the table and the plots."
)

STATIC = "static"
"""The folder of this package that holds the page's script and style (package data)."""


@functools.lru_cache(maxsize=None)
def static_text(name: str) -> str:
    """A file of the page's package data (``static/leaderboard.js``, ``static/leaderboard.css``),
    read with :mod:`importlib.resources`, so it works from a wheel as from a checkout.

    Raises:
        RuntimeError: the file could close its ``<script>`` / ``<style>`` element early.
    """
    text = resources.files("bench.leaderboard").joinpath(STATIC, name).read_text(
        encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise RuntimeError(f"{STATIC}/{name} must not contain </script or </style")
    return text


def render_page(board: Mapping[str, Any], title: str | None = None) -> str:
    """The leaderboard page for a parsed ``leaderboard.json`` (one self-contained HTML string).

    Args:
        board: the parsed leaderboard (``docs/leaderboard.md``, schema version 1). A
            different ``schema`` / ``schema_version`` is rendered with a warning line; keys
            the page does not know are ignored (and embedded like the rest).
        title: the page's title and heading (default ``Leaderboard``; escaped).

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
    heading = _esc(title or "Leaderboard")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{heading}</title>\n<style>\n{static_text('leaderboard.css')}</style>\n"
        f'</head>\n<body data-row-limit="{int(ROW_LIMIT)}" data-plot-limit="{int(PLOT_LIMIT)}"'
        f' data-known-answers="{_esc(json.dumps(KNOWN_ANSWERS, sort_keys=True))}">\n'
        f"<h1>{heading}</h1>\n" + _header(board) + "\n"
        '<p id="error" class="warn" hidden></p>\n'
        '<form id="filters"></form>\n'
        '<div class="above-table"><p id="count"></p><label class="toggle"><input '
        'type="checkbox" id="open-eps"> values at each ε</label>'
        '<details class="note"><summary>How to read the table</summary>'
        f"<p>{_NOTE}</p></details></div>\n"
        '<table id="board"><thead></thead><tbody></tbody></table>\n'
        '<p><button type="button" id="show-all" hidden>Show all rows</button></p>\n'
        "<h2>Privacy–utility</h2>\n"
        '<p class="note" id="plot-note"></p>\n<div id="plots"></div>\n'
        '<p><button type="button" id="more-plots" hidden>Draw more boards</button></p>\n'
        '<h2>Unprivatized baselines</h2>\n<ul id="baselines"></ul>\n'
        '<div id="tip" role="tooltip" hidden></div>\n'
        '<script type="application/json" id="leaderboard-data">' + embed_json(board)
        + "</script>\n"
        f"<script>\n{static_text('leaderboard.js')}</script>\n</body>\n</html>\n")


__all__ = ["KNOWN_ANSWERS", "PLOT_LIMIT", "ROW_LIMIT", "SCHEMA", "SCHEMA_VERSION", "STATIC",
           "embed_json", "render_page", "static_text"]
