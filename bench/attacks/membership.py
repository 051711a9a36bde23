"""Membership inference: TEM's shadow-model attack and the loss-threshold attack.

Two attacks score the same target model T on the dataset's membership-inference splits
(:mod:`bench.datasets`: ``mia_members`` = TR1, ``mia_nonmembers`` = TR2, ``mia_shadow`` =
TE1 + TE2); the headline is the strongest of them (the higher AUC).

**Shadow-model attack** (``shadow``; Carvalho et al. 2021, Sec. 5.3, after Shokri et al. 2017):

1. the *target* model T is trained on the members (TR1, privatized in the benchmark);
2. the shadow pool is split in two seeded halves: the *shadow* model S is trained on one
   ("in", TE2) and not on the other ("out", TE1);
3. the *attack* model A -- an MLP with two hidden layers of 64 ReLU units trained with Adam,
   batch size 64 (TEM) -- learns "in" vs "out" from S's output vectors on both halves;
4. A scores T's output vectors on members (TR1, "in") and non-members (TR2, "out"); the attack
   ROC AUC (``sklearn.metrics.roc_auc_score``), its accuracy, its accuracy on members (TPR) and
   on non-members (TNR) and the membership advantage TPR - FPR are reported.

**Loss-threshold attack** (``loss_threshold``; Yeom et al. 2018, "Privacy risk in machine
learning: analyzing the connection to overfitting", CSF, Sec. 3: the adversary that calls an
example a member when the target's loss on it is small): the score of an example is minus T's
loss on its true label (:func:`example_loss`: cross-entropy of ``predict_proba``; multilabel:
the mean binary cross-entropy over the labels); its AUC needs no threshold. Accuracy, TPR, TNR
and advantage are reported at Yeom et al.'s threshold, T's average loss on its training set
(the members). It needs no shadow model and is the stronger attack when T overfits.

Every AUC comes with a 95% percentile-bootstrap confidence interval (:func:`auc_with_ci`:
members and non-members resampled separately, seeded). AUC 0.5 means the attack cannot tell
members from non-members; lower is better for privacy. An attack that is not clearly above 0.5
on the *unprivatized* model measures nothing for the privatized ones: :func:`mia_validity`.

**Memorising target** (``target_params="memorise"``, :data:`MEMORISING_PARAMS`): TEM trains
its fastText target (trainable word vectors) for 20 epochs with batch size 64 and Adam
(Carvalho et al. 2021, Sec. 5.3), long enough to fit its members closely; the utility models'
defaults are tuned to generalise instead (the ``bow`` on ``rt``: member accuracy 0.71 vs
non-member 0.68, shadow AUC 0.49). ``target_params`` overrides the model's hyperparameters for
the target *and* the shadow models (the attacker trains its shadows like the target, Shokri et
al. 2017, Sec. IV); the utility model of a cell is not affected.

Deviations and choices: ``n_shadow > 1`` trains several shadow models on different random
halves and pools their attack examples (Shokri et al.); TEM trains every model for 20 epochs,
which for scikit-learn's MLP means ``attack_epochs=20`` passes over the attack data (the
default here is 200: 20 passes leave the small attack MLP badly under-fitted on a few hundred
examples; the value is recorded).

**What the attacker queries with** (``query=``): the models are trained on privatized text, but
the record whose membership is at stake is the *original* one. The runner (grid setting
``mia_query: original``, the default since suite 0.3.0) queries the target and the shadow models
with the original texts: the attacker holds a record and asks whether it was trained on, the
question the DP guarantee bounds. Querying with the privatized texts the target saw
(``mia_query: privatized``, the only behaviour before 0.3.0) measures how well the target
memorised the released noisy text: at small ε that text is near-random and unique, a memorising
target tells it apart almost perfectly (AUC 0.99 for TEM at ε = 0.5 on ``rt``), and the number
says nothing about the original records.

Example:
    >>> from bench.attacks import membership_inference, mia_validity
    >>> res = membership_inference("bow", X_mem, y_mem, X_non, y_non, X_shadow, y_shadow,
    ...                            target_params="memorise", seed=0)
    >>> res.auc, res.metrics["mia_auc_ci"], res.metrics["mia_attack"]
    >>> valid, reason = mia_validity(res.metrics)
"""

