"""The leaderboard page: self-contained, escaped, and in headless Chromium it renders, sorts,
filters, plots and records its render time (``bench.leaderboard.page``); the synthetic data
it is tested on is schema-valid and deterministic (``bench.leaderboard.synthetic``)."""

from __future__ import annotations

import html
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from bench.leaderboard import page as page_mod
from bench.leaderboard.page import embed_json, render_page
from bench.leaderboard.synthetic import (
    HOSTILE_DATASET,
    HOSTILE_HREF,
    HOSTILE_MECHANISM,
    HOSTILE_MODEL,
    HOSTILE_RUN_BY,
    synthetic_leaderboard,
)

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


class Node:
    """An element of the dumped DOM (enough of one for these tests)."""

    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def all(self, tag: str, **attrs: str) -> list[Node]:
        return [n for n in self.iter() if n.tag == tag
                and all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def one(self, tag: str, **attrs: str) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#document", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in _VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, dict(attrs), self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(dom: str) -> Node:
    p = _Parser()
    p.feed(dom)
    p.close()
    return p.root


def rows(doc: Node) -> list[Node]:
    """The rendered entry rows of the leaderboard table (not the boards' heading rows or their
    baseline rows)."""
    return [r for r in doc.one("table", id="board").one("tbody").all("tr") if "data-id" in r.attrs]


def group_rows(doc: Node) -> list[Node]:
    """The boards' heading rows (the table is grouped by board when it is not sorted)."""
    return [r for r in doc.one("table", id="board").one("tbody").all("tr")
            if r.attrs.get("class") == "group"]


def col(doc: Node, name: str) -> int:
    heads = [th.attrs["data-col"] for th in doc.one("table", id="board").one("thead").all("th")]
    return heads.index(name)


def cell_texts(doc: Node, name: str) -> list[str]:
    i = col(doc, name)
    return [r.all("td")[i].text for r in rows(doc)]


def plottable(q: dict[str, Any]) -> bool:
    return (q.get("privacy_valid") is not False and q.get("privacy") is not None
            and q.get("utility") is not None)


def write_page(board: dict[str, Any], tmp_path: Path, extra_script: str = "") -> str:
    text = render_page(board)
    if extra_script:
        text = text.replace("</body>", f"<script>{extra_script}</script>\n</body>")
    path = tmp_path / "leaderboard.html"
    path.write_text(text, encoding="utf-8")
    return path.resolve().as_uri()


def data_block(text: str) -> str:
    m = re.search(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', text,
                  re.DOTALL)
    assert m is not None
    return m.group(1)


# --------------------------------------------------------------------------- Python level

def test_page_is_self_contained(small_board) -> None:
    text = render_page(small_board)
    block = data_block(text)
    rest = text.replace(block, "")
    assert "http://" in block  # the MLflow links are data, never a resource to load
    assert re.search(r"\b(src|href|action|data)\s*=\s*[\"']?\w+:", rest) is None
    assert re.search(r"<script[^>]*\bsrc=", text) is None
    for tag in ("<link", "<img", "<iframe", "<object", "<embed", "@import", "url("):
        assert tag not in rest, tag
    assert "default-src 'none'" in text  # CSP: no network loads even if a link slipped in
    assert text.count("<script") == 2  # the data block and the page's script


def test_data_embedded_whole_and_escaped(small_board) -> None:
    text = render_page(small_board)
    block = data_block(text)
    assert "<" not in block and "</script" not in block.lower()
    assert json.loads(block) == json.loads(json.dumps(small_board))
    assert "\\u003cscript>alert(1)\\u003c/script>" in block
    assert "\\u003c/script>\\u003cimg src=x onerror=alert(2)>&amp;" in block


def test_header_escapes_and_counts(small_board) -> None:
    text = render_page(small_board)
    rest = text.replace(data_block(text), "")
    assert "<img" not in rest and "<b>" not in rest and "alert(1)</script>" not in rest
    assert "/home/bob/bench &amp; co/results" in rest  # source location, escaped
    assert html.escape(HOSTILE_DATASET) in rest  # in a problem line
    assert 'data-count="2"><summary>2 conflicts' in rest
    assert 'data-count="2"><summary>2 problems' in rest
    assert "2026-11-23T15:04:05Z" in rest and "bench 0.3.0 (synthetic)" in rest
    assert "12 entries on 2 boards" in rest
    assert "hypervolume gain over the unprivatized baseline" in rest
    assert "95% t interval over n seeds with a bootstrap standard error (1000 resamples)" in rest


def test_non_finite_numbers_become_strings() -> None:
    board = {"schema": "bench-leaderboard", "schema_version": 1,
             "entries": [{"id": "e0", "points": [{"epsilon": math.inf, "utility": math.nan}]}]}
    block = data_block(render_page(board))

    def bad(name: str) -> None:
        raise AssertionError(f"{name} in the embedded JSON")

    data = json.loads(block, parse_constant=bad)
    assert data["entries"][0]["points"][0] == {"epsilon": "inf", "utility": "nan"}
    assert embed_json({"a": "</script><!--"}) == '{"a":"\\u003c/script>\\u003c!--"}'


def test_render_page_checks_its_input(caplog) -> None:
    with pytest.raises(TypeError, match="parsed leaderboard.json"):
        render_page([])  # type: ignore[arg-type]
    text = render_page({"schema": "bench-leaderboard", "schema_version": 3})
    assert "written for bench-leaderboard schema version 2" in text
    assert any("version 3" in r.getMessage() for r in caplog.records)
    assert '<table id="board">' in render_page({})  # an empty board still renders


# --------------------------------------------------------------------------- synthetic data

_ENTRY_KEYS = {"id", "board", "dataset", "model", "mechanism", "sensitivity", "mapping",
               "config", "suite_version", "guarantee", "audit", "score", "score_ci", "rank",
               "rank_flag", "points", "signed_by", "unsigned_cells"}
_POINT_KEYS = {"epsilon", "utility", "utility_ci", "privacy", "privacy_ci", "privacy_valid",
               "adversary", "n_w", "pareto", "mia", "measures", "audit", "cells"}
_PROV_KEYS = {"source", "suite_version", "commit", "machine", "date", "run_by", "sealed",
              "signer"}


def test_synthetic_is_deterministic_and_sized() -> None:
    a, b = synthetic_leaderboard(50, seed=3), synthetic_leaderboard(50, seed=3)
    assert a == b and a != synthetic_leaderboard(50, seed=4)
    assert len(a["entries"]) == 50 and len(synthetic_leaderboard(0)["entries"]) == 0
    with pytest.raises(ValueError, match="n_entries"):
        synthetic_leaderboard(-1)


def test_synthetic_is_schema_valid() -> None:
    board = synthetic_leaderboard(300, seed=1)
    assert board["schema"] == "bench-leaderboard" and board["schema_version"] == 2
    sources = {s["id"] for s in board["sources"]}
    entries = {e["id"]: e for e in board["entries"]}
    listed = [i for b in board["boards"] for i in b["entries"]]
    assert sorted(listed) == sorted(entries)  # every entry on exactly one board
    assert len(board["boards"]) >= 2
    cells = [c for e in entries.values() for q in e["points"] for c in q["cells"]]
    for b in board["boards"]:
        ranked = [entries[i] for i in b["entries"]]
        assert all(e["board"] == b["id"] and e["dataset"] == b["dataset"] for e in ranked)
        ranks = [e["rank"] for e in ranked]
        assert ranks[: sum(r is not None for r in ranks)] == sorted(r for r in ranks if r)
        bad = [e["rank"] for e in ranked if e["audit"] == "VIOLATION" and e["rank"]]
        good = [e["rank"] for e in ranked if e["audit"] != "VIOLATION" and e["rank"]]
        assert not bad or not good or min(bad) > max(good)  # violations ranked last
    for e in entries.values():
        assert set(e) == _ENTRY_KEYS and 3 <= len(e["points"]) <= 5
        eps = [q["epsilon"] for q in e["points"]]
        assert eps == sorted(eps)
        if e["score"] is None:
            assert e["rank"] is None and e["rank_flag"] == "invalid privacy"
        else:
            assert 0 <= e["score"] <= 1
        assert (e["audit"] == "VIOLATION") == any(q["audit"] == "VIOLATION"
                                                  for q in e["points"])
        for q in e["points"]:
            assert set(q) == _POINT_KEYS and 1 <= len(q["cells"]) <= 3
            for c in q["cells"]:
                assert {p["source"] for p in c["provenance"]} <= sources
                assert all(set(p) == _PROV_KEYS for p in c["provenance"])
    assert any(e["audit"] == "VIOLATION" for e in entries.values())
    assert any(e["score"] is None for e in entries.values())
    assert any(e["rank_flag"] == "no interval" for e in entries.values())
    assert any(c["href"] is None for c in cells) and any(c["mlflow"] is None for c in cells)
    assert any(c["mlflow"] for c in cells)
    text = json.dumps(board)
    for s in (HOSTILE_MECHANISM, HOSTILE_MODEL, HOSTILE_DATASET, HOSTILE_RUN_BY, HOSTILE_HREF):
        assert json.dumps(s)[1:-1] in text, s


# --------------------------------------------------------------------------- Chromium

def test_table_renders_every_row_and_records_render_time(small_board, tmp_path, dump_dom) -> None:
    doc = parse(dump_dom(write_page(small_board, tmp_path)))
    table = doc.one("table", id="board")
    assert len(rows(doc)) == 12
    assert table.attrs["data-rows"] == "12" and table.attrs["data-shown"] == "12"
    assert table.attrs["data-sorted"] == ""
    body = doc.one("body")
    assert float(body.attrs["data-rendered-ms"]) > 0
    for part in ("data-parse-ms", "data-table-ms", "data-plot-ms"):
        assert float(body.attrs[part]) >= 0
    assert "data-error" not in body.attrs
    # default order: board by board, each in its rank order
    ids = [r.attrs["data-id"] for r in rows(doc)]
    assert ids == [i for b in small_board["boards"] for i in b["entries"]]
    by_id = {e["id"]: e for e in small_board["entries"]}
    first = rows(doc)[0].all("td")
    e0 = by_id[ids[0]]
    assert first[col(doc, "score")].text == (
        f"{e0['score']:.3f} [{e0['score_ci'][0]:.3f}, {e0['score_ci'][1]:.3f}]")
    invalid = [r for r in rows(doc) if by_id[r.attrs["data-id"]]["score"] is None]
    assert invalid and all(r.all("td")[col(doc, "rank")].text == "— (invalid privacy)"
                           for r in invalid)
    # every cell's links: files (file:) and MLflow (http:) where not null, never javascript:
    hrefs = [a.attrs["href"] for a in doc.one("table", id="board").all("a")]
    cells = [c for e in small_board["entries"] for q in e["points"] for c in q["cells"]]
    want = [c["href"] for c in cells if c["href"] and c["href"] != HOSTILE_HREF]
    want += [c["mlflow"] for c in cells if c["mlflow"]]
    assert sorted(hrefs) == sorted(want)
    assert not any(h.startswith("javascript") for h in hrefs)
    assert f"files: {HOSTILE_HREF}" in doc.one("table", id="board").text  # shown as text
    n_cells = cell_texts(doc, "cells")
    assert n_cells[0].startswith(f"cells ({sum(len(q['cells']) for q in e0['points'])})")
    # each ε with its means: utility, privacy where valid, N_w, MIA where measured
    eps = cell_texts(doc, "epsilon")
    assert all("U 0." in t or "U 1." in t for t in eps) and any("N_w 0." in t for t in eps)
    assert any("MIA no valid" in t for t in eps) and any("MIA 0." in t for t in eps)
    assert any("P no valid" in t for t in eps)
    base = doc.one("ul", id="baselines")
    assert base.attrs["data-count"] == str(sum(len(b["baselines"])
                                               for b in small_board["boards"]))


def test_sorting_by_query_string(small_board, tmp_path, dump_dom) -> None:
    url = write_page(small_board, tmp_path)
    doc = parse(dump_dom(url + "?sort=score&dir=desc"))
    assert doc.one("table", id="board").attrs["data-sorted"] == "score:descending"
    assert doc.one("th", data_col="score").attrs["aria-sort"] == "descending"
    vals = cell_texts(doc, "score")
    nums = [float(v.split(" ")[0]) for v in vals if v != "—"]
    assert nums == sorted(nums, reverse=True) and len(nums) == 11
    assert vals[len(nums):] == ["—"]  # missing last
    doc = parse(dump_dom(url + "?sort=score"))
    vals = cell_texts(doc, "score")
    assert [float(v.split(" ")[0]) for v in vals[:-1]] == sorted(nums) and vals[-1] == "—"
    doc = parse(dump_dom(url + "?sort=rank&dir=desc"))
    ranks = cell_texts(doc, "rank")
    by_rank = [int(r.rstrip("†⚠*")) for r in ranks if not r.startswith("—")]
    assert by_rank == sorted(by_rank, reverse=True) and ranks[-1] == "— (invalid privacy)"
    doc = parse(dump_dom(url + "?sort=model"))
    models = cell_texts(doc, "model")
    assert models == sorted(models) and len(set(models)) > 1
    assert doc.one("table", id="board").attrs["data-sorted"] == "model:ascending"


def test_filter_by_mechanism_hides_rows_and_points(small_board, tmp_path, dump_dom) -> None:
    url = write_page(small_board, tmp_path)
    doc = parse(dump_dom(url))
    all_points = sum(1 for e in small_board["entries"] for q in e["points"] if plottable(q))
    assert len(doc.all("circle")) == all_points
    doc = parse(dump_dom(url + "?mechanism=mvl"))
    mvl = [e for e in small_board["entries"] if e["mechanism"] == "mvl"]
    assert 0 < len(mvl) < 12
    assert doc.one("select", id="filter-mechanism") is not None
    assert sorted(r.attrs["data-id"] for r in rows(doc)) == sorted(e["id"] for e in mvl)
    assert all(c.startswith("mvl · ") for c in cell_texts(doc, "config"))
    circles = doc.all("circle")
    assert len(circles) == sum(1 for e in mvl for q in e["points"] if plottable(q))
    idx = {i for i, e in enumerate(small_board["entries"]) if e["mechanism"] == "mvl"}
    assert {int(c.attrs["data-i"]) for c in circles} <= idx
    boards = {e["board"] for e in mvl}
    assert len(doc.all("svg")) == len(boards)


def test_scatter_points_per_board(small_board, tmp_path, dump_dom) -> None:
    doc = parse(dump_dom(write_page(small_board, tmp_path) + "?board=b1"))
    figs = doc.all("figure")
    assert [f.attrs["data-board"] for f in figs] == ["b1"]
    svg = figs[0].one("svg")
    b1 = [e for e in small_board["entries"] if e["board"] == "b1"]
    n = sum(1 for e in b1 for q in e["points"] if plottable(q))
    assert svg.attrs["data-points"] == str(n) and len(svg.all("circle")) == n
    assert len(svg.all("polyline")) == sum(1 for e in b1
                                           if sum(plottable(q) for q in e["points"]) > 1)
    bases = [b for b in small_board["boards"][1]["baselines"] if plottable(b)]
    assert len(svg.all("rect")) == len(bases)
    pareto = sum(1 for e in b1 for q in e["points"] if plottable(q) and q["pareto"])
    assert len([c for c in svg.all("circle") if "pareto" in c.attrs["class"]]) == pareto
    skipped = sum(1 for e in b1 for q in e["points"] if not plottable(q))
    assert f"{skipped} without a valid privacy measurement not plotted" in figs[0].text


def test_hover_fills_the_tooltip(small_board, tmp_path, dump_dom) -> None:
    hover = ('var c = document.querySelector("circle.pt");'
             'c.dispatchEvent(new MouseEvent("mouseover", {bubbles: true, clientX: 5, '
             'clientY: 5}));')
    doc = parse(dump_dom(write_page(small_board, tmp_path, hover)))
    tip = doc.one("div", id="tip")
    assert "hidden" not in tip.attrs
    e = small_board["entries"][int(doc.all("circle")[0].attrs["data-i"])]
    lines = tip.text.split("\n")
    assert lines[0] == f"{e['model']} · {e['config']}"
    assert lines[2] == f"ε = {e['points'][0]['epsilon']:g}"
    assert lines[3].startswith("utility ") and lines[4].startswith("privacy ")
    assert lines[5] == f"adversary {e['points'][0]['adversary']}"


def test_clicks_and_selects_update_table_and_plots(small_board, tmp_path, dump_dom) -> None:
    """The interactive paths: header clicks sort, a select change filters rows and points."""
    act = ('var th = document.querySelector("th[data-col=score]"); th.click(); th.click();'
           'var sel = document.getElementById("filter-mechanism"); sel.value = "mvl";'
           'sel.dispatchEvent(new Event("change", {bubbles: true}));')
    doc = parse(dump_dom(write_page(small_board, tmp_path, act)))
    table = doc.one("table", id="board")
    assert table.attrs["data-sorted"] == "score:descending"
    mvl = [e for e in small_board["entries"] if e["mechanism"] == "mvl"]
    assert table.attrs["data-rows"] == str(len(mvl))
    want = sorted(mvl, key=lambda e: -e["score"] if e["score"] is not None else math.inf)
    assert [r.attrs["data-id"] for r in rows(doc)] == [e["id"] for e in want]
    assert len(doc.all("circle")) == sum(1 for e in mvl for q in e["points"] if plottable(q))


def test_hostile_names_are_text(small_board, tmp_path, dump_dom) -> None:
    dom = dump_dom(write_page(small_board, tmp_path) + "?sort=model")
    doc = parse(dom)
    assert doc.one("title").text == "Leaderboard"
    scripts = doc.all("script")
    assert len(scripts) == 2 and "alert" not in scripts[1].text  # the page's own script
    assert not doc.all("img") and not doc.all("b")
    assert not [(n.tag, a) for n in doc.iter() for a in n.attrs if a.startswith("on")]
    table = doc.one("table", id="board")
    assert table.attrs["data-sorted"] == "model:ascending"  # the page still works
    text = table.text
    for s in (HOSTILE_MECHANISM, HOSTILE_MODEL, HOSTILE_DATASET, HOSTILE_RUN_BY):
        assert s in text, s
    options = [o.text for o in doc.all("option")]
    assert any(o.startswith(HOSTILE_MECHANISM) for o in options)
    assert any(o.startswith(HOSTILE_DATASET) for o in options)
    assert HOSTILE_DATASET in doc.one("div", id="plots").text  # the plot caption


def test_row_limit_and_show_all(small_board, tmp_path, dump_dom, monkeypatch) -> None:
    monkeypatch.setattr(page_mod, "ROW_LIMIT", 5)
    url = write_page(small_board, tmp_path)
    doc = parse(dump_dom(url + "?sort=score&dir=desc"))
    table = doc.one("table", id="board")
    assert len(rows(doc)) == 5 and table.attrs["data-shown"] == "5"
    assert table.attrs["data-rows"] == "12"
    assert "hidden" not in doc.one("button", id="show-all").attrs
    top = sorted((e["score"] for e in small_board["entries"] if e["score"] is not None),
                 reverse=True)[:5]
    assert [float(v.split(" ")[0]) for v in cell_texts(doc, "score")] == \
        [float(f"{s:.3f}") for s in top]  # sorted over every entry, then cut
    doc = parse(dump_dom(url + "?all=1"))
    assert len(rows(doc)) == 12
    assert "hidden" in doc.one("button", id="show-all").attrs


def test_perf_benchmark_is_registered_and_skips_without_chromium(monkeypatch) -> None:
    import shutil

    from bench.tools import perf

    assert perf.BENCHMARKS["leaderboard_page"] is perf.run_leaderboard_page
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert perf.run_perf(mechanisms=["leaderboard_page"]) == (
        "bench perf leaderboard_page: chromium is not installed; skipped\n")


# --------------------------------------------------------------------------- readability

MEASURE = ("var d = document.documentElement;"
           'document.body.setAttribute("data-scroll-width", d.scrollWidth);'
           'document.body.setAttribute("data-client-width", d.clientWidth);')
OPEN_ALL = 'document.querySelectorAll("details").forEach(function (d) { d.open = true; });'
LONG = "gaussian(" + ",".join(f"param_{i}=" + "9" * 12 for i in range(12)) + ")"
"""A mechanism label of 250 characters with no space to break at."""


def _wide_board() -> dict[str, Any]:
    """The synthetic leaderboard with the longest names a page meets: a 250-character
    mechanism label without spaces, a long model and a long guarantee."""
    board = synthetic_leaderboard(60, seed=2)
    board["entries"][0]["mechanism"] = LONG
    board["entries"][0]["config"] = f"{LONG} · sens=none · map=none"
    board["entries"][1]["model"] = "transformer(" + "x" * 80 + ")"
    board["entries"][2]["guarantee"] = "(ε, δ=1e-06)-DP " * 8
    return board


@pytest.mark.parametrize("opened", [False, True], ids=["as-loaded", "every-details-open"])
def test_no_horizontal_scrolling_at_1280_px(tmp_path, dump_dom, opened) -> None:
    """At 1,280 px the whole page -- table, score and interval included -- fits the window's
    width, as loaded and with every toggle (ε values, cells, settings, sources) open."""
    script = (OPEN_ALL if opened else "") + MEASURE
    doc = parse(dump_dom(write_page(_wide_board(), tmp_path, script), window=(1280, 900)))
    body = doc.one("body")
    assert "data-error" not in body.attrs
    assert 0 < int(body.attrs["data-client-width"]) <= 1280
    assert int(body.attrs["data-scroll-width"]) <= int(body.attrs["data-client-width"])
    assert len(rows(doc)) == 60 and any(LONG in r.text for r in rows(doc))


def test_the_old_layout_would_scroll_sideways(tmp_path, dump_dom) -> None:
    """The measure is not vacuous: a page whose table does not wrap is wider than 1,280 px."""
    nowrap = "<style>#board td,#board th{white-space:nowrap !important}</style>"
    text = render_page(_wide_board()).replace("</head>", nowrap + "</head>")
    text = text.replace("</body>", f"<script>{MEASURE}</script>\n</body>")
    path = tmp_path / "nowrap.html"
    path.write_text(text, encoding="utf-8")
    body = parse(dump_dom(path.resolve().as_uri(), window=(1280, 900))).one("body")
    assert int(body.attrs["data-scroll-width"]) > int(body.attrs["data-client-width"])


def test_rows_grouped_by_board_with_names_that_show_what_differs(small_board, tmp_path,
                                                                 dump_dom) -> None:
    """Unsorted, each board has a heading row (its title, what its configurations share, its
    settings behind a toggle) and its baseline rows; each row's name shows what differs on
    its board, the full configuration on hover. Sorted, the headings go and rows name their
    board."""
    for b in small_board["boards"]:
        b["title"] = f"title of {b['id']}"
        b["settings"] = {"dataset.name": "bbc", "settings.vocab_size": 5000}
    url = write_page(small_board, tmp_path)
    doc = parse(dump_dom(url))
    heads = group_rows(doc)
    assert [h.one("span", **{"class": "btitle"}).text for h in heads] == ["title of b0",
                                                                         "title of b1"]
    settings = heads[0].one("details", **{"class": "settings"})
    assert "open" not in settings.attrs and "settings.vocab_size 5000" in settings.text
    by_id = {e["id"]: e for e in small_board["entries"]}
    for r in rows(doc):
        e = by_id[r.attrs["data-id"]]
        cfg = r.all("td")[col(doc, "config")]
        assert cfg.attrs["title"] == f"{e['model']} · {e['config']}"
        name = cfg.one("span", **{"class": "name"}).text
        assert name.startswith(e["mechanism"])  # sensitivity / mapping only where they differ
        assert ("sens=" in name) == (len({x["sensitivity"] for x in small_board["entries"]
                                          if x["board"] == e["board"]}) > 1)
    assert doc.one("table", id="board").attrs["class"] == "grouped"
    doc = parse(dump_dom(url + "?sort=score"))
    assert group_rows(doc) == [] and not doc.one("table", id="board").attrs.get("class")
    assert all(r.all("td")[col(doc, "config")].one("span", **{"class": "bd"}).text.startswith(
        "title of b") for r in rows(doc))


def test_known_answers_mark_the_ends_of_the_scale(small_board, tmp_path, dump_dom,
                                                  monkeypatch) -> None:
    """The baseline rows, and entries of the known-answer mechanisms, are marked as the ends of
    the scale; which mechanisms those are is the one list KNOWN_ANSWERS."""
    small_board["entries"][0]["mechanism"] = "identity"
    small_board["entries"][1]["mechanism"] = "constant(value=unk)"
    doc = parse(dump_dom(write_page(small_board, tmp_path)))
    tbody = doc.one("table", id="board").one("tbody")
    bases = [r for r in tbody.all("tr") if "baseline" in r.attrs.get("class", "").split()]
    assert len(bases) == sum(len(b["baselines"]) for b in small_board["boards"])
    for r in bases:
        assert r.attrs["class"] == "baseline known end-privacy"
        assert r.one("span", **{"class": "name"}).text == "unprivatized baseline"
        assert r.one("span", **{"class": "end end-privacy"}).text == "privacy-0 end"
    marked = {r.attrs["data-id"]: (r.attrs.get("class"), r.one("span", **{"class": "name"}).text,
                                   [s.text for s in r.all("span") if "end" in
                                    s.attrs.get("class", "").split()])
              for r in rows(doc) if r.attrs.get("class")}
    e0, e1 = small_board["entries"][0]["id"], small_board["entries"][1]["id"]
    assert marked[e0][0] == "known end-privacy" and marked[e0][2] == ["privacy-0 end"]
    assert marked[e1][0] == "known end-utility" and marked[e1][2] == ["utility-0 end"]
    assert set(marked) == {e0, e1}
    # data-driven: a name added to the list is marked, with the list's words
    monkeypatch.setitem(page_mod.KNOWN_ANSWERS, "tem", {"end": "utility", "label": "tem",
                                                        "text": "a test's known answer"})
    doc = parse(dump_dom(write_page(small_board, tmp_path)))
    tem = [r for r in rows(doc) if r.one("span", **{"class": "name"}).text.startswith("tem")]
    assert tem and all(r.attrs.get("class") == "known end-utility" for r in tem)
    assert all(r.one("span", **{"class": "end end-utility"}).attrs["title"]
               == "a test's known answer" for r in tem)


def test_every_plot_has_a_legend_and_a_caption_that_says_what_is_drawn(small_board, tmp_path,
                                                                      dump_dom) -> None:
    doc = parse(dump_dom(write_page(small_board, tmp_path)))
    figs = doc.all("figure")
    assert len(figs) == 2
    names = {r.attrs["data-id"]: r.all("td")[col(doc, "config")].one(
        "span", **{"class": "name"}).text for r in rows(doc)}
    for fig, board in zip(figs, small_board["boards"], strict=True):
        legend = fig.one("ul", **{"class": "legend"})
        items = legend.all("li")
        assert legend.attrs["data-count"] == str(len(items))
        entries = [e for e in small_board["entries"] if e["board"] == board["id"]
                   and any(plottable(q) for q in e["points"])]
        drawn = [li for li in items if "data-i" in li.attrs]
        assert len(drawn) == len(entries)  # one item per configuration drawn, in table order
        for li in drawn:
            e = small_board["entries"][int(li.attrs["data-i"])]
            assert li.text.startswith(names[e["id"]]) and "(ε " in li.text
            color = li.one("span", **{"class": "dot"}).attrs["style"]
            circles = [c for c in fig.one("svg").all("circle") if c.attrs["data-i"]
                       == li.attrs["data-i"]]
            assert circles and all(f"background:{c.attrs['fill']}" == color for c in circles)
        keys = [li.text for li in items if li.attrs.get("class") == "key"]
        bases = [b for b in board["baselines"] if plottable(b)]
        assert keys[:len(bases)] == [f"unprivatized baseline ({b['model']})" for b in bases]
        assert len(fig.one("svg").all("rect")) == len(bases)  # drawn as the legend says: ◆
        assert keys[len(bases):] == ["ringed: on the Pareto front"]
        caption = fig.one("figcaption").text
        assert "x: empirical privacy, y: utility (macro-F1)" in caption
        assert "◆ the unprivatized baseline" in caption and "ringed" not in caption.split(
            "y: utility")[0]


def test_header_says_what_is_true_of_versions_and_counts(small_board) -> None:
    text = render_page(small_board)
    head = text.split('<header id="meta">', 1)[1].split("</header>", 1)[0]
    assert {b["suite_version"] for b in small_board["boards"]} == {"0.3.0"}
    assert "suite version" not in head  # one version: nothing to say about several
    small_board["boards"][1]["suite_version"] = "0.2.1"
    head = render_page(small_board).split('<header id="meta">', 1)[1].split("</header>", 1)[0]
    assert "2 suite versions, which are never ranked together: each has its own boards" in head
    one = {"schema": "bench-leaderboard", "schema_version": 1, "boards": [{"id": "b0"}],
           "entries": [{"id": "e0", "board": "b0"}]}
    head = render_page(one).split('<header id="meta">', 1)[1].split("</header>", 1)[0]
    assert "1 entry on 1 board." in head and "No conflicts, platform variants or problems" in head


def test_an_entry_from_a_plugin_names_its_package_on_the_page(small_board, tmp_path,
                                                              dump_dom) -> None:
    first = small_board["entries"][0]
    first["plugins"] = ["bench-tem-plus 1.2"]
    doc = parse(dump_dom(write_page(small_board, tmp_path)))
    i = col(doc, "config")
    shown = {r.attrs["data-id"]: r.all("td")[i].text for r in rows(doc)}
    assert "plugin: bench-tem-plus 1.2" in shown[first["id"]]
    assert sum("plugin:" in t for t in shown.values()) == 1
