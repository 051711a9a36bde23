"""Merging cells from several sources: one cell per hash, with every source's provenance.

The same hash from two sources is the same experiment (spec and suite version). When the two
copies' metrics agree -- every number equal to a relative :data:`REL_TOL`, timings aside (the
``runtime`` block, ``*_seconds`` and ``*_per_second`` differ from machine to machine) -- they
are one cell with two provenance records. When they disagree the cell is a *conflict*: it is
reported with the differing values and kept out of the ranking, because the result does not
reproduce.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bench.leaderboard.sources import Source, SourceCell

REL_TOL = 1e-6
"""Relative tolerance under which two copies of a number agree."""

_MAX_DIFFERENCES = 5
"""Differences listed per conflict (the count says how many there are)."""


@dataclass
class MergedCell:
    """One cell hash with every source that has it."""

    hash: str
    """The cell hash."""
    spec: dict[str, Any]
    """Its ``spec.json`` (the first source's)."""
    metrics: dict[str, Any]
    """Its ``metrics.json`` (the first source's)."""
    copies: list[SourceCell] = field(default_factory=list)
    """The copies, in source order."""


def _ignored(path: str) -> bool:
    """Timings: the ``runtime`` block and any ``*_seconds`` / ``*_per_second`` value."""
    parts = path.split(".")
    return "runtime" in parts or parts[-1].endswith(("_seconds", "_per_second"))


def _flatten(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out |= _flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(obj, list):
        out = {}
        for i, v in enumerate(obj):
            out |= _flatten(v, f"{prefix}[{i}]")
        return out
    return {prefix: obj}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return True
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
    return a == b


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """``path: value_a vs value_b`` for every value that differs (run times ignored)."""
    fa = {k: v for k, v in _flatten(a).items() if not _ignored(k)}
    fb = {k: v for k, v in _flatten(b).items() if not _ignored(k)}
    out = []
    for k in sorted(set(fa) | set(fb)):
        va, vb = fa.get(k, "<missing>"), fb.get(k, "<missing>")
        if not _same(va, vb):
            out.append(f"{k}: {va!r} vs {vb!r}")
    return out


def merge(sources: list[Source]) -> tuple[list[MergedCell], list[dict[str, Any]]]:
    """(cells that agree across sources, conflicts as ``leaderboard.json`` records)."""
    by_hash: dict[str, MergedCell] = {}
    clashes: dict[str, list[str]] = {}
    for src in sources:
        for cell in src.cells:
            m = by_hash.get(cell.hash)
            if m is None:
                by_hash[cell.hash] = MergedCell(cell.hash, cell.spec, cell.metrics, [cell])
                continue
            diff = differences({"spec": m.spec, "metrics": m.metrics},
                               {"spec": cell.spec, "metrics": cell.metrics})
            m.copies.append(cell)
            if diff:
                first = m.copies[0].source
                clashes.setdefault(cell.hash, []).extend(
                    f"{d} ({first} vs {cell.source})" for d in diff)
    conflicts = []
    for h, diffs in sorted(clashes.items()):
        m = by_hash.pop(h)
        shown = diffs[:_MAX_DIFFERENCES]
        if len(diffs) > len(shown):
            shown.append(f"... and {len(diffs) - len(shown)} more")
        conflicts.append({"hash": h, "name": str(m.spec.get("name", "")),
                          "sources": [c.source for c in m.copies], "differences": shown})
    return sorted(by_hash.values(), key=lambda m: m.hash), conflicts
