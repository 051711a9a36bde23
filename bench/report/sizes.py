"""Curves over the dataset-size axis (issue 47, item 3): how utility, privacy and the anchored
trade-off of each mechanism configuration move with the number of training documents.

A grid varies the training-set size with the dataset option ``train_subsample`` (the train
split only; dev and test stay the same, so every size is measured on one test set). The
configurations whose datasets differ in ``train_subsample`` alone form a *family*; for each
family × model with at least two sizes, one PNG (``plots/sizes_<dataset>_<model>.png``) plots
against the size, one line per mechanism configuration and ε (the baseline dashed, the known
answers dotted):

* utility (the utility model's macro-F1);
* per private attribute, empirical privacy (1 − macro-F1 of the strongest adversary, or of the
  adversary the report names), valid measurements only (:mod:`bench.analysis.privacy`);
* per private attribute, the anchored trade-off T = R · G (:mod:`bench.analysis.anchored`:
  utility retained times privacy gained, each anchored at chance and at the same size's
  baseline), the quantity the leaderboard's score sums over ε: where the lines cross, the
  ranking of the mechanisms changes with the data's size.

Error bars are the 95% intervals of :class:`bench.analysis.results.Stat` (t over seeds). A tidy
CSV of the plotted points is written beside (``sizes.csv``). Rendering is deterministic, as for
:mod:`bench.report.plots` (Agg canvas, no version text in the PNG).

Example:
    >>> from bench.analysis.results import load_results, group_cells
    >>> groups, _ = group_cells(load_results("results").cells)
    >>> paths = write_size_curves(groups, Path("results/report/plots"))
"""

from __future__ import annotations

import io
import json
import math
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.analysis.anchored import group_anchored
from bench.analysis.privacy import baseline_index
from bench.analysis.results import Group, Stat, fmt_eps
from bench.report.plots import (
    DPI,
    LEGEND_LINE,
    PANEL_HEIGHT,
    PANEL_WIDTH,
    PNG_METADATA,
    _err,
    _legend_layout,
)
from bench.report.plots import _privacy as plot_privacy
from bench.report.plots import _tasks as plot_tasks
from bench.report.plots import _utility as plot_utility
from bench.report.table import csv_num, csv_text, slug

SIZE_KEY = "train_subsample"
"""The dataset option that sets the training-set size (:mod:`bench.datasets.base`)."""

SIZES_CSV = "sizes.csv"
"""The tidy CSV of the plotted points, in the report folder."""

Size = int | float


def size_of(g: Group) -> Size | None:
    """The configuration's ``train_subsample`` (a count or a fraction), None if not set."""
    value = (g.records[0].spec.get("dataset") or {}).get("config", {}).get(SIZE_KEY)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _family(g: Group) -> str:
    """What a family shares: the dataset (name, version, configuration but the size), the
    model label and the settings."""
    spec = g.records[0].spec
    ds = dict(spec.get("dataset") or {})
    ds["config"] = {k: v for k, v in (ds.get("config") or {}).items() if k != SIZE_KEY}
    return json.dumps([ds, g.config.model, spec.get("settings")], sort_keys=True, default=str)


def _series_key(g: Group) -> str:
    """A line: the mechanism configuration and ε (one line for the baseline and for each known
    answer, whose ε is not a budget)."""
    c = g.config
    if c.is_baseline:
        return "baseline"
    if c.mechanism in ("identity", "no_information"):
        return c.mechanism
    return f"{c.mechanism_config} · ε={fmt_eps(c.epsilon)}"


def size_families(groups: Sequence[Group]) -> list[tuple[str, str, dict[str, dict[Size, Group]]]]:
    """The families with two or more sizes of one kind (all counts or all fractions): (dataset
    label without the size, model, {line: {size: group}}), sorted."""
    fams: dict[str, list[Group]] = {}
    for g in groups:
        if size_of(g) is not None:
            fams.setdefault(_family(g), []).append(g)
    out = []
    for gs in fams.values():
        sizes = {size_of(g) for g in gs}
        kinds = {isinstance(s, int) for s in sizes}
        if len(sizes) < 2 or len(kinds) != 1:
            continue
        lines: dict[str, dict[Size, Group]] = {}
        for g in gs:
            lines.setdefault(_series_key(g), {})[size_of(g)] = g  # type: ignore[index]
        label = g.records[0].spec["dataset"]["name"]
        out.append((label, gs[0].config.model, dict(sorted(lines.items()))))
    return sorted(out, key=lambda f: (f[0], f[1]))


def _tasks(lines: dict[str, dict[Size, Group]]) -> list[str]:
    """The private attributes of a family's configurations (:func:`bench.report.plots._tasks`)."""
    return plot_tasks([g for by_size in lines.values() for g in by_size.values()])


def _tradeoff(g: Group, task: str, index: Any) -> Stat | None:
    if g.config.is_baseline:
        return None
    return group_anchored(g, task, index).tradeoff


PANELS: tuple[tuple[str, str, Callable[[Group, str, Any], Stat | None]], ...] = (
    ("utility", "utility (macro-F1)", lambda g, _task, _index: plot_utility(g)),
    ("privacy", "empirical privacy", lambda g, task, _index: plot_privacy(g, task)),
    ("anchored_tradeoff", "anchored trade-off R·G", _tradeoff),
)
"""(CSV column, axis label, value of a configuration on an attribute) per panel kind."""


