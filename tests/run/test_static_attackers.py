"""Static attackers (grid setting ``static_attackers``): each text adversary also trained on the
original text and tested on the privatized text, beside the adaptive one trained on privatized
text. Known answers land where they must: on ``identity`` the static attack is the baseline's
attack exactly (it succeeds on the planted signal, the text itself); on ``no_information`` it
falls to chance; the setting is opt-in and changes no other cell's identity."""

from __future__ import annotations

import pytest

from bench.grid import load_grid
from bench.results.record import scan
from bench.run.runner import run_grid

GRID = """
name: static
axes:
  dataset: [{name: bbc, subsample: 200, max_tokens: 100, split: [0.6, 0.2, 0.2],
             stratify: entities}]
  model: [bow]
  mechanism: [tem, identity, no_information, mvl]
  mapping: [none]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 3000
  adversaries: [lexical, model]
  decode_vectors: true
  {extra}
"""
TIMES = ("fit_seconds", "predict_seconds")


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    base = tmp_path_factory.mktemp("static")
    grid = base / "g.yaml"
    grid.write_text(GRID.replace("{extra}", "static_attackers: true"))
    summary = run_grid(grid, results=base / "r", mlflow=False)
    assert summary.count("done") == 5
    return {r.spec["mechanism"]["name"]: r for r in scan(base / "r").cells}


def _by(rec, drop=TIMES):
    by = rec.metrics["privacy"]["entities"]["by_adversary"]
    return {n: {k: v for k, v in m.items() if k not in drop} for n, m in by.items()}


def test_on_identity_the_static_attack_is_the_baselines_attack_exactly(cells):
    by, base = _by(cells["identity"]), _by(cells["none"])
    assert sorted(by) == ["bow", "bow:static", "lexical", "lexical:static"]
    assert "lexical:static" not in base  # on the original text static and adaptive are one
    for name in ("lexical", "bow"):
        assert by[f"{name}:static"] == base[name] == by[name]
    assert cells["identity"].metrics["privacy"]["entities"]["privacy_valid"] is True


def test_on_no_information_the_static_attack_falls_to_chance(cells):
    by = _by(cells["no_information"])
    assert by["lexical:static"]["chance_level"] is True
    assert by["bow:static"]["chance_level"] is True


def test_the_headline_is_the_strongest_of_static_and_adaptive(cells):
    for mech in ("tem", "mvl", "identity", "no_information"):
        p = cells[mech].metrics["privacy"]["entities"]
        best = max(p["by_adversary"].values(), key=lambda m: m["adversary_macro_f1"])
        assert p["adversary_macro_f1"] == best["adversary_macro_f1"], mech


def test_vector_output_gets_static_attacks_on_its_decoded_words_only(cells):
    by = _by(cells["mvl"])
    assert "lexical:static" in by  # lexical reads the decoded words
    assert "bow:static" not in by  # bow reads the vectors themselves: no static attack


def test_a_report_reads_a_static_attack_against_the_baselines_own(cells):
    """Named with --adversary, a static attack is anchored at the baseline's attack of its base
    name: identity gains no privacy, no_information all of it."""
    from bench.analysis import group_cells
    from bench.analysis.anchored import anchored_cells
    from bench.analysis.privacy import baseline_index, select_privacy

    recs = select_privacy(list(cells.values()), "lexical:static")
    groups, _ = group_cells(recs)
    index = baseline_index(r for g in groups for r in g.records)
    gained = {}
    for g in groups:
        if not g.config.is_baseline:
            (c,) = anchored_cells(g, "entities", index)
            gained[g.records[0].spec["mechanism"]["name"]] = c.gained
    assert gained["identity"] == 0.0 and gained["no_information"] == 1.0


def test_the_setting_is_opt_in_and_checked(tmp_path):
    on, off = tmp_path / "on.yaml", tmp_path / "off.yaml"
    on.write_text(GRID.replace("{extra}", "static_attackers: true"))
    off.write_text(GRID.replace("{extra}", ""))
    hashes_off = {c.hash for c in load_grid(off).cells}
    hashes_on = {c.hash for c in load_grid(on).cells}
    assert not hashes_on & hashes_off  # a cell that runs more attacks is another cell
    assert all("static_attackers" not in c.settings for c in load_grid(off).cells)
    bad = tmp_path / "bad.yaml"
    bad.write_text(GRID.replace("{extra}", "static_attackers: yes please"))
    with pytest.raises(Exception, match="static_attackers.*must be true or false"):
        load_grid(bad)


def test_one_fit_on_the_original_text_serves_every_cell_with_the_same_bits(
        cells, tmp_path, monkeypatch):
    """The static attacks of the privatized cells reuse the baseline's fit on the original text
    (same split, seed and settings): no second fit, and the same results as fitting afresh in
    every cell (the memo switched off)."""
    import bench.run.attacks as attacks

    for mech in ("tem", "identity", "no_information", "mvl"):
        by = cells[mech].metrics["privacy"]["entities"]["by_adversary"]
        assert by["lexical:static"]["fit_seconds"] == 0.0  # reused, not refitted
    assert cells["none"].metrics["privacy"]["entities"]["by_adversary"]["lexical"][
        "fit_seconds"] > 0.0  # the baseline fitted it
    monkeypatch.setattr(attacks, "ORIGINAL_FITS_KEPT", 0)
    attacks._ORIGINAL_FITS.clear()
    grid = tmp_path / "g.yaml"
    grid.write_text(GRID.replace("{extra}", "static_attackers: true"))
    run_grid(grid, results=tmp_path / "r", mlflow=False)
    fresh = {r.spec["mechanism"]["name"]: r for r in scan(tmp_path / "r").cells}
    assert sorted(fresh) == sorted(cells)
    for mech, rec in fresh.items():
        assert rec.metrics["privacy"]["entities"]["by_adversary"]["lexical:static" if mech != "none"
                                                                  else "lexical"]["fit_seconds"] > 0
        assert _by(rec) == _by(cells[mech]), mech


def test_a_fit_is_reused_only_for_the_same_inputs():
    """The memo's key covers what a fit depends on: another seed, other labels, other training
    text or other hyperparameters is another fit."""
    import numpy as np

    from bench.run.attacks import _fit_key

    docs, dev = [["a", "b"], ["c"]], [["d"]]
    y, y_dev = np.array([0, 1]), np.array([1])
    key = _fit_key("lexical", None, 0, 2, (docs, dev, y, y_dev))
    assert key == _fit_key("lexical", None, 0, 2, ([["a", "b"], ["c"]], dev, y, y_dev))
    others = [_fit_key("lexical", None, 1, 2, (docs, dev, y, y_dev)),
              _fit_key("lexical", None, 0, 2, (docs, dev, np.array([1, 0]), y_dev)),
              _fit_key("lexical", None, 0, 2, ([["a"], ["b", "c"]], dev, y, y_dev)),
              _fit_key("lexical", {"C": 2.0}, 0, 2, (docs, dev, y, y_dev)),
              _fit_key("bow", None, 0, 2, (docs, dev, y, y_dev))]
    assert key not in others and len(set(others)) == len(others)
