"""Plots are written and deterministic; the leaderboard renders, sorts and escapes in Chromium.

The Chromium tests skip only when no ``chromium`` (or ``chromium-browser``) binary is installed;
CI installs Debian's ``chromium`` so they run there.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

from bench.analysis import group_cells, load_results
from bench.leaderboard.report_page import render_grid_page
from bench.report import build_report
from bench.report.plots import (
    LEGEND_CHARS_PER_INCH,
    LEGEND_HANDLE_CHARS,
    _legend_layout,
    _style,
    render_curves,
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.title=1">'


def test_plots_written_non_empty_and_deterministic(report) -> None:
    _summary, out = report
    pngs = sorted((out / "plots").glob("*.png"))
    assert [p.name for p in pngs] == ["curves_bbc_suite-0.0.9_lstm.png",
                                      "curves_bbc_suite-0.1.0_lstm.png"]
    for p in pngs:
        data = p.read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
        assert b"matplotlib" not in data.lower()  # no Software chunk with the version
    csv = (out / "curves.csv").read_text().splitlines()
    assert csv[0] == ("dataset,model,mechanism,epsilon,attribute,utility,utility_std,"
                      "utility_ci_lo,utility_ci_hi,privacy,privacy_std,privacy_ci_lo,"
                      "privacy_ci_hi,adversary,privacy_status,n_seeds")
    # t intervals over 2 seeds: half-width 12.706 · s / √2
    assert ("bbc(suite=0.1.0),lstm,mvl · sens=none · map=nearest,1,entities,0.650000,0.070711,"
            "0.014690,1.285310,0.700000,0.141421,-0.570620,1.970620,lstm,unknown,2") in csv
    # one old cell (no bootstrap interval): no interval, not an invented one
    assert ("bbc(suite=0.0.9),lstm,mvl · sens=none · map=nearest,10,entities,0.500000,,,,"
            "0.500000,,,,lstm,unknown,1") in csv
    groups, _ = group_cells(load_results(out.parent / "results").cells)
    assert render_curves(groups, "t") == render_curves(groups, "t")


def test_plot_legend_wraps_long_configurations_instead_of_cutting_them(report) -> None:
    """The legend sits under the panels: a code-ablation grid's 17 configurations of 100+
    characters each are wrapped to the figure's width, one column; short labels share columns."""
    long = [f"trlaplace(C=0.005, batch_sentences=1024, clip=false, variant={i}) · sens=none · "
            "map=none → autoencoder(allow_no_guarantee=true, train_embeddings=true)"
            for i in range(17)]
    wrapped, ncol, rows = _legend_layout(long, 5.2)
    room = int(5.2 * LEGEND_CHARS_PER_INCH)
    assert ncol == 1
    assert all(len(line) + LEGEND_HANDLE_CHARS <= room for w in wrapped for line in w.split("\n"))
    assert [w.replace("\n  ", " ") for w in wrapped] == long  # wrapped, nothing lost
    assert rows == sum(w.count("\n") + 1 for w in wrapped) > 17
    short = [f"mvl · sens=none · map=nearest {i}" for i in range(6)]
    assert _legend_layout(short, 10.4) == (short, 4, 2)
    assert _style(0) != _style(10) and _style(3)["color"] == _style(13)["color"]
    _summary, out = report
    groups, _ = group_cells(load_results(out.parent / "results").cells)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "layout not applied"
        assert render_curves(groups, "x" * 300).startswith(b"\x89PNG")


def _with_hostile_cell(results: Path) -> None:
    src = next(p for p in sorted((results / "cells").iterdir())
               if (p / "spec.json").is_file()
               and json.loads((p / "spec.json").read_text())["mechanism"]["name"] == "tem")
    dst = results / "cells" / "eeeeeeeeeeeeeeee"
    shutil.copytree(src, dst)
    spec = json.loads((dst / "spec.json").read_text())
    spec["hash"] = dst.name  # a cell names its own hash (or the leaderboard leaves it out)
    # a component's name cannot carry it (bench.registry.name_problem: the cell would be left
    # out); free text such as a dataset's configuration still travels, and is escaped
    spec["dataset"]["config"] = {"note": HOSTILE + "</td><b>x</b>"}
    (dst / "spec.json").write_text(json.dumps(spec))


