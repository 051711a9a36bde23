"""Attribute adversaries: how well can the private attribute be read from the privatized text?

An adversary is trained on the privatized training split to predict a private attribute
(gender, speaker, named entities, ...) and evaluated on the privatized test split; its macro-F1
gives the empirical privacy ``1 - F1`` (Riecker 2023, Sec. 4.2, after Coavoux et al. 2018).
The same adversary trained on the *original* text is the baseline the deltas are computed
against.

The suite (``ADVERSARIES``, ``bench ls adversaries``):

* ``lexical`` -- tf-idf word 1-2-grams + class-weighted logistic regression, regularisation
  picked on dev (:mod:`bench.attacks.lexical`);
* every model (``bow``, ``lstm``, ``transformer``) -- the thesis' same-model adversary;
* ``informed`` -- knows the mechanism and its parameters (the DP threat model) and attacks
  through the posterior over original words (:mod:`bench.attacks.informed`).

A cell runs a set of them (the grid's ``adversaries`` setting, :func:`resolve_adversaries`);
its headline privacy per attribute is ``1 - max`` macro-F1 over them (:func:`headline`), and it
is a measurement only if that strongest adversary beats chance on the unprivatized baseline
(:func:`privacy_validity`) -- otherwise the cell says so instead of reporting "perfect
privacy".

Example:
    >>> from bench.attacks.adversary import attribute_adversary, make_adversary
    >>> adv = make_adversary("lexical", seed=0)
    >>> res = attribute_adversary(adv, X_train, g_train, X_test, g_test, X_dev=X_dev, y_dev=g_dev)
    >>> res.privacy, res.chance_level
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.metrics.classification import (
    ChanceLevel,
    chance_level,
    empirical_privacy,
    is_chance_level,
)
from bench.models import MODELS, Model
from bench.registry import Registry
from bench.results.sections import AdversaryResult as AdversaryRecord
from bench.results.sections import AttributePrivacy

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
                        seed: int = 0, chance: ChanceLevel | None = None,
                        fitted: bool = False) -> AdversaryResult:
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
        chance: the chance level of these labels, when the caller already has it (several
            adversaries on one task share it: it is a function of the labels and ``seed`` only).
        fitted: ``model`` is an instance fitted on ``(X_train, y_train)`` already (e.g. one
            fit on the original text reused across cells): it is only scored.

    Returns:
        An :class:`AdversaryResult`; ``metrics`` holds the empirical privacy and a chance-level
        check against label-blind guessers using the training prior.
    """
    if isinstance(model, str):
        params = dict(model_params or {})
        params.setdefault("seed", seed)
        if n_classes is not None and np.asarray(y_train).ndim == 1:
            params.setdefault("n_classes", n_classes)
        model = MODELS.create(model, **params)
    t0 = time.perf_counter()
    if not fitted:
        model.fit(X_train, y_train, X_dev, y_dev)
    t1 = time.perf_counter()
    pred = model.predict(X_test)
    t2 = time.perf_counter()
    y_test = np.asarray(y_test)
    scores: dict[str, Any] = empirical_privacy(y_test, pred, n_classes, seed=seed)
    if chance is None:
        chance = chance_level(y_test, np.asarray(y_train), n_classes=n_classes, seed=seed)
    scores["chance_threshold"] = chance.threshold
    scores["chance_level"] = is_chance_level(scores["adversary_macro_f1"], chance)
    scores["fit_seconds"] = t1 - t0
    scores["predict_seconds"] = t2 - t1
    logger.info("attribute adversary %s: macro-F1 %.4f (chance threshold %.4f), privacy %.4f",
                model.name, scores["adversary_macro_f1"], chance.threshold, scores["privacy"])
    return AdversaryResult(scores, model, pred)


# --------------------------------------------------------------------------------------------
# The adversary suite: several attacks per private attribute, privacy = the strongest
# --------------------------------------------------------------------------------------------

