"""Report tables on the hand-made fixture results: exact Markdown/CSV, bold, flags, mixing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.analysis import group_cells, load_results
from bench.report import ReportError, build_report, cli_report
from bench.report.guarantees import guarantee_table
from bench.report.rewrite import rewrite_tables
from bench.report.table import tex_escape
from bench.report.tradeoff import tradeoff_tables

# "\x20\x20" at a line end: a Markdown hard line break (two trailing spaces), written
# escaped so that editors that strip trailing whitespace keep it
NOTES = """
Change = privatized − unprivatized baseline of the same dataset, model and seed: utility = \
macro-F1 of the utility model, privacy = 1 − macro-F1 of the strongest adversary (max over the \
adversaries run); trade-off = Δutility + Δprivacy (Riecker 2023, Sec. 4.2).\x20\x20
Bold: favourable trade-off (&gt; 0). Flag: no better than chance (utility model or adversary); \
such rows are kept and flagged (the thesis leaves them out).\x20\x20
95% interval: t over n seeds; single run: bootstrap over test documents (1,000 resamples). Shown \
as mean ± half-width of the Student-t interval, mean ± t(0.975, n−1)·s/√n, for n ≥ 2 seeds; as \
mean \\[lo, hi\\] for one seed's percentile bootstrap; the bare mean where there is no interval \
(cells from before suite 0.3.0, metrics without a bootstrap).\x20\x20
ns: the Δ is not significantly different from 0. With n ≥ 2 seeds: the paired t interval of the \
per-seed differences (privatized − the baseline of the same seed, which shares its data split \
and model seed) contains 0; that is the interval shown. With one seed: the privatized and the \
baseline bootstrap intervals overlap (conservative: overlapping intervals do not prove that \
there is no difference); a Δ of one seed has no interval of its own, and its trade-off is not \
judged. Flag "no interval": one seed without bootstrap intervals, so no Δ could be judged.\x20\x20
Adversary: the attack the privacy is read from (per seed where it differs). Δprivacy and the \
trade-off exist only where the privacy measurement is valid (the adversary beats chance on the \
unprivatized baseline); elsewhere "no valid privacy measurement" and no trade-off."""

TRADEOFF_NONE_MD = """\
# Privacy-utility trade-off, sensitivity approach: none

