"""The common model interface, input/label handling, seeding and CPU thread control.

Every model is a small scikit-learn-like class::

    model = make_model("bow", seed=0).fit(X_train, y_train, X_dev, y_dev)
    proba = model.predict_proba(X_test)      # (n, k)
    y_hat = model.predict(X_test)            # (n,) class ids, or (n, k) 0/1 for multilabel

Inputs ``X`` come in two kinds (see :func:`input_kind`):

* ``"text"``: a list of token lists (privatized text output, or the original tokens); a list of
  raw strings is accepted too and tokenized with :func:`bench.embeddings.tokenize`;
* ``"vectors"``: a list of ``(n_i, d)`` float arrays (privatized vectors, mapping ``none``).

Labels: 1-D int class ids (multiclass/binary: softmax over ``k`` classes) or a 2-D 0/1 matrix
(multilabel: one sigmoid per label, threshold 0.5).

Example:
    >>> from bench.models.base import input_kind, LabelInfo
    >>> input_kind([["a", "b"], ["c"]])
    'text'
    >>> LabelInfo.from_labels(np.array([0, 2, 1])).n_outputs
    3
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

logger = logging.getLogger(__name__)

INPUT_KINDS = ("text", "vectors")
THREADS_ENV = "BENCH_TORCH_THREADS"


class ModelInputError(ValueError):
    """Input of the wrong kind or shape for a model; the message says what was expected."""


def input_kind(X: Sequence[Any]) -> str:
    """Whether ``X`` is ``"text"`` (token lists or strings) or ``"vectors"`` ((n_i, d) arrays).

    Raises:
        ModelInputError: ``X`` is empty or of neither kind.
    """
    if len(X) == 0:
        raise ModelInputError("empty input: a model needs at least one document")
    first = X[0]
    if isinstance(first, np.ndarray):
        for i, x in enumerate(X):
            if not isinstance(x, np.ndarray) or x.ndim != 2:
                raise ModelInputError(
                    f"vector input: document {i} must be an (n_i, d) array, got "
                    f"{type(x).__name__} {getattr(x, 'shape', '')}")
        dims = {x.shape[1] for x in X}
        if len(dims) != 1:
            raise ModelInputError(f"vector input: documents have different dimensions {dims}")
        return "vectors"
    if isinstance(first, (str, list, tuple)):
        return "text"
    raise ModelInputError(
        f"input must be a list of token lists or of (n_i, d) arrays, got a list of "
        f"{type(first).__name__}")


def as_token_lists(X: Sequence[Any]) -> list[list[str]]:
    """Token lists for text input; raw strings are tokenized with the project tokenizer."""
    if any(isinstance(x, str) for x in X):
        from bench.embeddings import tokenize

        return [tokenize(x) if isinstance(x, str) else list(x) for x in X]
    return [list(x) for x in X]


@dataclass(frozen=True)
class LabelInfo:
    """What the labels a model was fitted on look like."""

    multilabel: bool
    """True for a 2-D 0/1 label matrix (one sigmoid per label)."""
    n_outputs: int
    """Number of classes (softmax) or of labels (sigmoids)."""

    @classmethod
    def from_labels(cls, y: np.ndarray, n_classes: int | None = None) -> LabelInfo:
        """Infer from ``y``: 2-D means multilabel; 1-D has ``max(y) + 1`` classes (at least 2).

        Args:
            y: labels.
            n_classes: number of classes when some do not occur in ``y`` (1-D only).
        """
        y = np.asarray(y)
        if y.ndim == 2:
            if y.size and not np.isin(y, (0, 1)).all():
                raise ModelInputError("multilabel targets must be 0/1")
            return cls(True, int(y.shape[1]))
        if y.ndim != 1:
            raise ModelInputError(
                f"labels must be 1-D class ids or a 2-D 0/1 matrix, got shape {y.shape}")
        if y.size and (y.min() < 0 or not np.issubdtype(y.dtype, np.integer)):
            raise ModelInputError("class labels must be non-negative integers")
        k = max(int(y.max()) + 1 if y.size else 0, 2, n_classes or 0)
        return cls(False, k)

    def decide(self, proba: np.ndarray) -> np.ndarray:
        """Predictions from probabilities: argmax (softmax) or ``p >= 0.5`` per label."""
        if self.multilabel:
            return (proba >= 0.5).astype(np.int64)
        return proba.argmax(axis=1).astype(np.int64)


def default_threads() -> int:
    """Torch CPU threads per model: ``$BENCH_TORCH_THREADS``, else 1.

    One thread per model is the default because the runner parallelises over cells (one
    process per core), and because on a small shared machine intra-op threads that spin while
    another process holds a core made the LSTM 5-10x *slower* (measured on 2 cores: a 32 x 100
    LSTM step 0.02 s with 1 thread, 0.07-0.7 s with 2). Set ``BENCH_TORCH_THREADS`` (or
    ``num_threads``) to use more, capped at the CPUs this process may use.
    """
    env = os.environ.get(THREADS_ENV)
    if not env:
        return 1
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(int(env), n))


@contextlib.contextmanager
def torch_context(seed: int, num_threads: int | None) -> Iterator[None]:
    """Seed torch (forked global RNG, restored afterwards) and set the thread count.

    Everything random inside (initialisation, dropout) then depends on ``seed`` only; on CPU the
    operations used here are deterministic, so the same seed gives the same model.
    """
    import torch

    old_threads = torch.get_num_threads()
    torch.set_num_threads(num_threads or default_threads())
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            yield
    finally:
        torch.set_num_threads(old_threads)


@lru_cache(maxsize=4)
def public_embedding(name: str = "glove-6b-50d", vocab_size: int = 50_000):
    """The public embedding for text input, loaded once per process (:mod:`bench.embeddings`)."""
    from bench.embeddings import load_embedding

    return load_embedding(name, vocab_size)


class Model:
    """Base class: the interface every registered model implements.

    Subclasses set :attr:`name`, :attr:`version` and :attr:`accepts`, and implement
    :meth:`fit` and :meth:`predict_proba`.
    """

    name: ClassVar[str] = "model"
    version: ClassVar[str] = "1"
    accepts: ClassVar[frozenset[str]] = frozenset(INPUT_KINDS)
    """Input kinds the model can train on (``text``, ``vectors``)."""

    labels_: LabelInfo | None = None

    def fit(self, X: Sequence[Any], y: np.ndarray, X_dev: Sequence[Any] | None = None,
            y_dev: np.ndarray | None = None) -> Model:
        """Train on ``(X, y)``; ``X_dev``/``y_dev`` may be used for model selection."""
        raise NotImplementedError

    def predict_proba(self, X: Sequence[Any]) -> np.ndarray:
        """``(n, k)`` class probabilities (rows sum to 1) or per-label probabilities."""
        raise NotImplementedError

    def predict(self, X: Sequence[Any]) -> np.ndarray:
        """Class ids ``(n,)``, or a ``(n, k)`` 0/1 matrix for multilabel targets."""
        return self._fitted().decide(self.predict_proba(X))

    def params(self) -> dict[str, Any]:
        """The model's hyperparameters (JSON-serialisable), for result files."""
        return {}

    # helpers -------------------------------------------------------------------------------

    def _check_input(self, X: Sequence[Any]) -> str:
        kind = input_kind(X)
        if kind not in self.accepts:
            raise ModelInputError(
                f"model {self.name!r} takes {' or '.join(sorted(self.accepts))} input, got "
                f"{kind}" + (" (privatized vectors need mapping 'nearest'/'vickrey' or a "
                             "vector model such as 'bow' or 'lstm')" if kind == "vectors" else ""))
        return kind

    def _check_labels(self, X: Sequence[Any], y: np.ndarray, n_classes: int | None = None
                      ) -> tuple[np.ndarray, LabelInfo]:
        y = np.asarray(y)
        if len(y) != len(X):
            raise ModelInputError(f"{len(X)} documents but {len(y)} labels")
        return y, LabelInfo.from_labels(y, n_classes)

    def _fitted(self) -> LabelInfo:
        if self.labels_ is None:
            raise RuntimeError(f"model {self.name!r} is not fitted; call fit() first")
        return self.labels_
