"""Attribute adversary: how well can the private attribute be read from the privatized text?

The adversary is any registered model trained on the privatized training split to predict the
private attribute (gender, named entities, ...) and evaluated on the privatized test split; its
macro-F1 gives the empirical privacy ``1 - F1`` (Riecker 2023, Sec. 4.2). The same function
trained on the *original* text gives the baseline the deltas are computed against.

Example:
    >>> from bench.attacks import attribute_adversary
    >>> res = attribute_adversary("bow", X_train, g_train, X_test, g_test, seed=0)
    >>> res.metrics["privacy"], res.chance_level
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.metrics.classification import chance_level, empirical_privacy, is_chance_level
from bench.models import Model, make_model

logger = logging.getLogger(__name__)


@dataclass
class AdversaryResult:
    """Outcome of one attribute attack."""

    metrics: dict[str, Any]
    """``privacy``, ``adversary_macro_f1``, ``adversary_accuracy``, ``adversary_per_class_f1``,
    ``chance_threshold``, ``chance_level`` (bool), ``fit_seconds``, ``predict_seconds``."""
    model: Model = field(repr=False)
    """The fitted adversary."""
    predictions: np.ndarray = field(repr=False)
    """Its predictions on the test split."""

    @property
    def privacy(self) -> float:
        """Empirical privacy ``1 - macro-F1``."""
        return float(self.metrics["privacy"])

    @property
    def chance_level(self) -> bool:
        """Whether the adversary did no better than a label-blind guesser."""
        return bool(self.metrics["chance_level"])


def attribute_adversary(model: str | Model, X_train: Sequence[Any], y_train: np.ndarray,
                        X_test: Sequence[Any], y_test: np.ndarray, *,
                        X_dev: Sequence[Any] | None = None, y_dev: np.ndarray | None = None,
                        model_params: dict[str, Any] | None = None, n_classes: int | None = None,
                        seed: int = 0) -> AdversaryResult:
    """Train an adversary on ``(X_train, y_train)`` and measure it on ``(X_test, y_test)``.

    Args:
        model: a registry name (constructed with ``model_params`` and ``seed``) or an unfitted
            model instance.
        X_train: privatized training documents (token lists or ``(n_i, d)`` arrays).
        y_train: the private attribute on the training split (1-D ids or a 0/1 matrix).
        X_test: privatized test documents.
        y_test: the private attribute on the test split.
        X_dev: optional dev documents passed to ``fit``.
        y_dev: their labels.
        model_params: model hyperparameters (when ``model`` is a name).
        n_classes: number of classes of a 1-D attribute (when a split misses some).
        seed: model seed and chance-level simulation seed.

    Returns:
        An :class:`AdversaryResult`; ``metrics`` holds the empirical privacy and a chance-level
        check against label-blind guessers using the training prior.
    """
    if isinstance(model, str):
        params = dict(model_params or {})
        params.setdefault("seed", seed)
        if n_classes is not None and np.asarray(y_train).ndim == 1:
            params.setdefault("n_classes", n_classes)
        model = make_model(model, **params)
    t0 = time.perf_counter()
    model.fit(X_train, y_train, X_dev, y_dev)
    t1 = time.perf_counter()
    pred = model.predict(X_test)
    t2 = time.perf_counter()
    y_test = np.asarray(y_test)
    metrics: dict[str, Any] = empirical_privacy(y_test, pred, n_classes)
    chance = chance_level(y_test, np.asarray(y_train), n_classes=n_classes, seed=seed)
    metrics["chance_threshold"] = chance.threshold
    metrics["chance_level"] = is_chance_level(metrics["adversary_macro_f1"], chance)
    metrics["fit_seconds"] = t1 - t0
    metrics["predict_seconds"] = t2 - t1
    logger.info("attribute adversary %s: macro-F1 %.4f (chance threshold %.4f), privacy %.4f",
                model.name, metrics["adversary_macro_f1"], chance.threshold, metrics["privacy"])
    return AdversaryResult(metrics, model, pred)