from __future__ import annotations

import copy
import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from bench.models import MODELS, Model
from bench.results.sections import Membership, upgrade

logger = logging.getLogger(__name__)

FEATURES = ("output", "sorted", "output+label")
ATTACKS = ("shadow", "loss_threshold")
"""Attack names, the keys of ``metrics["mia_attacks"]``."""

MEMORISING_PARAMS: dict[str, dict[str, Any]] = {
    # fastText's trainable word vectors -> one weight per training word; C=100 is weak L2
    # (lambda = 1/C): on rt (3188 members) the target then fits every member (accuracy 1.0 vs
    # 0.72 on non-members). With vector input there are no words: only C applies.
    "bow": {"C": 100.0, "word_features": True},
    # TEM: 20 epochs, batch size 64, Adam (default lr); no dropout, no early stopping.
    "lstm": {"epochs": 20, "batch_size": 64, "lr": 1e-3, "dropout": 0.0,
             "early_stopping": False},
    "transformer": {"epochs": 20, "batch_size": 64, "early_stopping": False},
}
"""Hyperparameter overrides that make a registered model memorise its training set, after
TEM's target training (Carvalho et al. 2021, Sec. 5.3: 20 epochs, batch size 64, Adam). Used by
``target_params="memorise"``; the utility models' defaults stay as they are."""

_EPS = 1e-12  # probabilities are clipped to [_EPS, 1]: a finite loss for a confident mistake


@dataclass
class MIAResult:
    """Outcome of the membership-inference attacks on one target model."""

    metrics: dict[str, Any]
    """Headline (the strongest attack): ``mia_auc`` (the highest attack AUC), ``mia_auc_ci``
    (its 95% bootstrap CI ``[lo, hi]``), ``mia_attack`` (its name, one of :data:`ATTACKS`).

    Per attack, ``mia_attacks[name]`` = ``{"auc", "auc_ci", "accuracy", "member_accuracy"
    (TPR), "nonmember_accuracy" (TNR), "advantage" (TPR - FPR), "threshold"}``; the shadow
    attack thresholds P(member) at 0.5, the loss-threshold attack the loss at the target's mean
    member loss (Yeom et al. 2018); its entry also has ``member_loss`` / ``nonmember_loss``
    (mean losses).

    The shadow attack, under its old keys (unchanged meaning): ``mia_accuracy``,
    ``mia_member_accuracy`` (TPR), ``mia_nonmember_accuracy`` (TNR), ``mia_advantage``,
    ``shadow_auc`` (the attack on the shadow data it was trained on); ``mia_shadow_auc`` is its
    AUC on the target (``mia_auc`` before both attacks were reported).

    The target: ``target_member_accuracy`` / ``target_nonmember_accuracy`` (its task accuracy:
    the generalisation gap the attacks exploit), ``target_params`` (the overrides it and the
    shadows were trained with, ``{}`` for none).

    Settings, sizes and timings: ``features``, ``n_shadow``, ``attack_epochs``, ``n_boot``,
    ``n_members``, ``n_nonmembers``, ``n_shadow_examples``, ``seconds``."""
    scores: np.ndarray = field(repr=False)
    """Shadow-attack scores P(member) for members then non-members."""
    is_member: np.ndarray = field(repr=False)
    """Ground truth for :attr:`scores` (and every array of :attr:`attack_scores`)."""
    target: Model = field(repr=False)
    """The (fitted) target model."""
    attack_scores: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    """Each attack's scores (higher = more likely a member), members then non-members."""

    @property
    def auc(self) -> float:
        """ROC AUC of the strongest attack on members vs non-members."""
        return float(self.metrics["mia_auc"])

    @property
    def accuracy(self) -> float:
        """Shadow-attack accuracy (threshold 0.5) on members + non-members."""
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


