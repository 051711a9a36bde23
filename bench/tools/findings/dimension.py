"""The findings whose caveat was "50-d GloVe only", side by side at 50 and 100 dimensions
(issue 25 item 4): each 100-d grid repeats a 50-d reference grid with ``settings.embedding:
glove-6b-100d`` and nothing else changed (``experiments/*_100d.yaml``).

Example:
    >>> dimension_rows({}, {})
    []
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from bench.analysis.results import fmt_eps
from bench.results.sections import CellMetrics
from bench.tools.findings.stats import (
    adversary_f1,
    at_chance,
    by_seed,
    first_seeds,
    fmt_delta,
    paired,
    summary,
    utility,
)

PAIRS = (("thesis_reference", "thesis_100d"), ("tem", "tem_100d"),
         ("trlaplace", "trlaplace_100d"), ("trlaplace_rewrite", "trlaplace_rewrite_100d"))
"""(50-d grid, its 100-d repetition)."""


def _lstm(cells: list[dict]) -> list[dict]:
    return [c for c in cells if c["spec"]["model"]["name"] == "lstm"]


def _chance_count(cells: list[dict], eps: float, approaches: frozenset[str]) -> str:
    """How many of the sensitivity ``approaches``' mvl + nearest cells are at chance in every
    seed (the approaches both grids of a pair ran, so that the counts compare)."""
    g = {k: s for k, s in by_seed(_lstm(cells), mechanism="mvl", mapping="nearest",
                                  epsilon=eps).items() if k[2] in approaches}
    if not g:
        return "–"
    n = sum(all(at_chance(m) for m in s.values()) for s in g.values())
    return f"{n} of {len(g)}"


def _both(seeds: dict) -> str:
    """Utility / the strongest adversary's macro-F1 over the seeds."""
    return f"{summary(seeds, utility)} / {summary(seeds, adversary_f1)}"


def _mvl_utility(cells: list[dict], sens: str, eps: float) -> str:
    seeds = first_seeds(_lstm(cells), mechanism="mvl", mapping="nearest", sensitivity=sens,
                        epsilon=eps)
    return _both(seeds) if seeds else "–"


def _tg_utility(cells: list[dict], sens: str, eps: float) -> str:
    """Truncated Gumbel's utility and adversary, or why there are none (Alg. 1's b undefined
    at this ε)."""
    seeds = first_seeds(_lstm(cells), mechanism="truncated_gumbel", sensitivity=sens,
                        epsilon=eps)
    return _both(seeds) if seeds else "not defined"


def _tem_gap(cells: list[dict], eps: float) -> str:
    return fmt_delta(paired(first_seeds(cells, mechanism="tem", epsilon=eps),
                            first_seeds(cells, mechanism="mvl", epsilon=eps), utility))


def _n_w(cells: list[dict], mech: str, eps: float, get: Callable[[CellMetrics], Any]) -> str:
    return summary(first_seeds(cells, mechanism=mech, epsilon=eps), get)


