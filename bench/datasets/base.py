"""The one `Dataset` shape, its tasks and card, the dataset registry and `load_dataset`.

Every corpus -- embedded or loaded from a user's file -- becomes a :class:`Dataset`: texts, one
utility task, zero or more privacy tasks (private attributes), optional group ids (speakers,
users), deterministic train/dev/test splits and disjoint membership-inference splits, and a
:class:`DatasetCard`. A loader only produces a :class:`Corpus` (texts, tasks, groups);
:func:`load_dataset` validates the configuration, subsamples, splits and attaches the card.

The splits are made in :mod:`bench.datasets.splits`, the label helpers shared by loaders
live in :mod:`bench.datasets.labels` and the errors in :mod:`bench.datasets.errors`; this
module re-exports them, so ``from bench.datasets.base import ...`` keeps working.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("bbc", seed=0)
    >>> ds.utility_task.name, len(ds.splits["train"])
    ('topic', 1701)
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
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
from bench.datasets.splits import group_partition, make_splits, partition, strata
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

KINDS = ("multiclass", "binary", "multilabel")
ROLES = ("utility", "privacy")
TRAIN_SPLITS = ("train", "dev", "test")
MIA_SPLITS = ("mia_members", "mia_nonmembers", "mia_shadow")
DEFAULT_SPLIT = (0.8, 0.1, 0.1)
# TEM (Carvalho et al. 2021, Sec. 5.3) uses four equal quarters: TR1 members, TR2 non-members,
# TE2 shadow "in", TE1 shadow "out"; the shadow quarters together are `mia_shadow`.
DEFAULT_MIA_SPLIT = (0.25, 0.25, 0.5)
DEFAULT_MAX_TOKENS = 500  # Riecker 2023, Sec. 4.3 (LSTM max input length searched over 100/500)


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Task:
    """One classification target over a dataset's texts."""

    name: str
    """Task name, e.g. ``topic``, ``gender``, ``entities``."""
    labels: np.ndarray
    """``(n,)`` int64 class indices into :attr:`classes`; multilabel: ``(n, k)`` int8 0/1."""
    kind: str
    """``multiclass``, ``binary`` or ``multilabel``."""
    role: str
    """``utility`` (what the privatized text should still support) or ``privacy`` (what an
    adversary tries to recover)."""
    classes: tuple[str, ...]
    """Class names (multilabel: one name per label column)."""
    mentions: bool = False
    """Multilabel only: label j is "class name j is written in the text" (whole word,
    case-insensitive). Such labels are recomputed on the text the models see -- the first
    ``max_tokens`` tokens -- so an attribute is never a mention the adversary was not shown."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"task {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.role not in ROLES:
            raise ValueError(f"task {self.name!r}: role must be one of {ROLES}, got {self.role!r}")
        labels = np.asarray(self.labels)
        k = len(self.classes)
        if self.kind == "multilabel":
            labels = labels.astype(np.int8)
            if labels.ndim != 2 or labels.shape[1] != k:
                raise ValueError(f"task {self.name!r}: multilabel labels must be (n, {k})")
            if labels.size and not np.isin(labels, (0, 1)).all():
                raise ValueError(f"task {self.name!r}: multilabel labels must be 0/1")
        else:
            labels = labels.astype(np.int64)
            if labels.ndim != 1:
                raise ValueError(f"task {self.name!r}: labels must be one-dimensional")
            if labels.size and (labels.min() < 0 or labels.max() >= k):
                raise ValueError(f"task {self.name!r}: labels must be in [0, {k})")
            if self.kind == "binary" and k != 2:
                raise ValueError(f"task {self.name!r}: a binary task needs 2 classes, got {k}")
        labels.setflags(write=False)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "classes", tuple(str(c) for c in self.classes))

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    def counts(self) -> dict[str, int]:
        """Documents per class (multilabel: documents where the label is present)."""
        if self.kind == "multilabel":
            sums = self.labels.sum(axis=0)
        else:
            sums = np.bincount(self.labels, minlength=len(self.classes))
        return {c: int(s) for c, s in zip(self.classes, sums)}

    def take(self, idx: np.ndarray) -> Task:
        """The same task restricted to rows ``idx``."""
        return dataclasses.replace(self, labels=self.labels[idx])


MEASURABLE_MARGIN = 0.1
"""A privacy task is *measurable* when a baseline attack on the unprivatized text beats the
chance threshold by at least this much macro-F1. Beating the threshold at all is the runner's
per-cell validity test; a card asks more, because a baseline a hair above chance (e.g. 0.51 vs
0.49) leaves no room for a privatized text to show any privacy gain."""


@dataclass(frozen=True)
class Baseline:
    """A measured attack on the *unprivatized* text of one privacy task (for the card)."""

    adversary: str
    """Registry name of the adversary, e.g. ``lexical``."""
    macro_f1: float
    """Its test macro-F1."""
    chance: float
    """The chance threshold on the same test labels
    (:func:`bench.metrics.classification.chance_level`, ``.threshold``)."""
    setting: str
    """The configuration it was measured with (seed, max_tokens, subsample, split, sizes)."""

    @property
    def measurable(self) -> bool:
        """Beats chance by at least :data:`MEASURABLE_MARGIN`."""
        return self.macro_f1 - self.chance >= MEASURABLE_MARGIN - 1e-9

    def describe(self) -> str:
        """One line for the card."""
        return (f"{self.adversary} macro-F1 {self.macro_f1:.2f} vs chance threshold "
                f"{self.chance:.2f} ({self.setting})")


@dataclass(frozen=True)
class TaskInfo:
    """Static description of a task for the dataset card."""

    name: str
    """Task name."""
    role: str
    """``utility`` or ``privacy``."""
    kind: str
    """``multiclass``, ``binary`` or ``multilabel``."""
    definition: str
    """How the label is defined and where it comes from."""
    baselines: tuple[Baseline, ...] = ()
    """Privacy tasks: measured attacks on the unprivatized text (the first is the card's
    reference configuration)."""

    @property
    def measurable(self) -> bool | None:
        """Privacy tasks: whether any baseline attack clearly beats chance (None: unmeasured)."""
        if not self.baselines:
            return None
        return any(b.measurable for b in self.baselines)


@dataclass(frozen=True)
class DatasetCard:
    """What a researcher needs to know before trusting numbers on a dataset.

    The static fields are written next to each loader; :func:`load_dataset` fills the measured
    ones (``size``, ``class_balance``, ``split_sizes``) from the loaded data.
    """

    name: str
    """Registry name."""
    title: str
    """Human-readable name."""
    source: str
    """Citation of the original data and where this copy comes from."""
    licence: str
    """Licence as stated by the package (or the source's terms for user-supplied files)."""
    tasks: tuple[TaskInfo, ...]
    """Task definitions."""
    caveats: tuple[str, ...] = ()
    """Known problems and preprocessing decisions."""
    embedded: bool = False
    """Installed from PyPI and loadable offline with no user file."""
    expected_size: str = ""
    """Size statement shown without loading (embedded: exact; loaders: the papers' numbers)."""
    how_to_get: str = ""
    """Where the data comes from / how to point the loader at it."""
    config: tuple[tuple[str, str], ...] = ()
    """Loader-specific configuration keys and what they do."""
    size: int | None = None
    """Measured number of texts (after filters)."""
    class_balance: dict[str, dict[str, int]] | None = None
    """Measured documents per class, per task."""
    split_sizes: dict[str, int] | None = None
    """Measured split sizes for the configuration the card was made with."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, eq=False)
class Corpus:
    """What a loader returns: texts and tasks, before subsampling and splitting."""

    texts: list[str]
    """The documents (original casing and punctuation)."""
    tasks: list[Task]
    """Exactly one utility task, any number of privacy tasks."""
    groups: np.ndarray | None = None
    """Author/speaker/user id per text (strings), or None."""
    source: str = ""
    """Where the data was read from (for logs and metadata)."""


@dataclass(frozen=True, eq=False)
class Dataset:
    """One dataset in the shape every experiment consumes.

    Example:
        >>> ds = load_dataset("conventions")
        >>> y = ds.tasks["gender"].labels[ds.splits["train"]]
    """

    name: str
    """Registry name."""
    texts: list[str]
    """The documents."""
    tasks: dict[str, Task]
    """Task name -> :class:`Task`; exactly one has role ``utility``."""
    groups: np.ndarray | None
    """Group id per text (speaker, user), or None."""
    splits: dict[str, np.ndarray]
    """Split name -> sorted int64 indices: ``train``/``dev``/``test`` (disjoint) and
    ``mia_members``/``mia_nonmembers``/``mia_shadow`` (disjoint; an independent partition)."""
    card: DatasetCard
    """The dataset card, with measured size, class balance and split sizes."""
    config: dict[str, Any] = field(default_factory=dict)
    """The fully resolved configuration it was built with."""
    public_texts: list[str] = field(default_factory=list)
    """The held-apart public part (config ``public``): texts in none of the splits, held apart
    before the subsample; only a rewriter trains on them (:mod:`bench.rewriters`). Empty when
    nothing is held apart."""

    def __post_init__(self) -> None:
        n = len(self.texts)
        for task in self.tasks.values():
            if len(task) != n:
                raise ValueError(f"task {task.name!r} has {len(task)} labels for {n} texts")
        if self.groups is not None and len(self.groups) != n:
            raise ValueError(f"{len(self.groups)} group ids for {n} texts")
        if sum(t.role == "utility" for t in self.tasks.values()) != 1:
            raise ValueError(f"dataset {self.name!r} needs exactly one utility task")
        for name, idx in self.splits.items():
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise ValueError(f"split {name!r} has indices outside [0, {n})")
        for family in (TRAIN_SPLITS, MIA_SPLITS):
            present = [self.splits[s] for s in family if s in self.splits]
            if present and len(np.unique(np.concatenate(present))) != sum(map(len, present)):
                raise ValueError(f"dataset {self.name!r}: splits {family} overlap")

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def utility_task(self) -> Task:
        """The single utility task."""
        return next(t for t in self.tasks.values() if t.role == "utility")

    @property
    def privacy_tasks(self) -> dict[str, Task]:
        """Privacy tasks (private attributes) by name; may be empty."""
        return {k: t for k, t in self.tasks.items() if t.role == "privacy"}

    def split_texts(self, split: str) -> list[str]:
        """Texts of one split, in index order."""
        return [self.texts[i] for i in self._split(split).tolist()]

    def split_labels(self, split: str, task: str | None = None) -> np.ndarray:
        """Labels of ``task`` (default: the utility task) on one split."""
        t = self.utility_task if task is None else self.tasks[task]
        return t.labels[self._split(split)]

    def _split(self, split: str) -> np.ndarray:
        try:
            return self.splits[split]
        except KeyError:
            raise KeyError(f"unknown split {split!r}; known: {', '.join(self.splits)}") from None

    @cached_property
    def content_hash(self) -> str:
        """sha256 over the texts, every task's name/kind/role/classes/labels and the group ids.

        Independent of the split seed; used (with the preparation config) for cache keys. A
        held-apart public part is covered too (only when there is one, so the hash of a
        dataset without it is what it always was).
        """
        h = content_hash(self.texts, self.tasks.values(), self.groups)
        if not self.public_texts:
            return h
        pub = hashlib.sha256(b"bench.dataset.public.v1\0" + h.encode("ascii"))
        for text in self.public_texts:
            b = text.encode("utf-8")
            pub.update(len(b).to_bytes(8, "little") + b)
        return pub.hexdigest()


def content_hash(texts: Sequence[str], tasks: Any, groups: np.ndarray | None) -> str:
    """sha256 of texts, labels and groups in a canonical byte layout."""
    h = hashlib.sha256()
    h.update(b"bench.dataset.v1\0")
    h.update(len(texts).to_bytes(8, "little"))
    for text in texts:
        b = text.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    for task in sorted(tasks, key=lambda t: t.name):
        head = json.dumps([task.name, task.kind, task.role, list(task.classes)])
        h.update(head.encode("utf-8") + b"\0")
        h.update(np.ascontiguousarray(task.labels, dtype=np.int64).tobytes())
    if groups is not None:
        h.update(b"groups\0")
        for g in groups.tolist():
            b = str(g).encode("utf-8")
            h.update(len(b).to_bytes(8, "little"))
            h.update(b)
    return h.hexdigest()


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
        DATASETS.register(name)(spec)
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
    "public": "hold apart a seeded, stratified part of the corpus as public data (a fraction in "
    "(0, 1) or a count >= 1), before the subsample: it is in no split; only a rewriter trains "
    "on it",
    "max_tokens": "tokens kept per text by `bench data prepare` (None = all)",
    "stratify": "task whose labels stratify the subsample and the splits (default: the "
    "dataset's own choice, usually the utility task); a multilabel task stratifies by each "
    "text's rarest label present, so every label keeps positives in dev and test",
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
        "public": None,
        "max_tokens": spec.max_tokens,
        "stratify": spec.stratify,
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
    pub = out["public"]
    if pub is not None:
        ok = (isinstance(pub, float) and 0 < pub < 1) or (
            isinstance(pub, (int, np.integer)) and not isinstance(pub, bool) and pub >= 1
        )
        if not ok:
            raise DatasetConfigError(
                f"dataset {spec.name!r}: public must be a fraction in (0, 1) or a count >= 1 "
                f"(the texts held apart as public data), got {pub!r}"
            )
    sub = out["subsample"]
    if sub is not None:
        ok = (isinstance(sub, float) and 0 < sub <= 1) or (
            isinstance(sub, (int, np.integer)) and not isinstance(sub, bool) and sub >= 1
        )
        if not ok:
            raise DatasetConfigError(
                f"dataset {spec.name!r}: subsample must be a fraction in (0, 1] or a count >= 1, "
                f"got {sub!r}"
            )
    if "path" in spec.options and out["path"] is None and spec.env_var:
        env = os.environ.get(spec.env_var)
        if env:
            out["path"] = env
    return out


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
    """Subsample, split and attach the measured card (no I/O)."""
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
            ``max_tokens``, ``stratify`` and the loader's own options (e.g. ``path`` for
            paper loaders).

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
