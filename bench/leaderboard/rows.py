"""Configurations gathered over ε: the rows a leaderboard's entries are made from.

The report pools the cells of one configuration at one ε over their seeds into a
:class:`~bench.analysis.results.Group`; a :class:`Row` holds one configuration (dataset × model ×
sensitivity approach × mechanism × mapping, suite version apart) with its groups by ε. Both
``bench leaderboard`` and the per-grid page of ``bench report`` build their entries from these
rows (:mod:`bench.leaderboard.build`).

Example:
    >>> from bench.analysis.results import group_cells, load_results
    >>> groups, _warnings = group_cells(load_results("results").cells)
    >>> [r.config for r in rows_by_config(groups)][:1]
    ['none · sens=none · map=none']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.analysis.results import CellRecord, Group


@dataclass
class Row:
    """One mechanism configuration over its ε values."""

    dataset: str
    """The dataset label (with its parameters; ``(suite=…)`` where versions are mixed)."""
    model: str
    """The utility model."""
    sensitivity: str
    """The sensitivity approach."""
    mechanism: str
    """The mechanism (``none``: the unprivatized baseline)."""
    mapping: str
    """The mapping back to words."""
    suite: str
    """The suite version of cells written before 0.4.0 (``""`` since)."""
    by_eps: dict[float, Group] = field(default_factory=dict)
    """ε -> the configuration's cells at that ε, pooled over seeds."""

    @property
    def is_baseline(self) -> bool:
        """Whether this is the unprivatized baseline (its configurations' :attr:`Config.baseline
        <bench.analysis.results.Config.baseline>`)."""
        return any(g.config.is_baseline for g in self.by_eps.values())

    @property
    def config(self) -> str:
        """The mechanism with its sensitivity approach and mapping (``Config.mechanism_config``)."""
        return f"{self.mechanism} · sens={self.sensitivity} · map={self.mapping}"

    def records(self) -> list[CellRecord]:
        """Every cell of the row, in ε order."""
        return [r for _e, g in sorted(self.by_eps.items()) for r in g.records]


def rows_by_config(groups: Sequence[Group]) -> list[Row]:
    """The groups (one configuration at one ε each) gathered into rows over ε, sorted (per
    dataset and model the baseline first)."""
    rows: dict[tuple, Row] = {}
    for g in groups:
        c = g.config
        key = (c.dataset, c.model, c.sensitivity, not c.is_baseline, c.mechanism, c.mapping,
               c.suite_version)
        row = rows.setdefault(key, Row(c.dataset, c.model, c.sensitivity, c.mechanism,
                                       c.mapping, c.suite_version))
        row.by_eps[c.epsilon] = g
    return [rows[k] for k in sorted(rows)]


__all__ = ["Row", "rows_by_config"]
