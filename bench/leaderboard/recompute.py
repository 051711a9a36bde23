"""Verification by recomputation: ``bench leaderboard SOURCE... --verify N``.

A manifest is a checksum, not a proof: anyone can edit a cell's metrics and recompute it. What
a forger cannot do is make the suite compute their numbers. In the pinned numeric environment
a cell gives the same bits on any x86-64 CPU (:mod:`bench.numeric`), so recomputing a cell
and comparing it with a submitted copy, exactly, tells an honest copy from a forged one.

For every entry, ``N`` of its cells are chosen at random (a generator seeded with
``--verify-seed`` -- by default a fresh seed from the operating system's randomness -- and the
entry's identity; the seed is recorded, so the choice is repeatable afterwards, and a
submitter cannot know in advance which cells will be checked) and recomputed in a temporary
folder. A privatized cell's baseline -- the cell of its exact hash, never a look-alike -- is
recomputed and checked first, and counts among the entry's checks: a forged baseline moves
every score resting on it, so it is verified like the cells themselves. Each copy of a
recomputed cell is then compared with the result, every metric bit for bit (run times
aside). A cell whose copies record one released pin is recomputed under that pin
(:func:`bench.numeric.as_pin`: copies of pin v3 stay verifiable under pin v4):

* equal: the copy is confirmed.
* different, and the copy was computed on the platform of the recomputation: the copy is
  *refuted* -- it is not what the suite computes. Its source is refuted as a whole: every
  entry that rests on a cell only refuted sources hold is taken out of the ranking
  (``rank_flag`` ``"refuted"``), with the differing values listed.
* different, on another platform (a GPU, other library versions, not recorded): nothing can be
  concluded; the cell counts as not checked.

An entry is *verified* when every chosen cell was checked and every copy of it confirmed,
*refuted* when a copy was refuted, *unverified* otherwise (with the reason: a cell naming a
dataset file, which the recomputation does not read; data that differ from the verifier's
copy of the dataset or that it cannot load; a cell written before 0.4.0; a failed
recomputation; another platform; this process not pinned).

Example:
    >>> rc = Recomputer(merged_cells, Path("/tmp/work"))
    >>> rc.check("83f4e20989661f38").status
    'bit-exact'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.analysis.baseline import BaselineIndex, expected_baseline_hash, is_baseline
from bench.leaderboard.merge import MergedCell, platform_of
from bench.verify import recompute_refusal

VERIFIED, REFUTED, UNVERIFIED = "verified", "refuted", "unverified"
"""An entry's verification status."""


@dataclass
class CellCheck:
    """The recomputation of one cell."""

    hash: str
    """The cell."""
    status: str
    """``bit-exact`` (every copy confirmed), ``differs`` (a copy refuted) or ``not checked``."""
    reason: str = ""
    """Why not checked, or what differs."""
    refuted: list[str] = field(default_factory=list)
    """Sources whose copy was refuted."""
    differences: list[str] = field(default_factory=list)
    """``source: path: committed vs recomputed`` for refuted copies (first few)."""

    def to_json(self) -> dict[str, Any]:
        """Its record in ``leaderboard.json``."""
        return {"hash": self.hash, "status": self.status, "reason": self.reason,
                "refuted_sources": self.refuted, "differences": self.differences}


