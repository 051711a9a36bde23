"""The common model interface, input/label handling, seeding and CPU thread control.

Every model is a small scikit-learn-like class::

    model = MODELS.create("bow", seed=0).fit(X_train, y_train, X_dev, y_dev)
    proba = model.predict_proba(X_test)      # (n, k)
    y_hat = model.predict(X_test)            # (n,) class ids, or (n, k) 0/1 for multilabel

Inputs ``X`` come in two kinds (see :func:`input_kind`):

* ``"text"``: a list of token lists (privatized text output, or the original tokens); a list of
  raw strings is accepted too and tokenized with :func:`bench.embeddings.tokenize`;
* ``"vectors"``: a list of ``(n_i, d)`` float arrays (privatized vectors, mapping ``none``).

Labels: 1-D int class ids (multiclass/binary: softmax over ``k`` classes) or a 2-D 0/1 matrix
(multilabel: one sigmoid per label, threshold 0.5 unless per-label thresholds were tuned).

Training "properly for an attack" (shared by the models that support it, see their cards):

* :func:`class_weights` -- balanced class weights (multiclass/binary, ``n / (k * n_c)``) or
  per-label ``pos_weight = n_neg / n_pos`` clipped to :data:`MAX_POS_WEIGHT` (multilabel), so a
  rare label or class is not simply never predicted (``"auto"``: only where the labels are
  imbalanced by more than :data:`IMBALANCE_RATIO`);
* :class:`EarlyStopping` -- dev macro-F1 after every epoch, the best epoch's weights kept,
  training stopped after ``patience`` epochs without improvement;
* :func:`tune_thresholds` -- per-label decision thresholds that maximise each label's dev F1
  (multilabel), stored as ``model.thresholds_`` and used by :meth:`Model.predict`.

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

from bench.defaults import DEFAULT_EMBEDDING, DEFAULT_VOCAB_SIZE
from bench.registry import declared_params

logger = logging.getLogger(__name__)

INPUT_KINDS = ("text", "vectors")
THREADS_ENV = "BENCH_TORCH_THREADS"
CLASS_WEIGHTS = ("auto", "balanced", None)
"""Values of the models' ``class_weight`` option (:func:`class_weights`)."""
IMBALANCE_RATIO = 2.0
"""``class_weight="auto"`` balances a label or a task only when its largest class (side) is more
than this many times its smallest."""
MAX_POS_WEIGHT = 50.0
"""Upper clip of the multilabel ``pos_weight`` (a label with 1 positive in 1,000 gets 50, not
999, so one document does not dominate the loss)."""
THRESHOLD_GRID = np.round(np.linspace(0.05, 0.95, 19), 2)
"""Candidate per-label decision thresholds tried on the dev split (0.05, 0.10, ..., 0.95)."""


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

    def decide(self, proba: np.ndarray, thresholds: np.ndarray | None = None) -> np.ndarray:
        """Predictions from probabilities: argmax (softmax) or ``p >= threshold`` per label.

        Args:
            proba: ``(n, k)`` probabilities.
            thresholds: per-label thresholds ``(k,)`` (multilabel only; default 0.5 each).
        """
        if self.multilabel:
            t = 0.5 if thresholds is None else np.asarray(thresholds, np.float64)[None, :]
            return (proba >= t).astype(np.int64)
        return proba.argmax(axis=1).astype(np.int64)


