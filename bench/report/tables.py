"""Report tables: trade-off (Riecker 2023), rewrite (Huang et al. 2024), guarantees (Table 5.2).

Each builder returns :class:`Table` objects that render to Markdown, LaTeX (booktabs) and CSV.
The Markdown and LaTeX files show rounded numbers (3 decimals; BLEU 2) with their 95% interval
(:class:`bench.report.results.Stat`): ``mean ± half-width`` of the Student-t interval over
n ≥ 2 seeds, ``mean [lo, hi]`` for one seed's bootstrap interval over the test documents, the
bare mean where there is no interval; the CSV holds the same rows in tidy form with 6
decimals, the std, the interval ends (``*_ci_lo``, ``*_ci_hi``) and the seed count. Everything
is sorted in a stable order, so the same results give byte-identical files.

* :func:`tradeoff_tables` — one table per sensitivity approach; rows mapping × mechanism ×
  model × dataset × ε × private attribute; columns Adversary (the attack privacy is read from:
  the strongest by default), Change in Utility, Change in Privacy, Trade-off (= ΔU + ΔP,
  Riecker 2023, Sec. 4.2). A Δ not distinguishable from zero carries the marker ``ns``
  (:func:`delta_test`: paired t over seeds, or overlapping bootstrap intervals for one seed).
  Favourable trade-offs (> 0) in bold; cells whose utility model or
  adversary is no better than chance are kept and flagged (the thesis leaves them out of
  Tables 5.1–6.4). Where the privacy measurement is not valid (the adversary is at chance on
  the unprivatized baseline) Change in Privacy reads "no valid privacy measurement" and there
  is no trade-off.
* :func:`rewrite_tables` — one table per dataset; a row per registered rewrite metric (N_w,
  ROUGE-1, BLEU, BERTScore, then any plugin's; label, decimals and direction from
  :data:`bench.metrics.METRICS`) and a model's loss where reported; column groups mechanism × ε
  plus the non-private column; best value per ε in bold (Huang et al. 2024, Tables 1–3).
* :func:`guarantee_table` — per sensitivity approach × mechanism: sensitivity bound, the noise
  parameters actually used, the guarantee and whether it is proven (Riecker 2023, Table 5.2).

The code lives in :mod:`bench.report.table` (the :class:`Table` type, its formats and escaping),
:mod:`bench.report.tradeoff`, :mod:`bench.report.rewrite` and :mod:`bench.report.guarantees`;
this module re-exports their public names (the import path the rest of the suite uses).

Example:
    >>> from bench.report.results import load_results, group_cells
    >>> groups, _ = group_cells(load_results("results").cells)
    >>> for table in tradeoff_tables(groups):
    ...     print(table.markdown())
"""

from __future__ import annotations

from bench.metrics import higher_is_better
from bench.report.guarantees import describe_guarantee, guarantee_table, privatizer_of
from bench.report.rewrite import PAPER_ORDER, rewrite_tables, rewriter_rows
from bench.report.table import (
    DASH,
    NS,
    Table,
    Value,
    csv_cell,
    csv_num,
    csv_text,
    fmt_delta,
    fmt_stat,
    interval_note,
    md_text,
    slug,
    tex_escape,
    unique_name,
)
from bench.report.tradeoff import (
    TRADEOFF_NOTES,
    DeltaTest,
    delta_test,
    delta_utility,
    privacy_ci,
    tradeoff_tables,
    utility_ci,
)

__all__ = [
    "DASH",
    "NS",
    "PAPER_ORDER",
    "TRADEOFF_NOTES",
    "DeltaTest",
    "Table",
    "Value",
    "csv_cell",
    "csv_num",
    "csv_text",
    "delta_test",
    "delta_utility",
    "describe_guarantee",
    "fmt_delta",
    "fmt_stat",
    "guarantee_table",
    "higher_is_better",
    "interval_note",
    "md_text",
    "privacy_ci",
    "privatizer_of",
    "rewrite_tables",
    "rewriter_rows",
    "slug",
    "tex_escape",
    "tradeoff_tables",
    "unique_name",
    "utility_ci",
]
