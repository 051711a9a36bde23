"""Plots are written and deterministic; the leaderboard renders, sorts and escapes in Chromium.

The Chromium tests skip only when no ``chromium`` (or ``chromium-browser``) binary is installed;
CI installs Debian's ``chromium`` so they run there.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.report import build_report, group_cells, load_results, render_leaderboard
from bench.report.plots import render_curves

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


def _with_hostile_cell(results: Path) -> None:
    src = next(p for p in sorted((results / "cells").iterdir())
               if (p / "spec.json").is_file()
               and json.loads((p / "spec.json").read_text())["mechanism"]["name"] == "tem")
    dst = results / "cells" / "eeeeeeeeeeeeeeee"
    shutil.copytree(src, dst)
    spec = json.loads((dst / "spec.json").read_text())
    spec["mechanism"]["name"] = HOSTILE
    spec["dataset"]["config"] = {"note": "</td><b>x</b>"}
    (dst / "spec.json").write_text(json.dumps(spec))


def test_leaderboard_escapes_in_python(results: Path) -> None:
    _with_hostile_cell(results)
    groups, _ = group_cells(load_results(results).cells)
    page = render_leaderboard(groups, "<i>grid</i>", ["<b>warn</b>"])
    assert page.count("<script") == 1  # only the page's own script
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert "<img" not in page and "<b>" not in page and "<i>" not in page
    assert "http://" not in page and "https://" not in page and "<link" not in page


def _dump_dom(url: str, tmp_path: Path) -> str:
    profile = tmp_path / "chromium-profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
           "--virtual-time-budget=2000", "--dump-dom", url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def _rows(dom: str) -> list[list[str]]:
    body = dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", tr) for tr in re.findall(r"<tr[^>]*>(.*?)</tr>",
                                                                        body, re.DOTALL)]


@needs_chromium
def test_leaderboard_renders_and_sorts_in_chromium(report, tmp_path: Path) -> None:
    _summary, out = report
    page = (out / "leaderboard.html").resolve()
    dom = _dump_dom(page.as_uri(), tmp_path)
    assert '<table id="leaderboard">' in dom  # rendered, unsorted by default
    rows = _rows(dom)
    assert len(rows) == 5  # baseline, mvl, tem, mvl unit_norm, mvl of suite 0.0.9
    header = re.findall(r'<th data-col="([^"]+)"', dom)
    col = header.index("utility_eps10")
    dom = _dump_dom(page.as_uri() + "?sort=utility_eps10&dir=desc", tmp_path)
    assert 'data-sorted="utility_eps10:descending"' in dom
    assert 'aria-sort="descending"' in dom
    vals = [r[col] for r in _rows(dom)]
    nums = [float(v.split(" ")[0]) for v in vals if v != "—"]
    assert nums == sorted(nums, reverse=True) and len(nums) == 4
    assert vals[len(nums):] == ["—"] * (len(vals) - len(nums))  # missing values last
    dom = _dump_dom(page.as_uri() + "?sort=mechanism", tmp_path)
    mech = header.index("mechanism")
    names = [r[mech] for r in _rows(dom)]
    assert names == sorted(names)
    assert 'data-sorted="mechanism:ascending"' in dom


@needs_chromium
def test_leaderboard_hostile_name_escaped_in_chromium(results: Path, tmp_path: Path) -> None:
    _with_hostile_cell(results)
    out = tmp_path / "report"
    build_report(results, out)
    dom = _dump_dom((out / "leaderboard.html").resolve().as_uri() + "?sort=mechanism",
                    tmp_path)
    assert "<title>bench leaderboard</title>" not in dom  # (title is "Leaderboard")
    assert re.search(r"<title>[^<]*pwned", dom) is None
    assert "<title>Leaderboard</title>" in dom
    assert dom.count("<script") == 1 and "<img" not in dom
    assert "&lt;script&gt;document.title=\"pwned\"&lt;/script&gt;" in dom
    assert 'data-sorted="mechanism:ascending"' in dom  # the page still works


@needs_chromium
def test_leaderboard_audit_column_sorts_violation_first(audited_results: Path,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "report"
    build_report(audited_results, out)
    page = (out / "leaderboard.html").resolve()
    dom = _dump_dom(page.as_uri() + "?sort=audit&dir=desc", tmp_path)
    assert 'data-sorted="audit:descending"' in dom
    header = re.findall(r'<th data-col="([^"]+)"', dom)
    audit, mech = header.index("audit"), header.index("mechanism")
    rows = _rows(dom)
    assert [r[mech] for r in rows] == ["tem", "mvl", "mvl", "mvl", "none"]
    assert "VIOLATION ε=10" in rows[0][audit] and "PASS ε=1" in rows[1][audit]
    assert rows[-1][audit] == "—"  # the baseline (nothing to audit) sorts last
