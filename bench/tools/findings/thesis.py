"""The thesis findings (Riecker 2023) on ``thesis_reference``: its claims and our measurements."""

from __future__ import annotations

import math

from bench.analysis.results import fmt_eps
from bench.reference import comparable
from bench.results.sections import CellMetrics
from bench.tools.findings.consts import MAPPINGS, SENSITIVITY
from bench.tools.findings.stats import (
    adversary_f1,
    at_chance,
    by_seed,
    chance_entities,
    first_seeds,
    fmt,
    fmt_delta,
    paired,
    privacy_task,
    summary,
    t_interval,
    tradeoff,
    utility,
    values,
)

# --------------------------------------------------------------------------------------------
# Thesis (Riecker 2023) on thesis_reference
# --------------------------------------------------------------------------------------------

def tg_thresholds(vocab_size: int = 50_000, embedding: str = "glove-6b-50d"
                  ) -> list[tuple[str, float, float]]:
    """Per sensitivity approach: Δmin of the transformed public vocabulary and the smallest ε
    for which truncated_gumbel's noise scale is defined, (2(1 + ln|W|) + 3)/Δmin (Riecker 2023,
    Alg. 1; :meth:`bench.mechanisms.truncated_gumbel.TruncatedGumbel.noise_scale`)."""
    import logging

    from bench.embeddings import load_embedding
    from bench.sensitivity import SENSITIVITY as APPROACHES
    from bench.sensitivity.base import min_distance_cached

    emb = load_embedding(embedding, vocab_size)
    out = []
    quiet = logging.getLogger("bench.sensitivity")
    level, quiet.level = quiet.level, logging.ERROR  # jl warns that 50 d is below its m
    try:
        for name in SENSITIVITY:
            approach = APPROACHES.create(name)
            approach.fit(emb.vectors)
            # memoised by content: a fit that measured the same vectors, or an approach whose
            # transform leaves them as they are (clip_observed_range), is not measured twice
            st = min_distance_cached(approach.transform(emb.vectors))
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
    if any(k[4] <= 1 for k in mvl):  # a grid without budgets <= 1 (thesis_reference) has no claim
        lines.append(_claim_mvl_at_chance(mvl))
    tg = by_seed(cells, mechanism="truncated_gumbel")
    lines += _claim_truncated_gumbel(cells, tg)
    lines += _claim_clipping(cells, mvl, eps)
    lines.append(_claim_jl(cells, eps))
    lines += _claim_tradeoffs(cells, {**mvl, **tg}, base)
    lines.append("")
    return lines


def _thesis_utility_table(cells: list[dict], eps: list[float],
                          base: dict[int, CellMetrics]) -> list[str]:
    """The baseline's numbers and the mvl utility table (sensitivity × mapping rows, ε
    columns)."""
    chance = t_interval(values(base, lambda m: m.utility.chance_threshold))
    lines = [f"Baseline (unprivatized) utility {summary(base, utility)}, "
             f"chance threshold {chance[0]:.3f}; strongest adversary on the baseline "
             f"{summary(base, adversary_f1)} macro-F1.", ""]
    lines += [f"mvl utility (macro-F1, mean ± 95% t half-width over {len(base)} seeds; `≈` = at "
              "chance in every seed):", ""]
    lines.append("| sensitivity | mapping | " + " | ".join(f"ε={fmt_eps(e)}" for e in eps) + " |")
    lines.append("|---|---|" + "---:|" * len(eps))
    for sens in SENSITIVITY:
        for mp in MAPPINGS:
            if not by_seed(cells, mechanism="mvl", sensitivity=sens, mapping=mp):
                continue                   # a grid without this row (thesis_100d: nearest only)
            row = []
            for e in eps:
                g = by_seed(cells, mechanism="mvl", sensitivity=sens, mapping=mp, epsilon=e)
                seeds = next(iter(g.values()), {})
                mark = "≈" if seeds and all(at_chance(m) for m in seeds.values()) else ""
                row.append(mark + summary(seeds, utility))
            lines.append(f"| {sens} | {mp} | " + " | ".join(row) + " |")
    lines.append("")
    return lines


