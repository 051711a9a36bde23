"""``reference_utility``: the utility task scored by a strong, stable, cheap reference classifier.

The paper's utility model (the thesis' LSTM) is kept for fidelity, but its training can fail on
a seed: the quickstart's unprivatized LSTM scored 0.442 on seed 0 and 0.80–0.91 on the others,
and that one run is most of the width of every interval built on it. This measure trains,
beside it, the suite's tf-idf + logistic-regression classifier (the ``lexical`` adversary's
model, :class:`bench.attacks.lexical.LexicalAdversary`: word 1–2-grams, sublinear tf,
class-weighted logistic regression, L1/L2 and C chosen on the dev split by macro-F1; the strong
text-classification baseline of Joachims 1998 and Wang & Manning 2012) on the utility labels of
the cell's privatized train split. Logistic regression is convex: its fit does not depend on an
initialisation and cannot fail the way a network's can.

Reported, each on the test split:

* ``macro_f1`` (with ``macro_f1_ci95``, a percentile bootstrap over test documents),
  ``accuracy``, ``chance_threshold`` and ``chance_level``, exactly as the cell's own utility
  (:func:`bench.metrics.classification.classification_scores`, :func:`~bench.metrics.
  classification.chance_level`): the classifier tested on privatized text, the suite's
  protocol (Riecker 2023, Sec. 4.2);
* ``original_test_macro_f1`` (and its interval): the same classifier tested on the *original*
  test documents, the protocol of the TEM paper (Carvalho et al. 2021, Sec. 5.3: models trained
  on privatized text, tested on original text);
* ``penalty``, ``C`` (the dev choice) and ``dev_macro_f1``.

Applies to every cell with text (the baseline included, which anchors it); a cell whose output
is vectors has no words for it (skipped).

Example:
    >>> from bench.measures import measure
    >>> measure("reference_utility").version
    '1'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.measures.base import Measure, MeasureInput


def _skip(cell: Any) -> str | None:
    if not cell.is_baseline and cell.output != "text":
        return "the cell outputs vectors, not text (no words for the reference classifier)"
    return None


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``reference_utility`` record (see the module docstring)."""
    from bench.attacks.lexical import LexicalAdversary
    from bench.metrics.classification import (
        chance_level,
        classification_scores,
        is_chance_level,
    )
    from bench.run.attacks import n_classes

    cell, task, split = ctx.cell, ctx.ds.utility_task, ctx.ds.splits
    n_cls = n_classes(task)

    def part(name: str, docs: list) -> list:
        return [docs[i] for i in split[name].tolist()]

    y_tr, y_dev, y_te = (task.labels[split[s]] for s in ("train", "dev", "test"))
    model = LexicalAdversary(n_classes=n_cls, seed=int(cell.seed))
    model.fit(part("train", ctx.corpus), y_tr, part("dev", ctx.corpus), y_dev)
    scores = classification_scores(y_te, model.predict(part("test", ctx.corpus)), n_cls,
                                   seed=cell.seed)
    chance = chance_level(y_te, y_tr, n_classes=n_cls, seed=cell.seed)
    original = classification_scores(y_te, model.predict(part("test", ctx.docs)), n_cls,
                                     seed=cell.seed)
    return {"macro_f1": scores["macro_f1"], "macro_f1_ci95": scores.get("macro_f1_ci95"),
            "accuracy": scores.get("accuracy"), "chance_threshold": chance.threshold,
            "chance_level": bool(is_chance_level(scores["macro_f1"], chance)),
            "original_test_macro_f1": original["macro_f1"],
            "original_test_macro_f1_ci95": original.get("macro_f1_ci95"),
            "penalty": model.penalty_, "C": float(model.C_),
            "dev_macro_f1": None if model.dev_macro_f1_ is None
            else float(np.float64(model.dev_macro_f1_)), "n": int(len(y_te))}


REFERENCE_UTILITY = Measure(
    "reference_utility", "1", "utility task by tf-idf + logistic regression (C and penalty on "
    "dev): macro-F1 on the privatized test split, and on the original one (TEM's protocol)",
    compute, _skip)
"""The ``reference_utility`` measure."""
