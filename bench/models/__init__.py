"""Downstream models: the utility model and the adversaries are trained with these.

Registered (lazily, so importing :mod:`bench.models` does not import torch):

* ``bow`` -- fastText-style mean of token vectors + logistic regression (TEM's downstream
  model; the fast default). Text or vector input.
* ``lstm`` -- the thesis' frozen-embedding LSTM (Riecker 2023, Table A.1). Text or vector input.
* ``transformer`` -- BERT-architecture MiniLM-L6 fine-tuned on text (the thesis' BERT role).
  Text input only.
* ``majority`` -- predicts the training prior (mock model, chance floor).

Every model implements :class:`~bench.models.base.Model`: ``fit(X, y, X_dev=None, y_dev=None)``,
``predict(X)``, ``predict_proba(X)``, and declares ``accepts`` (``{"text", "vectors"}`` or
``{"text"}``); :func:`check_model_input` tells the grid why a combination is skipped.

Example:
    >>> from bench.models import MODELS, check_model_input
    >>> check_model_input("transformer", "vectors")
    "model 'transformer' takes text input only; ..."
    >>> model = MODELS.create("bow", seed=0).fit(train_tokens, y_train)
    >>> y_hat = model.predict(test_tokens)
"""

from __future__ import annotations

from bench.models.base import (
    INPUT_KINDS,
    LabelInfo,
    Model,
    ModelInputError,
    input_kind,
    public_embedding,
)
from bench.registry import Registry

MODELS: Registry[type[Model]] = Registry("model")
MODELS.register_lazy("bow", "bench.models.bow:BowClassifier")
MODELS.register_lazy("lstm", "bench.models.lstm:LSTMClassifier")
MODELS.register_lazy("transformer", "bench.models.transformer:TransformerClassifier")
MODELS.register_lazy("majority", "bench.models.bow:MajorityClassifier")


def model_accepts(name: str) -> frozenset[str]:
    """Input kinds (``text``, ``vectors``) the model ``name`` can train on."""
    return MODELS.get(name).accepts


def check_model_input(name: str, kind: str) -> str | None:
    """``None`` when model ``name`` takes ``kind`` input, else the reason to skip the cell.

    Args:
        name: model registry name.
        kind: ``"text"`` (mapping nearest/vickrey, selection mechanisms, the original text) or
            ``"vectors"`` (additive mechanism with mapping ``none``).
    """
    if kind not in INPUT_KINDS:
        raise ValueError(f"input kind must be one of {INPUT_KINDS}, got {kind!r}")
    accepts = model_accepts(name)
    if kind in accepts:
        return None
    return (f"model {name!r} takes {' or '.join(sorted(accepts))} input only; mapping 'none' "
            f"with an additive mechanism outputs {kind}")


__all__ = [
    "INPUT_KINDS",
    "MODELS",
    "LabelInfo",
    "Model",
    "ModelInputError",
    "check_model_input",
    "input_kind",
    "model_accepts",
    "public_embedding",
]