def _claim_mvl_at_chance(mvl: dict[tuple, dict[int, CellMetrics]]) -> str:
    """Claim 1: mvl at ε ≤ 1 is at chance."""
    low = [(k, s) for k, s in mvl.items() if k[4] <= 1]
    n_chance = sum(all(at_chance(m) for m in s.values()) for _, s in low)
    best = max(low, key=lambda ks: t_interval(values(ks[1], utility))[0]) if low else None
    return (f"- **mvl at ε ≤ 1**: {n_chance} of {len(low)} configurations (sensitivity × "
            "mapping × ε) are at chance in every seed" + (
                f"; the highest mean utility is {summary(best[1], utility)} "
                f"({best[0][2]}, {best[0][3]}, ε = {fmt_eps(best[0][4])})" if best else "")
            + ".")


def _claim_truncated_gumbel(cells: list[dict], tg: dict[tuple, dict[int, CellMetrics]]
                            ) -> list[str]:
    """Claim 2: truncated Gumbel is flat in ε and undefined below its threshold."""
    lines = ["- **truncated_gumbel is undefined below** ε > (2(1 + ln|W|) + 3)/Δmin "
             "(Riecker 2023, Alg. 1; |W| = 50,000, Δmin exact over the transformed "
             "vocabulary): " + "; ".join(f"{n} {e:.1f} (Δmin {d:.4f})"
                                         for n, d, e in tg_thresholds(
                                             embedding=embedding_of(cells))) + "."]
    tg_eps = sorted({k[4] for k in tg})
    if len(tg_eps) >= 2:
        parts = []
        for sens in SENSITIVITY:
            lo_e, hi_e = tg_eps[0], tg_eps[-1]
            a = first_seeds(cells, mechanism="truncated_gumbel", sensitivity=sens, epsilon=hi_e)
            b = first_seeds(cells, mechanism="truncated_gumbel", sensitivity=sens, epsilon=lo_e)
            if a and b:
                parts.append(f"{sens} {summary(b, utility)} → "
                             f"{summary(a, utility)} "
                             f"(Δ {fmt_delta(paired(a, b, utility))})")
        if parts:  # an approach run at both budgets (thesis_100d: one budget each)
            lines.append(f"- **truncated_gumbel, utility at ε = {fmt_eps(tg_eps[0])} → "
                         f"{fmt_eps(tg_eps[-1])}**: " + "; ".join(parts) + ".")
    return lines


def _claim_clipping(cells: list[dict], mvl: dict[tuple, dict[int, CellMetrics]],
                    eps: list[float]) -> list[str]:
    """Claim 3: clipping to the observed range helps utility and the adversary."""
    same = differ = 0
    for k, a in mvl.items():
        if k[2] != "clip_observed_range":
            continue
        b = mvl.get((k[0], k[1], "none", k[3], k[4]), {})
        for seed in set(a) & set(b):
            equal = _results(a[seed]) == _results(b[seed])
            same, differ = same + equal, differ + (not equal)
    parts = []
    for mp in MAPPINGS:
        for e in eps:
            a = first_seeds(cells, mechanism="mvl", sensitivity="observed_range", mapping=mp,
                            epsilon=e)
            b = first_seeds(cells, mechanism="mvl", sensitivity="none", mapping=mp, epsilon=e)
            if a and b and 1 <= e <= 10:
                parts.append(f"{mp} ε={fmt_eps(e)}: utility {fmt_delta(paired(a, b, utility))}"
                             f", adversary {fmt_delta(paired(a, b, adversary_f1))}")
    clip = [f"- **clip_observed_range vs none** (mvl): utility and every adversary's "
            f"result identical in {same} of {same + differ} paired cells."] \
        if same + differ else []  # a grid without clip_observed_range (thesis_reference)
    return clip + ["- **observed_range − none** (mvl, paired over seeds, ε ∈ [1, 10]): "
                   + "; ".join(parts) + "."]


def _results(m: CellMetrics) -> tuple:
    """A cell's utility and every adversary's result, run-time measurements left out
    (:func:`bench.reference.comparable`)."""
    return (comparable(m.utility.to_dict()),
            comparable({t: m.attribute(t).to_dict() for t in m.attributes}))


def _claim_jl(cells: list[dict], eps: list[float]) -> str:
    """Claim 4: JL distorts strongly (mvl utility at the largest ε)."""
    parts = []
    for mp in MAPPINGS:
        e = max(eps)
        a = first_seeds(cells, mechanism="mvl", sensitivity="jl", mapping=mp, epsilon=e)
        b = first_seeds(cells, mechanism="mvl", sensitivity="none", mapping=mp, epsilon=e)
        if a and b:
            parts.append(f"{mp}: jl {summary(a, utility)} vs none "
                         f"{summary(b, utility)}")
    return f"- **jl at ε = {fmt_eps(max(eps))}** (mvl utility): " + "; ".join(parts) + "."


