"""One leaderboard: the per-grid page of ``bench report`` is the merged leaderboard's builder
run on one folder (``bench.leaderboard.report_page``), and the page's script and style are
package data files, not Python strings."""

from __future__ import annotations

import inspect
import json
import re
from importlib import resources
from pathlib import Path

import pytest
import tomllib

from bench.analysis import load_results
from bench.leaderboard import build, read_sources
from bench.leaderboard import page as page_mod
from bench.leaderboard.report_page import grid_document, render_grid_page
from bench.report import build_report

from .helpers import ROOT, copy_results

GRIDS = ["quickstart", "tem", "thesis_reference", "trlaplace", "trlaplace_rewrite"]
"""The committed references whose per-grid page is regenerated with the builder."""


def embedded(page: str) -> dict:
    """The ``leaderboard.json`` document a page embeds."""
    m = re.search(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', page,
                  re.DOTALL)
    assert m is not None
    return json.loads(m.group(1))


def _without_links(doc: dict) -> dict:
    """The document without what depends on where it was built: date, version, the source's
    location and the cells' file links."""
    doc = json.loads(json.dumps(doc))
    for k in ("generated", "generated_by"):
        doc.pop(k)
    for s in doc["sources"]:
        s.pop("location")
        s.pop("trusted")  # the report trusts the one folder it reports on
    for e in doc["entries"]:
        for q in e["points"]:
            for c in q["cells"]:
                c.pop("href")
    return doc


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A copy of the quickstart reference's cells."""
    return copy_results(tmp_path_factory.mktemp("quickstart"))


def test_per_grid_page_is_the_merged_builder_on_one_folder(folder, tmp_path) -> None:
    merged = build(read_sources([folder]))
    grid = grid_document(load_results(folder))
    assert _without_links(grid) == _without_links(merged)  # entries, ranks, Pareto, audits
    assert [q["pareto"] for e in grid["entries"] for q in e["points"]] == \
        [q["pareto"] for e in merged["entries"] for q in e["points"]]
    assert any(q["pareto"] for e in grid["entries"] for q in e["points"])
    # what bench report writes is that document, drawn by the one page
    build_report(folder, tmp_path / "report")
    page = (tmp_path / "report" / "leaderboard.html").read_text(encoding="utf-8")
    # non-finite floats as the page writes them (identity's ε = ∞: "inf")
    assert embedded(page) == json.loads(json.dumps(page_mod.finite_json(grid)))
    assert page == render_grid_page(load_results(folder))
    # and nothing in it depends on where or when it was built
    assert grid["generated"] is None and grid["generated_by"] is None
    assert grid["sources"][0]["location"] == folder.name
    assert {c["href"] for e in grid["entries"] for q in e["points"] for c in q["cells"]} == {None}


def test_report_adversary_and_audits_reach_the_builder(folder) -> None:
    rs = load_results(folder)
    doc = grid_document(rs, adversary="lexical")
    assert doc["privacy_adversary"] == "lexical"
    assert {q["adversary"] for e in doc["entries"] for q in e["points"]} == {"lexical"}
    assert build(read_sources([folder]))["privacy_adversary"] == "headline"


def test_the_report_keeps_no_page_of_its_own() -> None:
    import importlib.util

    import bench.report

    assert importlib.util.find_spec("bench.report.leaderboard") is None
    for path in Path(bench.report.__file__).parent.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        for name in ("<script", "<style", "render_page"):
            assert name not in source, (path.name, name)


def test_script_and_style_are_package_data() -> None:
    static = resources.files("bench.leaderboard").joinpath("static")
    js = static.joinpath("leaderboard.js").read_text(encoding="utf-8")
    css = static.joinpath("leaderboard.css").read_text(encoding="utf-8")
    assert "function" in js and "#board" in css
    text = page_mod.render_page({})
    assert text.count(js) == 1 and text.count(css) == 1  # inlined verbatim
    assert page_mod.static_text("leaderboard.js") == js
    source = inspect.getsource(page_mod)  # no script or style kept as a Python string
    assert "function (" not in source and "border-collapse" not in source
    assert len(source.splitlines()) < 600
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = pyproject["tool"]["setuptools"]["package-data"]["bench.leaderboard"]
    assert {"static/*.js", "static/*.css"} <= set(data)