class Recomputer:
    """Recomputes merged cells once each, in ``work``, and compares every copy."""

    def __init__(self, cells: dict[str, MergedCell], work: Path) -> None:
        from bench.numeric import platform

        self.cells = cells
        self.work = work
        self.platform = platform()
        self.checked: dict[str, CellCheck] = {}
        self.recomputed: set[str] = set()
        """Cells recomputed into ``work`` (their results are the suite's own)."""
        self.baselines: BaselineIndex[str] = BaselineIndex()  # the one pairing rule
        for h, m in cells.items():
            if isinstance(m.spec, dict) and is_baseline(m.spec):
                self.baselines.add(m.spec, None, h, hash=h)

    def check(self, h: str) -> CellCheck:
        """The recomputation of cell ``h`` (computed once, then remembered). A privatized
        cell's baseline -- the one of its exact hash (:func:`bench.analysis.baseline.
        expected_baseline_hash`) -- is recomputed first and checked like any cell; the
        privatized cell's deltas are then computed against the recomputed baseline (against
        the submitted one only where the baseline could not be recomputed)."""
        if h not in self.checked:
            self.checked[h] = self._check(h)
        return self.checked[h]

    def checks(self, h: str) -> list[CellCheck]:
        """The checks an entry's chosen cell ``h`` stands on: its own, and its baseline's
        (issue 48: a forged baseline moved every score resting on it while each privatized
        cell was bit-exact)."""
        out = [self.check(h)]
        m = self.cells.get(h)
        bh = None if m is None or not isinstance(m.spec, dict) or is_baseline(m.spec) \
            else self.baselines.find(m.spec)
        if bh is not None and bh != h:
            out.append(self.check(bh))
        return out

    def _why_not(self, spec: dict[str, Any]) -> str | None:
        if not self.platform.get("pinned"):
            return "this process is not in the pinned numeric environment"
        return recompute_refusal(spec)

    def _check(self, h: str) -> CellCheck:
        from bench.grid import Cell, cell_hash
        from bench.numeric import as_pin, pin_of, platform
        from bench.results.compare import comparable, differences
        from bench.results.layout import cell_dir
        from bench.results.record import read_metrics
        from bench.results.store import write_cell
        from bench.run.worker import run_cell

        m = self.cells[h]
        why = self._why_not(m.spec)
        if why:
            return CellCheck(h, "not checked", why)
        try:
            cell = Cell.from_spec(m.spec)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            return CellCheck(h, "not checked", f"its spec does not describe a cell ({e})")
        if cell_hash(cell, m.spec.get("dataset_hash")) != h:
            srcs = sorted({c.source for c in m.copies})
            return CellCheck(h, "differs", "its spec does not hash to its name", srcs,
                             ["spec: does not hash to the cell's name"])
        why = _data_differ(cell, m.spec.get("dataset_hash"))
        if why:
            return CellCheck(h, "not checked", why)
        bh = None if cell.is_baseline else self.baselines.find(m.spec)
        if not cell.is_baseline:
            if bh is None:
                return CellCheck(h, "not checked", "its baseline (the cell "
                                 f"{expected_baseline_hash(m.spec)}) is in no source")
            self.check(bh)  # recomputed first, into self.work
            if bh not in self.recomputed:  # could not be: the submitted copy, for the deltas
                b = self.cells[bh]
                write_cell(cell_dir(self.work, bh), b.spec, b.metrics, provenance={})
        pins = {pin_of(platform_of(c)) for c in m.copies} - {None}
        version = pins.pop() if len(pins) == 1 else None  # the copies' pin, else the one in force
        with as_pin(version):
            res = run_cell(cell, self.work, m.spec.get("dataset_hash"), bh, overwrite="always")
            here = platform().get("id")
        if res.status != "done":
            return CellCheck(h, "not checked", f"the recomputation {res.status}: {res.error}")
        self.recomputed.add(h)
        got = read_metrics(self.work, h)
        refuted, diffs, elsewhere = [], [], []
        for c in m.copies:
            d = differences(comparable(c.metrics), comparable(got), limit=5)
            if not d:
                continue
            if platform_of(c) == here:
                refuted.append(c.source)
                diffs += [f"{c.source}: {x}" for x in d]
            else:
                elsewhere.append(f"{c.source} on {platform_of(c)}")
        if refuted:
            return CellCheck(h, "differs", "a copy is not what the suite computes",
                             sorted(set(refuted)), diffs[:10])
        if elsewhere:
            return CellCheck(h, "not checked", "differs from copies computed on another numeric "
                             f"platform ({', '.join(elsewhere)}): nothing can be concluded")
        return CellCheck(h, "bit-exact")


def _data_differ(cell: Any, claimed: Any) -> str | None:
    """Why the cell cannot be recomputed here because of its data: this machine cannot load
    them, or holds other data under the dataset's name (a loader reading the maintainer's own
    copy, e.g. through an environment variable). Recomputing on other data proves nothing
    either way: such a cell is not checked, never refuted (issue 48, trial 8)."""
    from bench.datasets import DatasetError
    from bench.run import inputs

    try:
        here = inputs.dataset(cell).content_hash
    except (DatasetError, OSError, ValueError) as e:
        return f"its dataset cannot be loaded here ({str(e).splitlines()[0][:200]})"
    if here != claimed:
        return (f"its data differ from this machine's copy of dataset {cell.dataset} "
                f"(dataset_hash {str(claimed)[:16]} there, {here[:16]} here): a "
                "recomputation here would prove nothing")
    return None


def entry_verification(checks: list[CellCheck]) -> dict[str, Any]:
    """An entry's ``verification`` record from the checks of its chosen cells."""
    if any(c.status == "differs" for c in checks):
        status = REFUTED
    elif checks and all(c.status == "bit-exact" for c in checks):
        status = VERIFIED
    else:
        status = UNVERIFIED
    return {"status": status, "cells": [c.to_json() for c in checks]}
