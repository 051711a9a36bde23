"""The measures stage in a grid run: each applicable measure lands in its cell, reconstruction
reads the informed adversary's channel from the cache, and adding measures changes no other
number of a cell."""

from __future__ import annotations

import json

import pytest

from bench.results.compare import comparable, differences
from bench.run.runner import run_grid

GRID = """
name: measures
axes:
  dataset: [{name: bbc, subsample: 150}]
  model: [bow]
  mechanism: [mvl, tem]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 2000
  adversaries: [informed]
  mia: true
  {extra}
"""


def _metrics(results):
    return {m["cell"]: m for m in (json.loads(f.read_text())
                                   for f in results.glob("cells/*/metrics.json"))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("measures")
    out = {}
    measures = "measures: [reconstruction, s_w, linkage, mia_low_fpr, mia_rmia, reference_utility]"
    for name, extra in (("with", measures),
                        ("without", "")):
        grid = base / f"{name}.yaml"
        grid.write_text(GRID.replace("{extra}", extra))
        summary = run_grid(grid, results=base / name, mlflow=False)
        assert summary.count("done") == 3
        out[name] = _metrics(base / name)
    out["base"] = base
    return out


def test_each_applicable_measure_is_in_its_cell(runs):
    for cell, m in runs["with"].items():
        ref = m["measures"]["reference_utility"]  # every text cell, the baseline too
        assert 0.0 <= ref["macro_f1"] <= 1.0 and ref["penalty"] in ("l1", "l2")
        assert ref["macro_f1_ci95"][0] <= ref["macro_f1"] <= ref["macro_f1_ci95"][1]
        if "mech=none" in cell:  # the baseline: the MIA measures and the reference utility
            assert set(m["measures"]) == {"mia_low_fpr", "mia_rmia", "reference_utility"}
            assert ref["original_test_macro_f1"] == ref["macro_f1"]  # its text is the original
            continue
        assert set(m["measures"]) == {"reconstruction", "s_w", "linkage", "mia_low_fpr",
                                      "mia_rmia", "reference_utility"}
        rec = m["measures"]["reconstruction"]
        assert rec["top1"]["rate"] >= max(rec["unchanged"]["rate"], rec["map_top1"]["rate"],
                                          rec["prior_top1"]["rate"])
        assert rec["prior_top1"]["rate"] == rec["chance_top1"]
        assert rec["top1"]["rate"] > rec["chance_top1"]  # ε = 10 leaks most words
        assert 1.0 <= m["measures"]["s_w"]["s_w_mean"] <= m["measures"]["s_w"]["n_draws"]
        assert m["measures"]["linkage"]["top1"] > m["measures"]["linkage"]["chance_top1"]
        low = m["measures"]["mia_low_fpr"]
        assert set(low["by_attack"]) == {"shadow", "loss_threshold"}
        assert 0.0 <= low["tpr_at_fpr_0.01"]["tpr"] <= 1.0
        rmia = m["measures"]["mia_rmia"]
        assert rmia["stage_auc"] == m["mia"]["mia_auc"] and rmia["n_reference_models"] == 2
        assert rmia["auc_ci"][0] <= rmia["auc"] <= rmia["auc_ci"][1]
        assert rmia["n_members"] + rmia["n_nonmembers"] == low["n_members"] + low["n_nonmembers"]
        assert m["runtime"]["measures_seconds"] > 0


def test_reconstruction_reuses_the_informed_channel(runs):
    """The informed adversary computed each channel; the measure found it in the cache."""
    for cell, m in runs["with"].items():
        if "mech=none" not in cell:
            assert m["runtime"]["channels_computed"] == 1


def test_measures_change_no_other_number(runs):
    def strip(m):
        m = comparable(dict(m))
        m.pop("measures", None)
        m.pop("cell", None)
        return m

    with_m = {k: strip(v) for k, v in runs["with"].items()}
    without = {k: strip(v) for k, v in runs["without"].items()}
    assert with_m.keys() == without.keys()
    for k in with_m:
        assert differences(without[k], with_m[k]) == []


def test_the_report_has_a_measures_table_only_where_cells_hold_measures(runs):
    from bench.report import build_report

    base = runs["base"]
    build_report(base / "with", base / "rep_with")
    build_report(base / "without", base / "rep_without")
    md = sorted((base / "rep_with" / "tables").glob("measures_*.md"))
    assert len(md) == 1
    text = md[0].read_text()
    for header in ("Reconstruction top-1", "S\\_w (mean)", "Linkage top-1 (tf-idf)",
                   "MIA TPR@1% FPR"):
        assert header in text
    assert not list((base / "rep_without" / "tables").glob("measures_*"))
