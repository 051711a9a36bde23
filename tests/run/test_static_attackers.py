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
