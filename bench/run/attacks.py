"""The attacks stage: every configured adversary on every private attribute of a cell.

An adversary declares what it needs (:func:`bench.attacks.adversary.make_adversary`); the
informed adversary gets a freshly fitted privatizer of the cell's configuration (the DP threat
model: it knows the mechanism and its parameters), with a random stream of its own, and the
results folder's channel cache (:mod:`bench.results.channels`), so a channel computed for one
cell serves the others with the same key.

Example:
    >>> attack_privacy(cell, ds, (X_train, X_dev, X_test))["gender"]["privacy"]
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from bench.grid import Cell
from bench.results import layout
from bench.results.channels import ChannelStore
from bench.run import inputs

COSTS = ("channels_computed", "channel_seconds", "channels_reused", "channel_reuse_seconds")
"""What an adversary may add to its cell's ``runtime`` record (its ``costs_`` after fitting):
the informed adversary's channels computed (and their seconds) and reused from a cache (and
the seconds reading it took). Run-time measurements: never part of what a rerun reproduces."""


ORIGINAL_FITS_KEPT = 8
"""How many adversaries fitted on the original text a process keeps (:func:`_original_fit`)."""

_ORIGINAL_FITS: OrderedDict[str, Any] = OrderedDict()


def _fit_key(name: str, params: dict[str, Any] | None, seed: int, n_cls: int | None,
             parts: tuple[Any, ...]) -> str:
    """The digest of everything an adversary's fit depends on: its name, version,
    hyperparameters, seed and number of classes, and the content of its training and dev
    documents and labels."""
    from bench.attacks.adversary import adversary_version

    h = hashlib.sha256(json.dumps([name, adversary_version(name), params or {}, seed, n_cls],
                                  sort_keys=True, default=str).encode())
    for part in parts:
        if isinstance(part, np.ndarray):  # labels
            h.update(f"{part.dtype}{part.shape}".encode() + np.ascontiguousarray(part).tobytes())
            continue
        for doc in part:
            if isinstance(doc, np.ndarray):
                h.update(np.ascontiguousarray(doc).tobytes())
            else:
                h.update("\x1f".join(map(str, doc)).encode())
            h.update(b"\x1e")
        h.update(b"\x1d")
    return h.hexdigest()


def _original_fit(key: str, model: Any, X: Any, y: np.ndarray, X_dev: Any,
                  y_dev: np.ndarray) -> tuple[Any, float]:
    """The adversary fitted on the original text under ``key`` (:func:`_fit_key`): ``model``
    fitted on ``(X, y)`` (dev ``(X_dev, y_dev)``) on first need and kept for the process' next
    cells. A static attack (and the baseline's attack) trains on the same original split with
    the same seed in every cell of a dataset x model x seed, and a fit is deterministic (its
    random streams are seeded by the adversary's seed alone), so one fit serves them all with
    the same bits. Returns the fitted model and the seconds the fit took (0 when reused). At
    most :data:`ORIGINAL_FITS_KEPT` are kept, the least recently used dropped first."""
    if key in _ORIGINAL_FITS:
        _ORIGINAL_FITS.move_to_end(key)
        return _ORIGINAL_FITS[key], 0.0
    t0 = time.perf_counter()
    model.fit(X, y, X_dev, y_dev)
    seconds = time.perf_counter() - t0
    _ORIGINAL_FITS[key] = model
    while len(_ORIGINAL_FITS) > ORIGINAL_FITS_KEPT:
        _ORIGINAL_FITS.popitem(last=False)
    return model, seconds


def n_classes(task: Any) -> int | None:
    """Number of classes of a single-label task; None for a multilabel one."""
    return len(task.classes) if task.kind != "multilabel" else None


def decode_vectors(cell: Cell, splits: Any) -> tuple[list, list, list]:
    """Every privatized vector of the splits decoded to its nearest public word, in the space
    the mechanism ran in (after the sensitivity approach): what the ``nearest`` mapping would
    have output. Post-processing of the mechanism's output, so it changes no guarantee, and any
    attacker has it for free; the text adversaries attack this text in cells whose output is
    vectors when the grid sets ``decode_vectors``."""
    from bench.mapping import MAPPINGS
    from bench.neighbors import NeighborIndex

    p = inputs.privatizer(cell, seed=[cell.seed, 2])  # fitting draws nothing: its space only
    index = NeighborIndex(p.mechanism.space)
    nearest = MAPPINGS.create("nearest")
    words = np.asarray(p.embedding.words, dtype=object)
    out = []
    for part in splits:
        lengths = np.array([len(x) for x in part], dtype=np.int64)
        if not len(part) or not lengths.sum():
            out.append([[] for _ in part])
            continue
        ids = nearest.map(np.concatenate([np.asarray(x) for x in part]), index, None)
        out.append([list(t) for t in np.split(words[ids], np.cumsum(lengths)[:-1])])
    return out[0], out[1], out[2]


def _attack_privatizer(cell: Cell):
    """A freshly fitted privatizer of the cell's configuration for an adversary that declares
    it ``needs`` one (``informed``, which knows the mechanism and its parameters: the DP threat
    model); ``None`` on the baseline. Its random stream is its own (seeded from the cell seed),
    never the one that privatized the corpus."""
    if cell.is_baseline:
        return None
    return inputs.privatizer(cell, seed=[cell.seed, 1])


def attack_privacy(cell: Cell, ds, splits: tuple[list, list, list],
                   results: str | Path | None = None,
                   costs: dict[str, float] | None = None,
                   original: tuple[list, list, list] | None = None) -> dict[str, Any]:
    """Every configured adversary on every private attribute; privacy = the strongest attack.

    For each privacy task, each adversary of the cell (:func:`bench.attacks.adversary.
    resolve_adversaries`: the grid's ``adversaries`` setting, default lexical + the cell's model
    + informed) is trained on the privatized training split (dev split for model selection)
    and scored on the privatized test split (Riecker 2023, Sec. 4.2). The task's headline
    ``privacy`` is ``1 - max`` adversary macro-F1, with the winner in ``adversary`` and every
    adversary's metrics in ``by_adversary`` (:func:`bench.attacks.adversary.headline`). Each
    adversary gets what its class declares in ``needs`` (:data:`bench.attacks.adversary.
    ADVERSARY_NEEDS`); the attack privatizer is built once, when the first one needs it, and
    the channel cache is the one of ``results`` (None: none). What the adversaries report in
    ``costs_`` (:data:`COSTS`) is added up into ``costs``.

    With the grid setting ``static_attackers`` and ``original`` (the original documents'
    train, dev and test splits), a privatized cell also runs each text adversary *static*
    (:func:`bench.attacks.adversary.runs_static`): fitted on the original train split (dev
    for model selection) and scored on the privatized test split, as ``<name>:static``; the
    adaptive attack above is trained on privatized text. Both count for the headline.
    """
    from bench.attacks.adversary import (
        STATIC,
        adversary_needs,
        adversary_version,
        attribute_adversary,
        headline,
        make_adversary,
        reads_decoded,
        resolve_adversaries,
        runs_static,
    )
    from bench.metrics.classification import chance_level

    split = ds.splits
    decode = bool(cell.settings.get("decode_vectors"))
    static = bool(cell.settings.get("static_attackers")) and original is not None \
        and not cell.is_baseline
    names, left_out = resolve_adversaries(cell.settings.get("adversaries"), cell.model,
                                          cell.output, decode)
    decoded: list = []  # the splits decoded to words, on first need
    if cell.has_rewriter or not cell.word_for_word:
        from bench.rewriters.base import rewritten_adversaries

        names, left_out = rewritten_adversaries(names, left_out,
                                                "a rewriter's" if cell.has_rewriter
                                                else "a document-level mechanism's")
    attack_privatizer: list = []  # built on first need, shared by every task and adversary
    store = ChannelStore(layout.channels_dir(results)) if results is not None else None
    out: dict[str, Any] = {}
    for task_name, ptask in ds.privacy_tasks.items():
        n_cls = n_classes(ptask)
        y_tr, y_te = ptask.labels[split["train"]], ptask.labels[split["test"]]
        # one chance level per task, shared by its adversaries (labels and seed only; the
        # multilabel simulation costs ~2 s at 2,000 test documents)
        chance = chance_level(y_te, y_tr, n_classes=n_cls, seed=cell.seed)
        by_adv: dict[str, dict] = {}
        for name in names:
            needs = adversary_needs(name)
            if "privatizer" in needs and not attack_privatizer:
                attack_privatizer.append(_attack_privatizer(cell))
            provided = {"privatizer": attack_privatizer[0] if attack_privatizer else None,
                        "attribute_words": (list(ptask.classes)
                                            if ptask.kind == "multilabel" else None),
                        "channel_cache": store}
            Xa = splits
            if decode and reads_decoded(name, cell.output):
                if not decoded:
                    decoded.append(decode_vectors(cell, splits))
                Xa = decoded[0]
            # the adaptive attack trains on the privatized text; the static one (grid setting
            # static_attackers) on the original text; both are scored on the privatized test
            fits = [("", Xa[0], Xa[1])]
            if static and runs_static(name, cell.output, decode):
                assert original is not None
                fits.append((STATIC, original[0], original[1]))
            y_dev = ptask.labels[split["dev"]]
            for suffix, train, dev in fits:
                params = cell.model_kwargs() if name == cell.model else None
                adv = make_adversary(name, seed=cell.seed, n_classes=n_cls, params=params,
                                     **{k: provided[k] for k in needs})
                memo = (suffix == STATIC or cell.is_baseline) and not needs
                if memo:  # trained on the original text: one fit serves every cell of the seed
                    key = _fit_key(name, params, cell.seed, n_cls, (train, dev, y_tr, y_dev))
                    adv, fit_seconds = _original_fit(key, adv, train, y_tr, dev, y_dev)
                res = attribute_adversary(
                    adv, train, y_tr, Xa[2], y_te, X_dev=dev, y_dev=y_dev,
                    n_classes=n_cls, seed=cell.seed, chance=chance, fitted=memo)
                if memo:
                    res.metrics["fit_seconds"] = fit_seconds  # 0 when reused
                by_adv[name + suffix] = res.metrics | {"version": adversary_version(name)}
                if costs is not None:
                    for k, v in (getattr(res.model, "costs_", None) or {}).items():
                        if k in COSTS:
                            costs[k] = costs.get(k, 0) + v
        out[task_name] = headline(by_adv) | {"adversaries_left_out": [list(x) for x in left_out]}
    return out
