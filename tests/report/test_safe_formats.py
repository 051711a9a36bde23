"""Reports are safe in every format (issue 24, item 6): names from grid files and results
folders are shown as text in Markdown, and no CSV cell starts a spreadsheet formula."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from bench.report import build_report
from bench.report.table import Table, Value, csv_cell, md_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "basic"

HOSTILE = ("![pixel](http://evil.example/p.png) [click](https://evil.example) <b>x</b> "
           "<https://evil.example> www.evil.example `code` a|b \r| forged | row |\n"
           "next\u2028line =HYPERLINK(\"http://evil.example\")")


def _no_live_markdown(text: str) -> None:
    """Nothing in ``text`` renders as a link, image, HTML tag, autolink or code span."""
    import re

    assert "\r" not in text and "\u2028" not in text
    assert not re.search(r"(?<!\\)\[", text) and not re.search(r"(?<!\\)`", text)
    assert "<" not in text and "://" not in text and "www." not in text


def test_md_text_is_plain_text():
    out = md_text(HOSTILE)
    _no_live_markdown(out)
    assert "\n" not in out
    assert out.count("|") == out.count("\\|")  # no cell boundary survives
    assert md_text("bbc(subsample=600)") == "bbc(subsample=600)"  # ordinary names unchanged
    assert md_text("a & b") == "a &amp; b"


@pytest.mark.parametrize("value, expected", [
    ("=1+1", "'=1+1"), ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("-x", "'-x"),
    ("@SUM(A1:A2)", "'@SUM(A1:A2)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("-0.759446", "-0.759446"), ("+0.5", "+0.5"), ("-inf", "-inf"), ("mvl", "mvl"),
    ("", ""), (3, 3), (None, None),
])
def test_csv_cell(value, expected):
    assert csv_cell(value) == expected


def test_table_keeps_one_row_per_record_and_no_formula():
    t = Table(name="t", title=HOSTILE, columns=["Mechanism", "Δ"],
              rows=[[Value(HOSTILE), Value("-0.200")], [Value("mvl"), Value("+0.1")]],
              records=[{"mechanism": HOSTILE, "delta": "-0.200"},
                       {"mechanism": "=cmd()", "delta": "+0.1"}])
    md = t.markdown().splitlines()
    assert len(md) == 2 + 2 + 2  # title, blank, header, rule, two rows
    for line in md:
        _no_live_markdown(line)
    rows = list(csv.reader(io.StringIO(t.csv())))
    assert [r[1] for r in rows[1:]] == ["-0.200", "+0.1"]
    assert rows[2][0] == "'=cmd()"
    assert not any(c.startswith(("=", "+", "@")) and not c.lstrip("+").replace(".", "").isdigit()
                   for r in rows for c in r)


def test_hostile_names_in_a_results_folder_stay_text(tmp_path):
    """A results folder (untrusted) whose dataset name and parameters hold links, images,
    formulas and line breaks: the report's Markdown shows them as text, its CSV files have
    no formula, and every table keeps its rows."""
    results = tmp_path / "results"
    shutil.copytree(FIXTURES, results)
    for spec_file in (results / "cells").glob("*/spec.json"):
        spec = json.loads(spec_file.read_text())
        spec["dataset"]["config"]["note"] = HOSTILE
        spec_file.write_text(json.dumps(spec))
    out = tmp_path / "report"
    build_report(results, out=out)
    md_files = [out / "index.md", *sorted((out / "tables").glob("*.md"))]
    csv_files = [out / "curves.csv", *sorted((out / "tables").glob("*.csv"))]
    assert len(md_files) > 2 and len(csv_files) > 2
    for f in md_files:
        text = f.read_text()
        assert "evil" in text or f.name == "guarantees.md"
        # the report's own links (tables/..., plots/...) are the only ones
        import re

        links = re.findall(r"(?<!\\)\]\(([^)]*)\)", text)
        assert all(re.fullmatch(r"(tables|plots)/[A-Za-z0-9._-]+|leaderboard\.html|curves\.csv",
                                x) for x in links), links
        assert "<b>" not in text and "http://" not in text and "https://" not in text
    for f in csv_files:
        for row in csv.reader(io.StringIO(f.read_text())):
            for c in row:
                if c.startswith(("=", "+", "-", "@", "\t", "\r")):
                    float(c)  # only numbers may start so