| Mapping | Mechanism | Model | Dataset | ε | Attribute | Adversary | Change in Utility \
| Change in Privacy | Trade-off | n | Flag |
|:---|:---|:---|:---|---:|:---|:---|---:|---:|---:|---:|:---|
| nearest | mvl | lstm | bbc(suite=0.0.9) | 10 | entities | lstm | — | — | — | 1 | no baseline |
|  |  |  | bbc(suite=0.1.0) | 1 | entities | lstm | -0.200 ± 0.000 | +0.250 ± 0.635 ns \
| **+0.050 ± 0.635 ns** | 2 |  |
|  |  |  |  | 10 | entities | lstm | -0.025 ± 0.318 ns | -0.025 ± 0.318 ns \
| -0.050 ± 0.635 ns | 2 |  |
| none | tem | lstm | bbc(suite=0.1.0) | 1 | entities | lstm | -0.600 ± 1.271 ns | +0.400 ± 0.000 \
| -0.200 ± 1.271 ns | 2 | utility ≈ chance (1/2 seeds) |
|  |  |  |  | 10 | entities | lstm | +0.000 ± 0.000 ns | +0.050 ± 0.000 | **+0.050 ± 0.000** \
| 2 | adversary ≈ chance (2/2 seeds) |
""" + NOTES + """\x20\x20
Warning: results from 2 suite versions (0.0.9, 0.1.0) are never pooled: their rows are \
labelled suite=&lt;version&gt;
"""

TRADEOFF_NONE_CSV = """\
sensitivity,mapping,mechanism,model,dataset,epsilon,attribute,adversary,suite_version,n_seeds,\
seeds,delta_utility_mean,delta_utility_std,delta_utility_ci_lo,delta_utility_ci_hi,\
delta_utility_significant,delta_privacy_mean,delta_privacy_std,delta_privacy_ci_lo,\
delta_privacy_ci_hi,delta_privacy_significant,tradeoff_mean,tradeoff_std,tradeoff_ci_lo,\
tradeoff_ci_hi,tradeoff_significant,significance_rule,favourable,privacy_valid,privacy_status,flag
none,nearest,mvl,lstm,bbc(suite=0.0.9),10,entities,lstm,0.0.9,1,0,,,,,,,,,,,,,,,,,false,,\
unknown,no baseline
none,nearest,mvl,lstm,bbc(suite=0.1.0),1,entities,lstm,0.1.0,2,0 1,-0.200000,0.000000,\
-0.200000,-0.200000,true,0.250000,0.070711,-0.385310,0.885310,false,0.050000,0.070711,\
-0.585310,0.685310,false,paired t,true,,unknown,
none,nearest,mvl,lstm,bbc(suite=0.1.0),10,entities,lstm,0.1.0,2,0 1,-0.025000,0.035355,\
-0.342655,0.292655,false,-0.025000,0.035355,-0.342655,0.292655,false,-0.050000,0.070711,\
-0.685310,0.585310,false,paired t,false,,unknown,
none,none,tem,lstm,bbc(suite=0.1.0),1,entities,lstm,0.1.0,2,0 1,-0.600000,0.141421,-1.870620,\
0.670620,false,0.400000,0.000000,0.400000,0.400000,true,-0.200000,0.141421,-1.470620,1.070620,\
false,paired t,false,,unknown,utility ≈ chance (1/2 seeds)
none,none,tem,lstm,bbc(suite=0.1.0),10,entities,lstm,0.1.0,2,0 1,0.000000,0.000000,0.000000,\
0.000000,false,0.050000,0.000000,0.050000,0.050000,true,0.050000,0.000000,0.050000,0.050000,\
true,paired t,true,,unknown,adversary ≈ chance (2/2 seeds)
"""

REWRITE_ROWS = """\
| Metric | Original ε=∞ | mvl map=nearest ε=1 | mvl map=nearest ε=10 | tem map=none ε=1 \
| tem map=none ε=10 |
|:---|---:|---:|---:|---:|---:|
| N\\_w ↑ | 1.000 (identity) | 0.350 ± 0.635 | 0.850 ± 0.635 | **0.500 ± 0.000** \
| **0.900 ± 0.635** |
| ROUGE-1 ↑ | 1.000 (identity) | 0.550 ± 0.635 | **0.900 ± 0.635** | **0.650 ± 0.635** \
| **0.900 ± 0.000** |
| BLEU ↑ | 100.00 (identity) | 25.00 ± 63.53 | 65.00 ± 63.53 | **30.00 ± 63.53** \
| **70.00 ± 63.53** |
| BERTScore ↑ | 1.000 (identity) | **0.750 ± 0.635** | **0.925 ± 0.318** | **0.750 ± 0.000** \
| **0.925 ± 0.318** |
"""

GUARANTEE_ROWS = """\
| Sensitivity approach | Sensitivity bound | Mechanism | Noise parameters | Privacy guarantee \
| Proven |
|:---|:---|:---|:---|:---|:---|
| none | Δ = ∞ (unbounded) | mvl | calibrate = false; d = 50 | ε·d metric DP \\[euclidean \
(original embedding space)\\] | proven |
|  | — | tem | beta = 0.001 (spec) | ε·d metric DP \\[euclidean (original embedding space)\\] \
| proven |
| unit\\_norm | Δ ≤ 2.535 (estimated) | mvl | calibrate = false; d = 50 | 2.535·ε·d metric DP \
\\[euclidean (original embedding space)\\] | estimated from data: minimum distance estimated on \
the vocabulary |
"""


def test_tradeoff_table_exact(report) -> None:
    _summary, out = report
    assert (out / "tables" / "tradeoff_none.md").read_text() == TRADEOFF_NONE_MD
    assert (out / "tables" / "tradeoff_none.csv").read_text() == TRADEOFF_NONE_CSV


def test_tradeoff_bold_and_flags_only_where_they_belong(report) -> None:
    _summary, out = report
    md = (out / "tables" / "tradeoff_unit_norm.md").read_text()
    # +0.000 is not favourable (> 0 after rounding): not bold; one old seed: no interval
    assert "| lstm | -0.020 | +0.020 | +0.000 | 1 | no interval |" in md
    assert "**" not in md
    tex = (out / "tables" / "tradeoff_none.tex").read_text()
    assert tex.count("\\textbf{") == 2
    assert "\\textbf{+0.050 \\ensuremath{\\pm} 0.635 ns}" in tex
    assert "$$" not in tex


def test_rewrite_table_best_per_epsilon(report) -> None:
    _summary, out = report
    md = (out / "tables" / "rewrite_bbc_suite-0.1.0.md").read_text()
    assert REWRITE_ROWS in md
    tex = (out / "tables" / "rewrite_bbc_suite-0.1.0.tex").read_text()
    assert "\\multicolumn{2}{c}{mvl map=nearest}" in tex
    csv = (out / "tables" / "rewrite_bbc_suite-0.1.0.csv").read_text().splitlines()
    assert csv[0] == ("dataset,metric,higher_is_better,mechanism,epsilon,mean,std,ci_lo,ci_hi,"
                      "n_seeds,best,original")
    assert ("bbc(suite=0.1.0),N_w,true,tem map=none,1,0.500000,0.000000,0.500000,0.500000,2,"
            "true,1.000000") in csv


def test_guarantee_table(report) -> None:
    _summary, out = report
    assert GUARANTEE_ROWS in (out / "tables" / "guarantees.md").read_text()


def test_failed_and_mixed_versions_reported(report) -> None:
    summary, out = report
    assert summary.n_cells == 12 and summary.n_groups == 7
    assert summary.failed == [
        "bbc:model=lstm,mech=truncated_gumbel,sens=none,map=none,eps=1,seed=0"]
    text = summary.text()
    assert "1 failed" in text and "FAILED bbc:model=lstm,mech=truncated_gumbel" in text
    assert "2 suite versions (0.0.9, 0.1.0)" in text
    index = (out / "index.md").read_text()
    assert "## Failed cells" in index and "undefined below eps ~ 76" in index
    assert "## Warnings" in index
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["cells"] == 12 and metrics["failed"] == 1
    key = "bbc(suite=0.1.0) | lstm | mvl | sens=none | map=nearest | eps=1 | suite=0.1.0"
    assert metrics["by_configuration"][key]["tradeoff_entities"] == 0.05


def test_data_hash_conflict_kept_apart(results: Path, tmp_path: Path) -> None:
    cells = results / "cells"
    src = next(p for p in sorted(cells.iterdir())
               if (p / "spec.json").is_file()
               and json.loads((p / "spec.json").read_text())["mechanism"]["name"] == "tem")
    dst = cells / "ffffffffffffffff"
    shutil.copytree(src, dst)
    for name in ("spec.json", "metrics.json"):
        d = json.loads((dst / name).read_text())
        d["dataset_hash"] = "b2" * 32
        (dst / name).write_text(json.dumps(d))
    groups, warnings = group_cells(load_results(results).cells)
    assert any("2 different data versions" in w for w in warnings)
    labels = {g.config.dataset for g in groups}
    assert "bbc(data=b2b2b2b2, suite=0.1.0)" in labels
    assert "bbc(data=a1a1a1a1, suite=0.1.0)" in labels


def test_byte_identical_regeneration(results: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    build_report(results, a)
    build_report(results, b)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert len(files) >= 15
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    build_report(results, a)  # rebuilding in place gives the same bytes again
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_builders_directly(results: Path) -> None:
    groups, _ = group_cells(load_results(results).cells)
    assert [t.name for t in tradeoff_tables(groups)] == ["tradeoff_none", "tradeoff_unit_norm"]
    assert [t.name for t in rewrite_tables(groups)] == ["rewrite_bbc_suite-0.1.0"]
    assert guarantee_table(groups).name == "guarantees"


def test_privatizer_read_from_the_cell_only(tmp_path: Path) -> None:
    """The guarantee table's noise parameters come from the cell; a runner cache next to the
    cells (not part of a committed reference) is never read."""
    from bench.analysis.guarantees import privatizer_of
    from bench.analysis.results import CellRecord
    from bench.grid import load_grid, privatization_hash

    grid = tmp_path / "g.yaml"
    grid.write_text("name: g\naxes: {dataset: [bbc], model: [bow], mechanism: [tem], "
                    "epsilon: [2]}\n")
    cell = next(c for c in load_grid(grid).cells if not c.is_baseline)
    folder = tmp_path / "results" / "cells" / "x"
    folder.mkdir(parents=True)
    key = privatization_hash(cell, "d" * 64)
    stats = tmp_path / "results" / "cache" / "privatized" / key / "stats.json"
    stats.parent.mkdir(parents=True)
    stats.write_text(json.dumps({"privatizer": {"mechanism": {"name": "tem", "gamma": 4.5}}}))
    rec = CellRecord("x", cell.spec() | {"dataset_hash": "d" * 64}, {}, folder)
    assert privatizer_of(rec) == (None, "")
    metrics = {"privatization": {"privatizer": {"mechanism": {"name": "tem", "gamma": 3.0}}}}
    rec = CellRecord("x", cell.spec() | {"dataset_hash": "d" * 64}, metrics, folder)
    priv, source = privatizer_of(rec)
    assert source == "metrics" and priv["mechanism"]["gamma"] == 3.0


def test_grid_filter(tmp_path: Path) -> None:
    from bench.grid import load_grid

    grid = tmp_path / "g.yaml"
    grid.write_text("name: g\naxes: {dataset: [bbc], model: [bow], mechanism: [tem], "
                    "epsilon: [2]}\n")
    other = tmp_path / "o.yaml"
    other.write_text("name: o\naxes: {dataset: [bbc], model: [bow], mechanism: [tem], "
                     "epsilon: [3]}\n")
    results = tmp_path / "results"
    for i, c in enumerate(load_grid(grid).cells + load_grid(other).cells):
        f = results / "cells" / f"{i:016x}"
        f.mkdir(parents=True)
        (f / "spec.json").write_text(json.dumps(c.spec() | {"name": c.name}))
        (f / "metrics.json").write_text(json.dumps({"utility": {"macro_f1": 0.5}}))
    assert len(load_results(results).cells) == 4
    kept = load_results(results, grid)
    # the baseline is a cell of both grids (same spec): both copies match
    assert kept.grid == "g" and len(kept.cells) == 3
    assert {r.epsilon for r in kept.cells} == {2.0, float("inf")}
    with pytest.raises(ReportError, match="not found"):
        load_results(results, tmp_path / "missing.yaml")


def test_errors(tmp_path: Path, results: Path) -> None:
    with pytest.raises(ReportError, match="no results under"):
        cli_report(tmp_path / "nothing", tmp_path / "out")
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("precious")
    with pytest.raises(ReportError, match="not part of a report"):
        cli_report(results, keep)
    assert (keep / "notes.txt").read_text() == "precious"
    assert "12 cells" in cli_report(results)  # default out: <results>/report
    assert (results / "report" / "leaderboard.html").is_file()


def test_module_entry_point(results: Path, tmp_path: Path, capsys) -> None:
    from bench.report.__main__ import main

    assert main(["--results", str(results), "--out", str(tmp_path / "r")]) == 0
    assert "12 cells in 7 configurations" in capsys.readouterr().out
    assert main(["--results", str(tmp_path / "none")]) == 2
    assert "error: no results under" in capsys.readouterr().err


def test_tex_escape() -> None:
    assert tex_escape("a_b & 50% #1 {x} ~ ^ \\ <s>") == (
        "a\\_b \\& 50\\% \\#1 \\{x\\} \\textasciitilde{} \\textasciicircum{} "
        "\\textbackslash{} \\textless{}s\\textgreater{}")
    assert tex_escape("ε·d") == "\\ensuremath{\\varepsilon}\\ensuremath{\\cdot}d"
