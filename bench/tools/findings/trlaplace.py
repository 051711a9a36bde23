"""The TrLaplace findings (Huang et al. 2024) on ``trlaplace`` and ``trlaplace_rewrite``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.analysis.results import fmt_eps
from bench.embeddings import EMBEDDINGS
from bench.metrics import METRICS
from bench.results.sections import CellMetrics
from bench.tools.findings.stats import (
    cell_metrics,
    first_seeds,
    fmt,
    fmt_delta,
    key,
    paired,
    summary,
    t_interval,
    utility,
    values,
)
from bench.tools.findings.tem import ref_utility
from bench.tools.findings.thesis import embedding_of

# --------------------------------------------------------------------------------------------
# TrLaplace (Huang et al. 2024) on trlaplace
# --------------------------------------------------------------------------------------------

def noise_variance(mechanism: str, epsilon: float, params: dict, n: int = 4000,
                   seed: int = 0, embedding: str = "glove-6b-50d") -> float:
    """Empirical per-coordinate variance of an additive mechanism's noise, fitted on the public
    vocabulary (the 10,000 most frequent words of ``embedding``): the mean square of ``n``
    seeded noise draws."""
    from bench.privatize import Privatizer

    p = Privatizer.build(mechanism=mechanism, epsilon=epsilon, mapping="none", seed=seed,
                         vocab_size=10_000, mechanism_params=dict(params), embedding=embedding)
    return float(np.mean(p.mechanism.noise(n) ** 2))


def trlaplace_section(cells: list[dict]) -> list[str]:
    """Claims of Huang et al. 2024 (Sec. 6, Tables 1-3) against the ``trlaplace`` cells."""
    if not cells:
        return ["*trlaplace: no committed cells.*", ""]
    # the grid's configurations as the cells record them (defaults filled in)
    mechs = [("trlaplace", '{"C": 1.0, "delta": "4^-d", "dummy_dims": true}'),
             ("gaussian", '{"C": 1.0, "calibration": "classic", "delta": "4^-d"}'),
             ("gaussian", '{"C": 1.0, "calibration": "analytic", "delta": "4^-d"}'),
             ("laplace", '{"C": 1.0}')]
    label = {m: (m[0] + (" (analytic)" if "analytic" in m[1] else "")) for m in mechs}
    eps = sorted({key(c["spec"])[4] for c in cells if c["spec"]["mechanism"]["name"] != "none"})
    groups: dict[tuple, dict[int, CellMetrics]] = defaultdict(dict)
    for c in cells:
        k = key(c["spec"])
        groups[(k[0], k[1], k[4])][int(c["spec"]["seed"])] = cell_metrics(c)
    has_ref = any(cell_metrics(c).measure("reference_utility") for c in cells)
    head: list[tuple[str, Callable[[CellMetrics], Any]]] = [("utility", utility)]
    head += [("reference classifier", ref_utility)] if has_ref else []
    rewrite: list[tuple[str, Callable[[CellMetrics], Any]]] = [
        (METRICS.get("n_w").label, lambda m: m.n_w)]
    rewrite += [(METRICS.get(k).label, lambda m, k=k: getattr(m.rewrite, k))
                for k in ("rouge1", "bleu", "bertscore")]
    metrics = head + rewrite
    lines = ["Per ε: mean ± 95% t half-width over seeds (nearest-word mapping, rt, LSTM"
             + ("; the reference classifier: tf-idf + logistic regression on the same "
                "privatized text, `reference_utility`" if has_ref else "") + ").", ""]
    lines.append("| ε | mechanism | " + " | ".join(n for n, _ in metrics) + " |")
    lines.append("|---:|---|" + "---:|" * len(metrics))
    order_ok = {n: [0, 0] for n, _ in rewrite}
    for e in eps:
        means = {}
        for m in mechs:
            seeds = groups.get((m[0], m[1], e))
            if not seeds:
                continue
            stats = [t_interval(values(seeds, g)) for _, g in metrics]
            means[m] = [s[0] for s in stats]
            lines.append(f"| {fmt_eps(e)} | {label[m]} | " + " | ".join(fmt(s) for s in stats)
                         + " |")
        tr, ga, la = mechs[0], (mechs[1] if mechs[1] in means else mechs[2]), mechs[3]
        if tr in means and ga in means and la in means:
            g = {m: groups[(m[0], m[1], e)] for m in (tr, ga, la)}
            for n, get in rewrite:
                # the ordering holds where both paired differences are above 0 (95%)
                first, second = paired(g[tr], g[ga], get), paired(g[ga], g[la], get)
                order_ok[n][1] += 1
                order_ok[n][0] += int(first[3] > 1 and first[1] > 0 and second[1] > 0)
    lines.append("")
    lines.append("- **ordering TrLaplace > Gaussian > Laplace**, ε values where both paired "
                 "differences have a 95% interval above 0: "
                 + ", ".join(f"{n} {a} of {b}" for n, (a, b) in order_ok.items()) + ".")
    ends = _ends(cells, head)
    if ends:
        lines.append("- **the two ends** (utility" + (", reference classifier" if has_ref else "")
                     + "): " + "; ".join(ends) + ".")
    parts = []
    emb = embedding_of(cells)
    dim = getattr(EMBEDDINGS.get(emb), "dim", "d")
    for e in (0.5, 1.0, 5.0, 10.0):
        row = []
        for name, params, lab in (("trlaplace", {"C": 1.0}, "trlaplace"),
                                  ("laplace", {"C": 1.0}, "laplace"),
                                  ("gaussian", {"C": 1.0} if e <= 1 else
                                   {"C": 1.0, "calibration": "analytic"}, "gaussian")):
            row.append(f"{lab} {noise_variance(name, e, params, embedding=emb):.4g}")
        parts.append(f"ε={fmt_eps(e)}: " + ", ".join(row))
    lines.append(f"- **noise variance per coordinate** (empirical, 4,000 draws × {dim} "
                 "coordinates, C = 1; gaussian analytic above ε = 1): " + "; ".join(parts) + ".")
    lines.append("")
    return lines


def _ends(cells: list[dict], head: list[tuple[str, Callable[[CellMetrics], Any]]]
          ) -> list[str]:
    """The unprivatized baseline and the known answers (``identity``: the text unchanged;
    ``no_information``: an output independent of the input), each as ``name a, b`` over its
    seeds for the ``head`` metrics."""
    out = []
    for name, label in (("none", "baseline (ε = ∞)"), ("identity", "identity"),
                        ("no_information", "no_information")):
        seeds = first_seeds(cells, mechanism=name)
        if seeds:
            out.append(f"{label} " + ", ".join(summary(seeds, get) for _, get in head))
    return out


REWRITE_ROWS: tuple[str, ...] = ("loss", "rouge1", "bleu", "n_w", "bertscore")
"""Keys in ``metrics.rewrite`` of the rewrite tables (Huang et al. 2024, Tables 1-3), in the
paper's order; label (the loss in lower case) and direction from :data:`bench.metrics.METRICS`."""


