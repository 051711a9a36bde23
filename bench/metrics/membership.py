"""The membership-inference metrics, computed by :mod:`bench.attacks.membership` (a shadow model
and a loss threshold, Carvalho et al. 2021, Sec. 5) and described here: label, direction,
bounds.

Example:
    >>> from bench.metrics import METRICS
    >>> METRICS.get("mia_auc").higher_is_better
    False
"""

from __future__ import annotations

from bench.metrics.base import Metric, register_metric

MIA_AUC = register_metric(Metric(
    "mia_auc", False, "membership-inference attack ROC AUC, members vs non-members "
    "(Carvalho et al. 2021, Sec. 5: lower is better)", label="MIA AUC", kind="membership"))
"""The attack's ROC AUC."""

MIA_ACCURACY = register_metric(Metric(
    "mia_accuracy", False, "membership-inference attack accuracy on members + non-members",
    label="MIA accuracy", kind="membership"))
"""The attack's accuracy."""

MIA_ADVANTAGE = register_metric(Metric(
    "mia_advantage", False, "membership advantage TPR - FPR of the attack", -1.0, 1.0,
    label="MIA advantage", kind="membership"))
"""The membership advantage (Yeom et al. 2018)."""