def page_data(page: str) -> dict:
    """The ``leaderboard.json`` document a page embeds."""
    m = re.search(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', page,
                  re.DOTALL)
    assert m is not None
    return json.loads(m.group(1))


def test_leaderboard_escapes_in_python(results: Path) -> None:
    _with_hostile_cell(results)
    rs = load_results(results)
    rs.grid = "<i>grid</i>"
    rs.warnings.append("<b>warn</b>")
    page = render_grid_page(rs)
    assert page.count("<script") == 2  # the data block and the page's own script
    assert "<title>&lt;i&gt;grid&lt;/i&gt; leaderboard</title>" in page
    assert "<li>&lt;b&gt;warn&lt;/b&gt;</li>" in page  # a problem line of the header
    assert "<img" not in page and "<b>" not in page and "<i>" not in page
    assert "http://" not in page and "https://" not in page and "<link" not in page
    data = page_data(page)  # the hostile text travels as data, escaped in the JSON
    assert any(HOSTILE in e["dataset"] for e in data["entries"])
    assert "\\u003cscript>document.title" in page


def _dump_dom(url: str, tmp_path: Path) -> str:
    profile = tmp_path / "chromium-profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
           "--virtual-time-budget=2000", "--dump-dom", url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def _header(dom: str) -> list[str]:
    return re.findall(r'<th data-col="([^"]+)"', dom)


def _rows(dom: str) -> list[list[str]]:
    """The rendered entry rows: each cell's inner HTML (not the boards' heading and baseline
    rows of the grouped table)."""
    body = dom.split('<table id="board"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", tr, re.DOTALL)
            for tr in re.findall(r"<tr data-i=[^>]*>(.*?)</tr>", body, re.DOTALL)]


def _name(cell: str) -> str:
    """A configuration cell's name (without its known-answer mark and its board)."""
    m = re.search(r'<span class="name">(.*?)</span>', cell)
    assert m is not None, cell
    return m.group(1)


def _groups(dom: str) -> list[str]:
    """The titles of the boards' heading rows, in page order (the table grouped by board)."""
    body = dom.split('<table id="board"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr class="group">.*?<span class="btitle">(.*?)</span>', body, re.DOTALL)


@needs_chromium
def test_leaderboard_renders_and_sorts_in_chromium(report, tmp_path: Path) -> None:
    _summary, out = report
    page = (out / "leaderboard.html").resolve()
    data = page_data(page.read_text())
    dom = _dump_dom(page.as_uri(), tmp_path)
    assert 'data-rendered-ms="' in dom and 'data-error="1"' not in dom
    assert "<title>Leaderboard</title>" in dom  # no grid given
    rows = _rows(dom)
    assert len(rows) == len(data["entries"]) == 4  # mvl, mvl unit_norm, tem; mvl of 0.0.9
    assert 'data-sorted=""' in dom  # board by board in rank order by default
    header = _header(dom)
    assert header == ["rank", "config", "model", "score", "epsilon", "guarantee", "audit",
                      "signed", "cells"]
    config = header.index("config")
    # unsorted, the rows are grouped by board, in board order, each board titled in words
    assert _groups(dom) == [
        "bbc · utility: topic · private attribute: entities · model: lstm · suite 0.0.9",
        "bbc · utility: topic · private attribute: entities · model: lstm · suite 0.1.0"]
    # unranked entries say why; the privacy-utility scatter is drawn per board
    ranks = [r[header.index("rank")] for r in _rows(dom)]
    assert "no baseline" in ranks[0] and all("privacy validity unknown" in r for r in ranks[1:])
    assert dom.count("<svg") == 2 and dom.count('class="base"') == 1
    dom = _dump_dom(page.as_uri() + "?sort=config&dir=desc", tmp_path)
    assert 'data-sorted="config:descending"' in dom and 'aria-sort="descending"' in dom
    assert _groups(dom) == []  # sorted across boards: each row names its board instead
    names = [_name(r[config]) for r in _rows(dom)]
    assert names == sorted(names, reverse=True) and names[0].startswith("tem")
    assert all('<span class="bd">bbc · utility: topic' in r[config] for r in _rows(dom))


