"""``bow``: a fastText-style averaged-embedding classifier, the fast default for big grids.

A document is the mean of its token vectors -- the public GloVe vectors of its tokens for text
input, or the given (privatized) vectors for vector input -- and a linear classifier
(scikit-learn ``LogisticRegression``, L-BFGS, on standardised features) predicts the label. This
is the downstream model of TEM (Carvalho et al. 2021, Sec. 5.3: "the sentiment classification
models follow the FastText classifier"; Joulin et al. 2017: averaged word representations fed to
a linear classifier), with the word vectors kept frozen (public GloVe) as in the thesis' LSTM
(Riecker 2023, Sec. 4.3) so text and vector input are treated alike. Logistic regression is
convex and solved exactly, so a fit is deterministic and takes well under a second on BBC.

Training for an attack (version 2; the utility model gets the same): ``class_weight="auto"``
(default) weights each multilabel head's positive class by ``n_neg / n_pos`` clipped at 50, and
the classes of a 1-D task by ``n / (k * n_c)``, wherever a label or task is imbalanced by more
than 2:1 (:func:`~bench.models.base.class_weights`, the same weights as the ``lstm``'s loss;
``"balanced"`` weights every task, ``None`` none), so rare labels such as the BBC entities are
predicted at all; ``tune_thresholds=True`` (default, multilabel only) picks each label's
decision threshold on the dev split when ``fit`` gets one
(:func:`~bench.models.base.tune_thresholds`; 0.5 otherwise). No early stopping: the fit is
exact. ``class_weight=None, tune_thresholds=False`` is version 1.

Text input: out-of-vocabulary tokens (not in the public vocabulary) are left out of the mean; a
document with no known token is the zero vector.

``word_features=True`` (text input only; off by default, so the utility model is unchanged)
appends a binary bag of words over the *training* documents' vocabulary to the standardised
mean vector: one trainable weight per training word, which is what fastText's trainable word
vectors give a linear classifier (Joulin et al. 2017, Sec. 2.1: the averaged *learned* word
representations). With weak regularisation (large ``C``) this model can memorise its training
set, as TEM's fastText target trained for 20 epochs does (Carvalho et al. 2021, Sec. 5.3);
the membership-inference attack uses it for its memorising target
(:data:`bench.attacks.membership.MEMORISING_PARAMS`).

Example:
    >>> from bench.models import MODELS
    >>> m = MODELS.create("bow", C=1.0).fit([["good", "film"], ["bad", "film"]], np.array([1, 0]))
    >>> m.predict([["good"]])
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.defaults import DEFAULT_EMBEDDING, DEFAULT_VOCAB_SIZE
from bench.models.base import (
    Model,
    as_token_lists,
    check_class_weight,
    class_weights,
    public_embedding,
)

logger = logging.getLogger(__name__)


def mean_vectors(X: Sequence[Any], kind: str, embedding: Any = None) -> np.ndarray:
    """``(n, d)`` document vectors: the mean of each document's token vectors.

    Args:
        X: token lists (``kind="text"``) or ``(n_i, d)`` arrays (``kind="vectors"``).
        kind: ``"text"`` or ``"vectors"``.
        embedding: the public :class:`~bench.embeddings.Embedding` for text input.
    """
    if kind == "vectors":
        d = X[0].shape[1]
        out = np.zeros((len(X), d))
        for i, x in enumerate(X):  # one vectorised mean per document
            if len(x):
                out[i] = x.mean(axis=0)
        return out
    docs = as_token_lists(X)
    lengths = np.fromiter((len(t) for t in docs), np.int64, len(docs))
    flat = [t for doc in docs for t in doc]
    ids, oov = embedding.encode(flat, "unk")
    vecs = embedding.vectors[np.where(oov, 0, ids)] * (~oov)[:, None]
    known = (~oov).astype(np.float64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    sums = np.zeros((len(docs), embedding.dim))
    counts = np.zeros(len(docs))
    nonempty = lengths > 0
    if flat:
        sums[nonempty] = np.add.reduceat(vecs, starts[nonempty], axis=0)
        counts[nonempty] = np.add.reduceat(known, starts[nonempty])
    return sums / np.maximum(counts, 1.0)[:, None]


class BowClassifier(Model):
    """Mean of (public or privatized) token vectors -> logistic regression.

    Args:
        C: inverse L2 regularisation strength of the logistic regression.
        max_iter: L-BFGS iterations.
        embedding: public embedding name for text input (``bench.embeddings`` registry).
        vocab_size: public vocabulary size for text input.
        class_weight: ``"auto"`` (balance imbalanced labels/tasks only), ``"balanced"``
            (always) or None (unweighted); see the module docstring.
        tune_thresholds: multilabel: per-label decision thresholds chosen on dev.
        word_features: also a binary bag of the training vocabulary's words (text input only;
            see the module docstring).
        n_classes: number of classes when the training labels miss some (1-D labels only).
        seed: ``random_state`` (L-BFGS is deterministic; kept for the common signature).
    """

    name = "bow"
    version = "2"
    accepts = frozenset({"text", "vectors"})

    def __init__(self, *, C: float = 1.0, max_iter: int = 1000, embedding: str = DEFAULT_EMBEDDING,
                 vocab_size: int = DEFAULT_VOCAB_SIZE, class_weight: str | None = "auto",
                 tune_thresholds: bool = True, word_features: bool = False,
                 n_classes: int | None = None, seed: int = 0) -> None:
        if C <= 0:
            raise ValueError(f"C must be > 0, got {C}")
        self.class_weight = check_class_weight(class_weight)
        self.tune_thresholds = bool(tune_thresholds)
        self.word_features = bool(word_features)
        self.C = float(C)
        self.max_iter = int(max_iter)
        self.embedding = embedding
        self.vocab_size = int(vocab_size)
        self.n_classes = n_classes
        self.seed = int(seed)

    def _features(self, X: Sequence[Any]) -> np.ndarray:
        kind = self._check_input(X)
        if getattr(self, "kind_", kind) != kind:
            raise ValueError(f"model was fitted on {self.kind_} input, got {kind}")
        emb = public_embedding(self.embedding, self.vocab_size) if kind == "text" else None
        feats = mean_vectors(X, kind, emb)
        if hasattr(self, "dim_") and feats.shape[1] != self.dim_:
            raise ValueError(f"model was fitted on {self.dim_}-d vectors, got {feats.shape[1]}")
        return feats

    def fit(self, X: Sequence[Any], y: np.ndarray, X_dev: Sequence[Any] | None = None,
            y_dev: np.ndarray | None = None) -> BowClassifier:
        """Fit the scaler and the logistic regression; dev data only tunes multilabel thresholds."""
        from sklearn.preprocessing import StandardScaler

        y, info = self._check_labels(X, y, self.n_classes)
        for attr in ("kind_", "dim_", "labels_", "thresholds_"):
            self.__dict__.pop(attr, None)
        self.dev_macro_f1_: float | None = None
        self.kind_ = self._check_input(X)
        feats = self._features(X)
        self.dim_ = feats.shape[1]
        self.scaler_ = StandardScaler().fit(feats)
        Z = self.scaler_.transform(feats)
        if self.word_features:
            if self.kind_ != "text":
                raise ValueError("word_features=True needs text input (token lists), got vectors")
            flat = [t for doc in as_token_lists(X) for t in doc]
            self.words_ = np.unique(np.asarray(flat, dtype=object)) if flat else np.zeros(0, object)
            Z = self._with_words(X, Z)
        w = class_weights(y, info, self.class_weight)
        if info.multilabel:
            self.heads_ = [self._fit_head(Z, y[:, j], None if w is None else {0: 1.0, 1: w[j]})
                           for j in range(info.n_outputs)]
        else:
            cw = None if w is None else {int(c): w[c] for c in np.unique(y)}
            self.heads_ = [self._fit_head(Z, y, cw)]
        self.labels_ = info
        if (info.multilabel and self.tune_thresholds and X_dev is not None and y_dev is not None
                and len(X_dev)):
            self.dev_macro_f1_, self.thresholds_ = self._dev_score(
                self.predict_proba(X_dev), np.asarray(y_dev), True)
        return self

    def _fit_head(self, Z: np.ndarray, y: np.ndarray, weights: dict[int, float] | None) -> Any:
        from sklearn.linear_model import LogisticRegression

        classes = np.unique(y)
        if len(classes) == 1:  # a label that never (or always) occurs: constant prediction
            return ("constant", int(classes[0]))
        return LogisticRegression(C=self.C, max_iter=self.max_iter, class_weight=weights,
                                  random_state=self.seed).fit(Z, y)

    def predict_proba(self, X: Sequence[Any]) -> np.ndarray:
        """Class probabilities (see :meth:`Model.predict_proba`)."""
        info = self._fitted()
        Z = self.scaler_.transform(self._features(X))
        if self.word_features:
            Z = self._with_words(X, Z)
        if info.multilabel:
            cols = [self._head_proba(h, Z, 2)[:, 1] for h in self.heads_]
            return np.stack(cols, axis=1)
        return self._head_proba(self.heads_[0], Z, info.n_outputs)

    def _with_words(self, X: Sequence[Any], Z: np.ndarray) -> Any:
        """``[Z | binary bag of the training words]`` as a sparse CSR matrix (vectorised)."""
        import scipy.sparse as sparse

        docs = as_token_lists(X)
        lengths = np.fromiter((len(t) for t in docs), np.int64, len(docs))
        flat = [t for doc in docs for t in doc]
        cols = np.full(len(flat), -1, np.int64)
        if flat and len(self.words_):  # words_ is sorted (np.unique): binary search, no loop
            tokens = np.asarray(flat, dtype=object)
            pos = np.minimum(np.searchsorted(self.words_, tokens), len(self.words_) - 1)
            cols = np.where(self.words_[pos] == tokens, pos, -1)
        rows = np.repeat(np.arange(len(docs)), lengths)
        known = cols >= 0
        W = sparse.csr_matrix((np.ones(int(known.sum())), (rows[known], cols[known])),
                              shape=(len(docs), len(self.words_)))
        W.sum_duplicates()
        W.data[:] = 1.0  # presence, not counts
        return sparse.hstack([sparse.csr_matrix(Z), W], format="csr")

    @staticmethod
    def _head_proba(head: Any, Z: Any, k: int) -> np.ndarray:
        out = np.zeros((Z.shape[0], k))
        if isinstance(head, tuple):
            out[:, head[1]] = 1.0
            return out
        out[:, head.classes_] = head.predict_proba(Z)
        return out


class MajorityClassifier(Model):
    """Predicts the training prior: the mock model for quick end-to-end runs and a chance floor.

    ``predict_proba`` returns the class (or per-label) frequencies of the training labels, so
    ``predict`` gives the majority class (multilabel: every label present in >= half the texts).
    """

    name = "majority"
    version = "1"
    accepts = frozenset({"text", "vectors"})
    not_params = frozenset({"n_classes", "seed"})  # no hyperparameters: its record is {}

    def __init__(self, *, n_classes: int | None = None, seed: int = 0) -> None:
        self.n_classes = n_classes
        self.seed = seed

    def fit(self, X: Sequence[Any], y: np.ndarray, X_dev: Sequence[Any] | None = None,
            y_dev: np.ndarray | None = None) -> MajorityClassifier:
        """Record the training labels' class (or per-label) frequencies."""
        self._check_input(X)
        y, info = self._check_labels(X, y, self.n_classes)
        if info.multilabel:
            self.prior_ = y.mean(axis=0).astype(np.float64)
        else:
            self.prior_ = np.bincount(y, minlength=info.n_outputs) / len(y)
        self.labels_ = info
        return self

    def predict_proba(self, X: Sequence[Any]) -> np.ndarray:
        """The training frequencies, one row per text."""
        self._fitted()
        self._check_input(X)
        return np.tile(self.prior_, (len(X), 1))