def _style(name: str, i: int) -> dict[str, Any]:
    if name == "baseline":
        return {"color": "black", "linestyle": "--", "marker": "s"}
    if name in ("identity", "no_information"):  # the two ends, told apart by the marker
        return {"color": "grey", "linestyle": ":", "marker": "x" if name == "identity" else "P"}
    return {"marker": "os^Dv<>ph*"[i % 10], "linestyle": "-"}


def _plot(ax: Any, lines: dict[str, dict[Size, Group]], task: str, index: Any,
          get: Callable[[Group, str, Any], Stat | None]) -> None:
    i = 0
    for name, by_size in lines.items():
        xs, ys, lo, hi = [], [], [], []
        for size, g in sorted(by_size.items()):
            s = get(g, task, index)
            if s is None or s.mean is None or not math.isfinite(s.mean):
                continue
            below, above = _err(s)
            xs.append(size)
            ys.append(s.mean)
            lo.append(below)
            hi.append(above)
        style = _style(name, i)
        i += name not in ("baseline", "identity", "no_information")
        ax.errorbar(xs, ys, yerr=[lo, hi], label=name, capsize=2, markersize=4,
                    linewidth=1, **style)
    sizes = sorted({s for by_size in lines.values() for s in by_size})
    if all(s > 0 for s in sizes) and sizes[-1] / sizes[0] >= 4:
        ax.set_xscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([f"{s:g}" for s in sizes], fontsize=7)
    ax.minorticks_off()
    ax.grid(True, alpha=0.3)


def size_figure(label: str, model: str, lines: dict[str, dict[Size, Group]], index: Any,
                adversary: str | None = None) -> Any:
    """The matplotlib ``Figure`` of one family × model: utility, then privacy and the anchored
    trade-off for each private attribute, against the training-set size."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tasks = _tasks(lines)
    panels = [(PANELS[0], "")] + [(p, t) for t in tasks for p in PANELS[1:]]
    width = PANEL_WIDTH * len(panels)
    fig = Figure(figsize=(width, PANEL_HEIGHT), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    counts = all(isinstance(s, int) for by_size in lines.values() for s in by_size)
    xlabel = (f"training documents ({SIZE_KEY})" if counts
              else f"fraction of the training split ({SIZE_KEY})")
    for ax, ((_col, ylabel, get), task) in zip(axes, panels, strict=True):
        _plot(ax, lines, task, index, get)
        ax.set_xlabel(xlabel, fontsize=8)
        who = f" ({task}, {adversary or 'strongest adversary'})" if task else ""
        ax.set_ylabel(ylabel + who, fontsize=8)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        wrapped, ncol, rows = _legend_layout(labels, width)
        fig.set_size_inches(width, PANEL_HEIGHT + (rows * LEGEND_LINE + 0.25))
        fig.legend(handles, wrapped, loc="outside lower center", ncol=ncol, fontsize=7,
                   frameon=False)
    head = (f"{label} · {model}: against the training-set size (dev and test fixed); error "
            "bars: 95% t interval over seeds")
    fig.suptitle(textwrap.fill(head, int(width * 13)), fontsize=9)
    return fig


def size_points(groups: Sequence[Group], fams: list | None = None, index: Any = None
                ) -> list[dict[str, str]]:
    """Tidy rows of every plotted point: dataset, model, line, size, attribute and the three
    values with their intervals (``fams``, ``index``: :func:`size_families` and the baseline
    index of ``groups`` where the caller has them)."""
    if fams is None:
        fams = size_families(groups)
    if index is None:
        index = baseline_index(r for g in groups for r in g.records)
    rows = []
    for label, model, lines in fams:
        tasks = _tasks(lines) or [""]
        for name, by_size in lines.items():
            for size, g in sorted(by_size.items()):
                for task in tasks:
                    row = {"dataset": label, "model": model, "line": name,
                           SIZE_KEY: f"{size:g}", "attribute": task,
                           "n_seeds": str(len(g.records))}
                    for col, _y, get in PANELS:
                        s = get(g, task, index) if task or col == "utility" else None
                        row[col] = csv_num(s.mean if s else None)
                        row[f"{col}_ci_lo"] = csv_num(s.lo if s and s.has_interval else None)
                        row[f"{col}_ci_hi"] = csv_num(s.hi if s and s.has_interval else None)
                    rows.append(row)
    return rows


def write_size_curves(groups: Sequence[Group], folder: Path, csv_path: Path | None = None,
                      adversary: str | None = None) -> list[Path]:
    """One PNG per family × model into ``folder`` and the points to ``csv_path`` (default
    ``folder/sizes.csv``); nothing when no family has two sizes. Returns the paths."""
    fams = size_families(groups)
    if not fams:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    index = baseline_index(r for g in groups for r in g.records)
    paths = []
    for label, model, lines in fams:
        p = folder / f"sizes_{slug(label)}_{slug(model)}.png"
        buf = io.BytesIO()
        size_figure(label, model, lines, index, adversary).savefig(
            buf, format="png", metadata=PNG_METADATA)
        p.write_bytes(buf.getvalue())
        paths.append(p)
    p = csv_path or folder / SIZES_CSV
    p.write_text(csv_text(size_points(groups, fams, index)), encoding="utf-8", newline="\n")
    paths.append(p)
    return paths


__all__ = ["SIZES_CSV", "SIZE_KEY", "size_families", "size_figure", "size_of", "size_points",
           "write_size_curves"]
