"""How much of a leaderboard one source may take (issue 48, trial 10: 16 MB of cells made
420 MB of board, each board copying the cells' claims).

:func:`oversized` names the sources whose entries would take more bytes of ``leaderboard.json``
than their own cells hold (and more than :data:`OUTPUT_FLOOR`); :func:`bench.leaderboard.build`
leaves each out whole, with the line, and builds the board without it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.leaderboard.sources import Source

OUTPUT_FLOOR = 4 * 2**20
"""Bytes of ``leaderboard.json`` any source may take, however small its own cells."""


def _size(obj: Any) -> int:
    return len(json.dumps(obj, default=str))


def oversized(sources: Sequence[Source], entries: Sequence[Sequence[dict[str, Any]]]
              ) -> dict[str, str]:
    """The sources whose entries (``entries``: each board's entry documents) would take more of
    ``leaderboard.json`` than their own cells hold (and :data:`OUTPUT_FLOOR`), each with the
    line saying so.

    An entry counts, whole, for every source holding a copy of one of its cells. Honest
    sources take a few percent of their size (the committed references: 6-7%)."""
    out: Counter[str] = Counter()
    for board in entries:
        for e in board:
            size = _size(e)
            for sid in {p["source"] for pt in e["points"] for c in pt["cells"]
                        for p in c["provenance"]}:
                out[sid] += size
    over = {}
    for s in sources:
        held = sum(_size(c.spec) + _size(c.metrics) + _size(c.provenance) for c in s.cells)
        if out[s.id] > max(OUTPUT_FLOOR, held):
            over[s.id] = (f"{s.id}: its entries would take {out[s.id]:,} bytes of the board, "
                          f"more than the {held:,} its {len(s.cells)} cells hold (and the "
                          f"{OUTPUT_FLOOR:,} any source may take); all its cells left out")
    return over
