"""``lexical``: a tf-idf + logistic-regression attribute adversary (fast, strong on words).

The adversary reads the privatized text as a bag of word 1- and 2-grams (tf-idf with sublinear
term frequency, terms in at least ``min_df`` training documents) and fits a logistic regression
with balanced class weights -- one-vs-rest for multilabel attributes, one binary head per label
-- on the privatized training split. The regularisation -- L1 or L2, and its inverse strength
``C`` -- is picked on the dev split (dev macro-F1 over ``penalties`` × ``C_grid``; the model
is then the one trained on the training split with that choice), exactly as the thesis'
adversaries are trained on the privatized training split and scored on the privatized test
split (Riecker 2023, Sec. 4.2). Why L1 is a candidate: an attribute that is one word in a long
document ("mentions iraq" in a 900-word article) has a tiny L2-normalised tf-idf weight, and an
L2-penalised model spreads its weight over co-occurring words and misses it (measured on BBC
entities, full text: macro-F1 0.64 with L2 at any C, 0.99 with L1); a sparse L1 model puts its
weight on the word itself. This is the standard
strong text-classification baseline (tf-idf + linear model; e.g. Joachims 1998, Wang & Manning
2012); on an attribute that is written in the text (an entity name) it reads it directly, which
is what an empirical-privacy measurement needs on unprivatized text.

The adversary takes text input only (token lists); privatized *vectors* (mapping ``none`` with
an additive mechanism) have no words to read.

Example:
    >>> from bench.attacks.lexical import LexicalAdversary
    >>> adv = LexicalAdversary(seed=0).fit(train_tokens, y_train, dev_tokens, y_dev)
    >>> adv.predict(test_tokens)
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.models.base import Model, as_token_lists

logger = logging.getLogger(__name__)

DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0)
PENALTIES = ("l1", "l2")
LIBLINEAR_MAX_ITER = 200
"""Solver iterations per head (a head that has not converged is a weak candidate that the dev
selection discards)."""
L1_MAX_C = 10.0
"""L1 candidates stop at this C: an L1 head at C = 100 is nearly unregularised and, on a
signal-free feature matrix (e.g. the informed adversary's posterior bag at small ε), liblinear
runs for minutes without converging (measured: 78 s for the five heads of one C on 480 BBC
documents; L2 at C = 100: 0.2 s)."""


def regularisation_grid(penalties: Sequence[str], C_grid: Sequence[float]
                        ) -> list[tuple[str, float]]:
    """``(penalty, C)`` candidates for the dev selection, in order (L1 only up to
    :data:`L1_MAX_C`)."""
    out = [(p, float(C)) for p in penalties for C in C_grid if p != "l1" or C <= L1_MAX_C]
    return out or [(p, float(min(C_grid))) for p in penalties]


def word_ngrams(tokens: Sequence[str]) -> list[str]:
    """Lower-cased word 1-grams and 2-grams of one token list (the tf-idf analyzer)."""
    toks = [t.lower() for t in tokens]
    return toks + [f"{a} {b}" for a, b in zip(toks, toks[1:])]


def _penalty_kwargs(penalty: str) -> dict[str, Any]:
    """scikit-learn >= 1.8 selects L1/L2 by ``l1_ratio`` (``penalty`` is deprecated there)."""
    import sklearn

    major, minor = (int(x) for x in sklearn.__version__.split(".")[:2])
    if (major, minor) >= (1, 8):
        return {"l1_ratio": 1.0 if penalty == "l1" else 0.0}
    return {"penalty": penalty}


def fit_linear_heads(Z: Any, y: np.ndarray, info: Any, C: float, penalty: str,
                     seed: int) -> list[Any]:
    """Class-weighted logistic-regression heads on features ``Z`` (shared by the ``lexical``
    and ``informed`` adversaries): one binary head per label (multilabel), else one head,
    one-vs-rest over the classes (liblinear is binary; scikit-learn >= 1.8 no longer wraps it
    implicitly). A label that never (or always) occurs gets a constant head."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    def head(target: np.ndarray) -> Any:
        classes = np.unique(target)
        if len(classes) == 1:
            return ("constant", int(classes[0]))
        clf = LogisticRegression(C=C, class_weight="balanced", solver="liblinear",
                                 max_iter=LIBLINEAR_MAX_ITER, random_state=seed,
                                 **_penalty_kwargs(penalty))
        if len(classes) > 2:
            clf = OneVsRestClassifier(clf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # liblinear convergence chatter
            return clf.fit(Z, target)

    if info.multilabel:
        return [head(y[:, j]) for j in range(info.n_outputs)]
    return [head(y)]


def linear_heads_proba(heads: list[Any], Z: Any, info: Any) -> np.ndarray:
    """Probabilities of :func:`fit_linear_heads`' heads: ``(n, labels)`` for multilabel, else
    ``(n, classes)`` (one-vs-rest rows are renormalised by scikit-learn)."""
    def proba(h: Any, k: int) -> np.ndarray:
        out = np.zeros((Z.shape[0], k))
        if isinstance(h, tuple):
            out[:, h[1]] = 1.0
        else:
            out[:, h.classes_] = h.predict_proba(Z)
        return out

    if info.multilabel:
        return np.stack([proba(h, 2)[:, 1] for h in heads], axis=1)
    return proba(heads[0], info.n_outputs)


class LexicalAdversary(Model):
    """tf-idf word 1-2-grams + class-weighted logistic regression, ``C`` picked on dev.

    Args:
        C: a fixed inverse regularisation strength; ``None`` (default) picks it from ``C_grid``
            on the dev split (``C = 10`` when no dev split is given).
        C_grid: candidate values of ``C``.
        penalties: candidate penalties, ``"l1"`` and/or ``"l2"`` (picked on dev with ``C``;
            the first one when there is no dev split).
        min_df: a term must occur in at least this many training documents (falls back to 1
            when that leaves no term, e.g. on a tiny corpus).
        max_features: keep at most this many terms (by training frequency).
        n_classes: number of classes when the training labels miss some (1-D labels only).
        seed: ``random_state`` of the solver (liblinear; deterministic for a given seed).
    """

    name = "lexical"
    version = "1"
    accepts = frozenset({"text"})

    def __init__(self, *, C: float | None = None, C_grid: Sequence[float] = DEFAULT_C_GRID,
                 penalties: Sequence[str] = PENALTIES, min_df: int = 2,
                 max_features: int | None = 200_000, n_classes: int | None = None,
                 seed: int = 0) -> None:
        if C is not None and not C > 0:
            raise ValueError(f"lexical: C must be > 0, got {C}")
        grid = tuple(float(c) for c in C_grid)
        if not grid or any(not c > 0 for c in grid):
            raise ValueError(f"lexical: C_grid must be a non-empty list of values > 0, got "
                             f"{list(C_grid)}")
        pens = tuple(penalties)
        if not pens or any(p not in PENALTIES for p in pens):
            raise ValueError(f"lexical: penalties must be a non-empty list of {PENALTIES}, got "
                             f"{list(penalties)}")
        if int(min_df) < 1:
            raise ValueError(f"lexical: min_df must be >= 1, got {min_df}")
        self.C = None if C is None else float(C)
        self.C_grid = grid
        self.penalties = pens
        self.min_df = int(min_df)
        self.max_features = None if max_features is None else int(max_features)
        self.n_classes = n_classes
        self.seed = int(seed)

    def params(self) -> dict[str, Any]:
        """The settings (:meth:`Model.params`) and, once fitted, the chosen ``C`` and penalty."""
        return {**super().params(), "chosen_C": getattr(self, "C_", None),
                "chosen_penalty": getattr(self, "penalty_", None)}

    # -- features ----------------------------------------------------------------------------
    def _vectorizer(self, min_df: int):
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(analyzer=word_ngrams, sublinear_tf=True, min_df=min_df,
                               max_features=self.max_features, dtype=np.float64)

    def _docs(self, X: Sequence[Any]) -> list[list[str]]:
        self._check_input(X)
        return as_token_lists(X)

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, X: Sequence[Any], y: np.ndarray, X_dev: Sequence[Any] | None = None,
            y_dev: np.ndarray | None = None) -> LexicalAdversary:
        """Fit tf-idf and the classifier on ``(X, y)``; pick ``C`` on ``(X_dev, y_dev)``."""
        y, info = self._check_labels(X, y, self.n_classes)
        docs = self._docs(X)
        try:
            self.vectorizer_ = self._vectorizer(self.min_df)
            Z = self.vectorizer_.fit_transform(docs)
        except ValueError:  # "After pruning, no terms remain": tiny corpus
            self.vectorizer_ = self._vectorizer(1)
            Z = self.vectorizer_.fit_transform(docs)
        self.labels_ = info
        has_dev = X_dev is not None and y_dev is not None
        Cs = [self.C] if self.C is not None else (list(self.C_grid) if has_dev else [10.0])
        candidates = (regularisation_grid(self.penalties, Cs) if has_dev
                      else [(self.penalties[0], Cs[0])])
        Zdev = self.vectorizer_.transform(self._docs(X_dev)) if len(candidates) > 1 else None
        best = None
        for pen, C in candidates:
            heads = fit_linear_heads(Z, y, info, C, pen, self.seed)
            if Zdev is None:
                best = (None, pen, C, heads)
                break
            from bench.metrics.classification import macro_f1

            pred = info.decide(linear_heads_proba(heads, Zdev, info))
            score = macro_f1(np.asarray(y_dev), pred, None if info.multilabel else
                             info.n_outputs)
            if best is None or score > best[0]:  # ties: the first (l1 before l2, small C)
                best = (score, pen, C, heads)
        self.dev_macro_f1_, self.penalty_, self.C_, self.heads_ = best
        return self

    # -- prediction ----------------------------------------------------------------------------
    def predict_proba(self, X: Sequence[Any]) -> np.ndarray:
        """Attribute probabilities (see :meth:`Model.predict_proba`)."""
        info = self._fitted()
        return linear_heads_proba(self.heads_, self.vectorizer_.transform(self._docs(X)), info)
