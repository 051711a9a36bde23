"""The utility protocol (grid setting ``utility_test``): ``original`` scores the utility model,
trained on privatized text, on the original test documents (Carvalho et al. 2021, Sec. 5.3).
Known answers land where they must: on ``identity`` the score is the baseline's exactly; on
``no_information`` (a model that learnt nothing) it falls to chance. The setting is opt-in, is
recorded in the cell, and refuses cells whose output a text test set cannot feed."""

from __future__ import annotations

import pytest

from bench.grid import GridError, load_grid
from bench.results.record import scan
from bench.run.runner import run_grid

GRID = """
name: protocol
axes:
  dataset: [{name: bbc, subsample: 200, max_tokens: 100, split: [0.6, 0.2, 0.2],
             stratify: entities}]
  model: [bow]
  mechanism: [tem, identity, no_information]
  mapping: [none]
  epsilon: [3]
  seed: [0]
settings:
  vocab_size: 3000
  metrics: [utility]
  {extra}
"""


def _cells(folder):
    return {r.spec["mechanism"]["name"]: r for r in scan(folder).cells}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("protocol")
    out = {}
    for name, extra in (("original", "utility_test: original"), ("default", "")):
        grid = base / f"{name}.yaml"
        grid.write_text(GRID.replace("{extra}", extra))
        summary = run_grid(grid, results=base / name, mlflow=False)
        assert summary.count("done") == 4
        out[name] = _cells(base / name)
    return out


def test_on_identity_the_original_test_score_is_the_baselines_exactly(runs):
    cells = runs["original"]
    ident, base = cells["identity"].metrics["utility"], cells["none"].metrics["utility"]
    assert ident["test_text"] == "original" and "test_text" not in base
    assert ident["macro_f1"] == base["macro_f1"]
    assert base["chance_level"] is False  # the signal is there to keep


def test_on_no_information_the_original_test_score_falls_to_chance(runs):
    u = runs["original"]["no_information"].metrics["utility"]
    assert u["test_text"] == "original" and u["chance_level"] is True


def test_the_protocol_changes_the_privatized_cells_score_and_identity(runs):
    """tem at ε = 3 scored on original text is another number than on its privatized test
    split (the same trained model); the baselines are the same cell in both grids."""
    orig, default = runs["original"], runs["default"]
    def scores(rec):
        return {k: v for k, v in rec.metrics["utility"].items() if k != "fit_seconds"}

    assert scores(orig["none"]) == scores(default["none"])
    assert orig["tem"].hash != default["tem"].hash  # the setting is in the hash
    assert "test_text" not in default["tem"].metrics["utility"]
    assert orig["tem"].metrics["utility"]["macro_f1"] != default["tem"].metrics["utility"][
        "macro_f1"]


def test_an_unknown_protocol_and_vector_output_are_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(GRID.replace("{extra}", "utility_test: test"))
    with pytest.raises(GridError, match="utility_test.*'privatized'.*'original'"):
        load_grid(bad)
    vec = tmp_path / "vec.yaml"
    vec.write_text(GRID.replace("[tem, identity, no_information]", "[mvl]")
                   .replace("{extra}", "utility_test: original"))
    with pytest.raises(GridError, match="utility_test.*outputs vectors"):
        load_grid(vec)
