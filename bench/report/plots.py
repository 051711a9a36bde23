"""Privacy-utility curves: utility vs ε and utility vs empirical privacy, per dataset × model.

One PNG per dataset × model (``curves_<dataset>_<model>.png``): the left panel is the utility
(macro-F1) of each mechanism configuration against ε (log scale, its ticks labelled with the
ε values the cells have, written plainly: ``0.5``, ``1``, ``12``) with error bars spanning the
95% interval (:class:`bench.analysis.results.Stat`: Student t over n ≥ 2 seeds; one seed: the
cell's bootstrap interval over the test documents; none where there is no interval) and the
unprivatized baseline as a dashed line (its interval as a grey band), each known answer
(``identity``, ``no_information``: no ε) as a dotted line at its utility; one further panel per
private attribute plots utility against empirical privacy (1 − macro-F1 of the strongest
adversary, or of the adversary the report names), error bars (the intervals) on both axes.
Intervals are drawn as computed, not clipped to [0, 1]. Privacy that is not a valid measurement
(the adversary is at chance on the unprivatized baseline) is never plotted: its points are left
out, and a panel with no valid point says so instead of drawing a curve. The legend (one entry
per mechanism configuration, plus the baseline) sits under the panels, its labels wrapped to
the figure's width, so that no configuration count or label length hides a point.
Rendering uses matplotlib's Agg canvas directly (no pyplot, no global backend switch) and PNG
metadata without the software version or a timestamp, so the files are byte-identical for
the same results and matplotlib version.

A tidy CSV of the plotted points (``curves.csv``) is written too, for ``dvc plots``.

Example:
    >>> from bench.analysis.results import load_results, group_cells
    >>> groups, _ = group_cells(load_results("results").cells)
    >>> paths = write_curves(groups, Path("results/report/plots"))
"""

from __future__ import annotations

import io
import logging
import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.analysis.privacy import NO_VALID, describe_choice, group_privacy
from bench.analysis.results import Group, Stat, fmt_eps
from bench.report.table import csv_num, csv_text, slug, unique_name
from bench.report.tradeoff import utility_ci

logger = logging.getLogger(__name__)

PNG_METADATA: dict[str, str | None] = {"Software": None}
"""PNG text chunks: matplotlib's version string is dropped (deterministic bytes)."""

DPI = 100
"""Resolution of the PNGs."""


PANEL_WIDTH, PANEL_HEIGHT = 5.2, 4.2
"""Inches per panel; the legend below the panels adds to the height."""

LEGEND_FONTSIZE = 7
LEGEND_CHARS_PER_INCH = 15
"""Characters of a 7-point legend label per inch of figure width (a conservative estimate for
DejaVu Sans), used to wrap long configuration labels instead of cutting them off."""

LEGEND_LINE = 7 * 1.45 / 72
"""Height of one legend line in inches (7 points, matplotlib's line spacing)."""

LEGEND_HANDLE_CHARS = 5
"""Width of a legend entry's marker and the gap before its text, in label characters."""

TITLE_CHARS_PER_INCH = 13
"""Characters of the 9-point title per inch, to wrap a long dataset key."""


