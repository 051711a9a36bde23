"""``similarity_minilm`` (CS of sentence embeddings): the text unchanged keeps everything, an
output independent of its input falls to the chance level, a planted partial signal lands in
between; in a grid run the known answers land where they must."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench.measures.similarity import similarity_scores
from bench.run.runner import run_grid


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _corpus(n: int = 200, d: int = 64, seed: int = 0) -> np.ndarray:
    """Embeddings of one corpus: a shared direction plus a document's own (far from orthogonal,
    as sentence embeddings of one corpus are)."""
    rng = np.random.default_rng(seed)
    return _unit(2.0 + rng.normal(size=(n, d)))


def test_the_unchanged_text_keeps_everything():
    o = _corpus()
    rec = similarity_scores(o, o)
    assert rec["cosine"] == pytest.approx(1.0) and rec["retained"] == pytest.approx(1.0)
    assert rec["chance_cosine"] > 0.5  # one corpus: the chance level is far above 0


def test_an_output_independent_of_its_input_falls_to_chance():
    o, noise = _corpus(seed=0), _corpus(seed=1)
    rec = similarity_scores(noise, o, seed=0)
    assert rec["cosine"] == pytest.approx(rec["chance_cosine"], abs=0.01)
    assert rec["retained_ci"][0] <= 0.0 <= rec["retained_ci"][1]
    # another pairing of the same documents keeps nothing of each one's own meaning either
    rec = similarity_scores(np.roll(o, 1, axis=0), o, seed=0)
    assert rec["retained_ci"][0] <= 0.0 <= rec["retained_ci"][1]


def test_a_planted_partial_signal_lands_in_between():
    o = _corpus()
    half = _unit(o + _corpus(seed=2))
    rec = similarity_scores(half, o, seed=0)
    assert 0.2 < rec["retained_ci"][0] and rec["retained_ci"][1] < 0.9
    assert rec["cosine_ci"][0] <= rec["cosine"] <= rec["cosine_ci"][1]


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match=r"\(n, d\)"):
        similarity_scores(np.zeros((3, 4)), np.zeros((4, 4)))


GRID = """
name: similarity
axes:
  dataset: [{name: bbc, subsample: 120, max_tokens: 60}]
  model: [bow]
  mechanism: [identity, no_information, tem]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 3000
  adversaries: [lexical]
  measures: [similarity_minilm, linkage_minilm]
"""


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    base = tmp_path_factory.mktemp("similarity")
    (base / "g.yaml").write_text(GRID)
    assert run_grid(base / "g.yaml", results=base / "r", mlflow=False).count("done") == 4
    out = {}
    for f in (base / "r").glob("cells/*/metrics.json"):
        m = json.loads(f.read_text())
        out[m["cell"].split("mech=")[1].split(",")[0]] = m
    return out


def test_in_a_grid_the_known_answers_land_where_they_must(cells):
    assert "similarity_minilm" not in cells["none"].get("measures", {})  # baseline: trivial
    same = cells["identity"]["measures"]["similarity_minilm"]
    assert same["cosine"] == pytest.approx(1.0) and same["retained"] == pytest.approx(1.0)
    nothing = cells["no_information"]["measures"]["similarity_minilm"]
    assert nothing["retained_ci"][0] <= 0.0 <= nothing["retained_ci"][1] + 0.05
    tem = cells["tem"]["measures"]["similarity_minilm"]
    assert nothing["retained"] < tem["retained"] < same["retained"]
    assert tem["n_docs"] == same["n_docs"] and tem["max_length"] == 128
