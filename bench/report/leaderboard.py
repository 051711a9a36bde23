"""The report's ``leaderboard.html``: the merged leaderboard's page, built from one folder.

Kept as the old import path (``bench.report.render_leaderboard``). The page is built by
:mod:`bench.leaderboard.grid`: the cells of the report are the single source of the builder of
``bench leaderboard`` (:func:`bench.leaderboard.build.build`), so the Pareto front, the
guarantee text and the audit status are computed once, for both pages (``docs/report.md``).

Example:
    >>> from bench.report.results import load_results
    >>> page = render_leaderboard(load_results("results", "quickstart"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.report.audits import AuditSet
    from bench.report.results import ResultSet


def render_leaderboard(results: ResultSet, *, adversary: str | None = None,
                       audits: AuditSet | None = None) -> str:
    """The per-grid leaderboard page: :func:`bench.leaderboard.grid.render_grid_page`.

    Args:
        results: the cells of the report (:func:`bench.report.results.load_results`).
        adversary: the adversary privacy is read from (None: the strongest).
        audits: the report's ``bench audit`` records (None: none read).

    Returns:
        The HTML text.
    """
    # imported here: bench.leaderboard reads cells through bench.report
    from bench.leaderboard.grid import render_grid_page

    return render_grid_page(results, adversary=adversary, audits=audits)


__all__ = ["render_leaderboard"]
