"""The leaderboard's anchored score: the two known answers (the output is the input; the output
carries nothing) score 0 with an interval holding 0, nothing ranks below the no-information
entry, and a real mechanism in between scores above 0.

Fixture ``tests/fixtures/results/adversaries`` (``tests/report/make_fixtures.py``): trustpilot,
lstm, a baseline and mvl at ε 1 and 10 over seeds 0 and 1; ``age`` valid.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from bench.leaderboard import build, read_sources
from bench.mechanisms.known import KNOWN_EPSILON
from bench.results.store import seal_cell

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "adversaries"


def _copy_as(results: Path, src_mech: str, mech: str, change) -> None:
    """Copy the ``src_mech`` cells as mechanism ``mech`` (at the ε its cells carry),
    metrics ``change(m, base)``."""
    eps = "inf" if math.isinf(KNOWN_EPSILON[mech]) else KNOWN_EPSILON[mech]
    cells = sorted((results / "cells").iterdir())
    specs = {p: json.loads((p / "spec.json").read_text()) for p in cells}
    base = {s["seed"]: json.loads((p / "metrics.json").read_text())
            for p, s in specs.items() if s["mechanism"]["name"] == "none"}
    for p, spec in specs.items():
        if spec["mechanism"]["name"] != src_mech or spec["epsilon"] not in (1.0, None) \
                and src_mech != "none":
            continue
        dst = results / "cells" / f"{mech}{p.name}"[:16]
        shutil.copytree(p, dst)
        spec = {**spec, "mechanism": {"name": mech, "params": {}}, "epsilon": eps,
                "sensitivity": {"name": "none", "params": {}},
                "mapping": {"name": "none", "params": {}},
                "name": spec["name"].split(":model")[0] + f":model=lstm,mech={mech},eps={eps},"
                f"seed={spec['seed']}", "hash": dst.name}
        m = change(json.loads((p / "metrics.json").read_text()), base[spec["seed"]])
        (dst / "spec.json").write_text(json.dumps(spec))
        (dst / "metrics.json").write_text(json.dumps(m))


def _named_by_hash(cell: Path) -> Path:
    """A hand-made cell renamed to the hash its spec has (the fixture's cells claim suite
    0.1.0, whose hash covered the suite version), so that it can be sealed."""
    from bench.grid import Cell
    from bench.grid.cell import legacy_cell_hash

    spec = json.loads((cell / "spec.json").read_text())
    spec["hash"] = legacy_cell_hash(Cell.from_spec(spec), spec.get("dataset_hash"),
                                    spec["suite_version"])
    (cell / "spec.json").write_text(json.dumps(spec))
    return cell.rename(cell.parent / spec["hash"])


def _identity(m: dict, b: dict) -> dict:
    return {**b, "vs_baseline": {"delta_utility": 0.0, "by_privacy_task": {
        t: {"delta_utility": 0.0, "delta_privacy": 0.0, "tradeoff": 0.0,
            "privacy_valid": b["privacy"][t]["privacy_valid"], "reason": None}
        for t in b["privacy"]}}}


def _no_information(m: dict, b: dict) -> dict:
    """Utility at chance (0.20 ≤ 0.25), every attack at chance (0.30 ≤ 0.35 on age)."""
    m = json.loads(json.dumps(b))
    m["utility"].update(macro_f1=0.20, macro_f1_ci95=[0.15, 0.25], chance_level=True)
    for p in m["privacy"].values():
        for e in (p, *p["by_adversary"].values()):
            e.update(adversary_macro_f1=0.30, privacy=0.70, privacy_ci95=[0.65, 0.75],
                     chance_level=True)
    du = 0.20 - b["utility"]["macro_f1"]
    m["vs_baseline"] = {"delta_utility": du, "by_privacy_task": {
        t: {"delta_utility": du, "delta_privacy": 0.70 - b["privacy"][t]["privacy"],
            "tradeoff": du + 0.70 - b["privacy"][t]["privacy"],
            "privacy_valid": b["privacy"][t]["privacy_valid"], "reason": None}
        for t in b["privacy"]}}
    return m


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> dict:
    results = tmp_path_factory.mktemp("known") / "results"
    shutil.copytree(FIXTURE, results)
    _copy_as(results, "none", "identity", _identity)
    _copy_as(results, "none", "no_information", _no_information)
    for cell in list((results / "cells").iterdir()):  # hand-made cells: sealed, so ranked
        seal_cell(_named_by_hash(cell))
    return build(read_sources([results]), stamp=False)


def _age(doc: dict) -> dict[str, dict]:
    board = next(b for b in doc["boards"] if b["private_attribute"] == "age")
    entries = {e["id"]: e for e in doc["entries"]}
    return {entries[i]["mechanism"]: entries[i] for i in board["entries"]}


def test_known_answers_score_zero(doc: dict) -> None:
    age = _age(doc)
    assert doc["score"]["name"] == "anchored_hypervolume"
    for mech in ("identity", "no_information"):
        e = age[mech]
        assert e["score"] == 0.0, mech
        assert e["score_ci"] is None or e["score_ci"][0] <= 0.0 <= e["score_ci"][1], mech
    (q,) = age["identity"]["points"]
    assert (q["retained"], q["gained"], q["tradeoff"]) == (1.0, 0.0, 0.0)
    (q,) = age["no_information"]["points"]
    assert (q["retained"], q["gained"], q["tradeoff"], q["favourable"]) == (0.0, 1.0, 0.0, False)


def test_a_real_mechanism_scores_above_the_known_answers(doc: dict) -> None:
    age = _age(doc)
    mvl = age["mvl"]
    # ε = 1: (gained, retained) per seed (0.600, 0.636), (0.667, 0.556); ε = 10 adds a point
    # of full utility: the hypervolume exceeds either point's box
    assert mvl["score"] > 0.38 and mvl["score_ci"][0] > 0
    ranks = {m: e["rank"] for m, e in age.items()}
    assert ranks["mvl"] == 1
    assert ranks["no_information"] == max(ranks.values())  # nothing ranks below it


def test_board_states_its_power(doc: dict) -> None:
    board = next(b for b in doc["boards"] if b["private_attribute"] == "age")
    entries = [e for e in doc["entries"] if e["board"] == board["id"]]
    halves = [(e["score_ci"][1] - e["score_ci"][0]) / 2 for e in entries
              if e["score_ci"] is not None]
    assert sorted(halves)[:2] == [0.0, 0.0]  # the known answers: left out of the median
    p = board["power"]
    assert p["median_half_width"] == pytest.approx(max(halves))  # mvl's alone
    assert p["min_detectable_difference"] == pytest.approx(2 * p["median_half_width"])
    assert (p["n_ranked"], p["n_rank1"]) == (3, 1)
    gender = next(b for b in doc["boards"] if b["private_attribute"] == "gender")
    assert gender["power"] is None  # nothing ranked: invalid privacy


def test_board_power_counts_rank_one():
    from bench.leaderboard.rank import Score, board_power

    scores = [Score(0.5, (0.4, 0.6)), Score(0.45, (0.3, 0.6)), Score(0.1, (0.05, 0.15)), None]
    assert board_power(scores, [1, 1, 3, None]) == {
        "median_half_width": pytest.approx(0.1), "min_detectable_difference": pytest.approx(0.2),
        "n_ranked": 3, "n_rank1": 2}
    assert board_power([None, Score(0.1, None), Score(0.0, (0.0, 0.0))], [None, 1, 2]) is None


def test_the_board_with_known_answers_is_written(doc: dict, tmp_path) -> None:
    """`bench leaderboard` wrote leaderboard.json with allow_nan=False and stopped ("Out of
    range float values are not JSON compliant: inf") on any source holding the identity known
    answer, whose points have ε = ∞. It is written as the page and spec.json write it."""
    from bench.leaderboard import write_leaderboard

    out = write_leaderboard(doc, tmp_path / "lb")
    written = json.loads((out / "leaderboard.json").read_text())
    identity = next(e for e in written["entries"] if e["mechanism"] == "identity")
    assert [p["epsilon"] for p in identity["points"]] == ["inf"]
    assert (out / "leaderboard.html").is_file()