def class_weights(y: np.ndarray, info: LabelInfo, mode: str | None = "balanced",
                  max_pos_weight: float = MAX_POS_WEIGHT) -> np.ndarray | None:
    """Loss weights that balance the training labels (``None`` = unweighted).

    ``mode="balanced"``:

    * multilabel ``(n, k)`` 0/1 labels: BCE ``pos_weight`` per label, ``n_neg / n_pos`` clipped
      to at most ``max_pos_weight``; a label with no positive or no negative example gets 1.0
      (nothing to balance);
    * class ids: scikit-learn's "balanced" weights ``n / (k * n_c)``, ``k`` the number of classes
      present in ``y`` (so the weights average 1 over the training documents); a class absent
      from ``y`` gets 1.0 (it never is a target, so its weight is never used).

    ``mode="auto"`` (the models' default) balances only where the labels are imbalanced: the
    same weights, but a label whose larger side (positives or negatives) is at most
    :data:`IMBALANCE_RATIO` times its smaller side keeps ``pos_weight`` 1, and class ids whose
    largest class is at most that ratio times the smallest present class get no weights at
    all. Measured with the ``lstm`` on the BBC topics (5 classes, largest/smallest 1.45 on the
    train split): balanced weights cost 0.02-0.07 test macro-F1 (means over 2-5 seeds), while
    the rare entity labels (pos_weight 6-47) are not predicted at all without them.

    ``mode=None``: ``None``.

    Returns:
        ``(info.n_outputs,)`` float64 weights, or ``None`` for an unweighted loss.
    """
    if mode not in CLASS_WEIGHTS:
        raise ValueError(f"class_weight must be one of {CLASS_WEIGHTS}, got {mode!r}")
    if mode is None:
        return None
    y = np.asarray(y)
    if info.multilabel:
        n_pos = y.sum(axis=0).astype(np.float64)
        n_neg = len(y) - n_pos
        w = np.ones(info.n_outputs)
        ok = (n_pos > 0) & (n_neg > 0)
        if mode == "auto":
            ok &= np.maximum(n_pos, n_neg) > IMBALANCE_RATIO * np.minimum(n_pos, n_neg)
        w[ok] = np.minimum(n_neg[ok] / n_pos[ok], max_pos_weight)
        return w
    counts = np.bincount(y, minlength=info.n_outputs).astype(np.float64)
    present = counts > 0
    if mode == "auto" and counts.max() <= IMBALANCE_RATIO * counts[present].min():
        return None
    w = np.ones(info.n_outputs)
    w[present] = len(y) / (present.sum() * counts[present])
    return w


def torch_loss(y: np.ndarray, info: LabelInfo, class_weight: str | None,
               device: str = "cpu"):
    """``(loss_fn, target tensor)`` on ``device``: BCE-with-logits (multilabel) or
    cross-entropy, weighted by :func:`class_weights` (``class_weight`` is its ``mode``)."""
    import torch

    w = class_weights(y, info, class_weight)
    w = None if w is None else torch.as_tensor(w, dtype=torch.float32, device=device)
    if info.multilabel:
        return (torch.nn.BCEWithLogitsLoss(pos_weight=w),
                torch.as_tensor(y, dtype=torch.float32, device=device))
    return (torch.nn.CrossEntropyLoss(weight=w),
            torch.as_tensor(y, dtype=torch.int64, device=device))


def check_class_weight(class_weight: str | None) -> str | None:
    """Validate a ``class_weight`` option (``"auto"``, ``"balanced"`` or ``None``)."""
    if class_weight not in CLASS_WEIGHTS:
        raise ValueError(f"class_weight must be 'auto', 'balanced' or None, got "
                         f"{class_weight!r}")
    return class_weight


