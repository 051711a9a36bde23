"""The ablation of the TrLaplace public code's departures (issue 25): ``trlaplace_code`` (the
code's setting, and it with one departure removed at a time), ``trlaplace_code_public`` (the
rewriter trained on the held-apart public part) and ``trlaplace_rewrite`` (every departure
removed: our DP pipeline).

The departures (docs/findings.md; Huang et al. 2024's code, github.com/Skyyyy0920/Trlaplace):

- D1 ``noise_shared: batch``: one noise vector per batch of 1,024 sentences (method.py);
- D2 ``C: 0.005, clip: false``: noise calibrated to C = 0.005, embeddings never clipped;
- D3 ``train_embeddings``: the rewriter's embedding table is trained (model.py);
- D4 ``rewriter_fit_on: private``: the rewriter trained on the split it rewrites (train.py);
- D5 ``code_dimension``: trlaplace's d' = 500 at ε = 10 (only trlaplace, only above ε = 3.54).

A cell's variant is read from its spec (mechanism parameters, rewriter parameters, the grid it
belongs to), never from its name, so a renamed grid cannot mislabel a row.

Example:
    >>> sorted(departures("trlaplace_code",
    ...                   {"name": "laplace", "params": {"C": 0.005, "clip": False}},
    ...                   {"params": {"train_embeddings": True}}))
    ['D2', 'D3', 'D4']
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from bench.analysis.results import fmt_eps
from bench.results.sections import CellMetrics
from bench.tools.findings.stats import cell_metrics, fmt_delta, key, summary, t_interval, utility
from bench.tools.findings.tem import ref_utility

GRIDS = ("trlaplace_code", "trlaplace_code_public", "trlaplace_rewrite")
DEPARTURES = ("D1", "D2", "D3", "D4", "D5")
LABELS = {"D1": "one noise vector per batch", "D2": "C = 0.005, no clipping",
          "D3": "embedding table trained", "D4": "rewriter trained on the evaluated split",
          "D5": "d' = 500 at ε = 10"}
Column = tuple[str, Callable[[CellMetrics], Any], bool]
"""A table column: label, getter, higher is better."""

MEASURES: tuple[Column, ...] = (
    ("utility", utility, True),
    ("N_w", lambda m: m.rewrite.n_w, True),
    ("ROUGE-1", lambda m: m.rewrite.rouge1, True),
    ("BLEU", lambda m: m.rewrite.bleu, True),
    ("BERTScore", lambda m: m.rewrite.bertscore, True),
    ("loss", lambda m: m.rewrite.loss, False),
)
"""The columns (the rewrite metrics of Huang et al. Tables 1-3)."""

REFERENCE: Column = (
    "reference classifier", ref_utility, True)
"""The reference classifier's macro-F1 on the rewritten text (``reference_utility``: tf-idf +
logistic regression, which no failed LSTM training can move), a column after utility once the
cells carry it."""


def columns(g: Mapping[tuple[str, str, float], dict[int, CellMetrics]]
            ) -> tuple[Column, ...]:
    """:data:`MEASURES`, with :data:`REFERENCE` after utility when any cell of ``g`` has it."""
    has_ref = any(m.measure("reference_utility") for seeds in g.values() for m in seeds.values())
    return MEASURES[:1] + ((REFERENCE,) if has_ref else ()) + MEASURES[1:]


def departures(grid: str, mechanism: Mapping[str, Any], rewriter: Mapping[str, Any] | None
               ) -> frozenset[str]:
    """The code's departures a cell of ``grid`` keeps (see the module docstring)."""
    p = mechanism.get("params", {})
    out = set()
    if p.get("noise_shared") == "batch":
        out.add("D1")
    if p.get("clip") is False:
        out.add("D2")
    if (rewriter or {}).get("params", {}).get("train_embeddings"):
        out.add("D3")
    if grid == "trlaplace_code":
        out.add("D4")
    if mechanism.get("name") == "trlaplace" and p.get("code_dimension"):
        out.add("D5")
    return frozenset(out)


def family(mechanism: Mapping[str, Any]) -> str:
    """laplace, gaussian, gaussian (analytic) or trlaplace."""
    name = mechanism["name"]
    analytic = mechanism.get("params", {}).get("calibration") == "analytic"
    return f"{name} (analytic)" if analytic else name


def full_setting(fam: str) -> frozenset[str]:
    """The code's full setting for a mechanism family (D5 exists for trlaplace only)."""
    return frozenset(DEPARTURES) if fam == "trlaplace" else frozenset(DEPARTURES[:4])


def variant(fam: str, kept: frozenset[str]) -> str | None:
    """``code`` (every departure), ``-Dk`` (all but one) or ``dp`` (none); ``None`` otherwise."""
    full = full_setting(fam)
    if not kept:
        return "dp"
    if kept == full:
        return "code"
    missing = full - kept
    if len(missing) == 1 and kept < full:
        return f"-{next(iter(missing))}"
    return None


