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
TRADEOFF_NONE_MD = """\
# Privacy-utility trade-off, sensitivity approach: none

| Mapping | Mechanism | Model | Dataset | ε | Attribute | Adversary | Utility retained |\
 Privacy gained | Trade-off (retained × gained) | Change in Utility | Change in Privacy |\
 Thesis trade-off (ΔU + ΔP) | n | Flag |
|:---|:---|:---|:---|---:|:---|:---|---:|---:|---:|---:|---:|---:|---:|:---|
| nearest | mvl | lstm | bbc(suite=0.0.9) | 10 | entities | lstm | — | — | — | — | — | — | 1 |\
 no baseline |
|  |  |  | bbc(suite=0.1.0) | 1 | entities | lstm | 0.664 ± 0.355 | 0.651 ± 2.622 | 0.438 ±\
 1.973 | -0.200 ± 0.000 | +0.250 ± 0.635 ns | +0.050 ± 0.635 ns | 2 |  |
|  |  |  |  | 10 | entities | lstm | 0.962 ± 0.489 | 0.000 ± 0.000 | 0.000 ± 0.000 | -0.025 ±\
 0.318 ns | -0.025 ± 0.318 ns | -0.050 ± 0.635 ns | 2 |  |
| none | tem | lstm | bbc(suite=0.1.0) | 1 | entities | lstm | 0.045 ± 0.578 | 0.944 ± 0.706 |\
 0.040 ± 0.513 | -0.600 ± 1.271 ns | +0.400 ± 0.000 | -0.200 ± 1.271 ns | 2 | utility ≈ chance\
 (1/2 seeds) |
|  |  |  |  | 10 | entities | lstm | 1.000 ± 0.000 | 0.127 ± 0.202 | 0.127 ± 0.202 | +0.000 ±\
 0.000 ns | +0.050 ± 0.000 | +0.050 ± 0.000 | 2 | adversary ≈ chance (2/2 seeds) |

Anchored at chance and at the unprivatized baseline of the same dataset, model and seed\
 (bench.analysis.anchored): utility retained = (U − C) / (U\\_base − C) and privacy gained =\
 (A\\_base − A) / (A\\_base − C), each clipped to \\[0, 1\\] (U: macro-F1 of the utility model,\
 A: macro-F1 of the attack, C: the labels' chance threshold); trade-off = retained × gained, 0\
 for the unchanged text and for output that ignores its input. Privacy = 1 − macro-F1 of the\
 strongest adversary (max over the adversaries run).\x20\x20
Thesis columns (Riecker 2023, Sec. 4.2): change = privatized − baseline of the same seed; its\
 trade-off = Δutility + Δprivacy, which rewards output that carries nothing (utility falls only\
 to chance while privacy rises to its maximum).\x20\x20
Bold: favourable — the anchored trade-off is above 0 beyond its interval and no seed's utility\
 is at chance. Flag: no better than chance (utility model or adversary); such rows are kept and\
 flagged (the thesis leaves them out).\x20\x20
95% interval: t over n seeds; single run: bootstrap over test documents (1,000 resamples).\
 Shown as mean ± half-width of the Student-t interval, mean ± t(0.975, n−1)·s/√n, for n ≥ 2\
 seeds; as mean \\[lo, hi\\] for one seed's percentile bootstrap; the bare mean where there is\
 no interval (cells from before suite 0.3.0, metrics without a bootstrap).\x20\x20
ns: the Δ is not significantly different from 0. With n ≥ 2 seeds: the paired t interval of the\
 per-seed differences (privatized − the baseline of the same seed, which shares its data split\
 and model seed) contains 0; that is the interval shown. With one seed: the privatized and the\
 baseline bootstrap intervals overlap (conservative: overlapping intervals do not prove that\
 there is no difference); a Δ of one seed has no interval of its own, and its trade-off is not\
 judged. Flag "no interval": one seed without bootstrap intervals, so no Δ could be judged.\x20\x20
Adversary: the attack the privacy is read from (per seed where it differs). Privacy gained,\
 Δprivacy and both trade-offs exist only where the privacy measurement is valid (the adversary\
 beats chance on the unprivatized baseline); elsewhere "no valid privacy measurement" and no\
 trade-off. n: the seeds of the row; "(privacy: k)" where the privacy columns rest on fewer of\
 them (the seeds whose privacy measurement is valid).\x20\x20
Warning: results from 2 suite versions (0.0.9, 0.1.0) are never pooled: their rows are labelled\
 suite=&lt;version&gt;
"""

