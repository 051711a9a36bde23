"""Reports from a results folder: trade-off, rewrite and guarantee tables, curves, leaderboard.

``bench report [--results DIR] [--out DIR] [--grid NAME] [--audit DIR] [--adversary NAME]``
calls :func:`cli_report`; the same is available without the CLI as ``python -m bench.report``.
Privacy is the headline ``1 − max adversary macro-F1`` unless ``adversary`` names one
(:mod:`bench.analysis.privacy`); where it is not a valid measurement (the adversary is at chance
on the unprivatized baseline) the report says "no valid privacy measurement" and shows no
trade-off. Every table is written as Markdown, LaTeX and CSV; numbers are aggregated over
seeds with a 95% interval (Student t over n ≥ 2 seeds, a single run's bootstrap over the test
documents, or none; :mod:`bench.analysis.stats`), a Δ vs the baseline that is not significant is
marked ``ns``, and the leaderboard's ranks never separate entries whose intervals overlap;
results of different suite versions or dataset contents are never pooled; the output is
byte-identical for the same results. ``bench audit`` status records
(``<results>/audit``) add an audit column (:mod:`bench.analysis.audits`). See
``docs/report.md``.

Example:
    >>> from bench.report import cli_report
    >>> print(cli_report("results", "results/report", grid="smoke"))
    report grid smoke: 3 cells in 3 configurations, 0 failed -> results/report: ...
"""

from __future__ import annotations

import logging

from bench.analysis.results import ReportError
from bench.report.build import ReportSummary, build_report, cli_report, headline_metrics
from bench.report.guarantees import guarantee_table
from bench.report.plots import render_curves, write_curves
from bench.report.rewrite import rewrite_tables
from bench.report.table import Table
from bench.report.tradeoff import tradeoff_tables

logger = logging.getLogger(__name__)

__all__ = [
    "ReportError",
    "ReportSummary",
    "Table",
    "build_report",
    "cli_report",
    "guarantee_table",
    "headline_metrics",
    "render_curves",
    "rewrite_tables",
    "tradeoff_tables",
    "write_curves",
]
