"""Numbers as results files store them: JSON numbers, or the strings ``"inf"`` / ``"-inf"`` /
``"nan"`` that :func:`bench.results.store.clean` writes for non-finite floats.

A leaf module (it imports nothing of bench), so any record type can read its stored form with
it (:meth:`bench.guarantee.Guarantee.from_dict`, :class:`bench.results.record.CellRecord`).
"""

from __future__ import annotations

import math
from typing import Any


def to_float(value: Any, default: float = math.nan) -> float:
    """A float from a JSON value (``"inf"``/``"nan"`` strings included); ``default`` otherwise."""
    if isinstance(value, bool):
        return default
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return default
    return default
