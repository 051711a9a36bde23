"""Anchored scores: the formulas, their clipping, and the two known answers (an output equal to
its input, an output that carries nothing) landing where they must.

Fixture ``tests/fixtures/results/adversaries`` (``tests/report/make_fixtures.py``): trustpilot,
lstm, a baseline and mvl at ε 1 and 10 over seeds 0 and 1; utility chance threshold 0.25, age
chance threshold 0.35 (valid: the lexical adversary beats it on the baseline).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from bench.analysis import group_cells, load_results
from bench.analysis.anchored import cell_anchored, gained, group_anchored, retained
from bench.analysis.privacy import baseline_index, baseline_of, select_privacy

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "adversaries"


def test_retained_and_gained_formulas() -> None:
    assert retained(0.7, 0.9, 0.5) == pytest.approx(0.5)
    assert retained(0.9, 0.9, 0.5) == 1.0            # the baseline itself
    assert retained(0.5, 0.9, 0.5) == 0.0            # at chance
    assert retained(0.3, 0.9, 0.5) == 0.0            # below chance: clipped
    assert retained(0.95, 0.9, 0.5) == 1.0           # above the baseline: clipped
    assert retained(0.7, 0.5, 0.5) is None           # the baseline is at chance
    assert retained(math.nan, 0.9, 0.5) is None
    assert gained(0.3, 0.5, 0.2) == pytest.approx(2 / 3)
    assert gained(0.5, 0.5, 0.2) == 0.0              # the original text's attack
    assert gained(0.2, 0.5, 0.2) == 1.0              # the attack at chance
    assert gained(0.6, 0.5, 0.2) == 0.0              # a stronger attack: clipped
    assert gained(0.1, 0.5, 0.2) == 1.0
    assert gained(0.3, 0.2, 0.2) is None             # no valid privacy measurement


def _load(folder: Path) -> tuple[list, object]:
    cells = select_privacy(load_results(folder).cells)
    groups, _ = group_cells(cells)
    return groups, baseline_index(cells)


def _rewrite(folder: Path, eps: float, change) -> None:
    """Apply ``change(metrics, baseline_metrics)`` to the mvl cells at ``eps``."""
    cells = folder / "cells"
    specs = {p: json.loads((p / "spec.json").read_text()) for p in cells.iterdir()}
    base = {s["seed"]: json.loads((p / "metrics.json").read_text())
            for p, s in specs.items() if s["mechanism"]["name"] == "none"}
    for p, s in specs.items():
        if s["mechanism"]["name"] == "mvl" and s["epsilon"] == eps:
            m = json.loads((p / "metrics.json").read_text())
            (p / "metrics.json").write_text(json.dumps(change(m, base[s["seed"]])))


def _identity(m: dict, b: dict) -> dict:
    """The cell's output equals its input: every measurement is the baseline's."""
    return {**b, "cell": m["cell"], "vs_baseline": {
        "delta_utility": 0.0, "by_privacy_task": {
            t: {"delta_utility": 0.0, "delta_privacy": 0.0, "tradeoff": 0.0,
                "privacy_valid": b["privacy"][t]["privacy_valid"], "reason": None}
            for t in b["privacy"]}}}


def _no_information(m: dict, b: dict) -> dict:
    """The output ignores its input: utility at chance (0.20 ≤ 0.25), every attack at chance
    (0.30 ≤ 0.35 on age)."""
    m = json.loads(json.dumps(m))
    m["utility"].update(macro_f1=0.20, macro_f1_ci95=[0.15, 0.25], chance_level=True)
    for task, p in m["privacy"].items():
        entries = [p, *p["by_adversary"].values()]
        for e in entries:
            e.update(adversary_macro_f1=0.30, privacy=0.70, privacy_ci95=[0.65, 0.75],
                     chance_level=True)
        du = 0.20 - b["utility"]["macro_f1"]
        dp = 0.70 - b["privacy"][task]["privacy"]
        m["vs_baseline"]["by_privacy_task"][task].update(
            delta_utility=du, delta_privacy=dp, tradeoff=du + dp)
    m["vs_baseline"]["delta_utility"] = 0.20 - b["utility"]["macro_f1"]
    return m


def test_identity_scores_zero(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)
    _rewrite(folder, 10.0, _identity)
    groups, index = _load(folder)
    g = next(g for g in groups if g.config.mechanism == "mvl" and g.config.epsilon == 10.0)
    an = group_anchored(g, "age", index)
    assert an.retained.mean == 1.0 and an.gained.mean == 0.0 and an.tradeoff.mean == 0.0
    assert an.n_privacy == 2 and not an.favourable


def test_output_without_information_scores_zero(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)
    _rewrite(folder, 1.0, _no_information)
    groups, index = _load(folder)
    g = next(g for g in groups if g.config.mechanism == "mvl" and g.config.epsilon == 1.0)
    # the thesis' Δprivacy rewards it: privacy rises to its maximum
    assert all(r.sections.vs_baseline.attribute("age").delta_privacy > 0 for r in g.records)
    an = group_anchored(g, "age", index)
    assert an.retained.mean == 0.0 and an.gained.mean == 1.0 and an.tradeoff.mean == 0.0
    assert an.utility_at_chance == 2 and not an.favourable


def test_real_mechanism_in_between_and_one_seed_intervals(tmp_path: Path) -> None:
    groups, index = _load(FIXTURE)
    g = next(g for g in groups if g.config.mechanism == "mvl" and g.config.epsilon == 1.0)
    an = group_anchored(g, "age", index)
    # seed 0: (0.60 − 0.25) / (0.80 − 0.25), (0.60 − 0.45) / (0.60 − 0.35);
    # seed 1: (0.50 − 0.25) / (0.70 − 0.25), (0.50 − 0.40) / (0.50 − 0.35)
    r = [0.35 / 0.55, 0.25 / 0.45]
    gg = [0.15 / 0.25, 0.10 / 0.15]
    assert an.retained.mean == pytest.approx(sum(r) / 2)
    assert an.gained.mean == pytest.approx(sum(gg) / 2)
    assert an.tradeoff.mean == pytest.approx((r[0] * gg[0] + r[1] * gg[1]) / 2)
    assert an.favourable  # 0.376 ± 0.073: above 0
    rec = next(r for r in g.records if r.seed == 0)
    one = cell_anchored(rec, baseline_of(rec, index), "age")
    # the cell's bootstrap interval (±0.05) mapped through the formula, the baseline fixed
    assert one.retained_ci == pytest.approx((0.30 / 0.55, 0.40 / 0.55))
    assert one.gained_ci == pytest.approx((0.10 / 0.25, 0.20 / 0.25))


def test_utility_at_chance_in_one_seed_is_never_favourable(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)

    def one_seed_at_chance(m: dict, b: dict) -> dict:
        if m["cell"].endswith("seed=1"):
            m["utility"]["chance_level"] = True
        return m

    _rewrite(folder, 1.0, one_seed_at_chance)
    groups, index = _load(folder)
    g = next(g for g in groups if g.config.mechanism == "mvl" and g.config.epsilon == 1.0)
    an = group_anchored(g, "age", index)
    assert an.tradeoff.lo > 0 and an.utility_at_chance == 1 and not an.favourable


def test_invalid_privacy_has_no_gain() -> None:
    groups, index = _load(FIXTURE)
    g = next(g for g in groups if g.config.mechanism == "mvl" and g.config.epsilon == 1.0)
    an = group_anchored(g, "gender", index)  # every adversary at chance on the baseline
    assert an.gained is None and an.tradeoff is None and an.n_privacy == 0
    assert an.retained is not None and an.n_utility == 2


def test_reference_classifier_utility_is_anchored_too(tmp_path: Path) -> None:
    """With the reference_utility measure in the cells, its utility is anchored the same way
    and the trade-off table gains its two columns."""
    from bench.report import build_report

    folder = tmp_path / "r"
    shutil.copytree(FIXTURE, folder)
    ref = {"none": 0.90, "mvl": 0.60}  # chance threshold 0.30: retained (0.6 − 0.3)/(0.9 − 0.3)
    for p in (folder / "cells").iterdir():
        mech = json.loads((p / "spec.json").read_text())["mechanism"]["name"]
        m = json.loads((p / "metrics.json").read_text())
        m["measures"] = {"reference_utility": {
            "macro_f1": ref[mech], "macro_f1_ci95": [ref[mech] - 0.05, ref[mech] + 0.05],
            "chance_threshold": 0.30, "chance_level": False, "version": "1"}}
        (p / "metrics.json").write_text(json.dumps(m))
    groups, index = _load(folder)
    g = next(g for g in groups if g.config.mechanism == "mvl" and g.config.epsilon == 1.0)
    an = group_anchored(g, "age", index, utility="reference")
    assert an.retained.mean == pytest.approx(0.5) and an.retained.std == pytest.approx(0.0)
    model = group_anchored(g, "age", index)
    assert an.gained.mean == model.gained.mean  # privacy is the same
    assert an.tradeoff.mean == pytest.approx(0.5 * an.gained.mean)
    build_report(folder, tmp_path / "rep")
    md = (tmp_path / "rep" / "tables" / "tradeoff_none.md").read_text()
    assert "| Reference utility retained | Reference trade-off |" in md
    # ε = 1, age: 0.5 × (0.600, 0.667); favourable (its interval lies above 0): bold
    assert "| 0.500 ± 0.000 | **0.317 ± 0.212** |" in md