TRADEOFF_NONE_CSV = """\
sensitivity,mapping,mechanism,model,dataset,epsilon,attribute,adversary,suite_version,n_seeds,\
seeds,n_seeds_privacy,utility_retained_mean,utility_retained_std,utility_retained_ci_lo,\
utility_retained_ci_hi,privacy_gained_mean,privacy_gained_std,privacy_gained_ci_lo,\
privacy_gained_ci_hi,anchored_tradeoff_mean,anchored_tradeoff_std,anchored_tradeoff_ci_lo,\
anchored_tradeoff_ci_hi,anchored_version,delta_utility_mean,delta_utility_std,\
delta_utility_ci_lo,delta_utility_ci_hi,delta_utility_significant,delta_privacy_mean,\
delta_privacy_std,delta_privacy_ci_lo,delta_privacy_ci_hi,delta_privacy_significant,\
tradeoff_mean,tradeoff_std,tradeoff_ci_lo,tradeoff_ci_hi,tradeoff_significant,\
significance_rule,favourable,privacy_valid,privacy_status,flag
none,nearest,mvl,lstm,bbc(suite=0.0.9),10,entities,lstm,0.0.9,1,0,0,,,,,,,,,,,,,1,,,,,,,,,,,,,,\
,,,false,,unknown,no baseline
none,nearest,mvl,lstm,bbc(suite=0.1.0),1,entities,lstm,0.1.0,2,0 1,2,0.664336,0.039558,\
0.308917,1.019754,0.650794,0.291822,-1.971122,3.272709,0.438117,0.219612,-1.535018,2.411253,1,\
-0.200000,0.000000,-0.200000,-0.200000,true,0.250000,0.070711,-0.385310,0.885310,false,\
0.050000,0.070711,-0.585310,0.685310,false,paired t,false,,unknown,
none,nearest,mvl,lstm,bbc(suite=0.1.0),10,entities,lstm,0.1.0,2,0 1,2,0.961538,0.054393,\
0.472838,1.450239,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,1,\
-0.025000,0.035355,-0.342655,0.292655,false,-0.025000,0.035355,-0.342655,0.292655,false,\
-0.050000,0.070711,-0.685310,0.585310,false,paired t,false,,unknown,
none,none,tem,lstm,bbc(suite=0.1.0),1,entities,lstm,0.1.0,2,0 1,2,0.045455,0.064282,-0.532100,\
0.623009,0.944444,0.078567,0.238544,1.650345,0.040404,0.057140,-0.472978,0.553786,1,-0.600000,\
0.141421,-1.870620,0.670620,false,0.400000,0.000000,0.400000,0.400000,true,-0.200000,0.141421,\
-1.470620,1.070620,false,paired t,false,,unknown,utility ≈ chance (1/2 seeds)
none,none,tem,lstm,bbc(suite=0.1.0),10,entities,lstm,0.1.0,2,0 1,2,1.000000,0.000000,1.000000,\
1.000000,0.126984,0.022448,-0.074702,0.328670,0.126984,0.022448,-0.074702,0.328670,1,0.000000,\
0.000000,0.000000,0.000000,false,0.050000,0.000000,0.050000,0.050000,true,0.050000,0.000000,\
0.050000,0.050000,true,paired t,false,,unknown,adversary ≈ chance (2/2 seeds)
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
    # one old seed without intervals: the anchored trade-off 0.055 is not judged (no interval)
    assert "| lstm | 0.969 | 0.057 | 0.055 | -0.020 | +0.020 | +0.000 | 1 | no interval |" in md
    assert "**" not in md
    tex = (out / "tables" / "tradeoff_none.tex").read_text()
    # the thesis trade-off is positive in two rows (+0.050), but neither anchored trade-off
    # lies above 0 beyond its interval: nothing is bold
    assert tex.count("+0.050 \\ensuremath{\\pm} 0.635 ns") == 1
    assert "\\textbf{" not in tex
    assert "$$" not in tex


def test_tradeoff_bold_is_the_anchored_tradeoff(adv_results: Path, tmp_path: Path) -> None:
    build_report(adv_results, tmp_path / "r")
    tex = (tmp_path / "r" / "tables" / "tradeoff_none.tex").read_text()
    # mvl ε = 1, age: retained 0.596, gained 0.633, trade-off 0.376 ± 0.073 (above 0), while
    # the thesis' Δutility + Δprivacy is −0.075 ± 0.318 ns
    assert tex.count("\\textbf{") == 1
    assert "\\textbf{0.376 \\ensuremath{\\pm} 0.073}" in tex


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


def test_slug_keeps_long_labels_apart():
    """Labels longer than a file name allows keep their head and tail around a digest: grids
    whose dataset labels differ only at the end (``train_subsample``) get one file each."""
    from bench.report.table import SLUG_MAX, slug

    assert slug("bbc(subsample=600)") == "bbc_subsample-600"
    base = "bbc(entities=[\"uk\",\"british\",\"london\"],max_tokens=200,split=[0.4,0.1,0.5]," \
           "stratify=entities,train_subsample={})"
    names = {slug(base.format(n)) for n in (100, 200, 400, 850)}
    assert len(names) == 4 and all(len(n) <= SLUG_MAX for n in names)
    assert {n.rsplit("-", 1)[1] for n in names} == {"100", "200", "400", "850"}
    assert slug(base.format(100)) == slug(base.format(100))  # stable
    assert slug("x" * SLUG_MAX) == "x" * SLUG_MAX
