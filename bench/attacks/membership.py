"""Membership inference with shadow models, following TEM's protocol (Carvalho et al. 2021, 5.3).

Protocol (Carvalho et al. 2021, Sec. 5.3, after Shokri et al. 2017), in the dataset's
membership-inference splits (:mod:`bench.datasets`: ``mia_members`` = TR1,
``mia_nonmembers`` = TR2, ``mia_shadow`` = TE1 + TE2):

1. the *target* model T is trained on the members (TR1, privatized in the benchmark);
2. the shadow pool is split in two seeded halves: the *shadow* model S is trained on one
   ("in", TE2) and not on the other ("out", TE1);
3. the *attack* model A -- an MLP with two hidden layers of 64 ReLU units trained with Adam,
   batch size 64 (TEM) -- learns "in" vs "out" from S's output vectors on both halves;
4. A scores T's output vectors on members (TR1, "in") and non-members (TR2, "out"); the attack
   ROC AUC (``sklearn.metrics.roc_auc_score``), its accuracy, its accuracy on members (TPR) and
   on non-members (TNR) and the membership advantage TPR - FPR are reported. AUC 0.5 means
   the attack cannot tell members from non-members; lower is better for privacy.

Deviations and choices: ``n_shadow > 1`` trains several shadow models on different random
halves and pools their attack examples (Shokri et al.); TEM trains every model for 20 epochs,
which for scikit-learn's MLP means ``attack_epochs=20`` passes over the attack data (the
default here is 200: 20 passes leave the small attack MLP badly under-fitted on a few hundred
examples; the value is recorded). Whether the members are scored with their original or their
privatized text is the caller's choice (pass the documents the target should be queried with).

Example:
    >>> from bench.attacks import membership_inference
    >>> res = membership_inference("bow", X_mem, y_mem, X_non, y_non, X_shadow, y_shadow, seed=0)
    >>> res.auc, res.accuracy
"""

from __future__ import annotations

import copy
import logging
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.models import Model, make_model

logger = logging.getLogger(__name__)

FEATURES = ("output", "sorted", "output+label")


@dataclass
class MIAResult:
    """Outcome of one membership-inference attack."""

    metrics: dict[str, Any]
    """``mia_auc``, ``mia_accuracy``, ``mia_member_accuracy`` (TPR), ``mia_nonmember_accuracy``
    (TNR), ``mia_advantage``, ``shadow_auc`` (the attack on the shadow data it was trained on),
    ``target_member_accuracy`` / ``target_nonmember_accuracy`` (the target's task accuracy:
    the generalisation gap the attack exploits), sizes and timings."""
    scores: np.ndarray = field(repr=False)
    """Attack scores P(member) for members then non-members."""
    is_member: np.ndarray = field(repr=False)
    """Ground truth for :attr:`scores`."""
    target: Model = field(repr=False)
    """The (fitted) target model."""

    @property
    def auc(self) -> float:
        """Attack ROC AUC on members vs non-members."""
        return float(self.metrics["mia_auc"])

    @property
    def accuracy(self) -> float:
        """Attack accuracy (threshold 0.5) on members + non-members."""
        return float(self.metrics["mia_accuracy"])


def attack_features(proba: np.ndarray, y: np.ndarray, kind: str = "output") -> np.ndarray:
    """Attack-model inputs from a model's output vectors.

    Args:
        proba: ``(n, k)`` output of ``predict_proba``.
        y: true labels (class ids or a 0/1 matrix), used by ``output+label``.
        kind: ``output`` -- the output vector itself (TEM); ``sorted`` -- sorted in decreasing
            order (class-agnostic, Salem et al. 2019); ``output+label`` -- the output vector and
            the one-hot (or multilabel 0/1) true label (Shokri et al. 2017 use one attack model
            per class; appending the label gives one model the same information).
    """
    proba = np.asarray(proba, dtype=np.float64)
    if kind == "output":
        return proba
    if kind == "sorted":
        return -np.sort(-proba, axis=1)
    if kind == "output+label":
        y = np.asarray(y)
        onehot = y.astype(np.float64) if y.ndim == 2 else np.eye(proba.shape[1])[y]
        return np.hstack([proba, onehot])
    raise ValueError(f"features must be one of {FEATURES}, got {kind!r}")


def _factory(model: str | Model | Callable[[], Model], model_params: dict[str, Any] | None,
             n_classes: int | None) -> Callable[[int], Model]:
    if isinstance(model, str):
        def build(seed: int) -> Model:
            params = dict(model_params or {})
            params["seed"] = seed
            if n_classes is not None:
                params.setdefault("n_classes", n_classes)
            return make_model(model, **params)
        return build
    if isinstance(model, Model):
        if model.labels_ is not None:
            raise ValueError("pass an unfitted model as the template (or a name); use target= "
                             "for an already trained target")
        return lambda seed: copy.deepcopy(model)
    if callable(model):
        return lambda seed: model()
    raise TypeError(f"model must be a name, an unfitted Model or a factory, got {type(model)}")


def _subset(X: Sequence[Any], idx: np.ndarray) -> list[Any]:
    return [X[i] for i in idx.tolist()]


