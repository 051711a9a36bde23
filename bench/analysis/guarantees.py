"""Guarantees and privatizer descriptions as the cells recorded them, in words.

Read by the guarantee table of ``bench report`` and by the leaderboard's entries.

Example:
    >>> describe_guarantee({"kind": "pure", "epsilon": 1.0, ...})
    'ε-DP'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bench.analysis.results import DASH, CellRecord, to_float
from bench.guarantee import Guarantee


def privatizer_of(rec: CellRecord) -> tuple[dict[str, Any] | None, str]:
    """The privatizer description a cell recorded (``metrics.privatization.privatizer``).

    Only the cell itself is read (never the runner's corpus cache, which is not part of a
    committed reference), so a report is a function of the cells alone.

    Returns:
        ``(privatizer dict or None, "metrics" | "")``.
    """
    p = rec.sections.privatization.privatizer
    if isinstance(p, Mapping):
        return dict(p), "metrics"
    return None, ""


def g4(v: Any) -> str:
    """A parameter value in four significant digits (``∞``; booleans and text as they are)."""
    f = to_float(v)
    if isinstance(v, bool) or (math.isnan(f) and not isinstance(v, (int, float))):
        return str(v).lower() if isinstance(v, bool) else str(v)
    if math.isinf(f):
        return "∞"
    return f"{f:.4g}"


def describe_guarantee(g: Mapping[str, Any] | None) -> str:
    """A cell's guarantee record with a symbolic ε (:meth:`bench.guarantee.Guarantee.describe`
    with ``symbolic``): ``ε-DP``, ``(2.535·ε, δ=1e-06)-DP``, ``ε·d metric DP``; a dash when the
    cell has none or it is not a guarantee record."""
    if not g:
        return DASH
    try:
        return Guarantee.from_dict(g).describe(symbolic=True)
    except ValueError:
        return DASH
