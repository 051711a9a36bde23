"""The cards' baseline measurement (bench.datasets.baselines) is what a grid's unprivatized
baseline cell computes for the lexical adversary, to the last bit."""

from __future__ import annotations

import json

import pytest

from bench.datasets.baselines import lexical_baseline, main
from bench.run.runner import run_grid

GRID = """
name: baseline_check
axes:
  dataset:
    - {name: debates2016, subsample: 300, split: [0.6, 0.2, 0.2]}
  model: [bow]
  mechanism: [tem]
  epsilon: [50]
  seed: [1]
settings:
  vocab_size: 2000
  adversaries: [lexical]
"""


def test_matches_the_runner_baseline_cell(tmp_path) -> None:
    grid = tmp_path / "g.yaml"
    grid.write_text(GRID)
    run_grid(grid, results=tmp_path / "results", mlflow=False)
    cells = [json.loads(f.read_text()) for f in (tmp_path / "results").glob("cells/*/metrics.json")]
    base = next(m for m in cells if "mech=none" in m["cell"])
    runner = base["privacy"]["gender"]["by_adversary"]["lexical"]
    ours = lexical_baseline("debates2016", subsample=300, split=[0.6, 0.2, 0.2], seed=1,
                            tasks="all")
    g = ours["gender"]
    assert g["macro_f1"] == runner["adversary_macro_f1"]
    assert g["macro_f1_ci95"] == runner["adversary_macro_f1_ci95"]
    assert g["chance_threshold"] == runner["chance_threshold"]
    assert g["valid"] is base["privacy"]["gender"]["privacy_valid"]
    assert g["n_test"] == runner["n"] == sum(g["test_counts"].values())
    assert set(ours) == {"gender", "role"}  # tasks="all": the utility task too


def test_bad_tasks_and_cli(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="tasks must be"):
        lexical_baseline("debates2016", tasks="utility")
    assert main([]) == 2 and main(["debates2016", "seed"]) == 2
    assert main(["debates2016", "subsample=200", "split=[0.6, 0.2, 0.2]"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"gender"} and out["gender"]["n_test"] == 40
