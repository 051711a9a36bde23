"""The report's table type and its formats: :class:`Table` renders to Markdown, LaTeX (booktabs)
and CSV, with every text escaped for its format, and the number formats all tables share.

Names in a report come from grid files and results folders, i.e. from whoever wrote them:
:func:`md_text`, :func:`tex_escape` and :func:`csv_cell` make sure they stay plain text in each
format. Numbers: :func:`fmt_stat` (``mean ± half-width``, ``mean [lo, hi]`` or the bare mean,
:class:`bench.analysis.results.Stat`), :func:`csv_num` (6 decimals).

Example:
    >>> t = Table("demo", "Demo", ["Metric", "Value"], [[Value("N_w"), Value("0.5", bold=True)]],
    ...           [{"metric": "N_w", "value": "0.5"}])
    >>> print(t.markdown())
    # Demo
    <BLANKLINE>
    | Metric | Value |
    |:---|---:|
    | N\\_w | **0.5** |
    <BLANKLINE>
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from bench.analysis.results import DASH, Stat, fmt_interval, round_text
from bench.analysis.stats import Significance

"""Shown where there is no value."""


def fmt_stat(s: Stat | None, digits: int = 3, signed: bool = False) -> str:
    """``mean ± half-width`` (t over seeds), ``mean [lo, hi]`` (one run's bootstrap) or ``mean``.

    Rounded; :data:`DASH` for no value (:func:`bench.analysis.results.fmt_interval`).
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


SLUG_MAX = 80
"""The longest :func:`slug`."""


def slug(text: str) -> str:
    """A file-name-safe form of a label, at most :data:`SLUG_MAX` characters. A longer one
    keeps its head and its tail (where labels of one grid differ, e.g. ``train_subsample-100``)
    around a digest of the whole label, so that two labels never share a file name."""
    s = re.sub(r"[^A-Za-z0-9.-]+", "_", text.replace("=", "-")).strip("_.")
    if len(s) > SLUG_MAX:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
        head, tail = s[:40].rstrip("_."), s[-30:]
        tail = tail.split("_", 1)[1] if "_" in tail[:-1] else tail  # from a word's start
        s = f"{head}_{digest}_{tail.lstrip('_.')}"
    return s or "x"



def unique_name(name: str, used: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``, ... the first not in ``used`` (then added to it):
    distinct file stems for tables whose labels slug to the same text."""
    base, i = name, 2
    while name in used:
        name, i = f"{base}_{i}", i + 1
    used.add(name)
    return name