@needs_chromium
def test_leaderboard_hostile_name_escaped_in_chromium(results: Path, tmp_path: Path) -> None:
    _with_hostile_cell(results)
    out = tmp_path / "report"
    build_report(results, out)
    dom = _dump_dom((out / "leaderboard.html").resolve().as_uri() + "?sort=config",
                    tmp_path)
    assert re.search(r"<title>[^<]*pwned", dom) is None
    assert "<title>Leaderboard</title>" in dom
    assert dom.count("<script") == 2 and "<img" not in dom
    assert "&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;" in dom
    assert 'data-sorted="config:ascending"' in dom  # the page still works


@needs_chromium
def test_leaderboard_audit_column_sorts_violation_first(audited_results: Path,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "report"
    build_report(audited_results, out)
    page = (out / "leaderboard.html").resolve()
    dom = _dump_dom(page.as_uri() + "?sort=audit&dir=desc", tmp_path)
    assert 'data-sorted="audit:descending"' in dom
    header = _header(dom)
    audit, config, eps = header.index("audit"), header.index("config"), header.index("epsilon")
    rows = _rows(dom)
    assert [r[audit] for r in rows] == ["VIOLATION"] + ["not audited"] * 3
    assert _name(rows[0][config]) == "tem · sens=none · map=none"  # sensitivities differ
    assert 'class="eps violation"' in rows[0][eps] and "10⚠" in rows[0][eps]
    # mvl ε=1 passed (the hover text of its ε), its ε=10 was not audited: "not audited"
    assert [_name(r[config]) for r in rows if "audit PASS" in r[eps]] == [
        "mvl · sens=none · map=nearest"]
    assert re.search(r'<p class="violation">⚠ Privacy audit VIOLATION: [^<]*tem · sens=none · '
                     r"map=none at ε=10", dom)


def _eps_groups(eps: list[float]) -> list:
    """Stand-ins for the report's groups: one configuration at each ε, and a baseline."""
    from types import SimpleNamespace

    from bench.analysis.results import Stat

    def group(e: float, baseline: bool = False) -> SimpleNamespace:
        cfg = SimpleNamespace(epsilon=e, is_baseline=baseline, mechanism_config="mvl")
        return SimpleNamespace(config=cfg, records=[],
                               stat=lambda *_a: Stat(0.5 + e / 100, 0.01, 2, 0.4, 0.6, "t"))

    return [group(e) for e in eps] + [group(float("inf"), baseline=True)]


@pytest.mark.parametrize(("eps", "labels", "upright"), [
    ([0.5, 1, 2, 8, 12], ["0.5", "1", "2", "8", "12"], False),
    ([8, 9, 10, 12], ["8", "9", "10", "12"], False),  # was 8×10⁰, 9×10⁰, 10¹ and no 12
    ([0.05, 0.1, 0.2, 0.5, 1, 5, 10, 20], ["0.05", "0.1", "0.2", "0.5", "1", "5", "10", "20"],
     False),
    ([1, 10, 100, 150], ["1", "10", "100", "150"], False),
    ([0.1, 1, 50, 100, 150], ["0.1", "1", "50", "100", "150"], True),  # close: upright
    ([0.1, 1, 100, 101], ["0.1", "1", "100", ""], True),  # would touch even upright: left out
])
def test_epsilon_axis_labels_are_the_grids_epsilon_values(eps, labels, upright) -> None:
    from bench.report.plots import curves_figure

    fig = curves_figure(_eps_groups(eps), "t")
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    lo, hi = ax.get_xlim()
    shown = [(t.get_position()[0], t.get_text()) for t in ax.get_xticklabels()]
    assert [text for x, text in shown if lo <= x <= hi] == labels
    assert [x for x, _ in shown] == sorted(eps)  # a tick at every ε, labelled or not
    assert {t.get_text() for t in ax.get_xticklabels(minor=True)} <= {""}  # no 8×10⁰
    # neighbours that would touch written across are written upright
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {90.0 if upright else 0.0}


def test_known_answers_are_lines_not_points_on_the_epsilon_axis() -> None:
    """The known answers (no_information: ε = 0; identity: ε = ∞) have no place on a log ε
    axis: drawn there, ε = 0 squeezed every other point onto one vertical line (the committed
    sotu report). Now each is a dotted line at its utility, named in the legend, and the axis
    holds the grid's ε only."""
    from types import SimpleNamespace

    from bench.analysis.results import Stat
    from bench.report.plots import curves_figure

    def group(e: float, name: str, u: float) -> SimpleNamespace:
        cfg = SimpleNamespace(epsilon=e, is_baseline=False, mechanism_config=name)
        return SimpleNamespace(config=cfg, records=[],
                               stat=lambda *_a: Stat(u, 0.01, 2, u - 0.05, u + 0.05, "t"))

    groups = [group(e, "mvl", 0.5 + e / 100) for e in (3, 10, 25)]
    groups += [group(0.0, "no_information", 0.23), group(float("inf"), "identity", 0.67)]
    fig = curves_figure(groups + _eps_groups([])[-1:], "t")
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    lo, hi = ax.get_xlim()
    assert 1 < lo < 3 and 25 < hi < 40, (lo, hi)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["3", "10", "25"]
    _handles, labels = ax.get_legend_handles_labels()
    assert "no_information (known answer, no ε) 0.230" in labels
    assert "identity (known answer, no ε) 0.670" in labels
    dotted = {round(line.get_ydata()[0], 3) for line in ax.get_lines()
              if line.get_linestyle() == ":"}
    assert dotted == {0.23, 0.67}


def test_error_bars_stay_inside_the_scores_range() -> None:
    """A t interval over two seeds reaches past [0, 1] (t(1) = 12.7); no macro-F1 can, so the
    bars (and the baseline's band) are drawn inside it, while a bar inside stays as it is."""
    from types import SimpleNamespace

    import numpy as np

    from bench.analysis.results import Stat
    from bench.report.plots import curves_figure

    def group(e: float, u: float, lo: float, hi: float, baseline: bool = False):
        cfg = SimpleNamespace(epsilon=e, is_baseline=baseline, mechanism_config="mvl")
        return SimpleNamespace(config=cfg, records=[],
                               stat=lambda *_a: Stat(u, 0.1, 2, lo, hi, "t"))

    groups = [group(1, 0.1, -0.4, 0.6), group(10, 0.9, 0.3, 1.5), group(20, 0.5, 0.45, 0.55),
              group(float("inf"), 0.95, 0.6, 1.3, baseline=True)]
    fig = curves_figure(groups, "t")
    fig.canvas.draw()
    ax = fig.axes[0]
    ys = np.concatenate([np.asarray(seg)[:, 1] for c in ax.containers
                         for col in c.lines[2] for seg in col.get_segments()])
    assert ys.min() == 0.0 and ys.max() == 1.0         # cut at the range, not beyond
    assert {0.45, 0.55} <= {round(float(y), 6) for y in ys}   # an interval inside: unchanged
    band = [p for p in ax.patches if p.get_alpha() == 0.1]
    assert [(round(p.get_y(), 6), round(p.get_y() + p.get_height(), 6)) for p in band] \
        == [(0.6, 1.0)]
