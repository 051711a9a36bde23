"""Uncertainty in the report: 95% intervals, significance of a Δ, interval-respecting ranks.

The pure rules (:mod:`bench.report.stats`) on synthetic numbers checked by hand, then how the
tables and the leaderboard show them on the fixtures: ``adversaries/`` carries the bootstrap
intervals of suite 0.3.0 (±0.05 around every macro-F1), ``basic/`` is the old schema without
any.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from bench.report import build_report, group_cells
from bench.report.results import CellRecord, Stat, fmt_interval, stat
from bench.report.stats import (
    BOOTSTRAP,
    OVERLAP,
    PAIRED_T,
    T,
    bootstrap_interval,
    delta_significance,
    interval_ranks,
    intervals_overlap,
    t_interval,
    t_quantile,
)

T_975_2 = 4.302652729749462
"""t_{0.975, 2} from a t table (two-sided 95%, 2 degrees of freedom)."""


# --------------------------------------------------------------------------------------------
# Pure rules
# --------------------------------------------------------------------------------------------


def test_t_interval_matches_hand_computation() -> None:
    # three seeds 0.70, 0.74, 0.78: mean 0.74, s = 0.04, half = t_{0.975,2} · 0.04 / √3
    half = T_975_2 * 0.04 / math.sqrt(3)
    assert half == pytest.approx(0.0993655, abs=1e-7)
    mean, lo, hi = t_interval([0.70, 0.74, 0.78])
    assert mean == pytest.approx(0.74)
    assert (lo, hi) == (pytest.approx(0.74 - half), pytest.approx(0.74 + half))
    assert t_quantile(1) == pytest.approx(12.706204736, abs=1e-8)
    assert t_interval([0.5]) is None  # one seed: no t interval
    assert t_interval([0.5, 0.5]) == (0.5, 0.5, 0.5)  # no spread: a point
    assert t_interval([0.7, None, float("nan"), "x", 0.6])[0] == pytest.approx(0.65)


def test_stat_interval_kinds() -> None:
    s = stat([0.70, 0.74, 0.78])
    assert s.kind == T and s.n == 3 and s.std == pytest.approx(0.04)
    assert s.half_width == pytest.approx(T_975_2 * 0.04 / math.sqrt(3))
    assert fmt_interval(s) == "0.740 ± 0.099"
    # one seed: its bootstrap interval over the test documents, shown as [lo, hi]
    one = stat([0.6], [[0.55, 0.66]])
    assert (one.kind, one.lo, one.hi, one.std) == (BOOTSTRAP, 0.55, 0.66, None)
    assert one.half_width is None and fmt_interval(one) == "0.600 [0.550, 0.660]"
    # with n >= 2 the per-seed bootstrap intervals are not used: t across seeds
    assert stat([0.7, 0.6], [[0.0, 1.0], [0.0, 1.0]]).kind == T
    # no interval: not stored, NaN, reversed or malformed -> none invented
    for ci in (None, [math.nan, 0.7], [0.7, 0.5], [0.5], "0.5,0.7"):
        bare = stat([0.6], [ci])
        assert bare.kind is None and not bare.has_interval and fmt_interval(bare) == "0.600"
        assert bare.bounds == (0.6, 0.6)
    assert bootstrap_interval((0.1, 0.2)) == (0.1, 0.2)
    # the interval follows the value that is kept (seed 0 has no value)
    kept = stat([None, 0.8], [[0.1, 0.2], [0.75, 0.85]])
    assert (kept.n, kept.lo, kept.hi) == (1, 0.75, 0.85)
    with pytest.raises(ValueError, match="2 intervals for 1 values"):
        stat([0.5], [None, None])


def test_group_stat_reads_the_ci_alongside_the_value(tmp_path: Path) -> None:
    spec = {"dataset": {"name": "d"}, "model": {"name": "m"}, "mechanism": {"name": "none"},
            "epsilon": "inf", "seed": 0}
    recs = [CellRecord(f"h{s}", dict(spec, seed=s),
                       {"utility": {"macro_f1": u, **({"macro_f1_ci95": ci} if ci else {})}},
                       tmp_path) for s, u, ci in ((0, 0.8, [0.7, 0.9]), (1, 0.6, None))]
    groups, _ = group_cells(recs[:1])
    s = groups[0].stat(lambda m: m["utility"]["macro_f1"], lambda m: m["utility"]["macro_f1_ci95"])
    assert (s.kind, s.lo, s.hi) == (BOOTSTRAP, 0.7, 0.9)
    groups, _ = group_cells(recs)
    s = groups[0].stat(lambda m: m["utility"]["macro_f1"], lambda m: m["utility"]["macro_f1_ci95"])
    assert s.kind == T and s.lo == pytest.approx(0.7 - 12.7062047 * 0.1, abs=1e-6)


def test_paired_significance() -> None:
    clear = delta_significance([0.30, 0.31, 0.29, 0.305])
    assert clear.significant is True and clear.rule == PAIRED_T and clear.n == 4
    noise = delta_significance([0.05, -0.04, 0.02])
    assert noise.significant is False and noise.rule == PAIRED_T
    # a large mean difference with two noisy seeds is still not significant (t_{0.975,1} = 12.7)
    assert delta_significance([0.3, 0.1]).significant is False
    assert delta_significance([0.2, 0.2]).significant is True  # identical differences, not 0
    assert delta_significance([0.0, 0.0]).significant is False
    assert delta_significance([]).significant is None


def test_one_seed_significance_by_bootstrap_overlap() -> None:
    apart = delta_significance([-0.2], ci_priv=[0.55, 0.65], ci_base=[0.75, 0.85])
    assert apart.significant is True and apart.rule == OVERLAP
    overlap = delta_significance([0.05], ci_priv=[0.40, 0.50], ci_base=[0.35, 0.45])
    assert overlap.significant is False and overlap.rule == OVERLAP
    touching = delta_significance([0.1], ci_priv=[0.5, 0.6], ci_base=[0.6, 0.7])
    assert touching.significant is False  # closed intervals sharing an end point overlap
    missing = delta_significance([0.3], ci_priv=[0.5, 0.6], ci_base=None)
    assert missing.significant is None and missing.rule == ""
    assert intervals_overlap((0.0, 1.0), (0.2, 0.3)) and not intervals_overlap((0, 1), (2, 3))


def test_interval_ranks_share_overlapping_and_separate_disjoint() -> None:
    assert interval_ranks([(0.8, 0.9), (0.7, 0.85), (0.5, 0.6)]) == [1, 1, 3]
    # a chain: A and C are disjoint, B overlaps both -> A 1, B 1, C 2
    assert interval_ranks([(0.80, 0.90), (0.75, 0.82), (0.70, 0.78)]) == [1, 1, 2]
    assert interval_ranks([(0.1, 0.2), (0.3, 0.4), (0.5, 0.6)]) == [3, 2, 1]
    # lower is better: the lowest disjoint interval ranks first
    assert interval_ranks([(0.1, 0.2), (0.3, 0.4), (0.35, 0.5)],
                          higher_is_better=False) == [1, 2, 2]
    # entries without an interval: their mean as a point
    assert interval_ranks([(0.5, 0.5), (0.5, 0.5), (0.7, 0.7)]) == [2, 2, 1]
    assert interval_ranks([]) == []


# --------------------------------------------------------------------------------------------
# In the report
# --------------------------------------------------------------------------------------------


def _keep_seed(results: Path, seed: int) -> None:
    for p in (results / "cells").iterdir():
        if json.loads((p / "spec.json").read_text())["seed"] != seed:
            shutil.rmtree(p)


def _lb_doc(page: str) -> dict:
    """The ``leaderboard.json`` document the leaderboard page embeds."""
    m = re.search(r'id="leaderboard-data">(.*?)</script>', page, re.DOTALL)
    assert m is not None
    return json.loads(m.group(1))


def _lb_entries(page: str, attribute: str | None = None) -> list[dict]:
    """The entries of the page (of the boards of ``attribute`` only, where given)."""
    doc = _lb_doc(page)
    keep = {b["id"] for b in doc["boards"]
            if attribute is None or b["private_attribute"] == attribute}
    return [e for e in doc["entries"] if e["board"] in keep]


def test_one_seed_table_uses_bootstrap_overlap(adv_results: Path, tmp_path: Path) -> None:
    # seed 0: baseline utility 0.80 [0.75, 0.85], age privacy 0.40 [0.35, 0.45];
    # mvl ε=1: 0.60 [0.55, 0.65], 0.55 [0.50, 0.60] (disjoint: significant);
    # mvl ε=10: 0.80 [0.75, 0.85], 0.45 [0.40, 0.50] (overlapping: ns)
    _keep_seed(adv_results, 0)
    build_report(adv_results, tmp_path / "r")
    md = (tmp_path / "r" / "tables" / "tradeoff_none.md").read_text()
    assert ("| nearest | mvl | lstm | trustpilot | 1 | age | informed | -0.200 | +0.150 | -0.050 "
            "| 1 |  |") in md
    assert "|  |  |  |  | 10 | age | lexical | +0.000 ns | +0.050 ns | **+0.050** | 1 |  |" in md
    assert ("95% interval: t over n seeds; single run: bootstrap over test documents (1,000 "
            "resamples)") in md
    assert "overlapping intervals do not prove that there is no difference" in md
    csv = (tmp_path / "r" / "tables" / "tradeoff_none.csv").read_text().splitlines()
    row = next(line for line in csv if ",10,age," in line)
    assert ",0.000000,,,,false,0.050000,,,,false,0.050000,,,,,bootstrap overlap,true," in row
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    e10 = metrics["by_configuration"]["trustpilot | lstm | mvl | sens=none | map=nearest | eps=10"]
    assert e10["delta_utility_significant"] is False
    assert e10["delta_privacy_significant_age"] is False
    assert (e10["utility_ci_lo"], e10["utility_ci_hi"]) == (0.75, 0.85)
    assert e10["tradeoff_significant_age"] is None and e10["tradeoff_age_ci_lo"] is None
    assert "1,000 resamples" in metrics["intervals"]
    curves = (tmp_path / "r" / "curves.csv").read_text().splitlines()
    assert ("trustpilot,lstm,mvl · sens=none · map=nearest,1,age,0.600000,,0.550000,0.650000,"
            "0.550000,,0.500000,0.600000,informed,valid,1") in curves
    page = (tmp_path / "r" / "leaderboard.html").read_text()
    (mvl,) = _lb_entries(page, "age")
    # one seed: the cell's own bootstrap intervals, on the page as in the tables
    assert [(q["utility"], q["utility_ci"]) for q in mvl["points"]] == [
        (0.6, [0.55, 0.65]), (0.8, [0.75, 0.85])]
    assert [(q["privacy"], q["privacy_ci"]) for q in mvl["points"]] == [
        (0.55, [0.5, 0.6]), (0.45, [0.4, 0.5])]
    assert mvl["score_seeds"] is None  # one seed per point: the normal quantile, not t


def test_several_seeds_table_uses_paired_t(adv_results: Path, tmp_path: Path) -> None:
    build_report(adv_results, tmp_path / "r")
    md = (tmp_path / "r" / "tables" / "tradeoff_none.md").read_text()
    # Δutility −0.2 on both seeds: significant; Δprivacy 0.15, 0.10: t interval contains 0
    assert ("| nearest | mvl | lstm | trustpilot | 1 | age | informed 1/2, lexical 1/2 | "
            "-0.200 ± 0.000 | +0.125 ± 0.318 ns | -0.075 ± 0.318 ns | 2 |  |") in md


def _add_mechanism(results: Path, mech: str, eps: float, utility: float) -> None:
    """Copy the mvl cells at ``eps`` as mechanism ``mech`` with another utility (±0.05 CI)."""
    for p in sorted((results / "cells").iterdir()):
        spec = json.loads((p / "spec.json").read_text())
        if spec["mechanism"]["name"] != "mvl" or spec["epsilon"] != eps:
            continue
        dst = results / "cells" / f"{mech}{p.name}"[:16]
        shutil.copytree(p, dst)
        spec["mechanism"]["name"] = mech
        spec["name"] = spec["name"].replace("mech=mvl", f"mech={mech}")
        spec["hash"] = dst.name  # a cell names its own hash
        m = json.loads((p / "metrics.json").read_text())
        m["utility"]["macro_f1"] = utility
        m["utility"]["macro_f1_ci95"] = [round(utility - 0.05, 6), round(utility + 0.05, 6)]
        (dst / "spec.json").write_text(json.dumps(spec))
        (dst / "metrics.json").write_text(json.dumps(m))


def test_leaderboard_ranks_never_separate_overlapping_intervals(adv_results: Path,
                                                                tmp_path: Path) -> None:
    # seed 0 at ε=1: mvl 0.60 [0.55, 0.65], santext 0.62 [0.57, 0.67], tem 0.90 [0.85, 0.95]
    _keep_seed(adv_results, 0)
    _add_mechanism(adv_results, "tem", 1.0, 0.9)
    _add_mechanism(adv_results, "santext", 1.0, 0.62)
    build_report(adv_results, tmp_path / "r")
    page = (tmp_path / "r" / "leaderboard.html").read_text()
    age = _lb_entries(page, "age")
    scores = {e["mechanism"]: e["score"] for e in age}
    assert scores["tem"] > scores["mvl"] > scores["santext"]  # different scores ...
    # ... whose intervals overlap: one shared rank (rank_i = 1 + #{j : lo_j > hi_i})
    assert {e["mechanism"]: e["rank"] for e in age} == {"tem": 1, "mvl": 1, "santext": 1}
    for e in age:
        assert e["rank"] == 1 + sum(f["score_ci"][0] > e["score_ci"][1] for f in age)
    # invalid privacy is not ranked; tem's point dominates every other one
    assert all(e["rank"] is None for e in _lb_entries(page, "gender"))
    assert [e["mechanism"] for e in age if any(q["pareto"] for q in e["points"])] == ["tem"]
    assert "overlapping intervals share a rank" in page


def test_old_schema_cells_without_intervals_still_render(report) -> None:
    _summary, out = report
    md = (out / "tables" / "tradeoff_unit_norm.md").read_text()
    assert "| lstm | -0.020 | +0.020 | +0.000 | 1 | no interval |" in md
    page = (out / "leaderboard.html").read_text()
    unit = next(e for e in _lb_entries(page) if e["sensitivity"] == "unit_norm")
    (q,) = unit["points"]
    assert (q["utility"], q["utility_ci"], q["privacy_ci"]) == (0.88, None, None)  # none invented
    assert unit["rank"] is None and unit["rank_flag"] == "privacy validity unknown"
    metrics = json.loads((out / "metrics.json").read_text())
    e10 = metrics["by_configuration"][
        "bbc(suite=0.1.0) | lstm | mvl | sens=unit_norm | map=nearest | eps=10 | suite=0.1.0"]
    assert e10["utility_ci_lo"] is None and e10["delta_utility_significant"] is None
    assert isinstance(Stat(0.5, None, 1), Stat)  # the old three-field constructor still works