def test_page_reads_its_files_at_render_time(monkeypatch, tmp_path) -> None:
    """The page takes whatever the package's data files hold (not a copy made at import)."""
    fake = tmp_path / "static"
    fake.mkdir()
    (fake / "leaderboard.js").write_text("/* marker-js */")
    (fake / "leaderboard.css").write_text("/* marker-css */")
    monkeypatch.setattr(page_mod.resources, "files", lambda _pkg: tmp_path)
    page_mod.static_text.cache_clear()
    try:
        text = page_mod.render_page({})
        assert "/* marker-js */" in text and "/* marker-css */" in text
        (fake / "leaderboard.js").write_text("</script><script>alert(1)")
        page_mod.static_text.cache_clear()
        with pytest.raises(RuntimeError, match="must not contain"):
            page_mod.render_page({})
    finally:
        page_mod.static_text.cache_clear()


@pytest.mark.parametrize("grid", GRIDS)
def test_committed_per_grid_pages_come_from_the_builder(grid) -> None:
    """Every committed reference's page is the builder's document of its cells (the full
    byte-for-byte rebuild is ``tests/test_reference.py``)."""
    committed = ROOT / "results" / "reference" / grid / "report" / "leaderboard.html"
    doc = embedded(committed.read_text(encoding="utf-8"))
    assert doc["schema"] == "bench-leaderboard" and doc["generated"] is None
    assert doc["sources"][0]["location"] == grid and len(doc["sources"]) == 1
    assert doc["entries"] and all("mia" in q and "audit" in q
                                  for e in doc["entries"] for q in e["points"])


def test_committed_page_renders_in_chromium(dump_dom) -> None:
    committed = ROOT / "results" / "reference" / "quickstart" / "report" / "leaderboard.html"
    doc = embedded(committed.read_text(encoding="utf-8"))
    dom = dump_dom(committed.resolve().as_uri() + "?sort=score&dir=desc")
    assert "<title>quickstart leaderboard</title>" in dom and 'data-error="1"' not in dom
    assert 'data-sorted="score:descending"' in dom
    body = dom.split('<table id="board"', 1)[1].split("</table>", 1)[0]
    assert body.count('<tr data-i="') == len(doc["entries"])
    plots = dom.split('<div id="plots"', 1)[1].split("</div>", 1)[0]
    assert plots.count("<svg") == len(doc["boards"])
    baselines = dom.split('<ul id="baselines"', 1)[1].split("</ul>", 1)[0]
    (base,) = doc["boards"][0]["baselines"]  # the page shows the document's baseline, rounded
    assert baselines.count("<li>") == 1 and f"lstm: U {base['utility']:.3f}" in baselines


def test_board_without_private_attribute_lists_its_values_in_chromium(dump_dom) -> None:
    """The tem reference measures membership inference only: its configurations (mvl and tem
    at five ε, the known answers at one each) are on one board without a private attribute,
    unranked, each ε with its utility, N_w and MIA AUC."""
    committed = ROOT / "results" / "reference" / "tem" / "report" / "leaderboard.html"
    doc = embedded(committed.read_text(encoding="utf-8"))
    (board,) = doc["boards"]
    assert board["private_attribute"] is None and len(board["entries"]) == 4
    assert {e["rank_flag"] for e in doc["entries"]} == {"no private attribute"}
    dom = dump_dom(committed.resolve().as_uri())
    body = dom.split('<table id="board"', 1)[1].split("</table>", 1)[0]
    assert body.count("(no private attribute)") == 4
    assert body.count('<span class="vals">U 0.') == 12  # 2 entries × 5 ε + 2 known answers
    # the baseline row heads the board (a known answer: the privacy-0 end), with its MIA too
    (base_row,) = re.findall(r'<tr class="baseline known end-privacy">(.*?)</tr>', body)
    assert '<span class="vals base">U 0.' in base_row and " · MIA 0." in base_row
    assert body.count(" · MIA 0.") == 12 + 1
    plots = dom.split('<div id="plots"', 1)[1].split("</div>", 1)[0]
    assert "<svg" not in plots and "without a private attribute: no privacy axis" in dom
    baselines = dom.split('<ul id="baselines"', 1)[1].split("</ul>", 1)[0]
    assert baselines.count("<li>") == 1 and " · MIA 0." in baselines