def groups(grids: Mapping[str, list[dict]]) -> dict[tuple[str, str, float], dict[int, CellMetrics]]:
    """``(family, variant, ε) -> seed -> metrics`` over the three grids (baselines left out;
    the other grids only on the code grid's datasets, budgets and mechanism families)."""
    out: dict[tuple[str, str, float], dict[int, CellMetrics]] = defaultdict(dict)
    datasets = {c["spec"]["dataset"]["name"] for c in grids.get(GRIDS[0], [])}
    for g in GRIDS:
        for c in grids.get(g, []):
            s = c["spec"]
            if (s["mechanism"]["name"] == "none" or not s.get("rewriter")
                    or s["dataset"]["name"] not in datasets):
                continue
            fam = family(s["mechanism"])
            kept = departures(g, s["mechanism"], s.get("rewriter"))
            v = variant(fam, kept)
            if v is not None:
                out[(fam, v, key(s)[4])][int(s["seed"])] = cell_metrics(c)
    code = {(f, e) for f, v, e in out if v == "code"}
    return {k: s for k, s in out.items() if (k[0], k[2]) in code}


ROW_ORDER = ("code", "-D1", "-D2", "-D3", "-D4", "-D5", "dp")


def _row_label(v: str) -> str:
    if v == "code":
        return "the code's setting"
    if v == "dp":
        return "none (our DP pipeline, `trlaplace_rewrite`)"
    return f"without {v[1:]} ({LABELS[v[1:]]})"


def ablation_table(g: Mapping[tuple[str, str, float], dict[int, CellMetrics]],
                   cols: tuple[Column, ...]) -> list[str]:
    """One row per (family, ε, variant): the ``cols`` (:func:`columns`), mean ± 95% t
    half-width over seeds."""
    out = ["| mechanism | ε | departures removed | seeds | "
           + " | ".join(lab for lab, _, _ in cols) + " |",
           "|---|---:|---|---:|" + "---:|" * len(cols)]
    fams = sorted({k[0] for k in g})
    for fam in fams:
        for e in sorted({k[2] for k in g if k[0] == fam}):
            for v in ROW_ORDER:
                seeds = g.get((fam, v, e))
                if not seeds:
                    continue
                out.append(f"| {fam} | {fmt_eps(e)} | {_row_label(v)} | {len(seeds)} | "
                           + " | ".join(summary(seeds, get) for _, get, _ in cols) + " |")
    return out + [""]


def effect_table(g: Mapping[tuple[str, str, float], dict[int, CellMetrics]],
                 cols: tuple[Column, ...]) -> list[str]:
    """Per departure: the change from removing it alone, paired per (family, ε, seed) with the
    code's setting and pooled (mean and 95% t interval over the pairs); (ns) where the interval
    contains 0."""
    out = ["| departure removed | pairs | " + " | ".join(f"Δ {lab}" for lab, _, _ in cols)
           + " |", "|---|---:|" + "---:|" * len(cols)]
    for v in ROW_ORDER[1:]:
        diffs: dict[str, list[float]] = {lab: [] for lab, _, _ in cols}
        pairs = 0
        for (fam, var, e), seeds in g.items():
            if var != v or (fam, "code", e) not in g:
                continue
            code = g[(fam, "code", e)]
            for s in sorted(set(seeds) & set(code)):
                pairs += 1
                for lab, get, _ in cols:
                    try:
                        diffs[lab].append(float(get(seeds[s])) - float(get(code[s])))
                    except (KeyError, TypeError):
                        pass
        if pairs:
            name = "all (our DP pipeline)" if v == "dp" else f"{v[1:]} ({LABELS[v[1:]]})"
            out.append(f"| {name} | {pairs} | "
                       + " | ".join(fmt_delta(t_interval(diffs[lab])) for lab, _, _ in cols)
                       + " |")
    return out + [""]


def ablation_section(grids: Mapping[str, list[dict]]) -> list[str]:
    """The section's lines (nothing when the code grid has no committed cells)."""
    g = groups(grids)
    if not g:
        return []
    with_ref = [n for n in GRIDS if any(cell_metrics(c).measure("reference_utility")
                                       for c in grids.get(n, []) if c["spec"].get("rewriter"))]
    cols = columns(g)
    where = ("" if len(with_ref) == len(GRIDS) else
             " (so far in " + ", ".join(f"`{n}`" for n in with_ref) + "'s cells; – elsewhere)")
    return ["### TrLaplace public code ablation (`trlaplace_code`, `trlaplace_code_public`, "
            "`trlaplace_rewrite`)", "",
            "The code's setting, then one departure removed at a time, then all of them (our DP "
            "pipeline at the same budgets). rt, autoencoder rewriter, LSTM on the rewritten "
            "text" + ("; the reference classifier: tf-idf + logistic regression on the same "
                      "rewritten text, `reference_utility`" + where
                      if REFERENCE in cols else "")
            + "; mean ± 95% t half-width over seeds.", ""] + ablation_table(g, cols) + [
            "Removing one departure, against the code's setting (paired per mechanism, ε and "
            "seed, pooled):", ""] + effect_table(g, cols)
