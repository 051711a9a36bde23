"""Vector output attacked as text (grid setting ``decode_vectors``): each vector decoded to its
nearest public word is exactly what the ``nearest`` mapping outputs, so a text adversary scores
the same on a mapping-``none`` cell as on the ``nearest`` cell of the same noise; without the
setting it is left out, and the cells' identities are unchanged."""

from __future__ import annotations

import json

import pytest

from bench.grid import load_grid
from bench.run.runner import run_grid

GRID = """
name: decode
axes:
  dataset: [{name: bbc, subsample: 150, max_tokens: 100, split: [0.6, 0.2, 0.2],
             stratify: entities}]
  model: [bow]
  mechanism: [mvl]
  mapping: [none, nearest]
  sensitivity: [none]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 5000
  {extra}
"""


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    base = tmp_path_factory.mktemp("decode")
    grid = base / "g.yaml"
    grid.write_text(GRID.replace("{extra}", "decode_vectors: true"))
    summary = run_grid(grid, results=base / "r", mlflow=False)
    assert summary.count("done") == 3
    out = {}
    for f in (base / "r").glob("cells/*/metrics.json"):
        m = json.loads(f.read_text())
        if "mech=none" not in m["cell"]:  # privatized cells, by mapping
            out[m["cell"].split("map=")[1].split(",")[0]] = m
    return out


def test_decoded_vectors_are_the_nearest_mappings_text(cells):
    vec = cells["none"]["privacy"]["entities"]["by_adversary"]
    text = cells["nearest"]["privacy"]["entities"]["by_adversary"]
    assert vec["lexical"]["adversary_macro_f1"] == text["lexical"]["adversary_macro_f1"]
    assert vec["lexical"]["adversary_per_class_f1"] == text["lexical"]["adversary_per_class_f1"]
    assert "informed" not in vec  # no channel over words for decoded vectors
    left = cells["none"]["privacy"]["entities"]["adversaries_left_out"]
    assert [n for n, _ in left] == ["informed"]
    assert "bow" in vec  # the model still reads the vectors themselves


def test_the_setting_is_opt_in_and_changes_only_its_own_cells(tmp_path):
    on, off = tmp_path / "on.yaml", tmp_path / "off.yaml"
    on.write_text(GRID.replace("{extra}", "decode_vectors: true"))
    off.write_text(GRID.replace("{extra}", ""))
    a, b = load_grid(on).cells, load_grid(off).cells
    assert {c.hash for c in a}.isdisjoint({c.hash for c in b})  # a setting of the cells
    none_off = next(c for c in b if c.mapping == "none" and not c.is_baseline)
    assert "lexical" not in none_off.versions["adversaries"]
    none_on = next(c for c in a if c.mapping == "none" and not c.is_baseline)
    assert "lexical" in none_on.versions["adversaries"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(GRID.replace("{extra}", "decode_vectors: 1"))
    with pytest.raises(Exception, match="decode_vectors"):
        load_grid(bad)
