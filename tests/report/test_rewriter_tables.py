"""The report's rewriter dimension: rewriter cells get their own TrLaplace-layout table with a
measured Original column, and are never pooled with plain vector-output cells."""

from pathlib import Path

from bench.analysis.results import CellRecord, group_cells
from bench.report.guarantees import guarantee_table
from bench.report.rewrite import rewrite_tables

AE = {"name": "autoencoder", "params": {"corpus": "public", "epochs": 10}, "version": "1"}


def spec(mech, eps, seed, mapping="none", rewriter=None):
    s = {"dataset": {"name": "rt", "config": {"public": 100}, "version": "1"},
         "model": {"name": "lstm", "params": {}, "version": "2"},
         "mechanism": {"name": mech, "params": {"C": 1.0} if mech != "none" else {},
                       "version": "1"},
         "sensitivity": {"name": "none", "params": {}, "version": "1"},
         "mapping": {"name": mapping, "params": {}, "version": "1"},
         "epsilon": "inf" if mech == "none" else eps, "seed": seed, "settings": {},
         "suite_version": "0.3.0"}
    if rewriter:
        s["rewriter"] = rewriter
    return s


def metrics(seed, eps, rewriter=True, void=False):
    rw = {"n_w": 0.1 * eps + 0.01 * seed, "rouge1": 0.2, "bleu": 3.0, "bertscore": 0.5,
          "n_docs": 40, "loss": 5.0 - eps + 0.1 * seed}
    m = {"utility": {"macro_f1": 0.6, "task": "sentiment"}, "rewrite": rw}
    if rewriter:
        m["rewrite_reference"] = dict(rw, n_w=0.7 + 0.01 * seed, loss=1.0 + 0.2 * seed)
        m["rewriter"] = {"name": "autoencoder", "corpus": "public", "docs": 100,
                         "fit_on": "private" if void else "public", "guarantee_void": void,
                         "void_reason": "trained on the evaluated data" if void else None}
        m["guarantee"] = {"kind": "pure", "multiplier": 1.0, "epsilon": eps, "delta": 0.0,
                          "proven": True}
        if void:
            m["guarantee"] |= {"void": True, "void_reason": "trained on the evaluated data"}
    return m


def records(void=False):
    recs = []
    for seed in (0, 1):
        recs.append(CellRecord(f"b{seed}", spec("none", 0, seed), {"utility": {"macro_f1": .7}},
                               Path(".")))
        for eps in (1.0, 2.0):
            recs.append(CellRecord(f"r{seed}{eps}", spec("laplace", eps, seed, rewriter=AE),
                                   metrics(seed, eps, void=void), Path(".")))
        # the same mechanism with a nearest-word mapping and no rewriter
        recs.append(CellRecord(f"n{seed}", spec("laplace", 1.0, seed, mapping="nearest"),
                               metrics(seed, 1.0, rewriter=False), Path(".")))
    return recs


def test_rewriter_cells_are_a_configuration_of_their_own():
    groups, _ = group_cells(records())
    labels = sorted({(g.config.mapping, g.config.rewriter) for g in groups
                     if not g.config.is_baseline})
    assert labels == [("nearest", "none"), ("none → autoencoder", "autoencoder")]
    rw_groups = [g for g in groups if g.config.rewriter == "autoencoder"]
    assert len(rw_groups) == 2 and all(len(g.records) == 2 for g in rw_groups)


def test_rewriter_table_layout_and_measured_original():
    groups, _ = group_cells(records())
    tables = {t.name: t for t in rewrite_tables(groups)}
    assert set(tables) == {"rewrite_rt_public-100", "rewrite_rt_public-100_autoencoder"}
    t = tables["rewrite_rt_public-100_autoencoder"]
    assert [r[0].text for r in t.rows] == ["Loss ↓", "ROUGE-1 ↑", "BLEU ↑", "N_w ↑",
                                           "BERTScore ↑"]
    assert t.columns == ["Metric", "Original ε=∞", "laplace ε=1", "laplace ε=2"]
    # Original: the mean of the per-seed references, measured (no "(identity)")
    assert t.rows[0][1].text == "1.100" and t.rows[3][1].text == "0.705"
    loss_row = [r for r in t.records if r["metric"] == "Loss"]
    assert {r["rewriter"] for r in t.records} == {"autoencoder"}
    assert loss_row[0]["higher_is_better"] == "false" and loss_row[0]["mean"].startswith("4.05")
    # the plain table keeps the plain cells only, with its identity Original column
    plain = tables["rewrite_rt_public-100"]
    assert plain.columns == ["Metric", "Original ε=∞", "laplace ε=1"]
    assert plain.rows[0][1].text == "1.000 (identity)"
    assert not any("Guarantee void" in n for n in t.notes)


def test_void_guarantee_is_said_in_the_tables():
    groups, _ = group_cells(records(void=True))
    t = {t.name: t for t in rewrite_tables(groups)}["rewrite_rt_public-100_autoencoder"]
    assert any(n.startswith("Guarantee void: trained on the evaluated data") for n in t.notes)
    g = guarantee_table(groups)
    assert any("void" in r["proven"] for r in g.records)
