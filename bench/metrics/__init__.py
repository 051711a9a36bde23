"""Metrics: utility, empirical privacy, chance level, deltas, rewrite metrics, attack scores.

Every metric a result file can hold is one :class:`Metric` registered in :data:`METRICS`: its
direction (``higher_is_better``, from the point of view of the privatization being evaluated),
label, decimals, bounds, version and kind, and -- for a rewrite metric -- its computation, so
reports read all of it instead of keeping their own tables (:mod:`bench.metrics.base`). The
definitions sit next to the code that computes them: :mod:`bench.metrics.classification`,
:mod:`bench.metrics.rewrite`, :mod:`bench.metrics.membership` (computed by
:mod:`bench.attacks.membership`) and :mod:`bench.metrics.loss`. Adding a rewrite metric is one
new definition (a plugin: one file and an entry point, docs/plugins.md).

Example:
    >>> from bench.metrics import METRICS, classification_scores, empirical_privacy
    >>> METRICS.get("privacy").higher_is_better
    True
    >>> empirical_privacy(np.array([0, 1]), np.array([0, 0]))["privacy"]
    0.6666666666666667
"""

from __future__ import annotations

from typing import Any

from bench.metrics.base import (
    KINDS,
    METRICS,
    Metric,
    higher_is_better,
    metric,
    metric_versions,
    register_metric,
    rewrite_metrics,
)
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
from bench.metrics.loss import LOSS
from bench.metrics.membership import MIA_ACCURACY, MIA_ADVANTAGE, MIA_AUC
from bench.metrics.rewrite import bertscore, bleu, n_w, rewrite_scores, rouge1


def __getattr__(name: str) -> Any:
    """``REWRITE_METRICS``: the names of the registered rewrite metrics, in their order (read
    when asked, so a plugin's rewrite metric is in it): the metrics ``settings.rewrite_metrics``
    adds to text-output cells, whose versions are part of those cells' hash. ROUGE-2/L ride
    along with ROUGE-1, from the same ``rouge-score`` call."""
    if name == "REWRITE_METRICS":
        return tuple(m.name for m in rewrite_metrics())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "KINDS",
    "LOSS",
    "METRICS",
    "MIA_ACCURACY",
    "MIA_ADVANTAGE",
    "MIA_AUC",
    "REWRITE_METRICS",
    "ChanceLevel",
    "Metric",
    "bertscore",
    "bleu",
    "chance_level",
    "classification_scores",
    "deltas",
    "empirical_privacy",
    "higher_is_better",
    "is_chance_level",
    "macro_f1",
    "metric",
    "metric_versions",
    "n_w",
    "per_class_f1",
    "register_metric",
    "rewrite_metrics",
    "rewrite_scores",
    "rouge1",
]