def membership_inference(model: str | Model | Callable[[], Model], X_members: Sequence[Any],
                         y_members: np.ndarray, X_nonmembers: Sequence[Any],
                         y_nonmembers: np.ndarray, X_shadow: Sequence[Any], y_shadow: np.ndarray,
                         *, model_params: dict[str, Any] | None = None,
                         target: Model | None = None, features: str = "output",
                         n_shadow: int = 1, attack_epochs: int = 200, seed: int = 0
                         ) -> MIAResult:
    """Run TEM's shadow-model membership-inference attack (see the module docstring).

    Args:
        model: the target/shadow architecture: a registry name (built with ``model_params``
            and a seed), an unfitted model used as a template (deep-copied), or a factory.
        X_members: documents the target is trained on (TR1) and queried with.
        y_members: their labels.
        X_nonmembers: documents the target never saw (TR2).
        y_nonmembers: their labels.
        X_shadow: the shadow pool (TE1 + TE2), split in halves "in" / "out".
        y_shadow: its labels.
        model_params: hyperparameters when ``model`` is a name.
        target: an already fitted target model (then it is not retrained on the members).
        features: attack features, see :func:`attack_features`.
        n_shadow: number of shadow models (TEM: 1).
        attack_epochs: passes of the attack MLP over its training data.
        seed: seeds the shadow split, the shadow/target models and the attack model.

    Returns:
        An :class:`MIAResult`.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import roc_auc_score
    from sklearn.neural_network import MLPClassifier

    if features not in FEATURES:
        raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
    if n_shadow < 1:
        raise ValueError(f"n_shadow must be >= 1, got {n_shadow}")
    y_members, y_nonmembers, y_shadow = map(np.asarray, (y_members, y_nonmembers, y_shadow))
    for name, X, y in (("members", X_members, y_members), ("non-members", X_nonmembers,
                       y_nonmembers), ("shadow", X_shadow, y_shadow)):
        if len(X) != len(y):
            raise ValueError(f"{name}: {len(X)} documents but {len(y)} labels")
        if len(X) < 2:
            raise ValueError(f"{name}: at least 2 documents needed, got {len(X)}")
    n_classes = None
    if y_members.ndim == 1:
        n_classes = int(max(y.max() for y in (y_members, y_nonmembers, y_shadow))) + 1
    build = _factory(model, model_params, n_classes)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()

    # 2-3: shadow models on random halves of the shadow pool -> attack training data
    feats, labels = [], []
    for s in range(n_shadow):
        perm = rng.permutation(len(X_shadow))
        half = len(perm) // 2
        s_in, s_out = perm[:half], perm[half:]
        shadow = build(seed + 1 + s).fit(_subset(X_shadow, s_in), y_shadow[s_in])
        for idx, member in ((s_in, 1), (s_out, 0)):
            proba = shadow.predict_proba(_subset(X_shadow, idx))
            width = proba.shape[1]
            feats.append(attack_features(proba, y_shadow[idx], features))
            labels.append(np.full(len(idx), member))
    F_shadow, m_shadow = np.vstack(feats), np.concatenate(labels)
    attack = MLPClassifier(hidden_layer_sizes=(64, 64), activation="relu", solver="adam",
                           batch_size=64, max_iter=attack_epochs, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        attack.fit(F_shadow, m_shadow)
    shadow_auc = float(roc_auc_score(m_shadow, attack.predict_proba(F_shadow)[:, 1]))

    # 1 + 4: the target, queried with members and non-members
    if target is None:
        target = build(seed).fit(X_members, y_members)
    p_mem = target.predict_proba(X_members)
    p_non = target.predict_proba(X_nonmembers)
    if p_mem.shape[1] != width:
        raise ValueError("target and shadow models have different output widths; pass "
                         "n_classes to the models so every class has a column")
    F_target = np.vstack([attack_features(p_mem, y_members, features),
                          attack_features(p_non, y_nonmembers, features)])
    is_member = np.concatenate([np.ones(len(p_mem), int), np.zeros(len(p_non), int)])
    scores = attack.predict_proba(F_target)[:, 1]
    guess = (scores >= 0.5).astype(int)
    tpr = float(guess[is_member == 1].mean())
    tnr = float(1 - guess[is_member == 0].mean())
    decide = target.labels_.decide if target.labels_ is not None else None
    metrics: dict[str, Any] = {
        "mia_auc": float(roc_auc_score(is_member, scores)),
        "mia_accuracy": float((guess == is_member).mean()),
        "mia_member_accuracy": tpr,
        "mia_nonmember_accuracy": tnr,
        "mia_advantage": tpr - (1 - tnr),
        "shadow_auc": shadow_auc,
        "n_members": len(p_mem),
        "n_nonmembers": len(p_non),
        "n_shadow_examples": len(m_shadow),
        "features": features,
        "n_shadow": n_shadow,
        "attack_epochs": attack_epochs,
        "seconds": time.perf_counter() - t0,
    }
    if decide is not None:
        metrics["target_member_accuracy"] = _acc(y_members, decide(p_mem))
        metrics["target_nonmember_accuracy"] = _acc(y_nonmembers, decide(p_non))
    logger.info("membership inference: AUC %.4f, accuracy %.4f (shadow AUC %.4f)",
                metrics["mia_auc"], metrics["mia_accuracy"], shadow_auc)
    return MIAResult(metrics, scores, is_member, target)


def _acc(y: np.ndarray, pred: np.ndarray) -> float:
    """Accuracy (multilabel: per-label accuracy)."""
    return float((np.asarray(y) == pred).mean())