def tune_thresholds(y_true: np.ndarray, proba: np.ndarray,
                    candidates: np.ndarray = THRESHOLD_GRID) -> np.ndarray:
    """Per-label thresholds that maximise each label's F1 on ``(y_true, proba)`` (the dev split).

    Each label's threshold is the candidate with the highest F1 of ``proba[:, j] >= t`` against
    ``y_true[:, j]``; ties (including a label with no positive dev example, where every
    candidate scores 0) go to the candidate nearest 0.5, so no dev evidence means 0.5.

    Args:
        y_true: ``(n, k)`` 0/1 dev labels.
        proba: ``(n, k)`` predicted per-label probabilities.
        candidates: thresholds to try (default :data:`THRESHOLD_GRID`).

    Returns:
        ``(k,)`` thresholds.
    """
    y = np.asarray(y_true).astype(bool)
    cand = np.asarray(candidates, np.float64)
    # (c, n, k) predictions for every candidate at once: tp, fp, fn per candidate and label
    pred = np.asarray(proba)[None, :, :] >= cand[:, None, None]
    tp = (pred & y[None]).sum(axis=1)
    fp = (pred & ~y[None]).sum(axis=1)
    fn = y.sum(axis=0)[None, :] - tp
    denom = 2 * tp + fp + fn
    f1 = np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0)  # (c, k)
    # lexicographic per label: the best F1 first, then the candidate nearest to 0.5
    order = np.lexsort((np.abs(cand - 0.5)[:, None].repeat(f1.shape[1], 1), -f1), axis=0)
    return cand[order[0]]


class EarlyStopping:
    """Keep the best epoch by dev score and say when to stop.

    Call :meth:`update` after every epoch with the dev score and the network; it stores a copy
    of the state dict when the score improves (strictly) and returns ``True`` once ``patience``
    epochs in a row brought no improvement. :meth:`restore` loads the best state back.

    Example:
        >>> stop = EarlyStopping(patience=2)
        >>> [stop.update(s, None) for s in (0.5, 0.7, 0.6, 0.65)]
        [False, False, False, True]
    """

    def __init__(self, patience: int) -> None:
        if int(patience) < 1:
            raise ValueError(f"patience must be >= 1, got {patience}")
        self.patience = int(patience)
        self.best_score = -np.inf
        self.best_epoch = 0
        """1-based epoch of the best score (0 before the first update)."""
        self.best_extra: Any = None
        """Whatever was passed as ``extra`` with the best score (e.g. its thresholds)."""
        self.epochs_seen = 0
        self._state: dict[str, Any] | None = None
        self._bad = 0

    def update(self, score: float, net: Any, extra: Any = None) -> bool:
        """Record one epoch's dev ``score``; ``True`` means: stop training now."""
        self.epochs_seen += 1
        if score > self.best_score:
            self.best_score, self.best_epoch, self.best_extra = score, self.epochs_seen, extra
            if net is not None:
                self._state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            self._bad = 0
            return False
        self._bad += 1
        return self._bad >= self.patience

    def restore(self, net: Any) -> None:
        """Load the best epoch's weights into ``net`` (no-op when nothing was stored)."""
        if self._state is not None:
            net.load_state_dict(self._state)


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
def torch_context(seed: int, num_threads: int | None, device: str = "cpu") -> Iterator[None]:
    """Seed torch (forked global RNG, restored afterwards) and set the thread count.

    Everything random inside (initialisation, dropout) then depends on ``seed`` only; on CPU the
    operations used here are deterministic, so the same seed gives the same model. The threads
    and the pinned torch settings come from :func:`bench.numeric.torch_threads`. On a CUDA
    ``device`` the GPU's generator is forked and seeded too (cuDNN's LSTM kernels are not
    bit-exact: a GPU cell is statistically, not bitwise, the CPU cell).
    """
    from bench.numeric import torch_threads

    with torch_threads(num_threads or default_threads()) as torch:
        gpus = [torch.device(device).index or 0] if device.startswith("cuda") else []
        with torch.random.fork_rng(devices=gpus):
            torch.manual_seed(seed)
            yield


@lru_cache(maxsize=4)
def public_embedding(name: str = DEFAULT_EMBEDDING, vocab_size: int = DEFAULT_VOCAB_SIZE):
    """The public embedding for text input, loaded once per process (:mod:`bench.embeddings`)."""
    from bench.embeddings import load_embedding

    return load_embedding(name, vocab_size)