def _rows(grid: str, cells: list[dict]) -> list[tuple[str, Callable[[list[dict]], str]]]:
    """(label, statistic of a grid's cells) for the claims a pair of grids tests."""
    def eps_of(mech: str) -> list[float]:
        return sorted({k[4] for k in by_seed(cells, mechanism=mech)})
    if grid == "thesis_reference":
        mvl = sorted({k[2:5:2] for k in by_seed(_lstm(cells), mechanism="mvl",
                                                 mapping="nearest")})
        approaches = frozenset(a for a, _ in mvl)
        tg = sorted({k[2:5:2] for k in by_seed(_lstm(cells), mechanism="truncated_gumbel")},
                    key=lambda k: (k[1], k[0]))
        return ([(f"thesis: mvl + nearest at chance in every seed, ε = {fmt_eps(e)} "
                  f"(of the approaches {', '.join(sorted(approaches))})",
                  lambda c, e=e: _chance_count(c, e, approaches)) for e in eps_of("mvl")]
                + [(f"thesis: utility / strongest adversary, mvl + nearest, {a}, "
                    f"ε = {fmt_eps(e)}",
                    lambda c, a=a, e=e: _mvl_utility(c, a, e))
                   for a, e in sorted(mvl, key=lambda k: (k[1], k[0]))]
                + [(f"thesis: utility / strongest adversary, truncated Gumbel, {a}, "
                    f"ε = {fmt_eps(e)} (Alg. 1)",
                    lambda c, a=a, e=e: _tg_utility(c, a, e)) for a, e in tg])
    if grid == "tem":
        return [(f"tem − mvl utility, ε = {fmt_eps(e)} (TEM paper: tem ahead at ε = 2)",
                 lambda c, e=e: _tem_gap(c, e)) for e in eps_of("tem")]
    if grid == "trlaplace":
        return [(f"trlaplace: N_w of {m} + nearest, ε = {fmt_eps(e)}",
                 lambda c, m=m, e=e: _n_w(c, m, e, lambda x: x.n_w))
                for m in ("trlaplace", "gaussian", "laplace") for e in (1.0, 20.0)]
    if grid == "trlaplace_rewrite":
        return [(f"trlaplace_rewrite: rewritten N_w of trlaplace, ε = {fmt_eps(e)} (paper: 0.705 "
                 "at ε = 0.05)" if e == 0.05 else
                 f"trlaplace_rewrite: rewritten N_w of trlaplace, ε = {fmt_eps(e)}",
                 lambda c, e=e: _n_w(c, "trlaplace", e, lambda x: x.rewrite.n_w))
                for e in (0.05, 1.0, 20.0)]
    return []


def datasets(cells: list[dict]) -> set[str]:
    """The datasets (name and configuration, the content hash aside) the cells ran on."""
    return {json.dumps([c["spec"]["dataset"].get("name"), c["spec"]["dataset"].get("config")],
                       sort_keys=True) for c in cells}


def other_data(grids50: Mapping[str, list[dict]], grids100: Mapping[str, list[dict]]
               ) -> list[str]:
    """The 100-d grids whose 50-d grid has cells on other data (not comparable side by side)."""
    return [g100 for g50, g100 in PAIRS if grids50.get(g50) and grids100.get(g100)
            and datasets(grids50[g50]) != datasets(grids100[g100])]


def dimension_rows(grids50: Mapping[str, list[dict]], grids100: Mapping[str, list[dict]]
                   ) -> list[str]:
    """The side-by-side table's rows for every pair whose 100-d grid has cells; a 50-d grid on
    other data than its 100-d repetition gives `–` (:func:`other_data`)."""
    rows = []
    skip = set(other_data(grids50, grids100))
    for g50, g100 in PAIRS:
        a, b = grids50.get(g50, []), grids100.get(g100, [])
        if not b:
            continue
        if g100 in skip:
            a = []
        rows += [f"| {label} | {stat(a) if a else '–'} | {stat(b)} |"
                 for label, stat in _rows(g50, b)]
    return rows


def dimension_section(grids50: Mapping[str, list[dict]], grids100: Mapping[str, list[dict]],
                      sections: Mapping[str, list[str]]) -> list[str]:
    """The 50 d vs 100 d table, then each 100-d grid's own section (``sections``: its lines,
    rendered by the 50-d grid's section function)."""
    rows = dimension_rows(grids50, grids100)
    if not rows:
        return []
    out = ["### At 100 dimensions (`*_100d` grids, GloVe 6B 100d)", "",
           "The same grids with 100-d GloVe instead of 50-d (everything else equal); mean ± 95% t "
           "half-width over seeds, differences paired per seed, (ns) where the interval "
           "contains 0.", ""]
    for g in other_data(grids50, grids100):
        out += [f"`{g}` ran on other data than its 50-d grid (which moved to the data of issue "
                "47 before its 100-d repetition did): its 50-d column is left empty, `–`.", ""]
    out += ["| claim | 50 d | 100 d |", "|---|---:|---:|"] + rows + [""]
    for _, g100 in PAIRS:
        if grids100.get(g100):
            out += [f"#### `{g100}`", ""] + list(sections.get(g100, []))
    return out