def trlaplace_rewrite_section(cells: list[dict]) -> list[str]:
    """Claims of Huang et al. 2024 (Sec. 6, Tables 1-3) against the ``trlaplace_rewrite`` cells
    (privatized embeddings rewritten by the autoencoder, :mod:`bench.rewriters`)."""
    if not cells:
        return ["*trlaplace_rewrite: no committed cells.*", ""]
    mechs = [("trlaplace", '{"C": 1.0, "delta": "4^-d", "dummy_dims": true}'),
             ("gaussian", '{"C": 1.0, "calibration": "classic", "delta": "4^-d"}'),
             ("gaussian", '{"C": 1.0, "calibration": "analytic", "delta": "4^-d"}'),
             ("laplace", '{"C": 1.0}')]
    label = {m: (m[0] + (" (analytic)" if "analytic" in m[1] else "")) for m in mechs}
    rw = [c for c in cells if c["spec"].get("rewriter")]
    base = first_seeds(cells, mechanism="none")
    groups: dict[tuple, dict[int, CellMetrics]] = defaultdict(dict)
    refs: dict[int, CellMetrics] = {}
    for c in rw:
        k = key(c["spec"])
        groups[(k[0], k[1], k[4])][int(c["spec"]["seed"])] = cell_metrics(c)
        refs.setdefault(int(c["spec"]["seed"]), cell_metrics(c))
    eps = sorted({k[2] for k in groups})
    rows = [(k, k if k == "loss" else METRICS.get(k).label, METRICS.get(k).higher_is_better)
            for k in REWRITE_ROWS]
    gets = [(lab, (lambda m, k=k: getattr(m.rewrite, k)), hib) for k, lab, hib in rows]
    ref_gets = [(lab, (lambda m, k=k: getattr(m.rewrite_reference, k))) for k, lab, _ in rows]
    def span(key: str) -> str:
        """One value, or the range over the cells (it differs with the seed), independent of
        the order the cells are read in."""
        vals = sorted({v for c in rw
                       if (v := (cell_metrics(c).rewriter or {}).get(key)) is not None})
        if not vals:
            return "?"
        return f"{vals[0]}" if len(vals) == 1 else f"{vals[0]}–{vals[-1]}"

    has_ref = any(cell_metrics(c).measure("reference_utility") for c in rw)
    heads = [("utility", utility)] + ([("reference classifier", ref_utility)] if has_ref else [])
    lines = [f"Per ε: mean ± 95% t half-width over seeds (rt, autoencoder trained on the "
             f"{span('docs')} held-apart public snippets, "
             f"{span('output_vocabulary')} output words; LSTM on the rewritten text"
             + ("; the reference classifier: tf-idf + logistic regression on the same "
                "rewritten text, `reference_utility`" if has_ref else "") + "). "
             f"Unprivatized baseline utility {summary(base, utility)}"
             + (f", reference classifier {summary(base, ref_utility)}" if has_ref else "")
             + ".", ""]
    lines.append("| ε | mechanism | " + " | ".join(lab for lab, _ in heads) + " | "
                 + " | ".join(lab for lab, _, _ in gets) + " |")
    lines.append("|---:|---|" + "---:|" * (len(heads) + len(gets)))
    lines.append("| ∞ | original (rewriter on unperturbed embeddings) | "
                 + "– | " * len(heads)
                 + " | ".join(summary(refs, g) for _, g in ref_gets) + " |")
    order_ok = {lab: [0, 0] for lab, _, _ in gets}
    for e in eps:
        present = [m for m in mechs if (m[0], m[1], e) in groups]
        for m in present:
            seeds = groups[(m[0], m[1], e)]
            lines.append(f"| {fmt_eps(e)} | {label[m]} | "
                         + " | ".join(summary(seeds, g) for _, g in heads)
                         + " | " + " | ".join(summary(seeds, g) for _, g, _ in gets) + " |")
        ga = next((m for m in mechs[1:3] if m in present), None)
        if mechs[0] in present and ga is not None and mechs[3] in present:
            g = {m: groups[(m[0], m[1], e)] for m in (mechs[0], ga, mechs[3])}
            for lab, get, hib in gets:
                sign = 1 if hib else -1
                first = paired(g[mechs[0]], g[ga], lambda x, get=get, sign=sign: sign * get(x))
                second = paired(g[ga], g[mechs[3]], lambda x, get=get, sign=sign: sign * get(x))
                order_ok[lab][1] += 1
                order_ok[lab][0] += int(first[3] > 1 and first[1] > 0 and second[1] > 0)
    lines.append("")
    lines.append("- **ordering TrLaplace > Gaussian > Laplace** (loss: lower), ε values where "
                 "both paired differences have a 95% interval on the better side of 0: "
                 + ", ".join(f"{n} {a} of {b}" for n, (a, b) in order_ok.items()) + ".")
    tr = groups.get((mechs[0][0], mechs[0][1], min(eps))) if eps else None
    if tr:
        near = []
        for (lab, get, _), (_, rget) in zip(gets, ref_gets):
            diff = t_interval(values(tr, lambda m, g=get, r=rget: g(m) - r(m)))
            near.append(f"{lab} {fmt_delta(diff)}")
        lines.append(f"- **TrLaplace at ε = {fmt_eps(min(eps))} against the rewriter on "
                     "unperturbed embeddings** (paired over seeds, privatized − original): "
                     + ", ".join(near) + ".")
    ends = _ends(cells, heads)
    if len(ends) > 1:  # the known answers ran (no rewriter: they output text)
        lines.append("- **the two ends**, without the rewriter (utility"
                     + (", reference classifier" if has_ref else "") + "): "
                     + "; ".join(ends) + ".")
    lines.append("")
    return lines
