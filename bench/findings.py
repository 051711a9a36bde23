"""The numbers behind ``docs/findings.md``, recomputed from the committed reference cells.

``python -m bench.findings`` prints a Markdown block: for each paper's claim, the measurement of
the committed reference grids (``results/reference/<grid>/cells``) that tests it, as mean and a
95% t interval over seeds (Student t, n − 1 degrees of freedom) and, for differences, a paired
interval over seeds (the privatized cell and the cell it is compared with share the seed: the
same data split and model initialisation). ``docs/findings.md`` holds this block between
``<!-- findings:begin -->`` and ``<!-- findings:end -->``; ``tests/test_findings.py`` checks
it is current, so no number in the findings can drift from the committed cells.

Example:
    $ python -m bench.findings > /tmp/block.md
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from bench.metrics import METRICS
from bench.reference import REFERENCE_ROOT, committed_cells, comparable
from bench.report.results import fmt_eps
from bench.results.layout import cells_dir

BEGIN, END = "<!-- findings:begin -->", "<!-- findings:end -->"

SENSITIVITY = ("none", "unit_norm", "unit_norm_clip", "minmax", "observed_range",
               "clip_observed_range", "jl")
MAPPINGS = ("none", "nearest", "vickrey")


# --------------------------------------------------------------------------------------------
# Cells and statistics
# --------------------------------------------------------------------------------------------

def load(grid: str, root: str | Path = REFERENCE_ROOT) -> list[dict]:
    """The committed cells of one reference grid as ``{"spec", "metrics"}`` (empty if none)."""
    folder = Path(root) / grid
    return list(committed_cells(folder).values()) if cells_dir(folder).is_dir() else []


def _eps(spec: dict) -> float:
    e = spec["epsilon"]
    return math.inf if e == "inf" else float(e)


def key(spec: dict) -> tuple:
    """Configuration of a cell without its seed: (mechanism, params, sensitivity, mapping, ε)."""
    params = json.dumps(spec["mechanism"]["params"], sort_keys=True)
    return (spec["mechanism"]["name"], params, spec["sensitivity"]["name"],
            spec["mapping"]["name"], _eps(spec))


def by_seed(cells: Iterable[dict], **match: Any) -> dict[tuple, dict[int, dict]]:
    """``key -> seed -> metrics`` of the cells whose spec matches ``mechanism`` /
    ``sensitivity`` / ``mapping`` / ``epsilon`` (names; ε as a float) where given."""
    out: dict[tuple, dict[int, dict]] = defaultdict(dict)
    for c in cells:
        s = c["spec"]
        k = key(s)
        got = {"mechanism": k[0], "sensitivity": k[2], "mapping": k[3], "epsilon": k[4]}
        if all(got[f] == v for f, v in match.items()):
            out[k][int(s["seed"])] = c["metrics"]
    return out


def t_interval(values: list[float]) -> tuple[float, float, float, int]:
    """Mean, 95% Student-t interval over seeds (:func:`bench.report.stats.t_interval`) and
    n; for one value the interval is the value itself (no spread to estimate)."""
    from bench.report.stats import t_interval as t95

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
    """A paired difference with its interval and ``(ns)`` where the interval contains 0."""
    mean, lo, hi, n = stat
    if n == 0:
        return "–"
    sig = "" if n > 1 and (lo > 0 or hi < 0) else " (ns)"
    return f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]{sig}"


def values(seeds: dict[int, dict], get: Callable[[dict], Any]) -> list[float]:
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


def paired(a: dict[int, dict], b: dict[int, dict], get: Callable[[dict], Any]
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


def utility(m: dict) -> float:
    """Utility macro-F1."""
    return m["utility"]["macro_f1"]


def at_chance(m: dict) -> bool:
    """Whether the utility model is no better than chance (the cell's own flag)."""
    return bool(m["utility"]["chance_level"])


def privacy_task(m: dict) -> str | None:
    """The cell's (first) private attribute, if any."""
    return next(iter(m.get("privacy") or {}), None)


def adversary_f1(m: dict, name: str | None = None) -> float:
    """Macro-F1 of the strongest adversary (or of ``name``) on the private attribute."""
    p = m["privacy"][privacy_task(m)]
    if name is None:
        return p["adversary_macro_f1"]
    return p["by_adversary"][name]["adversary_macro_f1"]


def chance_entities(base: dict[int, dict]) -> float:
    """Mean chance threshold of the private attribute over the baseline's seeds."""
    return float(np.mean([m["privacy"][privacy_task(m)]["chance_threshold"]
                          for m in base.values()]))


def tradeoff(m: dict) -> float | None:
    """Riecker 2023's trade-off Δutility + Δprivacy vs the baseline (None where privacy is not
    a valid measurement)."""
    t = privacy_task(m)
    return m.get("vs_baseline", {}).get("by_privacy_task", {}).get(t, {}).get("tradeoff")


# --------------------------------------------------------------------------------------------
# Thesis (Riecker 2023) on thesis_reference
# --------------------------------------------------------------------------------------------

def tg_thresholds(vocab_size: int = 50_000) -> list[tuple[str, float, float]]:
    """Per sensitivity approach: Δmin of the transformed public vocabulary and the smallest ε
    for which truncated_gumbel's noise scale is defined, (2(1 + ln|W|) + 3)/Δmin (Riecker 2023,
    Alg. 1; :meth:`bench.mechanisms.truncated_gumbel.TruncatedGumbel.noise_scale`)."""
    import logging

    from bench.embeddings import load_embedding
    from bench.sensitivity import make_sensitivity, min_pairwise_distance

    emb = load_embedding("glove-6b-50d", vocab_size)
    out = []
    quiet = logging.getLogger("bench.sensitivity")
    level, quiet.level = quiet.level, logging.ERROR  # jl warns that 50 d is below its m
    try:
        for name in SENSITIVITY:
            approach = make_sensitivity(name)
            approach.fit(emb.vectors)
            st = min_pairwise_distance(approach.transform(emb.vectors))
            dmin = 0.0 if st["n_duplicate_rows"] else float(st["min_distance"])
            eps = (2 * (1 + math.log(vocab_size)) + 3) / dmin if dmin > 0 else math.inf
            out.append((name, dmin, eps))
    finally:
        quiet.level = level
    return out


def thesis_section(cells: list[dict]) -> list[str]:
    """Claims of Riecker 2023 (Ch. 6) against the ``thesis_reference`` cells."""
    if not cells:
        return ["*thesis_reference: no committed cells.*", ""]
    mvl = by_seed(cells, mechanism="mvl")
    eps = sorted({k[4] for k in mvl})
    base = next(iter(by_seed(cells, mechanism="none").values()))
    lines = _thesis_utility_table(cells, eps, base)
    lines.append(_claim_mvl_at_chance(mvl))
    tg = by_seed(cells, mechanism="truncated_gumbel")
    lines += _claim_truncated_gumbel(cells, tg)
    lines += _claim_clipping(cells, mvl, eps)
    lines.append(_claim_jl(cells, eps))
    lines += _claim_tradeoffs(cells, {**mvl, **tg}, base)
    lines.append("")
    return lines


def _thesis_utility_table(cells: list[dict], eps: list[float],
                          base: dict[int, dict]) -> list[str]:
    """The baseline's numbers and the mvl utility table (sensitivity × mapping rows, ε
    columns)."""
    chance = t_interval(values(base, lambda m: m["utility"]["chance_threshold"]))
    lines = [f"Baseline (unprivatized) utility {fmt(t_interval(values(base, utility)))}, "
             f"chance threshold {chance[0]:.3f}; strongest adversary on the baseline "
             f"{fmt(t_interval(values(base, adversary_f1)))} macro-F1.", ""]
    lines += ["mvl utility (macro-F1, mean ± 95% t half-width over 3 seeds; `≈` = at chance in "
              "every seed):", ""]
    lines.append("| sensitivity | mapping | " + " | ".join(f"ε={fmt_eps(e)}" for e in eps) + " |")
    lines.append("|---|---|" + "---:|" * len(eps))
    for sens in SENSITIVITY:
        for mp in MAPPINGS:
            row = []
            for e in eps:
                g = by_seed(cells, mechanism="mvl", sensitivity=sens, mapping=mp, epsilon=e)
                seeds = next(iter(g.values()), {})
                mark = "≈" if seeds and all(at_chance(m) for m in seeds.values()) else ""
                row.append(mark + fmt(t_interval(values(seeds, utility))))
            lines.append(f"| {sens} | {mp} | " + " | ".join(row) + " |")
    lines.append("")
    return lines


def _claim_mvl_at_chance(mvl: dict[tuple, dict[int, dict]]) -> str:
    """Claim 1: mvl at ε ≤ 1 is at chance."""
    low = [(k, s) for k, s in mvl.items() if k[4] <= 1]
    n_chance = sum(all(at_chance(m) for m in s.values()) for _, s in low)
    best = max(low, key=lambda ks: t_interval(values(ks[1], utility))[0]) if low else None
    return (f"- **mvl at ε ≤ 1**: {n_chance} of {len(low)} configurations (sensitivity × "
            "mapping × ε) are at chance in every seed" + (
                f"; the highest mean utility is {fmt(t_interval(values(best[1], utility)))} "
                f"({best[0][2]}, {best[0][3]}, ε = {fmt_eps(best[0][4])})" if best else "")
            + ".")


def _claim_truncated_gumbel(cells: list[dict], tg: dict[tuple, dict[int, dict]]) -> list[str]:
    """Claim 2: truncated Gumbel is flat in ε and undefined below its threshold."""
    lines = ["- **truncated_gumbel is undefined below** ε > (2(1 + ln|W|) + 3)/Δmin "
             "(Riecker 2023, Alg. 1; |W| = 50,000, Δmin exact over the transformed "
             "vocabulary): " + "; ".join(f"{n} {e:.1f} (Δmin {d:.4f})"
                                         for n, d, e in tg_thresholds()) + "."]
    tg_eps = sorted({k[4] for k in tg})
    if len(tg_eps) >= 2:
        parts = []
        for sens in SENSITIVITY:
            lo_e, hi_e = tg_eps[0], tg_eps[-1]
            a = next(iter(by_seed(cells, mechanism="truncated_gumbel", sensitivity=sens,
                                  epsilon=hi_e).values()), {})
            b = next(iter(by_seed(cells, mechanism="truncated_gumbel", sensitivity=sens,
                                  epsilon=lo_e).values()), {})
            if a and b:
                parts.append(f"{sens} {fmt(t_interval(values(b, utility)))} → "
                             f"{fmt(t_interval(values(a, utility)))} "
                             f"(Δ {fmt_delta(paired(a, b, utility))})")
        lines.append(f"- **truncated_gumbel, utility at ε = {fmt_eps(tg_eps[0])} → "
                     f"{fmt_eps(tg_eps[-1])}**: " + "; ".join(parts) + ".")
    return lines


def _claim_clipping(cells: list[dict], mvl: dict[tuple, dict[int, dict]],
                    eps: list[float]) -> list[str]:
    """Claim 3: clipping to the observed range helps utility and the adversary."""
    same = differ = 0
    for k, a in mvl.items():
        if k[2] != "clip_observed_range":
            continue
        b = mvl.get((k[0], k[1], "none", k[3], k[4]), {})
        for seed in set(a) & set(b):
            equal = (comparable(a[seed].get("utility")) == comparable(b[seed].get("utility"))
                     and comparable(a[seed].get("privacy")) == comparable(b[seed].get("privacy")))
            same, differ = same + equal, differ + (not equal)
    parts = []
    for mp in MAPPINGS:
        for e in eps:
            a = next(iter(by_seed(cells, mechanism="mvl", sensitivity="observed_range",
                                  mapping=mp, epsilon=e).values()), {})
            b = next(iter(by_seed(cells, mechanism="mvl", sensitivity="none", mapping=mp,
                                  epsilon=e).values()), {})
            if a and b and 1 <= e <= 10:
                parts.append(f"{mp} ε={fmt_eps(e)}: utility {fmt_delta(paired(a, b, utility))}"
                             f", adversary {fmt_delta(paired(a, b, adversary_f1))}")
    return [f"- **clip_observed_range vs none** (mvl): utility and every adversary's "
            f"result identical in {same} of {same + differ} paired cells.",
            "- **observed_range − none** (mvl, paired over seeds, ε ∈ [1, 10]): "
            + "; ".join(parts) + "."]


def _claim_jl(cells: list[dict], eps: list[float]) -> str:
    """Claim 4: JL distorts strongly (mvl utility at the largest ε)."""
    parts = []
    for mp in MAPPINGS:
        e = max(eps)
        a = next(iter(by_seed(cells, mechanism="mvl", sensitivity="jl", mapping=mp,
                              epsilon=e).values()), {})
        b = next(iter(by_seed(cells, mechanism="mvl", sensitivity="none", mapping=mp,
                              epsilon=e).values()), {})
        if a and b:
            parts.append(f"{mp}: jl {fmt(t_interval(values(a, utility)))} vs none "
                         f"{fmt(t_interval(values(b, utility)))}")
    return f"- **jl at ε = {fmt_eps(max(eps))}** (mvl utility): " + "; ".join(parts) + "."


def _claim_tradeoffs(cells: list[dict], everything: dict[tuple, dict[int, dict]],
                     base: dict[int, dict]) -> list[str]:
    """Claim 5: favourable trade-offs are rare (the thesis leaves out rows at chance), with
    the strongest adversary and with the thesis' same-model adversary."""
    learn = {k: s for k, s in everything.items()
             if not any(at_chance(m) for m in s.values())}
    pos, sig = [], []
    for k, s in learn.items():
        st = t_interval(values(s, tradeoff))
        if st[3] and st[0] > 0:
            pos.append(k)
            if st[3] > 1 and st[1] > 0:
                sig.append((k, st))
    sig.sort(key=lambda ks: -ks[1][0])
    # the thesis' layout: the model itself as the adversary (privacy read from `lstm`)
    model = cells[0]["spec"]["model"]["name"]
    pos_model = _positive_same_model(learn, base, model)
    base_model = t_interval(values(base, lambda m: adversary_f1(m, model)))
    return [f"- **favourable trade-offs** (Δutility + Δprivacy > 0 vs the baseline, strongest "
            f"adversary) among the {len(learn)} of {len(everything)} configurations whose "
            f"utility model beats chance in every seed (the thesis leaves the others out): "
            f"{len(pos)} positive on average over seeds, {len(sig)} with a 95% interval "
            "above 0" + (": " + "; ".join(f"{k[0]} {k[2]} {k[3]} ε={fmt_eps(k[4])} "
                                           f"{fmt(st)}" for k, st in sig[:10])
                         + ("; …" if len(sig) > 10 else "") if sig else "") + ".",
            f"- **the same, with the thesis' same-model adversary** ({model}, macro-F1 "
            f"{fmt(base_model)} on the baseline against the chance threshold "
            f"{chance_entities(base):.3f}): {pos_model} of {len(learn)} positive on average."]


def _positive_same_model(learn: dict[tuple, dict[int, dict]], base: dict[int, dict],
                         model: str) -> int:
    """How many configurations have a positive mean trade-off (paired over seeds with the
    baseline) when privacy is read from the adversary ``model``."""
    pos_model = 0
    for s in learn.values():
        diffs = []
        for seed in sorted(set(s) & set(base)):
            try:
                du = utility(s[seed]) - utility(base[seed])
                dp = adversary_f1(base[seed], model) - adversary_f1(s[seed], model)
            except KeyError:
                continue
            diffs.append(du + dp)
        st = t_interval(diffs)
        pos_model += bool(st[3] and st[0] > 0)
    return pos_model


def model_cells(cells: list[dict], model: str) -> list[dict]:
    """The cells of one model (``thesis_reference`` holds the LSTM grid and a transformer
    slice, whose seeds would otherwise be mixed)."""
    return [c for c in cells if c["spec"]["model"]["name"] == model]


def _ci(m: dict) -> str:
    lo, hi = m["utility"]["macro_f1_ci95"]
    return f"{utility(m):.3f} [{lo:.3f}, {hi:.3f}]"


def _adv_ci(m: dict, name: str) -> list[float]:
    """The bootstrap interval of one adversary's macro-F1 on the cell's private attribute."""
    return m["privacy"][privacy_task(m)]["by_adversary"][name]["adversary_macro_f1_ci95"]


def transformer_section(cells: list[dict], lstm: list[dict]) -> list[str]:
    """Riecker 2023's BERT experiments (Table 4.3 baseline; Tables 6.2 / 6.4 at ε = 150 with
    the nearest / 1st-or-2nd-neighbour mapping; Table 5.1 truncated Gumbel) against the
    ``thesis_reference`` transformer slice: one fine-tuning run (seed 0), as in the thesis, so
    intervals are the cells' bootstrap over test documents."""
    if not cells:
        return []
    name = cells[0]["spec"]["model"]["name"]
    base = next(iter(by_seed(cells, mechanism="none").values()))[0]
    lbase = next(iter(by_seed(lstm, mechanism="none").values()), {})
    lines = [f"Transformer slice ({name}, MiniLM-L6 for the thesis' BERT; one fine-tuning run, "
             "seed 0; `[lo, hi]` = the cell's 95% bootstrap interval over test documents). "
             f"Baseline utility {_ci(base)} vs the LSTM's "
             f"{fmt(t_interval(values(lbase, utility)))} over 3 seeds; strongest adversary "
             f"{adversary_f1(base):.3f}, the {name} itself as the adversary "
             f"{adversary_f1(base, name):.3f} "
             f"[{_adv_ci(base, name)[0]:.3f}, {_adv_ci(base, name)[1]:.3f}] macro-F1.", ""]
    lines += ["| mechanism | sensitivity | mapping | ε | N_w | utility | Δutility | Δprivacy | "
              f"trade-off | {name} adversary | trade-off, {name} adversary |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    pos = pos_model = n = 0
    rows = sorted(((k, s[0]) for k, s in by_seed(cells).items() if k[0] != "none" and 0 in s),
                  key=lambda km: (km[0][0] != "mvl", km[0][3], SENSITIVITY.index(km[0][2])))
    for k, m in rows:
        t = privacy_task(m)
        vs = m.get("vs_baseline", {}).get("by_privacy_task", {}).get(t, {})
        du = utility(m) - utility(base)
        tm = du + adversary_f1(base, name) - adversary_f1(m, name)
        tr = vs.get("tradeoff")
        n += 1
        pos += bool(tr is not None and tr > 0)
        pos_model += tm > 0
        dp = vs.get("delta_privacy")
        adv = m["privacy"][t]["by_adversary"][name]
        lo, hi = _adv_ci(m, name)
        lines.append(f"| {k[0]} | {k[2]} | {k[3]} | {fmt_eps(k[4])} | "
                     f"{m['privatization']['n_w']:.3f} | {_ci(m)} | {du:+.3f} | "
                     + (f"{dp:+.3f}" if dp is not None else "–") + " | "
                     + (f"{tr:+.3f}" if tr is not None else "–")
                     + f" | {adv['adversary_macro_f1']:.3f} [{lo:.3f}, {hi:.3f}] | {tm:+.3f} |")
    lines += ["", f"- **{name} at ε = 150**: {pos} of {n} configurations have a positive "
              f"trade-off against the strongest adversary, {pos_model} of {n} against the "
              f"{name} itself (the thesis' layout).", ""]
    return lines


# --------------------------------------------------------------------------------------------
# TrLaplace (Huang et al. 2024) on trlaplace
# --------------------------------------------------------------------------------------------

def noise_variance(mechanism: str, epsilon: float, params: dict, n: int = 4000,
                   seed: int = 0) -> float:
    """Empirical per-coordinate variance of an additive mechanism's noise, fitted on the public
    vocabulary (10,000 GloVe words, 50 d): the mean square of ``n`` seeded noise draws."""
    from bench.privatize import Privatizer

    p = Privatizer.build(mechanism=mechanism, epsilon=epsilon, mapping="none", seed=seed,
                         vocab_size=10_000, mechanism_params=dict(params))
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
    groups: dict[tuple, dict[int, dict]] = defaultdict(dict)
    for c in cells:
        k = key(c["spec"])
        groups[(k[0], k[1], k[4])][int(c["spec"]["seed"])] = c["metrics"]
    metrics = [("utility", utility), (METRICS.get("n_w").label, lambda m: m["n_w"])]
    metrics += [(METRICS.get(k).label, lambda m, k=k: m["rewrite"][k])
                for k in ("rouge1", "bleu", "bertscore")]
    lines = ["Per ε: mean ± 95% t half-width over seeds (nearest-word mapping, rt, LSTM).", ""]
    lines.append("| ε | mechanism | " + " | ".join(n for n, _ in metrics) + " |")
    lines.append("|---:|---|" + "---:|" * len(metrics))
    order_ok = {n: [0, 0] for n, _ in metrics[1:]}
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
            for n, get in metrics[1:]:
                # the ordering holds where both paired differences are above 0 (95%)
                first, second = paired(g[tr], g[ga], get), paired(g[ga], g[la], get)
                order_ok[n][1] += 1
                order_ok[n][0] += int(first[3] > 1 and first[1] > 0 and second[1] > 0)
    lines.append("")
    lines.append("- **ordering TrLaplace > Gaussian > Laplace**, ε values where both paired "
                 "differences have a 95% interval above 0: "
                 + ", ".join(f"{n} {a} of {b}" for n, (a, b) in order_ok.items()) + ".")
    parts = []
    for e in (0.5, 1.0, 5.0, 10.0):
        row = []
        for name, params, lab in (("trlaplace", {"C": 1.0}, "trlaplace"),
                                  ("laplace", {"C": 1.0}, "laplace"),
                                  ("gaussian", {"C": 1.0} if e <= 1 else
                                   {"C": 1.0, "calibration": "analytic"}, "gaussian")):
            row.append(f"{lab} {noise_variance(name, e, params):.4g}")
        parts.append(f"ε={fmt_eps(e)}: " + ", ".join(row))
    lines.append("- **noise variance per coordinate** (empirical, 4,000 draws × 50 coordinates, "
                 "C = 1; gaussian analytic above ε = 1): " + "; ".join(parts) + ".")
    lines.append("")
    return lines


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
    base = next(iter(by_seed(cells, mechanism="none").values()), {})
    groups: dict[tuple, dict[int, dict]] = defaultdict(dict)
    refs: dict[int, dict] = {}
    for c in rw:
        k = key(c["spec"])
        groups[(k[0], k[1], k[4])][int(c["spec"]["seed"])] = c["metrics"]
        refs.setdefault(int(c["spec"]["seed"]), c["metrics"])
    eps = sorted({k[2] for k in groups})
    rows = [(k, k if k == "loss" else METRICS.get(k).label, METRICS.get(k).higher_is_better)
            for k in REWRITE_ROWS]
    gets = [(lab, (lambda m, k=k: m["rewrite"][k]), hib) for k, lab, hib in rows]
    ref_gets = [(lab, (lambda m, k=k: m["rewrite_reference"][k])) for k, lab, _ in rows]
    def span(key: str) -> str:
        """One value, or the range over the cells (it differs with the seed), independent of
        the order the cells are read in."""
        vals = sorted({c["metrics"]["rewriter"][key] for c in rw
                       if c["metrics"].get("rewriter", {}).get(key) is not None})
        if not vals:
            return "?"
        return f"{vals[0]}" if len(vals) == 1 else f"{vals[0]}–{vals[-1]}"

    lines = [f"Per ε: mean ± 95% t half-width over seeds (rt, autoencoder trained on the "
             f"{span('docs')} held-apart public snippets, "
             f"{span('output_vocabulary')} output words; LSTM on the rewritten text). "
             f"Unprivatized baseline utility {fmt(t_interval(values(base, utility)))}.", ""]
    lines.append("| ε | mechanism | utility | " + " | ".join(lab for lab, _, _ in gets) + " |")
    lines.append("|---:|---|---:|" + "---:|" * len(gets))
    lines.append("| ∞ | original (rewriter on unperturbed embeddings) | – | "
                 + " | ".join(fmt(t_interval(values(refs, g))) for _, g in ref_gets) + " |")
    order_ok = {lab: [0, 0] for lab, _, _ in gets}
    for e in eps:
        present = [m for m in mechs if (m[0], m[1], e) in groups]
        for m in present:
            seeds = groups[(m[0], m[1], e)]
            lines.append(f"| {fmt_eps(e)} | {label[m]} | {fmt(t_interval(values(seeds, utility)))}"
                         f" | " + " | ".join(fmt(t_interval(values(seeds, g))) for _, g, _ in gets)
                         + " |")
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
    lines.append("")
    return lines


# --------------------------------------------------------------------------------------------
# TEM (Carvalho et al. 2021) on tem
# --------------------------------------------------------------------------------------------

def mia_auc(m: dict) -> float:
    """The stronger membership-inference attack's AUC."""
    return m["mia"]["mia_auc"]


def tem_section(cells: list[dict]) -> list[str]:
    """TEM vs Madlib (mvl + nearest) at equal ε: utility, MIA AUC and N_w (Carvalho et al. 2021,
    Fig. 1 and Sec. 5.3)."""
    if not cells:
        return ["*tem: no committed cells.*", ""]
    mvl = by_seed(cells, mechanism="mvl")
    tem = by_seed(cells, mechanism="tem")
    base = next(iter(by_seed(cells, mechanism="none").values()))
    eps = sorted({k[4] for k in mvl} & {k[4] for k in tem})
    lines = [f"Baseline utility {fmt(t_interval(values(base, utility)))}, MIA AUC "
             f"{fmt(t_interval(values(base, mia_auc)))} (rt, bow, memorising target, "
             f"{len(base)} seeds).", ""]
    lines.append("| ε | utility mvl | utility tem | Δ (tem − mvl) | MIA AUC mvl | MIA AUC tem | "
                 "Δ AUC | N_w mvl | N_w tem |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for e in eps:
        a = next(s for k, s in tem.items() if k[4] == e)
        b = next(s for k, s in mvl.items() if k[4] == e)
        nw = lambda m: m["n_w"]  # noqa: E731
        lines.append(f"| {fmt_eps(e)} | {fmt(t_interval(values(b, utility)))} | "
                     f"{fmt(t_interval(values(a, utility)))} | "
                     f"{fmt_delta(paired(a, b, utility))} | "
                     f"{fmt(t_interval(values(b, mia_auc)))} | "
                     f"{fmt(t_interval(values(a, mia_auc)))} | "
                     f"{fmt_delta(paired(a, b, mia_auc))} | "
                     f"{fmt(t_interval(values(b, nw)))} | {fmt(t_interval(values(a, nw)))} |")
    lines.append("")
    return lines


def render(root: str | Path = REFERENCE_ROOT) -> str:
    """The whole Markdown block (between the markers)."""
    lines = [BEGIN, "", "<!-- generated by `python -m bench.findings`; do not edit by hand -->",
             "", "### Thesis grid (`thesis_reference`)", ""]
    thesis = load("thesis_reference", root)
    lines += thesis_section(model_cells(thesis, "lstm"))
    lines += transformer_section(model_cells(thesis, "transformer"), model_cells(thesis, "lstm"))
    lines += ["### TEM grid (`tem`)", ""]
    lines += tem_section(load("tem", root))
    lines += ["### TrLaplace grid (`trlaplace`)", ""]
    lines += trlaplace_section(load("trlaplace", root))
    lines += ["### TrLaplace rewrite grid (`trlaplace_rewrite`)", ""]
    lines += trlaplace_rewrite_section(load("trlaplace_rewrite", root))
    lines.append(END)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the numbers of ``docs/findings.md`` (``--root``: the reference results)."""
    ap = argparse.ArgumentParser(prog="python -m bench.findings",
                                 description="the numbers of docs/findings.md")
    ap.add_argument("--root", default=str(REFERENCE_ROOT))
    args = ap.parse_args(argv)
    sys.stdout.write(render(args.root))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