ADVERSARIES: Registry[type[Model]] = Registry("adversary")
ADVERSARIES.register_lazy("lexical", "bench.attacks.lexical:LexicalAdversary")
ADVERSARIES.register_lazy("informed", "bench.attacks.informed:InformedAdversary")
ADVERSARIES.register_lazy("reconstructed", "bench.attacks.reconstructed:ReconstructedAdversary")
# every text/vector model is an adversary too: the thesis trains its utility architecture on
# the private attribute (Riecker 2023, Sec. 4.2)
ADVERSARIES.register_lazy("bow", "bench.models.bow:BowClassifier")
ADVERSARIES.register_lazy("lstm", "bench.models.lstm:LSTMClassifier")
ADVERSARIES.register_lazy("transformer", "bench.models.transformer:TransformerClassifier")

MODEL_ADVERSARY = "model"
"""In a grid's ``adversaries:`` list, the cell's own model (the thesis' same-model adversary)."""

DEFAULT_ADVERSARIES = ("lexical", MODEL_ADVERSARY, "informed")
"""The default set: ``lexical`` + the cell's model + ``informed`` where the cell's output is
text (the informed adversary needs the mechanism's channel over output *words*)."""

ADVERSARY_INFO: dict[str, str] = {
    "lexical": "tf-idf word 1-2-grams + class-weighted logistic regression, L1/L2 and C "
               "picked on dev",
    "informed": "knows the mechanism: per-token posterior P(original word | privatized token) "
                "-> attribute scores -> logistic regression (docs/informed.md)",
    "reconstructed": "lexical on the text reconstructed token by token (MAP original under "
                     "the Zipf prior through the mechanism's channel; docs/informed.md)",
    "bow": "the `bow` model trained on the private attribute",
    "lstm": "the thesis' `lstm` trained on the private attribute (class-weighted, early stopping)",
    "transformer": "the MiniLM `transformer` trained on the private attribute",
}


ADVERSARY_NEEDS: dict[str, str] = {
    "privatizer": "a freshly fitted Privatizer of the cell's configuration, with its own random "
                  "stream (None on the unprivatized baseline): the DP threat model's knowledge "
                  "of the mechanism",
    "attribute_words": "the private attribute's label names, one per label of a multilabel "
                       "attribute (e.g. entity names; None for other attributes)",
    "channel_cache": "the results folder's cache of the informed adversary's channels "
                     "(bench.results.channels.ChannelStore; None outside a run)",
}
"""What an adversary class may declare in ``needs`` (a frozenset of these keys): the runner
passes each declared one to its constructor as a keyword argument, and nothing else. What input
it reads (``text``, ``vectors``) it declares in ``accepts``."""


def adversary_accepts(name: str) -> frozenset[str]:
    """Input kinds (``text``, ``vectors``) the adversary ``name`` can attack."""
    return ADVERSARIES.get(name).accepts


def adversary_needs(name: str) -> frozenset[str]:
    """What the adversary ``name`` needs besides its input (keys of :data:`ADVERSARY_NEEDS`),
    as its class declares in ``needs`` (none by default).

    Raises:
        ValueError: it declares something no runner provides.
    """
    needs = frozenset(getattr(ADVERSARIES.get(name), "needs", ()))
    unknown = sorted(needs - set(ADVERSARY_NEEDS))
    if unknown:
        raise ValueError(f"adversary {name!r} needs {unknown}, which the runner does not "
                         f"provide (it provides {sorted(ADVERSARY_NEEDS)})")
    return needs