class Model:
    """Base class: the interface every registered model implements.

    Subclasses set :attr:`name`, :attr:`version` and :attr:`accepts`, and implement
    :meth:`fit` and :meth:`predict_proba`. Their hyperparameters are declared once, as
    keyword-only constructor arguments stored under the same names: :meth:`params` reads them.
    """

    name: ClassVar[str] = "model"
    version: ClassVar[str] = "1"
    accepts: ClassVar[frozenset[str]] = frozenset(INPUT_KINDS)
    """Input kinds the model can train on (``text``, ``vectors``)."""
    not_params: ClassVar[frozenset[str]] = frozenset({"n_classes", "num_threads"})
    """Constructor arguments that are not hyperparameters, left out of :meth:`params`."""

    labels_: LabelInfo | None = None
    thresholds_: np.ndarray | None = None
    """Per-label decision thresholds tuned on dev (multilabel); ``None`` means 0.5."""

    def fit(self, X: Sequence[Any], y: np.ndarray, X_dev: Sequence[Any] | None = None,
            y_dev: np.ndarray | None = None) -> Model:
        """Train on ``(X, y)``; ``X_dev``/``y_dev`` may be used for model selection."""
        raise NotImplementedError

    def predict_proba(self, X: Sequence[Any]) -> np.ndarray:
        """``(n, k)`` class probabilities (rows sum to 1) or per-label probabilities."""
        raise NotImplementedError

    def predict(self, X: Sequence[Any]) -> np.ndarray:
        """Class ids ``(n,)``, or a ``(n, k)`` 0/1 matrix for multilabel targets."""
        return self._fitted().decide(self.predict_proba(X), self.thresholds_)

    def params(self) -> dict[str, Any]:
        """The model's hyperparameters (JSON-serialisable), for result files: the constructor's
        keyword arguments in signature order, as stored, less :attr:`not_params`
        (:func:`bench.registry.declared_params`)."""
        return declared_params(self, exclude=self.not_params)

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

    def _dev_score(self, proba: np.ndarray, y_dev: np.ndarray, tune: bool
                   ) -> tuple[float, np.ndarray | None]:
        """Dev macro-F1 of ``proba`` and, for multilabel with ``tune``, the tuned thresholds.

        The score is the macro-F1 the model would get on dev with those thresholds (it is what
        early stopping compares across epochs); class ids use argmax.
        """
        from bench.metrics.classification import macro_f1

        info = self._fitted()
        thr = tune_thresholds(y_dev, proba) if (info.multilabel and tune) else None
        return macro_f1(np.asarray(y_dev), info.decide(proba, thr)), thr

    def _epoch_end(self, msg: str, stopper: Any, net: Any, dev: tuple | None,
                   select: bool, tune: bool) -> bool:
        """After one training epoch of a torch model: score dev, let ``stopper``
        (:class:`EarlyStopping`) keep the best weights; True = stop training."""
        if not select:
            logger.debug(msg)
            return False
        score, thr = self._dev_score(self._proba(dev[0]), dev[1], tune)
        logger.debug("%s, dev macro-F1 %.4f", msg, score)
        return stopper.update(score, net, thr)

    def _training_end(self, epoch: int, stopper: Any, net: Any, dev: tuple | None,
                      select: bool, tune: bool) -> None:
        """After training: restore the best epoch's weights (``select``) and record
        ``epochs_run_``, ``best_epoch_``, ``dev_macro_f1_`` and ``thresholds_``."""
        self.epochs_run_ = epoch
        if select:
            stopper.restore(net)
            self.best_epoch_ = stopper.best_epoch
            self.dev_macro_f1_ = stopper.best_score
            self.thresholds_ = stopper.best_extra
        elif dev is not None and tune:
            self.dev_macro_f1_, self.thresholds_ = self._dev_score(
                self._proba(dev[0]), dev[1], tune)

    def _fitted(self) -> LabelInfo:
        if self.labels_ is None:
            raise RuntimeError(f"model {self.name!r} is not fitted; call fit() first")
        return self.labels_
