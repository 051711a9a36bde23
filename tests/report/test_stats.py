"""Uncertainty in the report: how the tables and the leaderboard show the 95% intervals, the
significance of a Δ and interval-respecting ranks (the pure rules: ``tests/analysis/test_stats.py``)
on the fixtures: ``adversaries/`` carries the bootstrap intervals of suite 0.3.0 (±0.05 around
every macro-F1), ``basic/`` is the old schema without any.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from bench.analysis.results import Stat
from bench.report import build_report

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
    # anchored, seed 0 against its baseline (chance 0.25 / 0.35): retained (0.60 − 0.25) /
    # (0.80 − 0.25), gained (0.60 − 0.45) / (0.60 − 0.35); one seed: favourable where both
    # bootstrap intervals lie above 0 (ε=1), not where gained's reaches 0 (ε=10)
    assert ("| nearest | mvl | lstm | trustpilot | 1 | age | informed | 0.636 \\[0.545, 0.727\\] | "
            "0.600 \\[0.400, 0.800\\] | **0.382** | -0.200 | +0.150 | -0.050 | 1 |  |") in md
    assert ("|  |  |  |  | 10 | age | lexical | 1.000 \\[0.909, 1.000\\] | "
            "0.200 \\[0.000, 0.400\\] | 0.200 | +0.000 ns | +0.050 ns | +0.050 | 1 |  |") in md
    assert ("95% interval: t over n seeds; single run: bootstrap over test documents (1,000 "
            "resamples)") in md
    assert "overlapping intervals do not prove that there is no difference" in md
    csv = (tmp_path / "r" / "tables" / "tradeoff_none.csv").read_text().splitlines()
    row = next(line for line in csv if ",10,age," in line)
    assert (",1.000000,,0.909091,1.000000,0.200000,,0.000000,0.400000,0.200000,,,,1,0.000000,,,,"
            "false,0.050000,,,,false,0.050000,,,,,bootstrap overlap,false," in row)
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
    # anchored per seed: retained 0.636, 0.556; gained 0.600, 0.667; trade-off 0.382, 0.370
    assert ("| nearest | mvl | lstm | trustpilot | 1 | age | informed 1/2, lexical 1/2 | "
            "0.596 ± 0.513 | 0.633 ± 0.424 | **0.376 ± 0.073** | "
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
    assert "| lstm | 0.969 | 0.057 | 0.055 | -0.020 | +0.020 | +0.000 | 1 | no interval |" in md
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