def resolve_adversaries(setting: Sequence[str] | None, model: str, output: str,
                        decode: bool = False) -> tuple[list[str], list[tuple[str, str]]]:
    """The adversaries a cell runs, and those left out with the reason.

    Args:
        setting: the grid's ``adversaries`` list (``None``: :data:`DEFAULT_ADVERSARIES`);
            ``model`` stands for the cell's model.
        model: the cell's model name.
        output: what privatization hands the adversaries, ``"text"`` or ``"vectors"``.
        decode: vector output is decoded to the nearest public words for the adversaries that
            read only text (grid setting ``decode_vectors``; :func:`reads_decoded`); one that
            needs the mechanism's channel over words (``informed``) is still left out.

    Returns:
        ``(names, left_out)``: registry names in order without duplicates, and
        ``(name, reason)`` for adversaries that cannot attack this output kind. With the default
        set, a left-out adversary is normal (e.g. ``lexical`` on vectors); the grid turns an
        explicitly requested one into a skipped cell.

    Raises:
        UnknownNameError: an unknown adversary name (with did-you-mean).
    """
    names = list(DEFAULT_ADVERSARIES if setting is None else setting)
    out: list[str] = []
    left: list[tuple[str, str]] = []
    for n in names:
        real = model if n == MODEL_ADVERSARY else n
        ADVERSARIES.get(real)  # unknown name -> did-you-mean
        if real in out:
            continue
        accepts = adversary_accepts(real)
        if output not in accepts and not (decode and reads_decoded(real, output)):
            why = (f"adversary {real!r} reads {' or '.join(sorted(accepts))}; this cell's "
                   f"privatized output is {output}")
            if decode and output == "vectors" and "text" in accepts:
                why += " (decoded vectors have no channel over words for it)"
            left.append((real, why))
            continue
        out.append(real)
    return out, left


def reads_decoded(name: str, output: str) -> bool:
    """Whether adversary ``name`` attacks a cell's ``output`` as decoded text (grid setting
    ``decode_vectors``): the output is vectors, the adversary reads text only, and it does not
    need the mechanism's own channel over words (the ``informed`` adversary does)."""
    accepts = adversary_accepts(name)
    return output == "vectors" and "vectors" not in accepts and "text" in accepts \
        and "privatizer" not in adversary_needs(name)


STATIC = ":static"
"""Suffix of a static attack's name in ``by_adversary``: the adversary trained on the original
text and tested on the privatized text (grid setting ``static_attackers``), beside the adaptive
one trained on privatized text (the default; e.g. arXiv 2605.01065 reports both)."""


def base_adversary(name: str) -> str:
    """The registry name of an attack as ``by_adversary`` names it (``lexical:static`` ->
    ``lexical``). On the unprivatized baseline the static and the adaptive attack are one
    attack, trained and tested on the original text, so a static attack is compared with the
    baseline's entry of its base name."""
    return name.removesuffix(STATIC)


def runs_static(name: str, output: str, decode: bool) -> bool:
    """Whether adversary ``name`` also runs static in a cell whose privatized ``output`` it
    reads: it reads text (the cell's output is text, or vectors decoded for it) and needs no
    channel of the mechanism (``informed`` attacks through the mechanism itself, no training
    text to choose)."""
    if "privatizer" in adversary_needs(name) or "text" not in adversary_accepts(name):
        return False
    return output == "text" or (decode and reads_decoded(name, output))


def adversary_version(name: str) -> str:
    """Registry version of an adversary (its class' ``version``)."""
    return str(getattr(ADVERSARIES.get(base_adversary(name)), "version", "1"))


def make_adversary(name: str, *, seed: int, n_classes: int | None = None,
                   params: dict[str, Any] | None = None, **provided: Any) -> Model:
    """Construct the adversary ``name``.

    Model-based adversaries get ``params`` (the cell's model hyperparameters when the adversary
    is the cell's model). ``provided`` holds what the caller can give (keys of
    :data:`ADVERSARY_NEEDS`: ``privatizer``, ``attribute_words``); the adversary gets exactly
    what its class declares in ``needs`` (``informed``: both; ``None`` where not provided, e.g.
    the identity channel of the unprivatized baseline), so no adversary is special-cased by
    name.
    """
    needs = adversary_needs(name)
    unknown = sorted(set(provided) - set(ADVERSARY_NEEDS))
    if unknown:
        raise TypeError(f"make_adversary: unknown keyword(s) {unknown} (an adversary can need "
                        f"{sorted(ADVERSARY_NEEDS)})")
    kw: dict[str, Any] = dict(params or {})
    kw.setdefault("seed", seed)
    if n_classes is not None:
        kw.setdefault("n_classes", n_classes)
    for need in sorted(needs):
        kw[need] = provided.get(need)
    return ADVERSARIES.create(name, **kw)


