"""Merging cells from several sources: one cell per hash, with every source's provenance.

The same hash from two sources is the same experiment (spec, dataset content, every
component's version; not the suite version, so releases that change none of these merge).
When the two copies' metrics agree -- every number equal to a relative :data:`REL_TOL`,
timings aside (the ``runtime`` block, ``*_seconds`` and ``*_per_second`` differ from machine to
machine) -- they are one cell with two provenance records. When they disagree, the numeric
platform each copy was computed on (``provenance.numeric.id``, :mod:`bench.numeric`) decides:

* the same platform: a *conflict* -- the result does not reproduce where it must (a bug or a
  forgery). It is reported with both sources and the differing values; the cell stays on the
  board with the first source's copy, marked, and every entry resting on it (as a point or as
  its baseline) is listed unranked with the conflict named (never silently dropped).
* different platforms (a GPU run and the pinned CPU, two library versions, or a copy whose
  platform was never recorded, as for every cell before 0.4.0): *platform variants*. The cell
  stays in the ranking with one copy -- a trusted source's copy when there is one, else the
  pinned-CPU copy (a pinned platform id the suite knows, :func:`bench.numeric.known_pinned`;
  any other ``cpu-pinned-…`` id is a claim, not a pin), else the first source's -- and the
  others are listed with their platforms and the spread of their values. A variant never
  removes a cell, so never an entry's baseline.

A copy without a manifest (*unsealed*: nothing says its files are the ones computed) is used
only when no sealed copy exists, and then its cell is listed, never ranked -- unless it comes
from a trusted source, whose owner vouches for it (``bench report`` trusts the one folder it
reports on).

A source can be *trusted* (``bench leaderboard --trusted SOURCE``: the maintainer's own
results). In a conflict a trusted copy stands: the cell stays in the ranking with it, and the
conflict is still listed (``resolved_by``), so nobody can remove a trusted result by handing
in a differing copy of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bench.leaderboard.sources import Source, SourceCell
from bench.numeric import known_pinned

REL_TOL = 1e-6
"""Relative tolerance under which two copies of a number agree."""

_MAX_DIFFERENCES = 5
"""Differences listed per conflict (the count says how many there are)."""

UNRECORDED = "unrecorded"
"""Platform of a copy whose provenance has no numeric platform (cells before 0.4.0)."""


def platform_of(cell: SourceCell) -> str:
    """The numeric platform id a copy records, or :data:`UNRECORDED`."""
    rec = (cell.provenance or {}).get("numeric")
    pid = rec.get("id") if isinstance(rec, dict) else None
    return str(pid) if pid else UNRECORDED


@dataclass
class MergedCell:
    """One cell hash with every source that has it."""

    hash: str
    """The cell hash."""
    spec: dict[str, Any]
    """Its spec (the first source's)."""
    metrics: dict[str, Any]
    """Its metrics (the first source's)."""
    copies: list[SourceCell] = field(default_factory=list)
    """The copies, in source order (the one whose metrics are used first)."""
    platform: str = UNRECORDED
    """Numeric platform id of the copy whose metrics are used."""
    unranked: str = ""
    """Why no entry resting on the cell is ranked: :data:`CONFLICT`, :data:`UNSEALED`, or
    ``""`` (it may be ranked)."""


CONFLICT = "conflict"
""":attr:`MergedCell.unranked` of a cell whose copies conflict (no trusted copy stands)."""
UNSEALED = "unsealed"
""":attr:`MergedCell.unranked` of a cell no source holds with a manifest."""


def _ignored(path: str) -> bool:
    """Timings: the ``runtime`` block and any ``seconds`` / ``*_seconds`` / ``*_per_second``
    value."""
    parts = path.split(".")
    return ("runtime" in parts or parts[-1] == "seconds"
            or parts[-1].endswith(("_seconds", "_per_second")))


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


def _shown(diffs: list[str]) -> list[str]:
    shown = diffs[:_MAX_DIFFERENCES]
    if len(diffs) > len(shown):
        shown.append(f"... and {len(diffs) - len(shown)} more")
    return shown


def _diff(a: SourceCell, b: SourceCell) -> list[str]:
    return differences({"spec": a.spec, "metrics": a.metrics},
                       {"spec": b.spec, "metrics": b.metrics})


def _resolve(h: str, copies: list[SourceCell], trusted: frozenset[str] = frozenset()
             ) -> tuple[MergedCell, dict | None, dict | None]:
    """One hash's copies -> (the merged cell, a conflict record, a variants record)."""
    by_platform: dict[str, list[SourceCell]] = {}
    for c in copies:
        by_platform.setdefault(platform_of(c), []).append(c)
    clashes = []
    for pid, group in by_platform.items():
        if pid == UNRECORDED:  # unknown platforms cannot be said to be the same one
            continue
        for other in group[1:]:
            clashes += [f"{d} ({group[0].source} vs {other.source}, both on {pid})"
                        for d in _diff(group[0], other)]
    name = str(copies[0].spec.get("name", ""))
    if clashes:
        conflict = {"hash": h, "name": name, "sources": [c.source for c in copies],
                    "differences": _shown(clashes), "resolved_by": None}
        sure = [c for c in copies if c.source in trusted]
        if not sure:  # listed with the first copy, never ranked
            first = copies[0]
            return (MergedCell(h, first.spec, first.metrics, list(copies), platform_of(first),
                               CONFLICT), conflict, None)
        conflict["resolved_by"] = sure[0].source  # the trusted copy stands
        ordered = [sure[0]] + [c for c in copies if c is not sure[0]]
        return (MergedCell(h, sure[0].spec, sure[0].metrics, ordered, platform_of(sure[0])),
                conflict, None)
    pool = [c for c in copies if c.sealed] or copies
    sure = [c for c in pool if c.source in trusted]  # as in a conflict: the trusted copy
    pinned = [c for c in pool if known_pinned(platform_of(c))]
    chosen = (sure or pinned or pool)[0]
    ordered = [chosen] + [c for c in copies if c is not chosen]
    merged = MergedCell(h, chosen.spec, chosen.metrics, ordered, platform_of(chosen),
                        "" if chosen.sealed or chosen.source in trusted else UNSEALED)
    spread = []
    for other in ordered[1:]:
        diff = _diff(chosen, other)
        if diff:
            spread.append({"source": other.source, "platform": platform_of(other),
                           "differences": _shown(diff)})
    variants = None
    if spread:
        variants = {"hash": h, "name": name, "ranked": {"source": chosen.source,
                                                        "platform": platform_of(chosen)},
                    "others": spread}
    return merged, None, variants


def merge(sources: list[Source], trusted: frozenset[str] = frozenset()
          ) -> tuple[list[MergedCell], list[dict[str, Any]], list[dict[str, Any]]]:
    """(merged cells, conflicts, platform variants), the last two as ``leaderboard.json``
    records (see the module docstring); ``trusted``: ids of trusted sources."""
    copies: dict[str, list[SourceCell]] = {}
    for src in sources:
        for cell in src.cells:
            copies.setdefault(cell.hash, []).append(cell)
    cells, conflicts, variants = [], [], []
    for h in sorted(copies):
        merged, conflict, variant = _resolve(h, copies[h], trusted)
        cells.append(merged)
        if conflict is not None:
            conflicts.append(conflict)
        if variant is not None:
            variants.append(variant)
    return cells, conflicts, variants