def example_loss(proba: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-example loss of a model on the true labels (the loss-threshold attack's statistic).

    Args:
        proba: ``(n, k)`` output of ``predict_proba`` (class probabilities, or per-label
            probabilities for multilabel).
        y: ``(n,)`` class ids (cross-entropy ``-log p[y]``) or an ``(n, k)`` 0/1 matrix (the mean
            binary cross-entropy over the ``k`` labels).

    Returns:
        ``(n,)`` losses; probabilities are clipped to ``[1e-12, 1]`` so they are finite.
    """
    proba = np.asarray(proba, dtype=np.float64)
    y = np.asarray(y)
    if proba.ndim != 2 or len(proba) != len(y):
        raise ValueError(f"proba must be (n, k) with n = len(y) = {len(y)}, got {proba.shape}")
    if y.ndim == 2:
        if y.shape != proba.shape:
            raise ValueError(f"multilabel y {y.shape} and proba {proba.shape} differ in shape")
        p_true = np.where(y.astype(bool), proba, 1.0 - proba)
        return -np.log(np.clip(p_true, _EPS, 1.0)).mean(axis=1)
    y = y.astype(np.int64)
    if len(y) and (y.min() < 0 or y.max() >= proba.shape[1]):
        raise ValueError(f"labels must be in [0, {proba.shape[1]}), got {y.min()}..{y.max()}")
    return -np.log(np.clip(proba[np.arange(len(y)), y], _EPS, 1.0))


def auc_with_ci(scores: np.ndarray, is_member: np.ndarray, *, n_boot: int = 1000,
                level: float = 0.95, seed: int = 0) -> tuple[float, tuple[float, float]]:
    """ROC AUC of ``scores`` (members high) and its percentile-bootstrap confidence interval.

    The bootstrap is stratified: each of the ``n_boot`` resamples draws the members and the
    non-members with replacement, keeping both counts (Efron & Tibshirani 1993, Ch. 13,
    percentile interval). It is vectorised: the pooled scores become tie groups once, a
    resample is its per-group member / non-member counts (one ``bincount``), and its AUC is the
    Mann-Whitney statistic ``sum_g m_g (N_<g + n_g / 2) / (n_m n_n)`` (ties count one half, as
    in ``sklearn.metrics.roc_auc_score``, which gives the point estimate).

    Args:
        scores: ``(n,)`` attack scores, higher = more likely a member.
        is_member: ``(n,)`` 0/1 ground truth; both classes must occur.
        n_boot: number of bootstrap resamples (0: no interval, ``(nan, nan)``).
        level: coverage of the interval.
        seed: seeds the resampling.

    Returns:
        ``(auc, (lo, hi))``.
    """
    from sklearn.metrics import roc_auc_score

    scores = np.asarray(scores, dtype=np.float64)
    member = np.asarray(is_member).astype(bool)
    if scores.shape != member.shape or scores.ndim != 1:
        raise ValueError(f"scores {scores.shape} and is_member {member.shape} must be equal 1-D")
    if not np.isfinite(scores).all():
        raise ValueError("attack scores must be finite")
    n_m, n_n = int(member.sum()), int((~member).sum())
    if n_m == 0 or n_n == 0:
        raise ValueError("both members and non-members are needed for an AUC")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot}")
    auc = float(roc_auc_score(member.astype(int), scores))
    if n_boot == 0:
        return auc, (float("nan"), float("nan"))
    _, group = np.unique(scores, return_inverse=True)
    g_mem, g_non = group[member], group[~member]
    n_groups = int(group.max()) + 1
    rng = np.random.default_rng(seed)
    aucs = np.empty(n_boot)
    chunk = max(1, min(n_boot, 4_000_000 // (n_groups + max(n_m, n_n))))  # bounded memory
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        offset = (np.arange(b) * n_groups)[:, None]
        counts_m = np.bincount((g_mem[rng.integers(0, n_m, (b, n_m))] + offset).ravel(),
                               minlength=b * n_groups).reshape(b, n_groups)
        counts_n = np.bincount((g_non[rng.integers(0, n_n, (b, n_n))] + offset).ravel(),
                               minlength=b * n_groups).reshape(b, n_groups)
        below = np.cumsum(counts_n, axis=1) - counts_n
        aucs[start:start + b] = (counts_m * (below + 0.5 * counts_n)).sum(axis=1) / (n_m * n_n)
    alpha = (1.0 - level) / 2
    lo, hi = np.quantile(aucs, [alpha, 1.0 - alpha])
    return auc, (float(lo), float(hi))


def _threshold_metrics(guess: np.ndarray, is_member: np.ndarray) -> dict[str, float]:
    tpr = float(guess[is_member == 1].mean())
    tnr = float(1 - guess[is_member == 0].mean())
    return {"accuracy": float((guess == is_member).mean()), "member_accuracy": tpr,
            "nonmember_accuracy": tnr, "advantage": tpr - (1 - tnr)}


def loss_threshold_attack(p_members: np.ndarray, y_members: np.ndarray,
                          p_nonmembers: np.ndarray, y_nonmembers: np.ndarray, *,
                          n_boot: int = 1000, seed: int = 0) -> tuple[dict[str, Any], np.ndarray]:
    """The loss-threshold attack (Yeom et al. 2018, Sec. 3) on a target's output vectors.

    Args:
        p_members: the target's ``predict_proba`` on its members.
        y_members: their true labels.
        p_nonmembers: the target's ``predict_proba`` on non-members.
        y_nonmembers: their true labels.
        n_boot: bootstrap resamples for the AUC's 95% interval.
        seed: seeds the bootstrap.

    Returns:
        ``(metrics, scores)``: the per-attack entry of ``mia_attacks`` (see
        :attr:`MIAResult.metrics`) and the scores ``-loss``, members then non-members.
    """
    l_mem, l_non = example_loss(p_members, y_members), example_loss(p_nonmembers, y_nonmembers)
    scores = -np.concatenate([l_mem, l_non])
    is_member = np.concatenate([np.ones(len(l_mem), int), np.zeros(len(l_non), int)])
    auc, ci = auc_with_ci(scores, is_member, n_boot=n_boot, seed=seed)
    tau = float(l_mem.mean())  # Yeom et al.'s threshold: the average training loss
    out = {"auc": auc, "auc_ci": list(ci), "threshold": tau,
           **_threshold_metrics((-scores <= tau).astype(int), is_member),
           "member_loss": tau, "nonmember_loss": float(l_non.mean())}
    return out, scores


def resolve_target_params(model: Any, target_params: Mapping[str, Any] | str | None,
                          kind: str = "text") -> dict[str, Any]:
    """The hyperparameter overrides for the target and shadow models.

    Args:
        model: the model name (needed for ``"memorise"``).
        target_params: None (no overrides), a dict of overrides, or ``"memorise"``:
            :data:`MEMORISING_PARAMS` for that model (``word_features`` dropped for vector
            input, which has no words).
        kind: the members' input kind, ``"text"`` or ``"vectors"``.
    """
    if target_params is None:
        return {}
    if isinstance(target_params, str):
        if target_params != "memorise":
            raise ValueError(f"target_params must be a dict, None or 'memorise', got "
                             f"{target_params!r}")
        if not isinstance(model, str) or model not in MEMORISING_PARAMS:
            raise ValueError(f"no memorising parameters for model {model!r}; known: "
                             f"{sorted(MEMORISING_PARAMS)} (pass a dict of overrides instead)")
        params = dict(MEMORISING_PARAMS[model])
        if kind == "vectors":
            params.pop("word_features", None)
        return params
    if not isinstance(target_params, Mapping):
        raise TypeError(f"target_params must be a dict, None or 'memorise', got "
                        f"{type(target_params)}")
    return dict(target_params)


def mia_validity(baseline_metrics: Membership | Mapping[str, Any]) -> tuple[bool, str | None]:
    """Whether membership inference measures anything for the cells of this baseline.

    The MIA of a privatized cell is valid only if the strongest attack on the *unprivatized*
    model is clearly above chance: the lower end of its 95% bootstrap CI exceeds 0.5 (the same
    rule as for the attribute adversaries, which must beat chance on the baseline).

    Args:
        baseline_metrics: the unprivatized cell's MIA metrics (its
            :attr:`bench.results.sections.CellMetrics.mia`, or :attr:`MIAResult.metrics`), or
            the cell's metrics holding them under ``"mia"``.

    Returns:
        ``(True, None)`` when valid, else ``(False, one-line reason)``.
    """
    m = baseline_metrics
    if not isinstance(m, Membership):
        cell = upgrade(m)  # a cell's metrics, or the MIA's own
        m = cell.mia if cell.mia else Membership.from_dict(m)
    if not m.has("mia_auc"):
        return False, "the unprivatized model has no MIA result, so MIA cannot be judged here"
    name = m.mia_attack if m.has("mia_attack") else "shadow"
    auc = float(m.mia_auc)
    ci = m.mia_auc_ci
    if ci is None or len(ci) != 2 or not np.all(np.isfinite(np.asarray(ci, dtype=float))):
        return False, (f"strongest MIA on the unprivatized model ({name}) has AUC {auc:.2f} "
                       "without a confidence interval, so it cannot be shown above chance")
    lo, hi = float(ci[0]), float(ci[1])
    if lo > 0.5:
        return True, None
    return False, (f"strongest MIA on the unprivatized model ({name}) has AUC {auc:.2f} "
                   f"[{lo:.2f}, {hi:.2f}]: not above chance, so MIA measures nothing here")


def _factory(model: str | Model | Callable[[], Model], model_params: dict[str, Any] | None,
             n_classes: int | None) -> Callable[[int], Model]:
    if isinstance(model, str):
        def build(seed: int) -> Model:
            params = dict(model_params or {})
            params["seed"] = seed
            if n_classes is not None:
                params.setdefault("n_classes", n_classes)
            return MODELS.create(model, **params)
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
                         target_params: Mapping[str, Any] | str | None = None,
                         target: Model | None = None, features: str = "output",
                         n_shadow: int = 1, attack_epochs: int = 200, n_boot: int = 1000,
                         seed: int = 0, query: Mapping[str, Sequence[Any]] | None = None
                         ) -> MIAResult:
    """Run the shadow-model and the loss-threshold attacks (see the module docstring).

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
        target_params: overrides of ``model_params`` for the target and shadow models (``model``
            a name): a dict, or ``"memorise"`` for :data:`MEMORISING_PARAMS` (TEM's long
            training, so the target fits its members). None: the utility model's settings.
        target: an already fitted target model (then it is not retrained on the members).
        features: shadow-attack features, see :func:`attack_features`.
        n_shadow: number of shadow models (TEM: 1).
        attack_epochs: passes of the attack MLP over its training data.
        n_boot: bootstrap resamples for each AUC's 95% confidence interval.
        seed: seeds the shadow split, the shadow/target models, the attack model and the
            bootstrap.
        query: the documents the models are *queried* with, where they differ from those
            they are trained on: ``{"members": ..., "nonmembers": ..., "shadow": ...}``, each
            parallel to ``X_members`` / ``X_nonmembers`` / ``X_shadow``. The benchmark passes
            the original texts here and the privatized ones above: the target and the shadow
            models are trained on privatized text, and the attacker, who holds a record's
            original text, asks whether that record was trained on (the threat model the DP
            guarantee speaks about). ``None``: query with the training documents.

    Returns:
        An :class:`MIAResult`.
    """
    y_members, y_nonmembers, y_shadow, query = _check_mia_inputs(
        X_members, y_members, X_nonmembers, y_nonmembers, X_shadow, y_shadow, query,
        features=features, n_shadow=n_shadow)
    build, overrides = model_builder(model, model_params, target_params, X_members,
                                      (y_members, y_nonmembers, y_shadow))
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    # 2-3: shadow models on random halves of the shadow pool -> attack training data
    shadow = _train_shadow_attack(build, X_shadow, y_shadow, query["shadow"], rng, seed=seed,
                                  n_shadow=n_shadow, features=features,
                                  attack_epochs=attack_epochs)
    # 1 + 4: the target, queried with members and non-members
    target, p_mem, p_non = _query_target(target, build, X_members, y_members, query,
                                         shadow.width, seed)
    return _attack_target(shadow, target, p_mem, y_members, p_non, y_nonmembers, t0=t0,
                          overrides=overrides, features=features, n_shadow=n_shadow,
                          attack_epochs=attack_epochs, n_boot=n_boot, seed=seed)


def _check_mia_inputs(X_members: Sequence[Any], y_members: np.ndarray,
                      X_nonmembers: Sequence[Any], y_nonmembers: np.ndarray,
                      X_shadow: Sequence[Any], y_shadow: np.ndarray,
                      query: Mapping[str, Sequence[Any]] | None, *, features: str,
                      n_shadow: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Sequence[Any]]]:
    """Validate :func:`membership_inference`'s arguments; the labels as arrays and the full
    ``query`` (the training documents where it names none)."""
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
    query = dict(query or {})
    for name, X in (("members", X_members), ("nonmembers", X_nonmembers),
                    ("shadow", X_shadow)):
        q = query.setdefault(name, X)
        if len(q) != len(X):
            raise ValueError(f"query[{name!r}]: {len(q)} documents for {len(X)} {name}")
    return y_members, y_nonmembers, y_shadow, query


def model_builder(model: str | Model | Callable[[], Model],
                   model_params: dict[str, Any] | None,
                   target_params: Mapping[str, Any] | str | None, X_members: Sequence[Any],
                   ys: tuple[np.ndarray, np.ndarray, np.ndarray]
                   ) -> tuple[Callable[[int], Model], dict[str, Any]]:
    """The seeded factory of the target and shadow models (``target_params`` applied, every
    class of the labels ``ys`` given a column) and the resolved overrides."""
    from bench.models.base import input_kind

    overrides = resolve_target_params(model, target_params, input_kind(X_members))
    if overrides and not isinstance(model, str):
        raise ValueError("target_params needs the model as a registry name")
    n_classes = None
    if ys[0].ndim == 1:
        n_classes = int(max(y.max() for y in ys)) + 1
    return _factory(model, {**(model_params or {}), **overrides}, n_classes), overrides


class _ShadowAttack(NamedTuple):
    """The trained attack model and what the report needs about its training data."""

    attack: Any  # sklearn MLPClassifier
    auc: float  # the attack's AUC on its own (shadow) training data
    n_examples: int
    width: int  # the shadow models' output width


def _train_shadow_attack(build: Callable[[int], Model], X_shadow: Sequence[Any],
                         y_shadow: np.ndarray, query_shadow: Sequence[Any],
                         rng: np.random.Generator, *, seed: int, n_shadow: int, features: str,
                         attack_epochs: int) -> _ShadowAttack:
    """Steps 2-3: shadow models on random halves of the shadow pool, queried with
    ``query_shadow``; the attack MLP (TEM's: 2 x 64 ReLU, Adam, batch 64) learns in vs out."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import roc_auc_score
    from sklearn.neural_network import MLPClassifier

    feats, labels = [], []
    for s in range(n_shadow):
        perm = rng.permutation(len(X_shadow))
        half = len(perm) // 2
        s_in, s_out = perm[:half], perm[half:]
        shadow = build(seed + 1 + s).fit(_subset(X_shadow, s_in), y_shadow[s_in])
        for idx, member in ((s_in, 1), (s_out, 0)):
            proba = shadow.predict_proba(_subset(query_shadow, idx))
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
    return _ShadowAttack(attack, shadow_auc, len(m_shadow), width)


def _query_target(target: Model | None, build: Callable[[int], Model],
                  X_members: Sequence[Any], y_members: np.ndarray,
                  query: Mapping[str, Sequence[Any]], width: int, seed: int
                  ) -> tuple[Model, np.ndarray, np.ndarray]:
    """Step 1: the target trained on the members (unless given); its output vectors on the
    members' and the non-members' query documents."""
    if target is None:
        target = build(seed).fit(X_members, y_members)
    p_mem = target.predict_proba(query["members"])
    p_non = target.predict_proba(query["nonmembers"])
    if p_mem.shape[1] != width:
        raise ValueError("target and shadow models have different output widths; pass "
                         "n_classes to the models so every class has a column")
    return target, p_mem, p_non


def _attack_target(shadow: _ShadowAttack, target: Model, p_mem: np.ndarray,
                   y_members: np.ndarray, p_non: np.ndarray, y_nonmembers: np.ndarray, *,
                   t0: float, overrides: dict[str, Any], features: str, n_shadow: int,
                   attack_epochs: int, n_boot: int, seed: int) -> MIAResult:
    """Step 4: the shadow and the loss-threshold attacks score the target's outputs; the
    stronger is the headline (``t0``: when the attack began, for ``seconds``)."""
    F_target = np.vstack([attack_features(p_mem, y_members, features),
                          attack_features(p_non, y_nonmembers, features)])
    is_member = np.concatenate([np.ones(len(p_mem), int), np.zeros(len(p_non), int)])
    scores = shadow.attack.predict_proba(F_target)[:, 1]
    auc, ci = auc_with_ci(scores, is_member, n_boot=n_boot, seed=seed)
    shadow_entry = {"auc": auc, "auc_ci": list(ci), "threshold": 0.5,
                    **_threshold_metrics((scores >= 0.5).astype(int), is_member)}
    loss_entry, loss_scores = loss_threshold_attack(p_mem, y_members, p_non, y_nonmembers,
                                                    n_boot=n_boot, seed=seed)
    attacks = {"shadow": shadow_entry, "loss_threshold": loss_entry}
    best = max(ATTACKS, key=lambda a: attacks[a]["auc"])  # ties: the first (shadow)
    decide = target.labels_.decide if target.labels_ is not None else None
    metrics: dict[str, Any] = {
        "mia_auc": attacks[best]["auc"],
        "mia_auc_ci": list(attacks[best]["auc_ci"]),
        "mia_attack": best,
        "mia_attacks": attacks,
        "mia_shadow_auc": shadow_entry["auc"],
        "mia_accuracy": shadow_entry["accuracy"],
        "mia_member_accuracy": shadow_entry["member_accuracy"],
        "mia_nonmember_accuracy": shadow_entry["nonmember_accuracy"],
        "mia_advantage": shadow_entry["advantage"],
        "shadow_auc": shadow.auc,
        "target_params": overrides,
        "n_members": len(p_mem),
        "n_nonmembers": len(p_non),
        "n_shadow_examples": shadow.n_examples,
        "features": features,
        "n_shadow": n_shadow,
        "attack_epochs": attack_epochs,
        "n_boot": n_boot,
        "seconds": time.perf_counter() - t0,
    }
    if decide is not None:
        metrics["target_member_accuracy"] = _acc(y_members, decide(p_mem))
        metrics["target_nonmember_accuracy"] = _acc(y_nonmembers, decide(p_non))
    logger.info("membership inference: strongest %s AUC %.4f [%.4f, %.4f] (shadow %.4f, loss "
                "threshold %.4f; shadow-data AUC %.4f)", best, metrics["mia_auc"],
                *metrics["mia_auc_ci"], shadow_entry["auc"], loss_entry["auc"], shadow.auc)
    return MIAResult(metrics, scores, is_member, target,
                     {"shadow": scores, "loss_threshold": loss_scores})


def _acc(y: np.ndarray, pred: np.ndarray) -> float:
    """Accuracy (multilabel: per-label accuracy)."""
    return float((np.asarray(y) == pred).mean())