def strongest(by_adversary: dict[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The adversary with the highest macro-F1 (ties: the first in run order)."""
    if not by_adversary:
        raise ValueError("no adversary results")
    name = max(by_adversary, key=lambda n: by_adversary[n]["adversary_macro_f1"])
    return name, by_adversary[name]


def headline(by_adversary: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Headline privacy of one private attribute: ``1 - max`` adversary macro-F1.

    Returns the winning adversary's metrics (``privacy``, ``adversary_macro_f1``, ...,
    ``chance_threshold``, ``chance_level``) plus ``adversary`` (its name) and ``by_adversary``
    (every adversary's metrics), so code reading ``privacy[task]["privacy"]`` gets the strongest
    attack.
    """
    name, best = strongest(by_adversary)
    out = {k: v for k, v in best.items() if k not in ("fit_seconds", "predict_seconds")}
    out["adversary"] = name
    out["by_adversary"] = by_adversary
    out["seconds"] = float(sum(m.get("fit_seconds", 0.0) + m.get("predict_seconds", 0.0)
                               for m in by_adversary.values()))
    return out


def restrict(baseline_task: AttributePrivacy | None, names: Sequence[str]
             ) -> AttributePrivacy | None:
    """The baseline's headline over the adversaries ``names`` only (those a privatized cell
    runs; a static attack by its base name, :func:`base_adversary`), so Δprivacy and validity
    compare the same attacks: a vector-output cell, which has
    no text adversaries, is not compared with a baseline won by ``lexical``. ``None`` when the
    baseline ran none of them. Baselines without ``by_adversary`` (suite < 0.2) are returned
    as they are."""
    if baseline_task is None or not baseline_task.has("by_adversary"):
        return baseline_task
    wanted = {base_adversary(n) for n in names}
    common = {n: m.to_dict() for n, m in baseline_task.by_adversary.items() if n in wanted}
    return AttributePrivacy.from_dict(headline(common)) if common else None


def privacy_validity(baseline_task: Mapping[str, Any] | AdversaryRecord | None,
                     who: str | None = None) -> tuple[bool | None, str | None]:
    """Whether a privacy measurement is valid, judged on the unprivatized baseline (issue rule).

    The strongest adversary must beat chance on the *unprivatized* text: otherwise a privatized
    cell's "privacy" only shows that the attack failed, not that the text is private. "Beats
    chance" means its macro-F1 is above the chance threshold (:func:`bench.metrics.
    classification.chance_level`) and so is the lower end of its bootstrap 95% interval over
    the test documents (``adversary_macro_f1_ci95``, suite >= 0.3; older cells: the point
    estimate only), so one lucky split does not make a measurement. The one
    place this rule lives: the runner applies it to the headline, the report
    (:func:`bench.analysis.privacy.judge`) to one named adversary.

    Args:
        baseline_task: the baseline cell's privacy of one private attribute
            (:meth:`bench.results.sections.CellMetrics.attribute`, or the record as a dict;
            ``None``: no baseline was run), or one adversary's entry of its ``by_adversary``.
        who: how the reason names the adversary (default: "the strongest adversary (NAME)").

    Returns:
        ``(True, None)``, ``(False, reason)``, or ``(None, reason)`` when there is no baseline.
    """
    if baseline_task is None:
        return None, "no unprivatized baseline to check the adversary against"
    t = (baseline_task if isinstance(baseline_task, AdversaryRecord)
         else AttributePrivacy.from_dict(baseline_task))
    f1 = float(t.adversary_macro_f1)
    thr = float(t.chance_threshold if t.has("chance_threshold") else 0.0)
    ci = t.adversary_macro_f1_ci95
    if who is None:
        name = (t.adversary if isinstance(t, AttributePrivacy) and t.has("adversary")
                else "the adversary")
        who = f"the strongest adversary ({name})"
    if f1 <= thr:
        return False, (f"{who} reaches macro-F1 {f1:.3f} on the unprivatized text, not above "
                       f"the chance threshold {thr:.3f}: no valid privacy measurement")
    if ci is not None and float(ci[0]) <= thr:
        return False, (f"{who} reaches macro-F1 {f1:.3f} on the unprivatized text, but its 95% "
                       f"interval [{float(ci[0]):.3f}, {float(ci[1]):.3f}] reaches down to the "
                       f"chance threshold {thr:.3f}: no valid privacy measurement")
    return True, None
