"""Issue 26's measures across the references: what a changed word, a privatized document and a
membership query still give away, beside how much text survives (N_w).

For every reference grid whose cells hold measures (``measures`` in ``metrics.json``,
docs/measures.md), one row per configuration, mean and 95% t interval over seeds:

- N_w, the fraction of words left unchanged (Feyisetan et al. 2020);
- token reconstruction: the informed adversary's MAP guess of each original word (top-1), the
  paired difference MAP − unchanged (> 0: the changed words give originals away beyond the words
  left as they were), and chance, the prior's most frequent word;
- linkage: the share of privatized test documents whose original ranks first among all test
  originals, by tf-idf and by MiniLM-L6 cosine, chance 1/n;
- S_w, the mean number of distinct substitutes a word receives over 50 privatizations
  (Feyisetan et al. 2020; 1 = always the same output).

For grids with membership inference (``tem``): TPR at 1% and 0.1% FPR of the membership stage's
strongest attack (Carlini et al. 2022) and RMIA's AUC and TPR at 1% FPR (Zarifzadeh et al.
2024), chance = the FPR / 0.5.

Example:
    >>> measures_section({})
    []
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from bench.tools.findings.stats import (
    by_seed,
    cell_metrics,
    config_label,
    fmt_delta,
    summary,
    t_interval,
    values,
)
from bench.tools.findings.stats import (
    measure_value as _m,
)

GRIDS = ("quickstart", "thesis_reference", "tem", "trlaplace", "trlaplace_rewrite",
         "debates2016", "news_outlets")
"""The reference grids in the order the section lists them (those without measures are left
out)."""

ROW_FILTER: Mapping[str, Callable[[tuple], bool]] = {
    # 7 sensitivity approaches x 3 mappings x 6 budgets is too many rows to read: the thesis'
    # nearest-neighbour mapping at its middle budget, and truncated Gumbel (none of it on
    # vector cells, which have no words to reconstruct)
    "thesis_reference": lambda k: (k[3] == "nearest" and k[4] == 50.0)
    or k[0] == "truncated_gumbel",
}


def _cells_with_measures(cells: list[dict]) -> list[dict]:
    return [c for c in cells if cell_metrics(c).measures]


def text_table(grid: str, cells: list[dict]) -> list[str]:
    """One row per privatized configuration of ``grid`` (baselines left out: nothing changed)."""
    keep = ROW_FILTER.get(grid, lambda k: True)
    rows = {k: s for k, s in by_seed(cells).items()
            if k[0] != "none" and keep(k)
            and any("reconstruction" in m.measures or "linkage" in m.measures
                    for m in s.values())}
    if not rows:
        return []
    recon = _m("reconstruction", "map_top1", "rate")
    unchanged = _m("reconstruction", "unchanged", "rate")
    out = [f"**`{grid}`** ({len(rows)} configurations)", "",
           "| configuration | seeds | N_w | MAP top-1 | MAP − unchanged | chance | "
           "linkage tf-idf | linkage MiniLM | chance | S_w |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k in sorted(rows, key=lambda k: (k[0], k[2], k[3], k[4])):
        s = rows[k]
        out.append(
            f"| {config_label(k)} | {len(s)} | {summary(s, lambda m: m.n_w)} | "
            f"{summary(s, recon)} | "
            f"{fmt_delta(t_interval(values(s, lambda m: recon(m) - unchanged(m))))} | "
            f"{summary(s, _m('reconstruction', 'chance_top1'))} | "
            f"{summary(s, _m('linkage', 'top1'))} | {summary(s, _m('linkage_minilm', 'top1'))} | "
            f"{summary(s, _m('linkage', 'chance_top1'))} | {summary(s, _m('s_w', 's_w_mean'))} |")
    return out + [""]


def mia_table(grid: str, cells: list[dict]) -> list[str]:
    """Membership inference at low FPR and RMIA, one row per configuration (baseline first)."""
    rows = {k: s for k, s in by_seed(cells).items()
            if any("mia_low_fpr" in m.measures or "mia_rmia" in m.measures
                   for m in s.values())}
    if not rows:
        return []
    out = [f"**`{grid}`: membership inference at low FPR**", "",
           "| configuration | seeds | stage AUC | TPR @ 1% FPR | TPR @ 0.1% FPR | RMIA AUC | "
           "RMIA TPR @ 1% FPR |", "|---|---:|---:|---:|---:|---:|---:|"]
    for k in sorted(rows, key=lambda k: (k[0] != "none", k[0], k[2], k[3], k[4])):
        s = rows[k]
        name = "baseline (ε = ∞)" if k[0] == "none" else config_label(k)
        out.append(
            f"| {name} | {len(s)} | {summary(s, lambda m: m.mia.mia_auc)} | "
            f"{summary(s, _m('mia_low_fpr', 'tpr_at_fpr_0.01', 'tpr'))} | "
            f"{summary(s, _m('mia_low_fpr', 'tpr_at_fpr_0.001', 'tpr'))} | "
            f"{summary(s, _m('mia_rmia', 'auc'))} | "
            f"{summary(s, _m('mia_rmia', 'tpr_at_fpr_0.01', 'tpr'))} |")
    return out + [""]


def measures_section(grids: Mapping[str, list[dict]]) -> list[str]:
    """The section's lines for ``grid name -> cells`` (nothing when no cell holds measures)."""
    body: list[str] = []
    for g in GRIDS:
        cells = _cells_with_measures(grids.get(g, []))
        if cells:
            body += text_table(g, cells) + mia_table(g, cells)
    if not body:
        return []
    return ["### Measures of issue 26 (`settings.measures`)", "",
            "Mean ± 95% t half-width over seeds. MAP − unchanged is paired per seed: above 0, "
            "the informed adversary recovers originals from changed words too. Chance: the "
            "prior's most frequent word (reconstruction), 1/n (linkage).", ""] + body
