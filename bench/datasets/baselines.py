"""Measuring a dataset card's baseline attacks: the ``lexical`` adversary on unprivatized text.

:func:`lexical_baseline` runs exactly what a grid's unprivatized baseline cell runs for the
lexical adversary (:func:`bench.run.attacks.attack_privacy`): the texts tokenized with the
project tokenizer and cut at ``max_tokens``, the adversary trained on the train split with
its regularisation picked on dev, scored on test with the bootstrap 95% interval of its
macro-F1, the chance threshold from the training prior, and the runner's validity rule
(:func:`bench.attacks.adversary.privacy_validity`). The cards' :class:`~bench.datasets.base.
Baseline` numbers are measured with it.

Example:
    >>> from bench.datasets.baselines import lexical_baseline
    >>> lexical_baseline("debates2016", seed=0)["gender"]["macro_f1"]

    python -m bench.datasets.baselines debates2016 seed=0 'split=[0.6, 0.2, 0.2]'
"""

from __future__ import annotations

import json
import sys
from typing import Any

from bench.datasets.base import Dataset, load_dataset


def lexical_baseline(name: str | Dataset, *, tasks: str = "privacy",
                     **config: Any) -> dict[str, dict[str, Any]]:
    """The lexical adversary on the unprivatized text of a dataset's tasks.

    Args:
        name: a registered dataset (loaded with ``config``) or a loaded :class:`Dataset`.
        tasks: ``privacy`` (its privacy tasks) or ``all`` (the utility task too).
        **config: the dataset configuration (``seed``, ``split``, ``max_tokens``, ...).

    Returns:
        Task name -> ``macro_f1``, ``macro_f1_ci95``, ``chance_threshold``, ``valid`` (the
        runner's rule), ``n_test``, ``test_counts`` (test texts per class; multilabel: per
        label) and the chosen ``C`` and ``penalty``.
    """
    from bench.attacks.adversary import attribute_adversary, make_adversary, privacy_validity
    from bench.embeddings import tokenize

    if tasks not in ("privacy", "all"):
        raise ValueError(f"tasks must be 'privacy' or 'all', got {tasks!r}")
    ds = name if isinstance(name, Dataset) else load_dataset(name, **config)
    max_tokens = ds.config.get("max_tokens")
    docs = [tokenize(t)[:max_tokens] if max_tokens else tokenize(t) for t in ds.texts]
    split = {s: ds.splits[s] for s in ("train", "dev", "test")}
    part = {s: [docs[i] for i in idx.tolist()] for s, idx in split.items()}
    chosen = ds.tasks.values() if tasks == "all" else ds.privacy_tasks.values()
    seed = int(ds.config.get("seed", 0))
    out: dict[str, dict[str, Any]] = {}
    for task in chosen:
        n_cls = len(task.classes) if task.kind != "multilabel" else None
        y = {s: task.labels[idx] for s, idx in split.items()}
        adv = make_adversary("lexical", seed=seed, n_classes=n_cls)
        res = attribute_adversary(adv, part["train"], y["train"], part["test"], y["test"],
                                  X_dev=part["dev"], y_dev=y["dev"], n_classes=n_cls,
                                  seed=seed)
        m = res.metrics
        valid, _ = privacy_validity(m | {"adversary": "lexical"})
        out[task.name] = {
            "macro_f1": m["adversary_macro_f1"],
            "macro_f1_ci95": m["adversary_macro_f1_ci95"],
            "chance_threshold": m["chance_threshold"],
            "valid": valid,
            "n_test": int(len(y["test"])),
            "test_counts": task.take(split["test"]).counts(),
            "C": res.model.C_,
            "penalty": res.model.penalty_,
        }
    return out


def main(argv: list[str]) -> int:
    """``python -m bench.datasets.baselines NAME [key=value ...] [tasks=all]``: print the
    measurement as JSON (values are YAML: ``split=[0.6, 0.2, 0.2]``, ``clean=false``)."""
    import yaml

    if not argv:
        print(main.__doc__, file=sys.stderr)
        return 2
    config = {}
    for arg in argv[1:]:
        key, sep, value = arg.partition("=")
        if not sep:
            print(f"expected key=value, got {arg!r}", file=sys.stderr)
            return 2
        config[key] = yaml.safe_load(value)
    print(json.dumps(lexical_baseline(argv[0], **config), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