def _claim_tradeoffs(cells: list[dict], everything: dict[tuple, dict[int, CellMetrics]],
                     base: dict[int, CellMetrics]) -> list[str]:
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


def _positive_same_model(learn: dict[tuple, dict[int, CellMetrics]], base: dict[int, CellMetrics],
                         model: str) -> int:
    """How many configurations have a positive mean trade-off (paired over seeds with the
    baseline) when privacy is read from the adversary ``model``."""
    pos_model = 0
    for s in learn.values():
        diffs = []
        for seed in sorted(set(s) & set(base)):
            got = (utility(s[seed]), utility(base[seed]), adversary_f1(base[seed], model),
                   adversary_f1(s[seed], model))
            if None in got:
                continue
            u, u_base, a_base, a = got
            diffs.append((u - u_base) + (a_base - a))
        st = t_interval(diffs)
        pos_model += bool(st[3] and st[0] > 0)
    return pos_model


def embedding_of(cells: list[dict]) -> str:
    """The embedding the cells used (``settings.embedding``; every cell of a grid shares it)."""
    names = {c["spec"].get("settings", {}).get("embedding", "glove-6b-50d") for c in cells}
    if len(names) != 1:
        raise ValueError(f"the cells use {len(names)} embeddings ({sorted(names)}), expected one")
    return names.pop()


def model_cells(cells: list[dict], model: str) -> list[dict]:
    """The cells of one model (``thesis_reference`` holds the LSTM grid and a transformer
    slice, whose seeds would otherwise be mixed)."""
    return [c for c in cells if c["spec"]["model"]["name"] == model]


def _ci(m: CellMetrics) -> str:
    lo, hi = m.utility.macro_f1_ci95
    return f"{utility(m):.3f} [{lo:.3f}, {hi:.3f}]"


def _adv_ci(m: CellMetrics, name: str) -> list[float]:
    """The bootstrap interval of one adversary's macro-F1 on the cell's private attribute."""
    return m.attribute(privacy_task(m)).result(name).adversary_macro_f1_ci95


def transformer_section(cells: list[dict], lstm: list[dict]) -> list[str]:
    """Riecker 2023's BERT experiments (Table 4.3 baseline; Tables 6.2 / 6.4 at ε = 150 with
    the nearest / 1st-or-2nd-neighbour mapping; Table 5.1 truncated Gumbel) against the
    ``thesis_reference`` transformer slice: one fine-tuning run (seed 0), as in the thesis, so
    intervals are the cells' bootstrap over test documents."""
    if not cells:
        return []
    name = cells[0]["spec"]["model"]["name"]
    base = next(iter(by_seed(cells, mechanism="none").values()))[0]
    lbase = first_seeds(lstm, mechanism="none")
    lines = [f"Transformer slice ({name}, MiniLM-L6 for the thesis' BERT; one fine-tuning run, "
             "seed 0; `[lo, hi]` = the cell's 95% bootstrap interval over test documents). "
             f"Baseline utility {_ci(base)} vs the LSTM's "
             f"{summary(lbase, utility)} over {len(lbase)} seeds; strongest adversary "
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
        vs = m.vs_baseline.attribute(t)
        du = utility(m) - utility(base)
        tm = du + adversary_f1(base, name) - adversary_f1(m, name)
        tr = vs.tradeoff
        n += 1
        pos += bool(tr is not None and tr > 0)
        pos_model += tm > 0
        dp = vs.delta_privacy
        adv = m.attribute(t).result(name)
        lo, hi = _adv_ci(m, name)
        lines.append(f"| {k[0]} | {k[2]} | {k[3]} | {fmt_eps(k[4])} | "
                     f"{m.privatization.n_w:.3f} | {_ci(m)} | {du:+.3f} | "
                     + (f"{dp:+.3f}" if dp is not None else "–") + " | "
                     + (f"{tr:+.3f}" if tr is not None else "–")
                     + f" | {adv.adversary_macro_f1:.3f} [{lo:.3f}, {hi:.3f}] | {tm:+.3f} |")
    lines += ["", f"- **{name} at ε = 150**: {pos} of {n} configurations have a positive "
              f"trade-off against the strongest adversary, {pos_model} of {n} against the "
              f"{name} itself (the thesis' layout).", ""]
    return lines
