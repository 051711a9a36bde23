"""Comparing a cell's metrics with a recomputation: what must reproduce bit for bit.

``bench reference check --rerun`` and ``bench leaderboard --verify`` recompute cells and compare
them with the stored ones through :func:`comparable` and :func:`differences`.

Example:
    >>> differences(comparable(stored), comparable(recomputed))
    []
"""

from __future__ import annotations

import math
from typing import Any

RUNTIME_GROUPS = ("runtime",)
"""Metric groups that are wall-clock measurements (never expected to reproduce)."""



RENDERINGS = ("guarantee_text",)
"""Keys that hold only a text rendering of a record kept beside them (``guarantee_text`` is
:meth:`bench.guarantee.Guarantee.describe` of the ``guarantee`` record, which is compared):
a change in how a guarantee is written (δ as ``1e-30.1`` before, ``7.89e-31`` since) must not
make a cell computed before it look like one that no longer reproduces."""


def _is_timing(key: str) -> bool:
    return (key in RUNTIME_GROUPS or key.endswith("seconds") or key.endswith("per_second")
            or key.startswith("seconds_per_") or key == "cache_hit" or key in RENDERINGS)


def comparable(metrics: Any) -> Any:
    """``metrics`` without its run-time measurements: the ``runtime`` group and every key
    ending in ``seconds`` / ``per_second`` or starting with ``seconds_per_`` (a document-level
    mechanism's ``seconds_per_document``) and ``cache_hit``, and without the texts that only
    render a record compared beside them (:data:`RENDERINGS`). What is left is what a rerun
    must reproduce exactly."""
    if isinstance(metrics, dict):
        return {k: comparable(v) for k, v in metrics.items() if not _is_timing(str(k))}
    if isinstance(metrics, list):
        return [comparable(v) for v in metrics]
    return metrics


def differences(a: Any, b: Any, path: str = "", limit: int = 20) -> list[str]:
    """Paths where two JSON values differ (``a`` committed, ``b`` recomputed), at most
    ``limit``; floats must be equal bit for bit (``nan`` equals ``nan``)."""
    out: list[str] = []

    def walk(x: Any, y: Any, p: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y), key=str):
                if k not in x or k not in y:
                    what = "missing in the rerun" if k in x else "new in the rerun"
                    out.append(f"{p}/{k}: {what}")
                else:
                    walk(x[k], y[k], f"{p}/{k}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{p}[{i}]")
        elif isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            return
        elif x != y or type(x) is not type(y):
            out.append(f"{p or '/'}: committed {x!r}, rerun {y!r}")

    walk(a, b, path)
    return out
