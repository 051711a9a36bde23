"""Rewrite tables (Huang et al. 2024, Tables 1–3): how much the privatized text still looks
like the original.

:func:`rewrite_tables` — one table per dataset; a row per registered rewrite metric
(:func:`bench.metrics.rewrite_metrics`: N_w, ROUGE-1, BLEU, BERTScore, then any plugin's, each
with its own label, decimals and direction) and a model's loss where reported; column groups
mechanism × ε plus the non-private column (the metric's identity value); best value per ε in
bold. Cells rewritten by a rewriter (:mod:`bench.rewriters`) get a table of their own per
rewriter in the paper's row order (:data:`PAPER_ORDER`), whose Original column is measured.

Example:
    >>> from bench.analysis.results import load_results, group_cells
    >>> groups, _ = group_cells(load_results("results").cells)
    >>> for table in rewrite_tables(groups):
    ...     print(table.markdown())
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.analysis.results import CellRecord, Group, Stat, fmt_eps, round_text, stat, to_float
from bench.metrics import Metric, metric, rewrite_metrics
from bench.report.table import (
    DASH,
    Table,
    Value,
    csv_num,
    fmt_stat,
    slug,
    unique_name,
)
from bench.results.sections import CellMetrics

PAPER_ORDER = ("loss", "rouge1", "bleu", "n_w", "bertscore")
"""The first rows of a rewriter's table, in the order of Huang et al. (2024, Tables 1-3); any
other rewrite metric follows in its own order (:func:`bench.metrics.rewrite_metrics`)."""


def rewriter_rows() -> list[Metric]:
    """The rows of a rewriter's table: :data:`PAPER_ORDER`, then the other rewrite metrics."""
    rest = [m for m in rewrite_metrics() if m.name not in PAPER_ORDER]
    return [metric(k) for k in PAPER_ORDER] + rest


def _loss(m: CellMetrics) -> Any:
    for v in (m.utility.loss, m.rewrite.loss, m.utility.test_loss):
        if v is not None:
            return v
    return None


def rewrite_tables(groups: Sequence[Group], title_prefix: str = "") -> list[Table]:
    """Rewrite tables, one per dataset with rewrite metrics.

    Rewrite metrics depend on the privatized corpus, not on the model: configurations that
    differ only in the model are pooled, one value per seed (the first model's cell). A loss row
    is added per model that reports one (``utility.loss``).

    Args:
        groups: aggregated configurations.
        title_prefix: prepended to each title.

    Returns:
        Tables named ``rewrite_<dataset>``.
    """
    by_ds: dict[str, list[Group]] = {}
    for g in groups:
        by_ds.setdefault(g.config.dataset, []).append(g)
    tables, used = [], set()
    for ds in sorted(by_ds):
        table = _rewrite_table(ds, [g for g in by_ds[ds] if g.config.rewriter == "none"],
                               title_prefix, used)
        if table is not None:
            tables.append(table)
        for rw in sorted({g.config.rewriter for g in by_ds[ds]} - {"none"}):
            table = _rewriter_table(ds, rw, [g for g in by_ds[ds] if g.config.rewriter == rw],
                                    title_prefix, used)
            if table is not None:
                tables.append(table)
    return tables


def _rewriter_table(ds: str, rw: str, gs: list[Group], title_prefix: str, used: set[str]
                    ) -> Table | None:
    """The rewrite table of the cells of one dataset rewritten by ``rw`` (TrLaplace layout):
    Loss, ROUGE-1, BLEU, N_w, BERTScore per mechanism and ε; the Original ε=∞ column is the
    same rewriter on unperturbed embeddings (``metrics.rewrite_reference``, measured)."""
    priv = [g for g in gs if any(r.sections.has("rewrite") for r in g.records)]
    if not priv:
        return None
    cols, _loss_by = _rewrite_columns(priv)
    col_keys = sorted(cols, key=lambda k: (k[0], k[1]))
    ref_by_seed = {r.seed: r.sections.rewrite_reference for c in cols.values()
                   for r in c.values() if r.sections.rewrite_reference}
    columns, groups_hdr, sub = _headers(col_keys)
    rows, records, shown = [], [], []
    for m in rewriter_rows():
        stats = [stat(r.sections.rewrite.value(m.name) for r in cols[k].values())
                 for k in col_keys]
        if all(s is None for s in stats):
            continue
        orig = stat(ref.value(m.name) for ref in ref_by_seed.values())
        row, recs = _rewrite_row(ds, m, m.label, orig, stats, col_keys)
        rows.append(row)
        records += [{"rewriter": rw, **rec} for rec in recs]
        shown.append(m)
    name = unique_name(f"rewrite_{slug(ds)}_{slug(rw)}", used)
    return Table(name, f"{title_prefix}Rewrite metrics, dataset: {ds}, rewriter: {rw}",
                 columns, rows, records, _rewriter_notes(rw, cols, shown), groups=groups_hdr,
                 sub_columns=sub)


