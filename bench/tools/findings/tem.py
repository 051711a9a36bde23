"""The TEM findings (Carvalho et al. 2021) on ``tem``."""

from __future__ import annotations

from bench.analysis.results import fmt_eps
from bench.results.sections import CellMetrics
from bench.tools.findings.stats import (
    by_seed,
    cell_metrics,
    first_seeds,
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


def ref_utility(m: CellMetrics) -> float | None:
    """The reference classifier's macro-F1 (tf-idf + logistic regression trained and tested on
    the privatized text; ``reference_utility``)."""
    return m.measure("reference_utility").get("macro_f1")


def protocol(cells: list[dict]) -> str:
    """What the utility model was tested on, as the cells record it."""
    kinds = {cell_metrics(c).utility.test_text or "privatized" for c in cells
             if c["spec"]["mechanism"]["name"] != "none"}
    if kinds == {"original"}:
        return ("the utility model is trained on the privatized training text and tested on "
                "the *original* test snippets (the paper's protocol, Sec. 5.3: "
                "`utility_test: original`)")
    if kinds == {"privatized"}:
        return "the utility model is trained and tested on privatized text"
    return "the cells mix protocols (" + ", ".join(sorted(kinds)) + ")"


def tem_section(cells: list[dict]) -> list[str]:
    """TEM vs Madlib (mvl + nearest) at equal ε: utility, the reference classifier, MIA AUC and
    N_w (Carvalho et al. 2021, Fig. 1 and Sec. 5.3), with the known answers."""
    if not cells:
        return ["*tem: no committed cells.*", ""]
    mvl = by_seed(cells, mechanism="mvl")
    tem = by_seed(cells, mechanism="tem")
    base = next(iter(by_seed(cells, mechanism="none").values()))
    eps = sorted({k[4] for k in mvl} & {k[4] for k in tem})
    has_ref = any(ref_utility(m) is not None for m in base.values())
    lines = [f"Baseline utility {summary(base, utility)}, MIA AUC "
             f"{summary(base, mia_auc)} (rt, bow, memorising target, "
             f"{len(base)} seeds); {protocol(cells)}."]
    if has_ref:
        lines[-1] += (f" The reference classifier (tf-idf + logistic regression, trained and "
                      f"tested on privatized text) scores {summary(base, ref_utility)} on the "
                      f"original text.")
    known = [(name, first_seeds(cells, mechanism=name)) for name in ("identity",
                                                                     "no_information")]
    known = [(n, s) for n, s in known if s]
    if known:
        lines.append("Known answers: " + "; ".join(
            f"`{n}` utility {summary(s, utility)}"
            + (f", reference {summary(s, ref_utility)}" if has_ref else "")
            + f", MIA AUC {summary(s, mia_auc)}" for n, s in known) + ".")
    lines.append("")
    ref_head = " ref. mvl | ref. tem | Δ ref. |" if has_ref else ""
    lines.append("| ε | utility mvl | utility tem | Δ (tem − mvl) |" + ref_head
                 + " MIA AUC mvl | MIA AUC tem | Δ AUC | N_w mvl | N_w tem |")
    lines.append("|---:" * (9 + 3 * has_ref) + "|")
    for e in eps:
        a = next(s for k, s in tem.items() if k[4] == e)
        b = next(s for k, s in mvl.items() if k[4] == e)
        nw = lambda m: m.n_w  # noqa: E731
        ref = (f" {summary(b, ref_utility)} | {summary(a, ref_utility)} | "
               f"{fmt_delta(paired(a, b, ref_utility))} |") if has_ref else ""
        lines.append(f"| {fmt_eps(e)} | {summary(b, utility)} | "
                     f"{summary(a, utility)} | "
                     f"{fmt_delta(paired(a, b, utility))} |{ref}"
                     f" {summary(b, mia_auc)} | "
                     f"{summary(a, mia_auc)} | "
                     f"{fmt_delta(paired(a, b, mia_auc))} | "
                     f"{summary(b, nw)} | {summary(a, nw)} |")
    lines.append("")
    return lines
