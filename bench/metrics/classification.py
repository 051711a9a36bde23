"""Utility, empirical privacy, chance level and deltas vs the baseline (Riecker 2023, Sec. 4.2).

* Utility: macro-F1 (the unweighted mean of the per-class F1) and accuracy of the utility model
  over a whole split, via scikit-learn (Riecker 2023, Sec. 4.2: "F1 score" means macro-F1).
* Empirical privacy: ``1 - F1`` of the adversary on the private attribute (Riecker 2023,
  Sec. 4.2, following Coavoux et al. 2018); for multilabel attributes the macro-F1 over labels,
  with the per-label F1 reported too (the thesis inspects per-entity F1, Sec. 4.3).
* Deltas vs the baseline trained on the original text (Riecker 2023, Sec. 4.2):
  ``Δutility = F1_priv - F1_base``, ``Δprivacy = privacy_priv - privacy_base`` and the trade-off
  heuristic ``Δutility + Δprivacy`` (positive = favourable, privacy and utility weighted equally).
* Uncertainty over test documents: :func:`bootstrap_macro_f1` resamples the evaluated
  documents with replacement (Efron & Tibshirani 1993, percentile interval) and gives a 95 %
  interval of the macro-F1 of one run; :func:`classification_scores` reports it as
  ``macro_f1_ci95``. Across seeds the report uses a t interval instead (:mod:`bench.report`).
* Chance level: the thesis drops results "where the model behaves like a random guesser"
  (Tables 6.2, 6.4); :func:`chance_level` makes that test explicit (see its docstring).

Example:
    >>> s = classification_scores(np.array([0, 1, 1]), np.array([0, 1, 0]))
    >>> round(s["macro_f1"], 4), round(s["accuracy"], 4)
    (0.6667, 0.6667)
    >>> deltas(0.8, 0.9, 0.3, 0.1)["tradeoff"]
    0.1
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bench.metrics.base import Metric, register_metric

logger = logging.getLogger(__name__)


def _check_pair(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true {y_true.shape} and y_pred {y_pred.shape} differ in shape")
    if y_true.ndim not in (1, 2) or len(y_true) == 0:
        raise ValueError("labels must be a non-empty 1-D vector or a 2-D 0/1 matrix")
    return y_true, y_pred


def macro_f1(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int | None = None) -> float:
    """Macro-F1 via scikit-learn; classes with no support and no prediction count as F1 = 0.

    Args:
        y_true: class ids ``(n,)`` or a 0/1 matrix ``(n, k)`` (multilabel: mean over labels).
        y_pred: predictions of the same shape.
        n_classes: average over classes ``0..n_classes-1`` (default: the classes present in
            ``y_true`` or ``y_pred``, scikit-learn's convention).
    """
    from sklearn.metrics import f1_score

    y_true, y_pred = _check_pair(y_true, y_pred)
    labels = list(range(n_classes)) if (n_classes and y_true.ndim == 1) else None
    return float(f1_score(y_true, y_pred, average="macro", labels=labels, zero_division=0))


def per_class_f1(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int | None = None
                 ) -> list[float]:
    """F1 per class (1-D labels) or per label (multilabel)."""
    from sklearn.metrics import f1_score

    y_true, y_pred = _check_pair(y_true, y_pred)
    if y_true.ndim == 1:
        k = n_classes or int(max(y_true.max(), y_pred.max())) + 1
        labels = list(range(k))
    else:
        labels = None
    return [float(v) for v in f1_score(y_true, y_pred, average=None, labels=labels,
                                       zero_division=0)]


BOOTSTRAP_RESAMPLES = 1000
"""Resamples of the test documents behind every ``macro_f1_ci95``."""


def bootstrap_macro_f1(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int | None = None, *,
                       n_boot: int = BOOTSTRAP_RESAMPLES, level: float = 0.95,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the macro-F1 over the evaluated documents.

    Each of ``n_boot`` resamples draws ``n`` documents with replacement (multinomial counts
    ``w``, seeded); its confusion counts are ``w``-weighted sums, so one matrix product scores
    all resamples: ``tp_k = sum_i w_i [y_i = k = p_i]``, ``pred_k = sum_i w_i [p_i = k]``,
    ``true_k = sum_i w_i [y_i = k]``, ``F1_k = 2 tp_k / (pred_k + true_k)`` (0 where both are 0).
    The average over classes follows :func:`macro_f1` exactly: over ``0..n_classes-1`` when
    given, else over the classes present in the resample's labels or predictions; multilabel:
    the mean over all labels. The interval is the ``(1-level)/2`` and ``(1+level)/2`` quantiles
    (Efron & Tibshirani 1993, Ch. 13).

    Returns:
        ``(low, high)``.
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = len(y_true)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)  # (B, n)
    if y_true.ndim == 2:
        t, p = (y_true != 0).astype(np.float64), (y_pred != 0).astype(np.float64)
        f1 = _f1(w @ (t * p), w @ p, w @ t)  # (B, k)
        scores = f1.mean(axis=1)
    else:
        k = int(n_classes or max(y_true.max(), y_pred.max()) + 1)
        eye = np.eye(k)
        t, p = eye[y_true.astype(np.int64)], eye[y_pred.astype(np.int64)]
        n_true, n_pred = w @ t, w @ p
        f1 = _f1(w @ (t * p), n_pred, n_true)
        if n_classes:
            scores = f1.mean(axis=1)
        else:
            present = (n_pred + n_true) > 0
            scores = (f1 * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1)
    lo, hi = np.quantile(scores, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def classification_scores(y_true: np.ndarray, y_pred: np.ndarray,
                          n_classes: int | None = None, *, seed: int = 0) -> dict[str, Any]:
    """Macro-F1 with its bootstrap 95 % interval, accuracy and per-class F1 over a split.

    Multilabel: ``accuracy`` is the exact-match (subset) accuracy, scikit-learn's definition;
    ``label_accuracy`` is the mean accuracy per label. ``macro_f1_ci95`` is
    :func:`bootstrap_macro_f1` over the documents of the split, seeded with ``seed``.
    """
    from sklearn.metrics import accuracy_score

    y_true, y_pred = _check_pair(y_true, y_pred)
    out: dict[str, Any] = {
        "macro_f1": macro_f1(y_true, y_pred, n_classes),
        "macro_f1_ci95": list(bootstrap_macro_f1(y_true, y_pred, n_classes, seed=seed)),
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "per_class_f1": per_class_f1(y_true, y_pred, n_classes),
        "n": int(len(y_true)),
    }
    if y_true.ndim == 2:
        out["label_accuracy"] = float((y_true == y_pred).mean())
    return out


register_metric(Metric("macro_f1", True, "utility: macro-F1 of the utility model on the test "
                       "split (Riecker 2023, Sec. 4.2)", label="Macro-F1", kind="utility"))
register_metric(Metric("accuracy", True, "utility: accuracy of the utility model (multilabel: "
                       "exact match)", label="Accuracy", kind="utility"))


def empirical_privacy(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int | None = None,
                      *, seed: int = 0) -> dict[str, Any]:
    """Empirical privacy ``1 - macro-F1`` of an adversary (Riecker 2023, Sec. 4.2).

    Returns:
        ``privacy`` (higher = better protected) with ``privacy_ci95`` (the bootstrap interval
        of :func:`bootstrap_macro_f1`, mirrored), the adversary's ``adversary_macro_f1`` with
        ``adversary_macro_f1_ci95``, ``adversary_accuracy`` and ``adversary_per_class_f1``
        (per label for multilabel).
    """
    s = classification_scores(y_true, y_pred, n_classes, seed=seed)
    lo, hi = s["macro_f1_ci95"]
    out = {"privacy": 1.0 - s["macro_f1"], "privacy_ci95": [1.0 - hi, 1.0 - lo],
           "adversary_macro_f1": s["macro_f1"], "adversary_macro_f1_ci95": [lo, hi],
           "adversary_accuracy": s["accuracy"], "adversary_per_class_f1": s["per_class_f1"],
           "n": s["n"]}
    if "label_accuracy" in s:
        out["adversary_label_accuracy"] = s["label_accuracy"]
    return out


register_metric(Metric("privacy", True, "empirical privacy: 1 - macro-F1 of the attribute "
                       "adversary (Riecker 2023, Sec. 4.2; Coavoux et al. 2018)",
                       label="Privacy", kind="privacy"))
register_metric(Metric("adversary_macro_f1", False, "macro-F1 of the attribute adversary",
                       label="Adversary macro-F1", kind="privacy"))
register_metric(Metric("adversary_accuracy", False, "accuracy of the attribute adversary",
                       label="Adversary accuracy", kind="privacy"))


def deltas(utility_priv: float, utility_base: float, privacy_priv: float,
           privacy_base: float) -> dict[str, float]:
    """Changes vs the baseline and the trade-off heuristic (Riecker 2023, Sec. 4.2).

    Returns:
        ``delta_utility = utility_priv - utility_base``,
        ``delta_privacy = privacy_priv - privacy_base`` and
        ``tradeoff = delta_utility + delta_privacy`` (> 0: favourable).
    """
    du = float(utility_priv) - float(utility_base)
    dp = float(privacy_priv) - float(privacy_base)
    return {"delta_utility": du, "delta_privacy": dp, "tradeoff": du + dp}


register_metric(Metric("delta_utility", True, "utility_priv - utility_base (Riecker 2023, "
                       "Sec. 4.2)", -1.0, 1.0, label="Change in Utility", kind="tradeoff"))
register_metric(Metric("delta_privacy", True, "privacy_priv - privacy_base (Riecker 2023, "
                       "Sec. 4.2)", -1.0, 1.0, label="Change in Privacy", kind="tradeoff"))
register_metric(Metric("tradeoff", True, "delta_utility + delta_privacy, the thesis' "
                       "trade-off heuristic (Riecker 2023, Sec. 4.2); it rewards output that "
                       "carries nothing, see anchored_tradeoff", -2.0, 2.0,
                       label="Thesis trade-off (ΔU + ΔP)", kind="tradeoff"))
register_metric(Metric("utility_retained", True, "(U - C) / (U_base - C) clipped to [0, 1]: 0 "
                       "at chance, 1 at the unprivatized baseline (bench.analysis.anchored)",
                       0.0, 1.0, label="Utility retained", kind="tradeoff"))
register_metric(Metric("privacy_gained", True, "(A_base - A) / (A_base - C) clipped to [0, 1] "
                       "for the attack's macro-F1 A: 0 for the original text, 1 with the attack "
                       "at chance (bench.analysis.anchored)", 0.0, 1.0,
                       label="Privacy gained", kind="tradeoff"))
register_metric(Metric("reference_retained", True, "utility_retained of the reference "
                       "classifier (bench.measures.reference_utility)", 0.0, 1.0,
                       label="Reference utility retained", kind="tradeoff"))
register_metric(Metric("reference_tradeoff", True, "reference_retained * privacy_gained",
                       0.0, 1.0, label="Reference trade-off", kind="tradeoff"))
register_metric(Metric("anchored_tradeoff", True, "utility_retained * privacy_gained: 0 for the "
                       "identity and for output that ignores its input "
                       "(bench.analysis.anchored)", 0.0, 1.0, label="Trade-off (retained × "
                       "gained)", kind="tradeoff"))


# --------------------------------------------------------------------------------------------
# Chance level
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChanceLevel:
    """Macro-F1 that label-blind guessers reach on one evaluation split.

    The guessers see only the training labels' distribution, never the input:

    * ``majority``: always the training majority class (multilabel: per label, the majority
      value) -- its macro-F1 on the evaluation labels, computed exactly;
    * ``stratified``: each prediction drawn independently from the training class frequencies
      (multilabel: each label independently with its training rate);
    * ``uniform``: each class equally likely (multilabel: each label present with prob. 1/2);
    * ``constant``: the best input-blind *constant* prediction -- always class ``c`` for the best
      ``c`` (multilabel: every label present, or every label at its training majority value),
      computed exactly. Multilabel macro-F1 rewards "everything present" on rare labels
      (F1 = 2p/(1+p) per label with rate p), so a signal-free classifier tuned on dev F1 can
      drift there; it must not count as beating chance.

    For the random guessers the *distribution* of macro-F1 on this split is simulated
    (``n_sim`` seeded draws): ``stratified``/``uniform`` are the means and ``threshold`` is the
    ``quantile`` (default 95 %) of the better random guesser, or the best constant guesser's
    score when that is higher. A model whose macro-F1 is ``<= threshold`` is "no better than
    chance".
    """

    majority: float
    """Macro-F1 of the majority-class guesser."""
    stratified: float
    """Mean macro-F1 of the stratified random guesser."""
    uniform: float
    """Mean macro-F1 of the uniform random guesser."""
    threshold: float
    """max(majority, the ``quantile`` of the better random guesser's macro-F1)."""
    quantile: float
    """Quantile of the simulated random-guess distribution used for ``threshold``."""
    constant: float = 0.0
    """Macro-F1 of the best constant guesser (at least ``majority``)."""

    @property
    def best(self) -> float:
        """The best expected chance-level macro-F1."""
        return max(self.majority, self.constant, self.stratified, self.uniform)

    def to_dict(self) -> dict[str, float]:
        """JSON-serialisable form."""
        return asdict(self)


def _sim_macro_f1(y_true: np.ndarray, probs: np.ndarray, n_sim: int,
                  rng: np.random.Generator) -> np.ndarray:
    """Macro-F1 of ``n_sim`` random guessers drawing classes with ``probs`` (multiclass)."""
    k, n = len(probs), len(y_true)
    cdf = np.cumsum(probs)
    cdf[-1] = 1.0
    pred = np.searchsorted(cdf, rng.random((n_sim, n)), side="right")  # (n_sim, n)
    sims = np.repeat(np.arange(n_sim), n)
    pred_flat = pred.ravel()
    true_flat = np.tile(y_true, n_sim)
    tp = np.bincount(sims[pred_flat == true_flat] * k + pred_flat[pred_flat == true_flat],
                     minlength=n_sim * k).reshape(n_sim, k)
    n_pred = np.bincount(sims * k + pred_flat, minlength=n_sim * k).reshape(n_sim, k)
    n_true = np.bincount(y_true, minlength=k)[None, :]
    f1 = _f1(tp, n_pred, n_true)
    present = (n_pred + n_true) > 0  # scikit-learn averages over classes that occur
    return (f1 * present).sum(axis=1) / np.maximum(present.sum(axis=1), 1)


def _f1(tp: np.ndarray, n_pred: np.ndarray, n_true: np.ndarray) -> np.ndarray:
    denom = n_pred + n_true
    return np.where(denom > 0, 2.0 * tp / np.maximum(denom, 1), 0.0)


def _sim_multilabel_f1(y_true: np.ndarray, rates: np.ndarray, n_sim: int,
                       rng: np.random.Generator) -> np.ndarray:
    """Macro-F1 over labels of ``n_sim`` guessers setting label j with probability ``rates[j]``."""
    n, k = y_true.shape
    out = np.zeros(n_sim)
    step = max(1, 2_000_000 // max(n * k, 1))
    for start in range(0, n_sim, step):
        m = min(step, n_sim - start)
        pred = rng.random((m, n, k)) < rates[None, None, :]
        tp = (pred & (y_true[None] == 1)).sum(axis=1)
        f1 = _f1(tp, pred.sum(axis=1), y_true.sum(axis=0)[None, :])
        out[start:start + m] = f1.mean(axis=1)  # scikit-learn: mean over all labels
    return out


def chance_level(y_true: np.ndarray, y_train: np.ndarray | None = None, *,
                 n_classes: int | None = None, n_sim: int = 1000, quantile: float = 0.95,
                 seed: int = 0) -> ChanceLevel:
    """Chance-level macro-F1 on the evaluation labels ``y_true`` (see :class:`ChanceLevel`).

    Args:
        y_true: evaluation labels, ``(n,)`` class ids or an ``(n, k)`` 0/1 matrix.
        y_train: training labels giving the guessers' priors (default: ``y_true`` itself, which
            only makes the guessers stronger, i.e. the check more conservative).
        n_classes: number of classes (1-D labels; default ``max label + 1``).
        n_sim: simulated random guessers.
        quantile: quantile of the random guessers' macro-F1 used as the threshold.
        seed: seed of the simulation.
    """
    from sklearn.metrics import f1_score

    y_true = np.asarray(y_true)
    y_train = y_true if y_train is None else np.asarray(y_train)
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    rng = np.random.default_rng(seed)
    if y_true.ndim == 2:
        rates = y_train.mean(axis=0)
        maj = np.tile((rates >= 0.5).astype(y_true.dtype), (len(y_true), 1))
        majority = float(f1_score(y_true, maj, average="macro", zero_division=0))
        strat = _sim_multilabel_f1(y_true, rates, n_sim, rng)
        unif = _sim_multilabel_f1(y_true, np.full(y_true.shape[1], 0.5), n_sim, rng)
        everything = np.ones_like(y_true)
        constant = max(majority, float(f1_score(y_true, everything, average="macro",
                                                zero_division=0)))
    else:
        k = n_classes or int(max(y_true.max(), y_train.max())) + 1
        prior = np.bincount(y_train, minlength=k) / len(y_train)
        maj = np.full_like(y_true, int(prior.argmax()))
        majority = float(f1_score(y_true, maj, average="macro", zero_division=0))
        strat = _sim_macro_f1(y_true, prior, n_sim, rng)
        unif = _sim_macro_f1(y_true, np.full(k, 1.0 / k), n_sim, rng)
        # always class c (scikit-learn averages over the classes that occur in y_true or y_pred)
        constant = max(majority, *(float(f1_score(y_true, np.full_like(y_true, c),
                                                  average="macro", zero_division=0))
                                   for c in range(k)))
    better = strat if strat.mean() >= unif.mean() else unif
    threshold = max(constant, float(np.quantile(better, quantile)))
    return ChanceLevel(majority, float(strat.mean()), float(unif.mean()), threshold, quantile,
                       constant)


def is_chance_level(score: float, chance: ChanceLevel) -> bool:
    """Whether a macro-F1 ``score`` is no better than chance (``score <= chance.threshold``)."""
    return float(score) <= chance.threshold


register_metric(Metric("chance_threshold", True, "macro-F1 a label-blind guesser reaches (95 % "
                       "quantile); see bench.metrics.classification.ChanceLevel",
                       label="Chance threshold", kind="chance"))