def _rewriter_notes(rw: str, cols: dict[tuple[str, float], dict[int, CellRecord]],
                    shown: Sequence[Metric]) -> list[str]:
    """The notes under a rewriter's table (``shown``: its metric rows)."""
    recs = [r for c in cols.values() for r in c.values()]
    info = recs[0].sections.rewriter or {}
    notes = [(f"The privatized embeddings are rewritten to text by the {rw} rewriter "
              f"(Huang et al. 2024, Sec. 6 and App. A; bench.rewriters), trained on "
              f"{info.get('corpus', '?')!s} ({info.get('docs', '?')} documents, "
              f"fit_on: {info.get('fit_on', '?')}), then compared with the original test "
              "documents: loss = the rewriter's reconstruction loss (mean per-token "
              "cross-entropy, nats, of the original words given the privatized vectors), "
              "ROUGE-1 recall and BERTScore F1 in [0, 1], corpus BLEU in [0, 100], N_w = "
              "fraction of words unchanged."),
             *_other_metrics(shown),
             ("Original: the same rewriter trained and applied on the unperturbed embeddings "
              "(measured, one per seed). Bold: best value per ε (where at least two "
              "mechanisms share that ε)."),
             ("Values: mean ± half-width of the 95% t interval over n seeds, "
              "mean ± t(0.975, n−1)·s/√n; a single run shows the bare value.")]
    void = sorted({(r.sections.rewriter or {}).get("void_reason") for r in recs
                   if (r.sections.rewriter or {}).get("guarantee_void")})
    if void:
        notes.append("Guarantee void: " + "; ".join(void) + ".")
    n_docs = sorted({int(to_float(r.sections.rewrite.n_docs, 0)) for r in recs})
    if n_docs:
        notes.append(f"Documents per cell: {', '.join(map(str, n_docs))}.")
    return notes


def _rewrite_table(ds: str, gs: list[Group], title_prefix: str, used: set[str]) -> Table | None:
    """The rewrite table of one dataset (None where no privatized cell has rewrite metrics)."""
    priv = [g for g in gs if not g.config.is_baseline
            and any(r.sections.has("rewrite") for r in g.records)]
    if not priv:
        return None
    cols, loss_by = _rewrite_columns(priv)
    col_keys = sorted(cols, key=lambda k: (k[0], k[1]))
    base = {g.config.model: g for g in gs if g.config.is_baseline}
    models = sorted({g.config.model for g in gs
                     if any(_loss(r.sections) is not None for r in g.records)})
    columns, groups_hdr, sub = _headers(col_keys)
    rows, records, shown = [], [], []
    for m, label, orig, stats in _rewrite_metric_rows(cols, col_keys, models, base, loss_by):
        row, recs = _rewrite_row(ds, m, label, orig, stats, col_keys)
        rows.append(row)
        records += recs
        shown.append(m)
    name = unique_name(f"rewrite_{slug(ds)}", used)
    return Table(name, f"{title_prefix}Rewrite metrics, dataset: {ds}", columns,
                 rows, records, _rewrite_notes(cols, shown), groups=groups_hdr,
                 sub_columns=sub)


def _headers(col_keys: list[tuple[str, float]]
             ) -> tuple[list[str], list[tuple[str, int]], list[str]]:
    """The flat column headers, the LaTeX mechanism groups and the ε row under them of a
    rewrite table whose columns are ``col_keys`` ((mechanism label, ε), sorted)."""
    columns = ["Metric", "Original ε=∞"] + [f"{m} ε={fmt_eps(e)}" for m, e in col_keys]
    groups_hdr = [("", 1), ("Original", 1)]
    for m, _e in col_keys:
        if groups_hdr[-1][0] == m:
            groups_hdr[-1] = (m, groups_hdr[-1][1] + 1)
        else:
            groups_hdr.append((m, 1))
    sub = ["Privacy budget ε", "∞"] + [fmt_eps(e) for _m, e in col_keys]
    return columns, groups_hdr, sub


def _rewrite_columns(priv: list[Group]
                     ) -> tuple[dict[tuple[str, float], dict[int, CellRecord]],
                                dict[tuple[str, str, float], list[CellRecord]]]:
    """The columns, (mechanism label, ε) -> {seed: record} pooled over models (the first
    model's cell per seed), and every record by (model, mechanism label, ε) for the loss rows.
    The label names the sensitivity and the mapping where those vary."""
    vary_sens = len({g.config.sensitivity for g in priv}) > 1
    vary_map = len({g.config.mapping for g in priv}) > 1

    def mech_label(g: Group) -> str:
        lab = g.config.mechanism
        if vary_sens:
            lab += f" sens={g.config.sensitivity}"
        if vary_map:
            lab += f" map={g.config.mapping}"
        return lab

    cols: dict[tuple[str, float], dict[int, CellRecord]] = {}
    loss_by: dict[tuple[str, str, float], list[CellRecord]] = {}
    for g in sorted(priv, key=lambda g: (mech_label(g), g.config.epsilon, g.config.model)):
        key = (mech_label(g), g.config.epsilon)
        for r in g.records:
            if r.sections.has("rewrite"):
                cols.setdefault(key, {}).setdefault(r.seed, r)
            loss_by.setdefault((g.config.model, *key), []).append(r)
    return cols, loss_by


