"""Issue 49's comparison (``lm_comparison``): word-level mechanisms beside DP-Prompt (Utpala et
al. 2023) at matched empirical privacy, with the language-model-prior reconstruction attacker.

One row per configuration, mean ± 95% t half-width over seeds:

- utility: macro-F1 of the cell's model on the utility task, and the reference classifier's
  (``reference_utility``);
- the strongest attack on the private attribute (macro-F1; the higher, the less privacy);
- CS: the cosine similarity of MiniLM sentence embeddings to the original (``similarity_minilm``,
  the number the LM-based privatization papers report) and its share ``retained`` above chance;
- perplexity ratio under SmolLM2 (``perplexity_smollm2``: privatized / original, 1 unchanged);
- token reconstruction of the word-level cells: the unigram attacker's MAP top-1 and the
  LM-prior attacker's (``reconstruction_lm``: cross-fitted mixture), with the prior's chance.

"Matched empirical privacy" pairs each DP-Prompt configuration with the word-level ones whose
strongest-attack interval overlaps its own, and gives the paired differences (same seed: same
subset, split and model initialisation) in utility and CS.

Example:
    >>> lm_section([])
    []
"""

from __future__ import annotations

from bench.results.sections import CellMetrics
from bench.tools.findings.stats import (
    adversary_f1,
    by_seed,
    config_label,
    first_seeds,
    fmt_delta,
    measure_value,
    paired,
    summary,
    t_interval,
    utility,
    values,
)

GRID = "lm_comparison"
"""The reference grid of the comparison."""
DOCUMENT_LEVEL = ("dp_prompt", "dp_mlm")
"""Mechanisms that rewrite whole documents (no per-token channel, no reconstruction)."""


REF = measure_value("reference_utility", "macro_f1")
CS = measure_value("similarity_minilm", "cosine")
RETAINED = measure_value("similarity_minilm", "retained")
PPL = measure_value("perplexity_smollm2", "ratio")
UNIGRAM = measure_value("reconstruction_lm", "map_top1", "rate")
LM = measure_value("reconstruction_lm", "lm_top1", "rate")
CHANCE = measure_value("reconstruction_lm", "chance_top1")


def _order(k: tuple) -> tuple:
    return (k[0] in DOCUMENT_LEVEL, k[0] not in ("identity", "no_information"), k[0], k[4])


def _overlap(a: tuple, b: tuple) -> bool:
    return a[3] > 0 and b[3] > 0 and a[1] <= b[2] and b[1] <= a[2]


def lm_section(cells: list[dict]) -> list[str]:
    """The section's lines for the ``lm_comparison`` cells (nothing without cells)."""
    rows = {k: s for k, s in by_seed(cells).items() if k[0] != "none"}
    base = first_seeds(cells, mechanism="none")
    if not rows or not base:
        return []
    chance = t_interval(values(base, lambda m: m.utility.chance_threshold))
    adv_chance = t_interval(values(
        base, lambda m: m.attribute(next(iter(m.attributes))).chance_threshold))
    out = ["### Word-level mechanisms beside DP-Prompt (`lm_comparison`)", "",
           f"Baseline (unprivatized) utility {summary(base, utility)} (chance threshold "
           f"{chance[0]:.3f}), reference classifier {summary(base, REF)}; strongest attack on "
           f"the baseline {summary(base, adversary_f1)} macro-F1 (chance threshold "
           f"{adv_chance[0]:.3f}). Mean ± 95% t half-width over {len(base)} seeds; ε per word "
           "(word-level, metric DP on GloVe) or per generated token (DP-Prompt).", "",
           "| configuration | utility | reference classifier | strongest attack | CS | "
           "CS retained | perplexity ratio | unigram top-1 | LM-prior top-1 | chance top-1 |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k in sorted(rows, key=_order):
        s = rows[k]
        out.append(f"| {config_label(k)} | {summary(s, utility)} | {summary(s, REF)} | "
                   f"{summary(s, adversary_f1)} | {summary(s, CS)} | {summary(s, RETAINED)} | "
                   f"{summary(s, PPL, 2)} | {summary(s, UNIGRAM)} | {summary(s, LM)} | "
                   f"{summary(s, CHANCE)} |")
    out.append("")
    out += _lm_prior(rows) + _matched(rows)
    return out + [""]


def _lm_prior(rows: dict[tuple, dict[int, CellMetrics]]) -> list[str]:
    """How the LM-prior attacker compares with the unigram one, cell by cell and paired."""
    pairs = [(m, k) for k, s in rows.items() for m in s.values()
             if "reconstruction_lm" in m.measures]
    if not pairs:
        return []
    at_least = sum(1 for m, _ in pairs if LM(m) >= UNIGRAM(m))
    headline = sum(1 for m, _ in pairs
                   if m.measure("reconstruction_lm")["top1"]["rate"] >= UNIGRAM(m))
    lines = [f"- **LM prior vs unigram** (word-level cells, first 100 test documents): the "
             f"cross-fitted LM-prior attacker's top-1 is at least the unigram attacker's in "
             f"{at_least} of {len(pairs)} cells, the headline (the strongest guess) in "
             f"{headline} of {len(pairs)}. LM − unigram, paired per seed:"]
    for k in sorted({k for _, k in pairs}, key=_order):
        diff = t_interval(values(rows[k], lambda m: LM(m) - UNIGRAM(m)))
        lines.append(f"  - {config_label(k)}: {fmt_delta(diff)} (λ of the two folds, per seed: "
                     f"{_lambdas(rows[k])})")
    return lines


def _lambdas(seeds: dict[int, CellMetrics]) -> str:
    out = []
    for s in sorted(seeds):
        try:
            out.append(str(seeds[s].measure("reconstruction_lm")["lm_lambda"]))
        except KeyError:
            continue
    return "; ".join(out) or "–"


def _matched(rows: dict[tuple, dict[int, CellMetrics]]) -> list[str]:
    """Each document-level configuration beside the word-level ones at the same attack strength
    (overlapping intervals), paired over seeds."""
    words = {k: s for k, s in rows.items()
             if k[0] not in DOCUMENT_LEVEL and k[0] not in ("identity", "no_information")}
    lines = []
    for k in sorted((k for k in rows if k[0] in DOCUMENT_LEVEL), key=_order):
        a = t_interval(values(rows[k], adversary_f1))
        near = [w for w in sorted(words, key=_order)
                if _overlap(a, t_interval(values(words[w], adversary_f1)))]
        if not near:
            lines.append(f"- **{config_label(k)}** (attack {summary(rows[k], adversary_f1)}): no "
                         "word-level configuration at the same attack strength.")
            continue
        parts = [f"{config_label(w)} (attack {summary(words[w], adversary_f1)}): utility "
                 f"{fmt_delta(paired(rows[k], words[w], utility))}, CS "
                 f"{fmt_delta(paired(rows[k], words[w], CS))}" for w in near]
        lines.append(f"- **{config_label(k)}** (attack {summary(rows[k], adversary_f1)}) minus the "
                     "word-level configurations whose attack interval overlaps: "
                     + "; ".join(parts) + ".")
    return lines
