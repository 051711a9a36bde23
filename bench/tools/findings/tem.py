"""The TEM findings (Carvalho et al. 2021) on ``tem``."""

from __future__ import annotations

from bench.analysis.results import fmt_eps
from bench.results.sections import CellMetrics
from bench.tools.findings.stats import (
    by_seed,
    fmt_delta,
    paired,
    summary,
    utility,
)

# --------------------------------------------------------------------------------------------
# TEM (Carvalho et al. 2021) on tem
# --------------------------------------------------------------------------------------------

def mia_auc(m: CellMetrics) -> float | None:
    """The stronger membership-inference attack's AUC."""
    return m.mia.mia_auc


def tem_section(cells: list[dict]) -> list[str]:
    """TEM vs Madlib (mvl + nearest) at equal ε: utility, MIA AUC and N_w (Carvalho et al. 2021,
    Fig. 1 and Sec. 5.3)."""
    if not cells:
        return ["*tem: no committed cells.*", ""]
    mvl = by_seed(cells, mechanism="mvl")
    tem = by_seed(cells, mechanism="tem")
    base = next(iter(by_seed(cells, mechanism="none").values()))
    eps = sorted({k[4] for k in mvl} & {k[4] for k in tem})
    lines = [f"Baseline utility {summary(base, utility)}, MIA AUC "
             f"{summary(base, mia_auc)} (rt, bow, memorising target, "
             f"{len(base)} seeds).", ""]
    lines.append("| ε | utility mvl | utility tem | Δ (tem − mvl) | MIA AUC mvl | MIA AUC tem | "
                 "Δ AUC | N_w mvl | N_w tem |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for e in eps:
        a = next(s for k, s in tem.items() if k[4] == e)
        b = next(s for k, s in mvl.items() if k[4] == e)
        nw = lambda m: m.n_w  # noqa: E731
        lines.append(f"| {fmt_eps(e)} | {summary(b, utility)} | "
                     f"{summary(a, utility)} | "
                     f"{fmt_delta(paired(a, b, utility))} | "
                     f"{summary(b, mia_auc)} | "
                     f"{summary(a, mia_auc)} | "
                     f"{fmt_delta(paired(a, b, mia_auc))} | "
                     f"{summary(b, nw)} | {summary(a, nw)} |")
    lines.append("")
    return lines
