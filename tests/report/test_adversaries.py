"""Several adversaries in the report: headline privacy, the winner shown, validity, the option.

Fixture ``tests/fixtures/results/adversaries`` (written by ``make_fixtures.py``): trustpilot,
lstm, adversaries lexical / informed / lstm; ``age`` valid (lexical beats chance on the
baseline, the lstm adversary does not), ``gender`` not (every adversary at chance there).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from bench.analysis import group_cells, load_results
from bench.analysis.privacy import (
    NO_VALID,
    group_privacy,
    select_privacy,
)
from bench.analysis.results import CellRecord, Group
from bench.report import ReportError, build_report, cli_report

HEADLINE_ROWS = """\
| Mapping | Mechanism | Model | Dataset | ε | Attribute | Adversary | Utility retained |\
 Privacy gained | Trade-off (retained × gained) | Change in Utility | Change in Privacy |\
 Thesis trade-off (ΔU + ΔP) | n | Flag |
|:---|:---|:---|:---|---:|:---|:---|---:|---:|---:|---:|---:|---:|---:|:---|
| nearest | mvl | lstm | trustpilot | 1 | age | informed 1/2, lexical 1/2 | 0.596 ± 0.513 |\
 0.633 ± 0.424 | **0.376 ± 0.073** | -0.200 ± 0.000 | +0.125 ± 0.318 ns | -0.075 ± 0.318 ns | 2\
 |  |
|  |  |  |  | 1 | gender | informed 1/2, lexical 1/2 | 0.596 ± 0.513 | no valid privacy\
 measurement | — | -0.200 ± 0.000 | no valid privacy measurement | — | 2 | adversary ≈ chance\
 (2/2 seeds); adversary ≈ chance on the baseline |
|  |  |  |  | 10 | age | lexical | 1.000 ± 0.000 | 0.267 ± 0.847 | 0.267 ± 0.847 | +0.025 ±\
 0.318 ns | +0.050 ± 0.000 | +0.075 ± 0.318 ns | 2 |  |
|  |  |  |  | 10 | gender | lexical 1/2, lstm 1/2 | 1.000 ± 0.000 | no valid privacy\
 measurement | — | +0.025 ± 0.318 ns | no valid privacy measurement | — | 2 | adversary ≈\
 chance (2/2 seeds); adversary ≈ chance on the baseline |
"""

LEXICAL_ROWS = """\
| nearest | mvl | lstm | trustpilot | 1 | age | lexical | 0.596 ± 0.513 | 0.733 ± 0.847 | 0.440\
 ± 0.881 | -0.200 ± 0.000 | +0.150 ± 0.635 ns | -0.050 ± 0.635 ns | 2 |  |
|  |  |  |  | 1 | gender | lexical | 0.596 ± 0.513 | no valid privacy measurement | — | -0.200\
 ± 0.000 | no valid privacy measurement | — | 2 | adversary ≈ chance (2/2 seeds); adversary ≈\
 chance on the baseline |