def _rewrite_metric_rows(cols: dict[tuple[str, float], dict[int, CellRecord]],
                         col_keys: list[tuple[str, float]], models: list[str],
                         base: dict[str, Group],
                         loss_by: dict[tuple[str, str, float], list[CellRecord]]
                         ) -> list[tuple[Metric, str, Stat | None, list[Stat | None]]]:
    """(metric, label, original value, one stat per column) of every registered rewrite
    metric some column has, in their order, then a loss row per model that reports one. The
    original value is the metric's identity value (None where it has none)."""
    metric_rows: list[tuple[Metric, str, Stat | None, list[Stat | None]]] = []
    for m in rewrite_metrics():
        stats = [stat(r.sections.rewrite.value(m.name) for r in cols[k].values())
                 for k in col_keys]
        if all(s is None for s in stats):
            continue
        ident = None if m.identity is None else Stat(m.identity, None, 0)
        metric_rows.append((m, m.label, ident, stats))
    loss = metric("loss")
    for model in models:
        stats = [stat(_loss(r.sections) for r in loss_by.get((model, *k), []))
                 for k in col_keys]
        bs = base[model].stat(_loss) if model in base else None
        metric_rows.append((loss, f"{loss.label} ({model})", bs, stats))
    return metric_rows


def _rewrite_row(ds: str, info: Metric, label: str, orig: Stat | None,
                 stats: list[Stat | None], col_keys: list[tuple[str, float]]
                 ) -> tuple[list[Value], list[dict[str, str]]]:
    """One metric: the table row (``label`` with the metric's direction arrow, its decimals,
    best value per ε in bold) and a CSV record per column."""
    hib, digits = info.higher_is_better, info.digits
    shown = [fmt_stat(s, digits) for s in stats]
    best: set[int] = set()
    for eps in sorted({e for _m, e in col_keys}):
        idx = [i for i, (_m, e) in enumerate(col_keys) if e == eps
               and stats[i] is not None]
        if len(idx) < 2:
            continue
        vals = {i: float(round_text(stats[i].mean, digits, False)) for i in idx}
        target = max(vals.values()) if hib else min(vals.values())
        best |= {i for i, v in vals.items() if v == target}
    orig_text = DASH if orig is None else (
        round_text(orig.mean, digits, False) + ("" if orig.n else " (identity)"))
    arrow = "↑" if hib else "↓"
    row = ([Value(f"{label} {arrow}"), Value(orig_text)]
           + [Value(t, bold=i in best) for i, t in enumerate(shown)])
    records = []
    for i, (mech, e) in enumerate(col_keys):
        s = stats[i]
        records.append({"dataset": ds, "metric": label, "higher_is_better":
                        str(hib).lower(), "mechanism": mech,
                        "epsilon": fmt_eps(e).replace("∞", "inf"),
                        "mean": csv_num(s.mean if s else None),
                        "std": csv_num(s.std if s else None),
                        "ci_lo": csv_num(s.lo if s and s.has_interval else None),
                        "ci_hi": csv_num(s.hi if s and s.has_interval else None),
                        "n_seeds": str(s.n if s else 0),
                        "best": str(i in best).lower(),
                        "original": csv_num(orig.mean if orig else None)})
    return row, records


def _rewrite_notes(cols: dict[tuple[str, float], dict[int, CellRecord]],
                   shown: Sequence[Metric]) -> list[str]:
    """The notes under a rewrite table (what the metrics are; documents per cell)."""
    notes = [("Rewrite metrics between the original and the privatized test documents "
             "(Huang et al. 2024, Sec. 6): N_w = fraction of words unchanged, ROUGE-1 recall "
             "and BERTScore F1 in [0, 1], corpus BLEU in [0, 100]."),
             *_other_metrics(shown),
             ("Original: the unprivatized text compared with itself (identity values, not "
             "measured); loss: the baseline model's. Bold: best value per ε (where at least "
             "two mechanisms share that ε)."),
             ("Values: mean ± half-width of the 95% t interval over n seeds, "
              "mean ± t(0.975, n−1)·s/√n; a single run has no interval here (rewrite "
              "metrics carry no bootstrap interval) and shows the bare value.")]
    n_docs = sorted({int(to_float(r.sections.rewrite.n_docs, 0))
                     for c in cols.values() for r in c.values()})
    if n_docs:
        notes.append(f"Documents per cell: {', '.join(map(str, n_docs))}.")
    return notes



def _other_metrics(shown: Sequence[Metric]) -> list[str]:
    """A note per shown metric that the tables' first note does not describe (one outside
    :data:`PAPER_ORDER`, e.g. a plugin's): its label and its description."""
    return [f"{m.label}: {m.description.rstrip('.')}." for m in shown
            if m.name not in PAPER_ORDER]
