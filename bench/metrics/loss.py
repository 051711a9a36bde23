"""The loss a model reports on the test documents, described here (label, direction): a
rewriter's reconstruction loss (``rewrite.loss``, :mod:`bench.rewriters`) or a utility model's
(``utility.loss``); the report adds one loss row per model to the rewrite tables.

Example:
    >>> from bench.metrics import METRICS
    >>> METRICS.get("loss").label
    'Loss'
"""

from __future__ import annotations

from bench.metrics.base import Metric, register_metric

LOSS = register_metric(Metric(
    "loss", False, "a model's loss on the test documents where one is reported: a rewriter's "
    "reconstruction loss, mean per-token cross-entropy in nats (rewrite.loss; Huang et al. "
    "2024, Tables 1-3), a utility model's (utility.loss)", 0.0, None, label="Loss",
    kind="loss"))
"""A model's test loss (the rows the rewrite tables add per model, and the rewriter's)."""