"""


def _doc(page: str) -> dict:
    """The ``leaderboard.json`` document the leaderboard page embeds."""
    m = re.search(r'id="leaderboard-data">(.*?)</script>', page, re.DOTALL)
    assert m is not None
    return json.loads(m.group(1))


def _entries(page: str) -> dict[str, dict]:
    """The mvl entry per private attribute (its board's): attribute -> entry."""
    doc = _doc(page)
    attr = {b["id"]: b["private_attribute"] for b in doc["boards"]}
    return {attr[e["board"]]: e for e in doc["entries"] if e["mechanism"] == "mvl"}


def _points(entry: dict) -> dict[float, dict]:
    return {p["epsilon"]: p for p in entry["points"]}


def test_headline_tradeoff_invalid_privacy_has_no_delta(adv_results: Path,
                                                        tmp_path: Path) -> None:
    build_report(adv_results, tmp_path / "r")
    md = (tmp_path / "r" / "tables" / "tradeoff_none.md").read_text()
    assert HEADLINE_ROWS in md
    assert ("No valid privacy measurement for trustpilot / gender: the strongest adversary "
            "(lstm) reaches macro-F1 0.520") in md
    csv = (tmp_path / "r" / "tables" / "tradeoff_none.csv").read_text().splitlines()
    gender = [line for line in csv if ",gender," in line]
    assert len(gender) == 2
    for line in gender:  # no Δprivacy, no trade-off, the status in words
        assert ",,,,,,,,,,,paired t,false,false,no valid privacy measurement," in line
        assert ",2,0 1,0," in line and ",,,,,,,,,1," in line  # retained only, no privacy seeds
    # ε = 10, age: gained 0.267 ± 0.847 (ns), so not favourable although the thesis' trade-off
    # (+0.075) is positive
    assert any(line.startswith("none,nearest,mvl,lstm,trustpilot,10,age,lexical,") and
               ",0.266667,0.094281,-0.580414,1.113747,1,0.025000,0.035355,-0.292655,0.342655,"
               "false,0.050000,0.000000,0.050000,0.050000,true,0.075000,0.035355,-0.242655,"
               "0.392655,false,paired t,false,true,valid," in line for line in csv)
    tex = (tmp_path / "r" / "tables" / "tradeoff_none.tex").read_text()
    assert tex.count("no valid privacy measurement & --- &") == 4  # anchored and thesis
    assert "Adversary" in tex


def test_index_states_validity_per_dataset_and_task(adv_results: Path, tmp_path: Path) -> None:
    summary = build_report(adv_results, tmp_path / "r")
    assert summary.invalid_privacy == ["trustpilot / lstm / gender"]
    assert "no valid privacy measurement for trustpilot / lstm / gender" in summary.text()
    index = (tmp_path / "r" / "index.md").read_text()
    assert "## Privacy measurement" in index
    assert "1 − macro-F1 of the strongest adversary" in index
    assert "**No valid privacy measurement** for trustpilot / gender (lstm)." in index
    # baseline macro-F1 of lexical on age over seeds 0, 1 (0.6, 0.5): 0.55 ± t(0.975, 1)·0.0707/√2
    assert ("| trustpilot | lstm | age | lexical | 0.550 ± 0.635 | 0.350 ± 0.000 | yes | — |"
            in index)
    gender = next(line for line in index.splitlines() if line.startswith("| trustpilot | lstm "
                                                                         "| gender |"))
    assert "| **no** |" in gender and "not above the chance threshold 0.550" in gender
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["privacy_adversary"] == "headline"
    eps1 = metrics["by_configuration"]["trustpilot | lstm | mvl | sens=none | map=nearest | eps=1"]
    assert eps1["privacy_gender"] is None and eps1["privacy_valid_gender"] is False
    assert "tradeoff_gender" not in eps1 and eps1["tradeoff_age"] == -0.075
    assert eps1["privacy_valid_age"] is True and eps1["adversary_age"] == \
        "informed 1/2, lexical 1/2"
    assert eps1["mia_auc"] == 0.55


def test_leaderboard_shows_winner_invalid_privacy_and_mia(adv_results: Path,
                                                          tmp_path: Path) -> None:
    build_report(adv_results, tmp_path / "r")
    page = (tmp_path / "r" / "leaderboard.html").read_text()
    doc = _doc(page)
    assert doc["privacy_adversary"] == "headline"
    assert "Privacy: 1 − macro-F1 of the strongest adversary" in page
    entries = _entries(page)
    age, gender = _points(entries["age"]), _points(entries["gender"])
    # t interval over 2 seeds: 0.5 ± 0.635, read from the winner (lexical)
    assert (age[10.0]["privacy"], age[10.0]["adversary"]) == (0.5, "lexical")
    assert [round(x, 3) for x in age[10.0]["privacy_ci"]] == [-0.135, 1.135]
    assert age[1.0]["adversary"] == "informed 1/2, lexical 1/2"
    # gender: no adversary beats chance on the baseline -> no privacy, no score, no rank
    assert gender[10.0]["privacy_valid"] is False and gender[10.0]["privacy"] is None
    (gender_board,) = [b for b in doc["boards"] if b["private_attribute"] == "gender"]
    assert gender_board["baselines"][0]["privacy_valid"] is False  # the baseline's own check
    assert (entries["gender"]["rank"], entries["gender"]["rank_flag"]) == (None,
                                                                           "invalid privacy")
    assert entries["age"]["rank"] == 1 and entries["age"]["score"] is not None
    mia1, mia10 = age[1.0]["mia"], age[10.0]["mia"]
    assert mia10["valid"] is False and mia10["auc"] is None  # "no valid MIA"
    assert (mia1["valid"], mia1["attack"], round(mia1["auc"], 3)) == (True, "loss_threshold",
                                                                      0.55)
    assert round(mia1["auc_ci"][1] - mia1["auc"], 3) == 0.127  # t interval over 2 seeds
    # invalid privacy takes no part in the Pareto front; age decides it
    assert [p["pareto"] for p in entries["age"]["points"]] == [True, True]
    assert not any(p["pareto"] for p in entries["gender"]["points"])


def test_mia_ci_shown_for_one_seed(adv_results: Path, tmp_path: Path) -> None:
    for p in (adv_results / "cells").iterdir():
        if json.loads((p / "spec.json").read_text())["seed"] == 1:
            shutil.rmtree(p)
    build_report(adv_results, tmp_path / "r")
    page = (tmp_path / "r" / "leaderboard.html").read_text()
    mia = _points(_entries(page)["age"])[1.0]["mia"]
    assert mia == {"auc": 0.56, "auc_ci": [0.51, 0.61], "attack": "loss_threshold",
                   "valid": True}  # one seed: the cell's own bootstrap interval
    base = _doc(page)["boards"][0]["baselines"][0]["mia"]
    assert (base["auc"], base["auc_ci"]) == (0.6, [0.55, 0.65])


def test_curves_leave_out_invalid_privacy(adv_results: Path, tmp_path: Path) -> None:
    build_report(adv_results, tmp_path / "r")
    csv = (tmp_path / "r" / "curves.csv").read_text().splitlines()
    assert ("trustpilot,lstm,mvl · sens=none · map=nearest,1,gender,0.550000,0.070711,-0.085310,"
            "1.185310,,,,,\"informed 1/2, lexical 1/2\",no valid privacy measurement,2") in csv
    assert ("trustpilot,lstm,mvl · sens=none · map=nearest,10,age,0.775000,0.035355,0.457345,"
            "1.092655,0.500000,0.070711,-0.135310,1.135310,lexical,valid,2") in csv
    assert (tmp_path / "r" / "plots" / "curves_trustpilot_lstm.png").stat().st_size > 10_000


def test_adversary_option_named(adv_results: Path, tmp_path: Path) -> None:
    summary = build_report(adv_results, tmp_path / "r", adversary="lexical")
    assert summary.adversary == "lexical"
    assert "privacy: 1 − macro-F1 of the adversary lexical" in summary.text()
    md = (tmp_path / "r" / "tables" / "tradeoff_none.md").read_text()
    assert md.startswith("# Privacy-utility trade-off (adversary: lexical), sensitivity "
                         "approach: none\n")
    # Δprivacy recomputed against the baseline's lexical adversary: (0.6−0.4, 0.6−0.5)
    assert LEXICAL_ROWS in md
    index = (tmp_path / "r" / "index.md").read_text()
    assert "| trustpilot | lstm | age | lexical | 0.550 ± 0.635 |" in index
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["privacy_adversary"] == "lexical"


def test_adversary_option_own_model_judges_validity_for_that_adversary(
        adv_results: Path, tmp_path: Path) -> None:
    # the lstm adversary is at chance on the baseline for age (0.30, 0.34 ≤ 0.35): no valid
    # measurement for it, although the headline (lexical) is valid
    summary = build_report(adv_results, tmp_path / "r", adversary="model")
    assert summary.invalid_privacy == ["trustpilot / lstm / age", "trustpilot / lstm / gender"]
    md = (tmp_path / "r" / "tables" / "tradeoff_none.md").read_text()
    assert ("| 1 | age | lstm | 0.596 ± 0.513 | no valid privacy measurement | — | -0.200 ± 0.000 "
            "| no valid privacy measurement | — | 2 |") in md
    assert "**" not in md
    assert "cell's own model as the adversary" in md
    index = (tmp_path / "r" / "index.md").read_text()
    assert "adversary lstm reaches macro-F1 0.300 on the unprivatized text" in index
    page = (tmp_path / "r" / "leaderboard.html").read_text()
    assert _doc(page)["privacy_adversary"] == "model"
    assert "Privacy: 1 − macro-F1 of the cell&#x27;s own model as the adversary" in page
    age = _entries(page)["age"]
    assert _points(age)[1.0]["privacy_valid"] is False and age["rank_flag"] == "invalid privacy"
    assert "lstm" in cli_report(adv_results, tmp_path / "r2", adversary="lstm")


def test_adversary_option_unknown_name(adv_results: Path, tmp_path: Path, capsys) -> None:
    with pytest.raises(ReportError, match="did you mean lexical"):
        build_report(adv_results, tmp_path / "r", adversary="lexcial")
    assert not (tmp_path / "r").exists()
    from bench.report.__main__ import main

    assert main(["--results", str(adv_results), "--out", str(tmp_path / "r"),
                 "--adversary", "nope"]) == 2
    assert "adversaries: informed, lexical, lstm" in capsys.readouterr().err
    assert main(["--results", str(adv_results), "--out", str(tmp_path / "r"),
                 "--adversary", "informed"]) == 0
    assert "1 − macro-F1 of the adversary informed" in capsys.readouterr().out
    assert main(["--results", str(adv_results), "--out", str(tmp_path / "r"),
                 "--adversary", "headline"]) == 0
    assert "privacy: 1 −" not in capsys.readouterr().out  # the default says nothing extra


def test_old_schema_cells_load_as_one_adversary(results: Path, tmp_path: Path) -> None:
    cells = select_privacy(load_results(results).cells)
    p = next(r for r in cells if r.is_baseline).metrics["privacy"]["entities"]
    assert p["adversary"] == "lstm" and p["privacy_valid"] is None
    assert list(p["by_adversary"]) == ["lstm"]
    # the thesis layout on old cells: the model is the one adversary, judged on the baseline
    summary = build_report(results, tmp_path / "r", adversary="model")
    md = (tmp_path / "r" / "tables" / "tradeoff_none.md").read_text()
    assert ("|  |  |  | bbc(suite=0.1.0) | 1 | entities | lstm | 0.664 ± 0.355 | 0.651 ± 2.622 | "
            "0.438 ± 1.973 | -0.200 ± 0.000 | +0.250 ± 0.635 ns | +0.050 ± 0.635 ns | 2 |  |") in md
    assert summary.invalid_privacy == []
    with pytest.raises(ReportError, match="run on no cell"):
        build_report(results, tmp_path / "r", adversary="lexical")


def test_mixed_old_and_new_cells(results: Path, adv_results: Path, tmp_path: Path) -> None:
    for p in (adv_results / "cells").iterdir():
        shutil.copytree(p, results / "cells" / p.name)
    summary = build_report(results, tmp_path / "r")
    assert summary.n_cells == 18
    index = (tmp_path / "r" / "index.md").read_text()
    assert "validity not recorded (cells from before the validity check)" in index
    assert "| trustpilot | lstm | gender |" in index


def test_partial_validity_over_seeds(adv_results: Path) -> None:
    cells = select_privacy(load_results(adv_results).cells)
    mvl1 = [r for r in cells if r.spec["mechanism"]["name"] == "mvl" and r.epsilon == 1.0]
    m = json.loads(json.dumps(mvl1[1].metrics))
    m["privacy"]["age"]["privacy_valid"] = False
    m["privacy"]["age"]["privacy_invalid_reason"] = "at chance"
    recs = [mvl1[0], CellRecord(mvl1[1].hash, mvl1[1].spec, m, mvl1[1].folder)]
    groups, _ = group_cells(recs)
    gp = group_privacy(groups[0], "age")
    assert gp.status == "partial" and gp.n_invalid == 1 and gp.stat.n == 1
    assert gp.status_text() == f"{NO_VALID} (1/2 seeds)" and gp.valid is None
    assert gp.reasons == ["at chance"]
    assert isinstance(groups[0], Group)


def test_byte_identical_regeneration_with_option(adv_results: Path, tmp_path: Path) -> None:
    for adversary in (None, "model"):
        a, b = tmp_path / f"a{adversary}", tmp_path / f"b{adversary}"
        build_report(adv_results, a, adversary=adversary)
        build_report(adv_results, b, adversary=adversary)
        files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
        assert len(files) >= 10
        for f in files:
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_fixtures_are_what_make_fixtures_writes(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_fixtures", Path(__file__).with_name("make_fixtures.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for write, committed in ((mod.write, mod.ROOT), (mod.write_adversaries, mod.ADV_ROOT)):
        out = write(tmp_path / committed.name)
        files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(committed) for p in committed.rglob("*")
                               if p.is_file())
        for f in files:
            assert (out / f).read_bytes() == (committed / f).read_bytes(), f


def test_named_adversary_without_a_matching_baseline_shows_no_headline_delta(
        adv_results: Path, tmp_path: Path) -> None:
    for p in (adv_results / "cells").iterdir():
        if json.loads((p / "spec.json").read_text())["mechanism"]["name"] == "none":
            shutil.rmtree(p)
    build_report(adv_results, tmp_path / "r", adversary="lexical")
    md = (tmp_path / "r" / "tables" / "tradeoff_none.md").read_text()
    # the runner's Δutility stays; its Δprivacy was the headline's, so none is shown; nothing
    # anchored without a baseline
    assert "| 10 | age | lexical | — | — | — | +0.025 ± 0.318 ns | — | — | 2 |  |" in md
    index = (tmp_path / "r" / "index.md").read_text()
    assert "| trustpilot | lstm | age | — | — | — | unknown | no unprivatized baseline" in index


def test_adversaries_left_out_listed_in_index(adv_results: Path, tmp_path: Path) -> None:
    f = next(p for p in sorted((adv_results / "cells").iterdir())) / "metrics.json"
    m = json.loads(f.read_text())
    m["privacy"]["age"]["adversaries_left_out"] = [["transformer", "vector output"]]
    f.write_text(json.dumps(m))
    build_report(adv_results, tmp_path / "r")
    assert ("Adversaries left out by the runner: transformer (vector output)."
            in (tmp_path / "r" / "index.md").read_text())