def _legend_layout(labels: Sequence[str], width: float) -> tuple[list[str], int, int]:
    """Wrapped labels, the number of columns and of text lines for a legend under a figure
    ``width`` inches wide: as many columns as the longest (wrapped) label allows."""
    room = int(width * LEGEND_CHARS_PER_INCH)
    wrap = max(room - LEGEND_HANDLE_CHARS, 20)
    wrapped = [textwrap.fill(lab, wrap, subsequent_indent="  ") for lab in labels]
    longest = max(len(line) for lab in wrapped for line in lab.split("\n"))
    ncol = max(1, min(len(wrapped), room // (longest + LEGEND_HANDLE_CHARS)))
    heights = [lab.count("\n") + 1 for lab in wrapped]
    # matplotlib fills columns top to bottom, each with ceil(n / ncol) entries
    per_col = -(-len(wrapped) // ncol)
    rows = max(sum(heights[i:i + per_col]) for i in range(0, len(heights), per_col))
    return wrapped, ncol, rows


MARKERS = ("o", "s", "^", "D", "v")
"""One marker per round of the ten default colours: configuration i and i + 10 differ."""


def _style(i: int) -> dict[str, str]:
    """Colour and marker of the i-th configuration, the same in every panel."""
    return {"color": f"C{i % 10}", "marker": MARKERS[(i // 10) % len(MARKERS)]}


SCORE_RANGE = (0.0, 1.0)
"""Where the plotted scores live (macro-F1, privacy = 1 − macro-F1, and the sizes plots'
anchored trade-off R·G): an error bar is drawn inside it. A t interval over few seeds reaches
past it (t(1) = 12.7 with two seeds: bars from −0.35 to 1.37 on `trlaplace_code`'s curves),
which no score can take; the tables keep the interval as computed."""


def _err(s: Stat | None) -> tuple[float, float]:
    """(below, above) the mean: the 95% interval's extent, cut to :data:`SCORE_RANGE`; (0, 0)
    where there is none."""
    if s is None or not s.has_interval:
        return 0.0, 0.0
    lo = max(float(s.lo), SCORE_RANGE[0])  # type: ignore[arg-type]
    hi = min(float(s.hi), SCORE_RANGE[1])  # type: ignore[arg-type]
    return max(s.mean - lo, 0.0), max(hi - s.mean, 0.0)


def _errs(stats: Sequence[Stat | None]) -> list[list[float]]:
    """matplotlib's asymmetric ``xerr``/``yerr``: ``[[below...], [above...]]``."""
    pairs = [_err(s) for s in stats]
    return [[a for a, _b in pairs], [b for _a, b in pairs]]


def _series(groups: Sequence[Group]) -> dict[str, list[Group]]:
    out: dict[str, list[Group]] = {}
    for g in groups:
        if not g.config.is_baseline:
            out.setdefault(g.config.mechanism_config, []).append(g)
    return {k: sorted(v, key=lambda g: g.config.epsilon) for k, v in sorted(out.items())}


def _tasks(groups: Sequence[Group]) -> list[str]:
    tasks: set[str] = set()
    for g in groups:
        for r in g.records:
            tasks |= set(r.sections.privacy)
    return sorted(tasks)


def _utility(g: Group) -> Stat | None:
    return g.stat(lambda m: m.utility.macro_f1, utility_ci)


def _privacy(g: Group, task: str) -> Stat | None:
    """Privacy over the seeds where it is a valid (or not judged) measurement."""
    return group_privacy(g, task).stat


def curve_points(groups: Sequence[Group]) -> list[dict[str, str]]:
    """Tidy rows of every plotted point (dataset, model, mechanism config, ε, attribute, ...)."""
    rows = []
    for g in groups:
        u = _utility(g)
        for task in _tasks([g]) or [""]:
            gp = group_privacy(g, task) if task else None
            p = gp.stat if gp else None
            c = g.config
            rows.append({"dataset": c.dataset, "model": c.model,
                         "mechanism": "baseline" if c.is_baseline else c.mechanism_config,
                         "epsilon": fmt_eps(c.epsilon).replace("∞", "inf"), "attribute": task,
                         "utility": csv_num(u.mean if u else None),
                         "utility_std": csv_num(u.std if u else None),
                         "utility_ci_lo": csv_num(u.lo if u and u.has_interval else None),
                         "utility_ci_hi": csv_num(u.hi if u and u.has_interval else None),
                         "privacy": csv_num(p.mean if p else None),
                         "privacy_std": csv_num(p.std if p else None),
                         "privacy_ci_lo": csv_num(p.lo if p and p.has_interval else None),
                         "privacy_ci_hi": csv_num(p.hi if p and p.has_interval else None),
                         "adversary": gp.adversary if gp else "",
                         "privacy_status": gp.status_text() if gp else "",
                         "n_seeds": str(len(g.records))})
    return rows


def render_curves(groups: Sequence[Group], title: str, adversary: str | None = None) -> bytes:
    """PNG bytes of the curves of one dataset × model (``adversary``: the axis label only)."""
    fig = curves_figure(groups, title, adversary)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata=PNG_METADATA)
    return buf.getvalue()


def curves_figure(groups: Sequence[Group], title: str, adversary: str | None = None) -> Any:
    """The matplotlib ``Figure`` :func:`render_curves` saves (on its own Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    series = _series(groups)
    tasks = _tasks(groups)
    base = [g for g in groups if g.config.is_baseline]
    ncols = 1 + len(tasks)
    width = PANEL_WIDTH * ncols
    fig = Figure(figsize=(width, PANEL_HEIGHT), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    _plot_utility_vs_eps(axes[0], series, base)
    for j, task in enumerate(tasks, start=1):
        _plot_utility_vs_privacy(axes[j], series, base, groups, task, adversary)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:  # below the panels, so that it hides no point however many configurations
        wrapped, ncol, rows = _legend_layout(labels, width)
        fig.set_size_inches(width, PANEL_HEIGHT + (rows * LEGEND_LINE + 0.25))
        fig.legend(handles, wrapped, loc="outside lower center", ncol=ncol,
                   fontsize=LEGEND_FONTSIZE, frameon=False)
    head = (f"{title}\nerror bars: 95% interval (t over seeds; one seed: bootstrap over test "
            "documents; none without an interval)")
    fig.suptitle("\n".join(textwrap.fill(line, int(width * TITLE_CHARS_PER_INCH))
                           for line in head.split("\n")), fontsize=9)
    return fig


def _plot_utility_vs_eps(ax: Any, series: dict[str, list[Group]], base: list[Group]) -> None:
    """The left panel: each mechanism configuration's utility against ε (log scale where every
    ε is positive), the baseline as a dashed line with its interval as a band. A known answer
    (:mod:`bench.mechanisms.known`: ε = 0 for ``no_information``, ∞ for ``identity``) has no
    place on the ε axis: it is a dotted line at its utility, like the baseline (before, its
    ε = 0 squeezed every other point onto one vertical line)."""

    def on_axis(e: float) -> bool:
        return math.isfinite(e) and e > 0

    finite = [g.config.epsilon for gs in series.values() for g in gs
              if on_axis(g.config.epsilon)]
    for i, (label, gs) in enumerate(series.items()):
        pts = [(g.config.epsilon, _utility(g)) for g in gs]
        pts = [(e, s) for e, s in pts if s is not None]
        line = [s for e, s in pts if not on_axis(e)]
        pts = [(e, s) for e, s in pts if on_axis(e)]
        if pts:
            ax.errorbar([e for e, _ in pts], [s.mean for _, s in pts],
                        yerr=_errs([s for _, s in pts]), capsize=3, label=label, **_style(i))
        for s in line:
            ax.axhline(s.mean, color=_style(i)["color"], linestyle=":", linewidth=1.2,
                       label=f"{label} (known answer, no ε) {s.mean:.3f}")
    for g in base:
        s = _utility(g)
        if s is not None:
            ax.axhline(s.mean, color="0.3", linestyle="--", linewidth=1,
                       label=f"baseline (ε=∞) {s.mean:.3f}")
            if s.has_interval:  # the baseline's 95% interval as a band
                lo, hi = s.bounds
                ax.axhspan(max(lo, SCORE_RANGE[0]), min(hi, SCORE_RANGE[1]), color="0.3",
                           alpha=0.1, linewidth=0)
    if finite and min(finite) > 0:
        ax.set_xscale("log")
    if finite:
        _epsilon_ticks(ax, finite)
    ax.set_xlabel("ε")
    ax.set_ylabel("utility (macro-F1)")
    ax.set_title("utility vs ε")
    ax.grid(True, alpha=0.3)


def _epsilon_ticks(ax: Any, eps: Sequence[float]) -> None:
    """Label the ε axis with the grid's own ε values, written plainly (``0.5``, ``1``, ``12``:
    :func:`fmt_eps`), and nothing else: on a log axis matplotlib would label powers of ten and
    some minor ticks in scientific notation (``8×10⁰``) and leave other grid values unlabelled.
    The minor ticks stay, unlabelled. Labels that would touch written across are written
    upright, and an upright label that would still touch its left neighbour is left out (its
    tick stays)."""
    from matplotlib.ticker import NullFormatter

    values = sorted(set(eps))
    labels, upright = _epsilon_labels(ax, values)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(values, labels, rotation=90 if upright else 0, fontsize=EPS_TICK_FONTSIZE)


EPS_TICK_FONTSIZE = 8
"""Points of the ε tick labels."""


def _epsilon_labels(ax: Any, values: Sequence[float]) -> tuple[list[str], bool]:
    """The ε tick labels (empty where one is left out) and whether they are written upright.

    Widths are estimated from the character counts at :data:`EPS_TICK_FONTSIZE` (a DejaVu Sans
    digit is about 0.6 em), positions from the panel's width and the axis' scale."""
    labels = [fmt_eps(v) for v in values]
    if len(values) < 2:
        return labels, False
    log = ax.get_xscale() == "log"
    pos = [math.log10(v) if log else v for v in values]
    inches = PANEL_WIDTH * 0.65 / ((pos[-1] - pos[0]) or 1.0)  # the data span ~2/3 of a panel
    at = [p * inches for p in pos]
    char = EPS_TICK_FONTSIZE * 0.6 / 72
    widths = [len(t) * char for t in labels]
    if all(b - a >= (wa + wb) / 2 + char
           for a, b, wa, wb in zip(at, at[1:], widths, widths[1:], strict=False)):
        return labels, False
    line = EPS_TICK_FONTSIZE * 1.2 / 72
    kept, last = [], -math.inf
    for x, text in zip(at, labels, strict=True):
        kept.append(text if x - last >= line else "")
        last = x if x - last >= line else last
    return kept, True


def _plot_utility_vs_privacy(ax: Any, series: dict[str, list[Group]], base: list[Group],
                             groups: Sequence[Group], task: str, adversary: str | None) -> None:
    """One private attribute's panel: utility against valid empirical privacy (error bars on
    both axes), the baseline as a star; a note instead where no point is valid."""
    plotted = 0
    for i, (label, gs) in enumerate(series.items()):
        pts = [(_privacy(g, task), _utility(g)) for g in gs]
        pts = [(p, u) for p, u in pts if p is not None and u is not None]
        plotted += len(pts)
        if pts:
            ax.errorbar([p.mean for p, _ in pts], [u.mean for _, u in pts],
                        xerr=_errs([p for p, _ in pts]), yerr=_errs([u for _, u in pts]),
                        capsize=3, label=label, **_style(i))
    for g in base:
        p, u = _privacy(g, task), _utility(g)
        if p is not None and u is not None:
            plotted += 1
            ax.errorbar([p.mean], [u.mean], xerr=_errs([p]), yerr=_errs([u]), marker="*",
                        markersize=10, color="0.3", linestyle="none", label="baseline")
    if not plotted:
        bad = any(group_privacy(g, task).status == "invalid" for g in groups)
        ax.text(0.5, 0.5, f"{NO_VALID}\n(adversary at chance on the\nunprivatized baseline)"
                if bad else "no privacy values", ha="center", va="center",
                transform=ax.transAxes, fontsize=9, color="#8a1f11")
    what = describe_choice(adversary).split(" (")[0]
    ax.set_xlabel(f"empirical privacy ({task}): {what}", fontsize=8)
    ax.set_ylabel("utility (macro-F1)")
    ax.set_title(f"utility vs privacy ({task})")
    ax.grid(True, alpha=0.3)


def write_curves(groups: Sequence[Group], folder: Path, csv_path: Path | None = None,
                 adversary: str | None = None) -> list[Path]:
    """One PNG per dataset × model into ``folder``, the points to ``csv_path``; returns paths.

    Args:
        groups: aggregated configurations.
        folder: where the PNGs go.
        csv_path: the tidy CSV of the plotted points (default ``folder/curves.csv``); invalid
            privacy is left empty there, with ``privacy_status`` saying why.
        adversary: the adversary choice the cells were selected with (axis labels only).
    """
    folder.mkdir(parents=True, exist_ok=True)
    by: dict[tuple[str, str], list[Group]] = {}
    for g in groups:
        by.setdefault((g.config.dataset, g.config.model), []).append(g)
    paths, used = [], set()
    for (ds, model), gs in sorted(by.items()):
        if not any(not g.config.is_baseline for g in gs):
            continue
        name = unique_name(f"curves_{slug(ds)}_{slug(model)}", used)
        p = folder / f"{name}.png"
        p.write_bytes(render_curves(gs, f"{ds} · {model}", adversary))
        paths.append(p)
    rows = curve_points(groups)
    if rows:
        p = csv_path or folder / "curves.csv"
        p.write_text(csv_text(rows), encoding="utf-8", newline="\n")
        paths.append(p)
    logger.info("wrote %d plot files to %s", len(paths), folder)
    return paths


__all__ = ["PNG_METADATA", "curve_points", "curves_figure", "render_curves", "write_curves"]
