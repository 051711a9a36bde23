"""The analysis layer: what every reader of results computes the same way, defined once.

Reading a results folder into cells and configurations (:mod:`bench.analysis.results`),
statistics over seeds and their intervals (:mod:`bench.analysis.stats`), which cells are
baselines and which baseline a cell is compared with (:mod:`bench.analysis.baseline`), which
adversary privacy is read from and whether it is a valid measurement
(:mod:`bench.analysis.privacy`), guarantees described in words
(:mod:`bench.analysis.guarantees`), the measures' point values
(:mod:`bench.analysis.measures`) and ``bench audit`` records (:mod:`bench.analysis.audits`)
-- used by the runner, ``bench report``, ``bench leaderboard``, ``bench reference``, the
findings and ``bench verify``. ``bench.report`` and ``bench.leaderboard`` render what it
computes and import each other only through their packages' public names
(``tests/test_architecture.py``).
"""

from bench.analysis.audits import AuditRecord, AuditSet, load_audits
from bench.analysis.baseline import BaselineIndex, baseline_key, is_baseline
from bench.analysis.privacy import select_privacy
from bench.analysis.results import (
    CellRecord,
    Config,
    FailedCell,
    Group,
    ReportError,
    ResultSet,
    Stat,
    group_cells,
    load_results,
)

__all__ = [
    "AuditRecord",
    "AuditSet",
    "BaselineIndex",
    "CellRecord",
    "Config",
    "FailedCell",
    "Group",
    "ReportError",
    "ResultSet",
    "Stat",
    "baseline_key",
    "group_cells",
    "is_baseline",
    "load_audits",
    "load_results",
    "select_privacy",
]
