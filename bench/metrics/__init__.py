"""Metrics: utility, empirical privacy, chance level, deltas, rewrite metrics, attack scores.

Every metric a result file can hold is described once in :data:`METRICS` with its direction
(``higher_is_better``, from the point of view of the privatization being evaluated), so reports
read the direction instead of guessing. The functions live in
:mod:`bench.metrics.classification` and :mod:`bench.metrics.rewrite`.

Example:
    >>> from bench.metrics import METRICS, classification_scores, empirical_privacy
    >>> METRICS.get("privacy").higher_is_better
    True
    >>> empirical_privacy(np.array([0, 1]), np.array([0, 0]))["privacy"]
    0.6666666666666667
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.metrics.classification import (
    ChanceLevel,
    chance_level,
    classification_scores,
    deltas,
    empirical_privacy,
    is_chance_level,
    macro_f1,
    per_class_f1,
)
from bench.metrics.rewrite import bertscore, bleu, n_w, rewrite_scores, rouge1
from bench.registry import Registry


@dataclass(frozen=True)
class MetricInfo:
    """What one reported number means."""

    name: str
    """Key in ``metrics.json``."""
    higher_is_better: bool
    """Direction, from the privatization's point of view (utility up, privacy up, attack down)."""
    description: str
    """One line, with the source of the definition."""
    lower: float | None = 0.0
    """Smallest possible value (None: unbounded)."""
    upper: float | None = 1.0
    """Largest possible value (None: unbounded)."""
    version: str = "1"
    """Bumped when the computation changes."""


METRICS: Registry[MetricInfo] = Registry("metric")


def _add(info: MetricInfo) -> None:
    METRICS.register(info.name)(info)


for _info in (
    MetricInfo("macro_f1", True, "utility: macro-F1 of the utility model on the test split "
               "(Riecker 2023, Sec. 4.2)"),
    MetricInfo("accuracy", True, "utility: accuracy of the utility model (multilabel: exact "
               "match)"),
    MetricInfo("privacy", True, "empirical privacy: 1 - macro-F1 of the attribute adversary "
               "(Riecker 2023, Sec. 4.2; Coavoux et al. 2018)"),
    MetricInfo("adversary_macro_f1", False, "macro-F1 of the attribute adversary"),
    MetricInfo("adversary_accuracy", False, "accuracy of the attribute adversary"),
    MetricInfo("delta_utility", True, "utility_priv - utility_base (Riecker 2023, Sec. 4.2)",
               -1.0, 1.0),
    MetricInfo("delta_privacy", True, "privacy_priv - privacy_base (Riecker 2023, Sec. 4.2)",
               -1.0, 1.0),
    MetricInfo("tradeoff", True, "delta_utility + delta_privacy; > 0 is favourable "
               "(Riecker 2023, Sec. 4.2)", -2.0, 2.0),
    MetricInfo("chance_threshold", True, "macro-F1 a label-blind guesser reaches (95 % "
               "quantile); see bench.metrics.classification.ChanceLevel"),
    MetricInfo("n_w", True, "fraction of words unchanged, position-wise (Huang et al. 2024, "
               "Sec. 6); higher = closer to the original"),
    MetricInfo("rouge1", True, "ROUGE-1 recall vs the original text, rouge-score (Huang et al. "
               "2024)"),
    MetricInfo("bleu", True, "corpus BLEU vs the original text, sacrebleu (Huang et al. 2024)",
               0.0, 100.0),
    # 2: bench's own batching over bert-score's encoder and matching, with the original texts'
    #    embeddings cached per process (values move by ~1e-7)
    MetricInfo("bertscore", True, "BERTScore F1 vs the original text with the local MiniLM-L6 "
               "(Huang et al. 2024; Zhang et al. 2020)", -1.0, 1.0, version="2"),
    MetricInfo("mia_auc", False, "membership-inference attack ROC AUC, members vs non-members "
               "(Carvalho et al. 2021, Sec. 5: lower is better)"),
    MetricInfo("mia_accuracy", False, "membership-inference attack accuracy on members + "
               "non-members"),
    MetricInfo("mia_advantage", False, "membership advantage TPR - FPR of the attack", -1.0,
               1.0),
):
    _add(_info)

REWRITE_METRICS = ("n_w", "rouge1", "bleu", "bertscore")
"""The metrics ``settings.rewrite_metrics`` adds to text-output cells (ROUGE-2/L ride along
with ROUGE-1, from the same ``rouge-score`` call)."""


def metric_versions(names: Sequence[str]) -> str:
    """``"name=version,..."`` of the named metrics, sorted: part of the identity (hash) of every
    cell that computes them, so a bumped metric never reuses an old cell."""
    return ",".join(f"{n}={METRICS.get(n).version}" for n in sorted(names))


__all__ = [
    "METRICS",
    "REWRITE_METRICS",
    "ChanceLevel",
    "MetricInfo",
    "bertscore",
    "bleu",
    "chance_level",
    "classification_scores",
    "deltas",
    "empirical_privacy",
    "is_chance_level",
    "macro_f1",
    "metric_versions",
    "n_w",
    "per_class_f1",
    "rewrite_scores",
    "rouge1",
]
