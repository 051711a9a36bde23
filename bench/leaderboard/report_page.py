"""The per-grid leaderboard of ``bench report``: the merged leaderboard's builder on one folder.

``bench report`` writes ``<out>/leaderboard.html`` with :func:`render_grid_page`. The cells it
reports (one grid's, privacy read from the adversary it was given) are the single source of
:func:`bench.leaderboard.build.build`, the builder of ``bench leaderboard``, and the document
is drawn by :func:`bench.leaderboard.page.render_page`: the per-grid page and the merged page
rank, mark the Pareto front, describe guarantees and read audits with the same code, and look
the same.

Three things differ, so that the committed report of a reference rebuilds byte for byte
wherever it is rebuilt (``bench reference``): the document carries no date and no bench version
(``generated`` and ``generated_by`` null), the source is named by its folder's name rather than
its absolute path, and cells have no ``href`` (a link to the cell folder would depend on where
the report is written; each cell's hash names its folder ``cells/<hash>``). The report's audit
records count for every entry.

Example:
    >>> from bench.analysis.results import load_results
    >>> rs = load_results("results", "quickstart")
    >>> Path("results/report/leaderboard.html").write_text(render_grid_page(rs))
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.analysis.audits import AuditSet
from bench.analysis.results import ResultSet
from bench.leaderboard.build import build
from bench.leaderboard.page import render_page
from bench.leaderboard.sources import cells_source

SOURCE_ID = "s0"
"""The id of the one source of a per-grid leaderboard."""


def folder_name(results: ResultSet) -> str:
    """The name of the results folder the cells were read from (``results`` without cells)."""
    for rec in results.cells:
        return Path(rec.folder).resolve().parent.parent.name
    return "results"


def grid_document(results: ResultSet, *, adversary: str | None = None,
                  audits: AuditSet | None = None) -> dict[str, Any]:
    """The ``leaderboard.json`` document of the cells of one report.

    Args:
        results: the cells as the report read them (:func:`bench.analysis.results.load_results`,
            filtered to its grid); its reading warnings become the source's problems.
        adversary: the adversary privacy is read from (None: the strongest;
            :func:`bench.analysis.privacy.select_privacy`).
        audits: the report's ``bench audit`` records (None: none read).

    Returns:
        The document (``docs/leaderboard.md``), without date or version.
    """
    src = cells_source(results.cells, SOURCE_ID, folder_name(results),
                       problems=results.warnings, href=lambda _rec: None)
    # the report's own folder: its owner vouches for its cells, sealed or not (trusted)
    return build([src], adversary=adversary, audit_sets=[audits] if audits else [],
                 stamp=False, trusted=[SOURCE_ID])


def render_grid_page(results: ResultSet, *, adversary: str | None = None,
                     audits: AuditSet | None = None) -> str:
    """The per-grid ``leaderboard.html``: :func:`grid_document` drawn by
    :func:`bench.leaderboard.page.render_page`, titled ``<grid> leaderboard``."""
    doc = grid_document(results, adversary=adversary, audits=audits)
    return render_page(doc, title=f"{results.grid} leaderboard" if results.grid else None)


__all__ = ["SOURCE_ID", "folder_name", "grid_document", "render_grid_page"]
