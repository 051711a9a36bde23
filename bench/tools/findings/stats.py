"""Cells and statistics for the findings: committed reference cells, seeds paired, t intervals."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from bench.analysis.results import fmt_eps
from bench.reference import REFERENCE_ROOT, committed_cells
from bench.results.layout import cells_dir
from bench.results.sections import CellMetrics, upgrade

M = TypeVar("M")
"""What a getter reads per seed (a cell's :class:`CellMetrics`)."""

# --------------------------------------------------------------------------------------------
# Cells and statistics
# --------------------------------------------------------------------------------------------

def load(grid: str, root: str | Path = REFERENCE_ROOT) -> list[dict]:
    """The committed cells of one reference grid as ``{"spec", "metrics"}`` (empty if none),
    the metrics read once as a :class:`~bench.results.sections.CellMetrics`."""
    folder = Path(root) / grid
    if not cells_dir(folder).is_dir():
        return []
    return [{"spec": c["spec"], "metrics": upgrade(c["metrics"])}
            for c in committed_cells(folder).values()]


def cell_metrics(cell: Mapping[str, Any]) -> CellMetrics:
    """A cell's typed metrics: as :func:`load` read them, or read from a ``metrics.json`` dict
    (cells built in memory)."""
    m = cell["metrics"]
    return m if isinstance(m, CellMetrics) else upgrade(m)


def _eps(spec: dict) -> float:
    e = spec["epsilon"]
    return math.inf if e == "inf" else float(e)


def key(spec: dict) -> tuple:
    """Configuration of a cell without its seed: (mechanism, params, sensitivity, mapping, ε)."""
    params = json.dumps(spec["mechanism"]["params"], sort_keys=True)
    return (spec["mechanism"]["name"], params, spec["sensitivity"]["name"],
            spec["mapping"]["name"], _eps(spec))


def by_seed(cells: Iterable[dict], **match: Any) -> dict[tuple, dict[int, CellMetrics]]:
    """``key -> seed -> metrics`` of the cells whose spec matches ``mechanism`` /
    ``sensitivity`` / ``mapping`` / ``epsilon`` (names; ε as a float) where given."""
    out: dict[tuple, dict[int, CellMetrics]] = defaultdict(dict)
    for c in cells:
        s = c["spec"]
        k = key(s)
        got = {"mechanism": k[0], "sensitivity": k[2], "mapping": k[3], "epsilon": k[4]}
        if all(got[f] == v for f, v in match.items()):
            out[k][int(s["seed"])] = cell_metrics(c)
    return out


def first_seeds(cells: Iterable[dict], **match: Any) -> dict[int, CellMetrics]:
    """``seed -> metrics`` of the first configuration :func:`by_seed` finds for ``match``
    (empty when none matches)."""
    return next(iter(by_seed(cells, **match).values()), {})


def t_interval(values: list[float]) -> tuple[float, float, float, int]:
    """Mean, 95% Student-t interval over seeds (:func:`bench.analysis.stats.t_interval`) and
    n; for one value the interval is the value itself (no spread to estimate)."""
    from bench.analysis.stats import t_interval as t95

    v = [x for x in values if x is not None and math.isfinite(x)]
    if not v:
        return math.nan, math.nan, math.nan, 0
    if len(v) == 1:
        return v[0], v[0], v[0], 1
    mean, lo, hi = t95(v)
    return mean, lo, hi, len(v)


def fmt(stat: tuple[float, float, float, int], digits: int = 3) -> str:
    """``mean ± half-width`` (``mean`` alone for one seed; ``–`` for none)."""
    mean, lo, hi, n = stat
    if n == 0:
        return "–"
    if n == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {(hi - lo) / 2:.{digits}f}"


def fmt_delta(stat: tuple[float, float, float, int]) -> str:
    """A paired difference with its interval and ``(ns)`` where the interval contains 0; for a
    single pair, the difference alone and ``(one seed)``: there is no interval to test with."""
    mean, lo, hi, n = stat
    if n == 0:
        return "–"
    if n == 1:
        return f"{mean:+.3f} (one seed)"
    sig = "" if lo > 0 or hi < 0 else " (ns)"
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]{sig}"


def summary(seeds: Mapping[int, M], get: Callable[[M], Any], digits: int = 3) -> str:
    """``get(metrics)`` over the seeds as :func:`fmt` writes it (mean ± 95% t half-width)."""
    return fmt(t_interval(values(seeds, get)), digits)


def values(seeds: Mapping[int, M], get: Callable[[M], Any]) -> list[float]:
    """``get(metrics)`` per seed, in seed order (missing values dropped)."""
    out = []
    for s in sorted(seeds):
        try:
            v = get(seeds[s])
        except (KeyError, TypeError, IndexError):
            v = None
        if v is not None:
            out.append(float(v))
    return out


def paired(a: Mapping[int, M], b: Mapping[int, M], get: Callable[[M], Any]
           ) -> tuple[float, float, float, int]:
    """t interval of ``get(a) − get(b)`` over the seeds both have."""
    diffs = []
    for s in sorted(set(a) & set(b)):
        try:
            x, y = get(a[s]), get(b[s])
        except (KeyError, TypeError, IndexError):
            continue
        if x is not None and y is not None:
            diffs.append(float(x) - float(y))
    return t_interval(diffs)


def utility(m: CellMetrics) -> float | None:
    """Utility macro-F1."""
    return m.utility.macro_f1


def at_chance(m: CellMetrics) -> bool:
    """Whether the utility model is no better than chance (the cell's own flag)."""
    return bool(m.utility.chance_level)


def privacy_task(m: CellMetrics) -> str | None:
    """The cell's (first) private attribute, if any."""
    return next(iter(m.attributes), None)


def adversary_f1(m: CellMetrics, name: str | None = None) -> float | None:
    """Macro-F1 of the strongest adversary (or of ``name``) on the private attribute (None
    when the cell has no private attribute or ``name`` did not attack it)."""
    t = privacy_task(m)
    if t is None:
        return None
    p = m.attribute(t)
    return p.adversary_macro_f1 if name is None else p.result(name).adversary_macro_f1


def chance_entities(base: dict[int, CellMetrics]) -> float:
    """Mean chance threshold of the private attribute over the baseline's seeds."""
    return float(np.mean([m.attribute(privacy_task(m)).chance_threshold
                          for m in base.values()]))


def tradeoff(m: CellMetrics) -> float | None:
    """Riecker 2023's trade-off Δutility + Δprivacy vs the baseline (None where privacy is not
    a valid measurement)."""
    t = privacy_task(m)
    return m.vs_baseline.attribute(t).tradeoff if t is not None else None


def measure_value(name: str, *path: str) -> Callable[[CellMetrics], Any]:
    """A getter of ``path`` in measure ``name``'s own record (KeyError where it is absent)."""
    def get(metrics: CellMetrics) -> Any:
        v: Any = metrics.measure(name)
        for p in path:
            v = v[p]
        return v
    return get


def config_label(k: tuple) -> str:
    """A configuration :func:`key` as the findings name it: ``mvl + nearest, ε = 10``."""
    mech, _, sens, mapping, eps = k
    parts = [mech] + ([sens] if sens != "none" else []) + ([mapping] if mapping != "none" else [])
    return f"{' + '.join(parts)}, ε = {fmt_eps(eps)}"
