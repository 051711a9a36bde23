"""The measures' values (``settings.measures``, :mod:`bench.measures`) a configuration's cells
hold: one column per measured quantity, read the same way by the measures table of ``bench
report`` and by the leaderboard's points.

A measure's record (``CellMetrics.measures[name]``) is the measure's own (docs/measures.md);
the getters below read into it by the keys each measure documents.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bench.analysis.results import Group, dig
from bench.results.sections import CellMetrics

Getter = Callable[[CellMetrics], Any]

def _at(measure: str, *path: str) -> Getter:
    """The getter of ``path`` in measure ``measure``'s own record."""
    return lambda m: dig(m.measure(measure), *path)


def _rate(measure: str, key: str) -> tuple[Getter, Getter]:
    """Getters of a ``{"rate", "ci"}`` record's value and interval."""
    return _at(measure, key, "rate"), _at(measure, key, "ci")


def _linkage_chance(m: CellMetrics) -> Any:
    return (m.measure("linkage").get("chance_top1") if m.measure("linkage")
            else m.measure("linkage_minilm").get("chance_top1"))


def _ratio_ci(m: CellMetrics) -> Any:
    ci = dig(m.measure("perplexity_smollm2"), "log_ratio_ci")
    return None if ci is None else [math.exp(x) for x in ci]


COLUMNS: tuple[tuple[str, str, Getter, Getter | None], ...] = (
    ("ref_utility", "Reference utility (tf-idf + LR)", _at("reference_utility", "macro_f1"),
     _at("reference_utility", "macro_f1_ci95")),
    ("ref_utility_original", "Reference utility, original test text",
     _at("reference_utility", "original_test_macro_f1"),
     _at("reference_utility", "original_test_macro_f1_ci95")),
    ("recon_top1", "Reconstruction top-1", *_rate("reconstruction", "top1")),
    ("recon_top5", "Reconstruction top-5", *_rate("reconstruction", "top5")),
    ("recon_unchanged", "Unchanged (naive guess)", *_rate("reconstruction", "unchanged")),
    ("recon_chance", "Chance top-1", _at("reconstruction", "chance_top1"), None),
    ("recon_lm_top1", "Reconstruction top-1, LM prior (strongest)",
     *_rate("reconstruction_lm", "top1")),
    ("recon_lm_only_top1", "LM-prior attacker top-1", *_rate("reconstruction_lm", "lm_top1")),
    ("recon_lm_map_top1", "Unigram attacker top-1 on the LM's tokens",
     *_rate("reconstruction_lm", "map_top1")),
    ("s_w", "S_w (mean)", _at("s_w", "s_w_mean"), None),
    ("link_top1", "Linkage top-1 (tf-idf)", _at("linkage", "top1"), _at("linkage", "top1_ci")),
    ("link_mrr", "Linkage MRR (tf-idf)", _at("linkage", "mrr"), _at("linkage", "mrr_ci")),
    ("link_minilm_top1", "Linkage top-1 (MiniLM)", _at("linkage_minilm", "top1"),
     _at("linkage_minilm", "top1_ci")),
    ("link_chance", "Linkage chance top-1", _linkage_chance, None),
    ("similarity_cs", "Semantic similarity CS (MiniLM)", _at("similarity_minilm", "cosine"),
     _at("similarity_minilm", "cosine_ci")),
    ("similarity_chance", "CS chance (other originals)", _at("similarity_minilm", "chance_cosine"),
     None),
    ("similarity_retained", "CS retained", _at("similarity_minilm", "retained"),
     _at("similarity_minilm", "retained_ci")),
    ("perplexity", "Perplexity (SmolLM2)", _at("perplexity_smollm2", "perplexity"), None),
    ("perplexity_original", "Perplexity of the originals",
     _at("perplexity_smollm2", "original_perplexity"), None),
    ("perplexity_ratio", "Perplexity ratio (1 = as fluent as the original)",
     _at("perplexity_smollm2", "ratio"), _ratio_ci),
    ("tpr_1pct", "MIA TPR@1% FPR", _at("mia_low_fpr", "tpr_at_fpr_0.01", "tpr"),
     _at("mia_low_fpr", "tpr_at_fpr_0.01", "ci")),
    ("tpr_01pct", "MIA TPR@0.1% FPR", _at("mia_low_fpr", "tpr_at_fpr_0.001", "tpr"),
     _at("mia_low_fpr", "tpr_at_fpr_0.001", "ci")),
    ("rmia_auc", "RMIA AUC", _at("mia_rmia", "auc"), _at("mia_rmia", "auc_ci")),
    ("rmia_tpr_1pct", "RMIA TPR@1% FPR", _at("mia_rmia", "tpr_at_fpr_0.01", "tpr"),
     _at("mia_rmia", "tpr_at_fpr_0.01", "ci")),
)
"""(key, header, value, interval) of every column a measures table may have."""


def point_measures(g: Group) -> dict[str, float] | None:
    """``{column key: mean over seeds}`` of the :data:`COLUMNS` a group's cells hold (None:
    none), for the leaderboard's points."""
    out = {}
    for key, _header, get, _ci in COLUMNS:
        st = g.stat(get)
        if st is not None:
            out[key] = float(st.mean)
    return out or None


MEASURE_LABELS: dict[str, str] = {key: header for key, header, _g, _c in COLUMNS}
"""Column key -> its header (the leaderboard's ``measure_labels``)."""
