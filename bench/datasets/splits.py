"""Seeded splits: train/dev/test (optionally keeping every group in one part, or holding named
groups out as the test split) and the disjoint membership-inference partition, stratified by one
task's labels.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.datasets.errors import DatasetConfigError

if TYPE_CHECKING:
    from bench.datasets.records import Task

logger = logging.getLogger(__name__)


def _sizes(n: int, fractions: Sequence[float]) -> list[int]:
    """Integer part sizes for ``n`` items; the first part takes the rounding remainder when the
    fractions sum to 1."""
    sizes = [int(round(f * n)) for f in fractions]
    if abs(sum(fractions) - 1) < 1e-6:
        sizes[0] = n - sum(sizes[1:])
    return sizes


def partition(
    y: np.ndarray | None, fractions: Sequence[float], seed: int, what: str = "split"
) -> list[np.ndarray]:
    """Seeded partition of ``range(len(y))`` into parts of the given fractions.

    Stratified by ``y`` with scikit-learn's ``train_test_split`` where possible (every class
    needs enough members); otherwise a plain seeded shuffle, with a warning. Parts are returned
    sorted; when the fractions sum to less than 1 the rest is left out.
    """
    from sklearn.model_selection import train_test_split

    n = len(y) if y is not None else 0
    sizes = _sizes(n, fractions)
    rest = np.arange(n)
    parts: list[np.ndarray] = [np.empty(0, np.int64)] * len(sizes)
    # peel parts off from the last to the first, so the first (largest) takes the remainder
    order = list(range(len(sizes) - 1, -1, -1))
    for step, k in enumerate(order):
        size = sizes[k]
        if size == 0:
            continue
        if size >= len(rest):
            parts[k] = np.sort(rest)
            rest = np.empty(0, np.int64)
            continue
        strat = y[rest] if y is not None else None
        try:
            if strat is None or len(np.unique(strat)) < 2:
                raise ValueError("nothing to stratify")
            rest, take = train_test_split(
                rest, test_size=size, random_state=seed + step, stratify=strat
            )
        except ValueError as e:
            if strat is not None and len(np.unique(strat)) >= 2:
                logger.warning("%s: stratification impossible (%s); plain shuffle instead", what, e)
            rest, take = train_test_split(rest, test_size=size, random_state=seed + step)
        parts[k] = np.sort(np.asarray(take, np.int64))
    return parts


def group_partition(
    y: np.ndarray, groups: np.ndarray, fractions: Sequence[float], seed: int
) -> list[np.ndarray]:
    """Seeded partition that keeps every group inside one part (a stratified group split).

    Groups are stratified by their majority label; within each label, groups are shuffled and
    laid end to end, and each goes to the part whose share of that label's texts contains the
    group's midpoint, so part sizes track the fractions in *texts*, not in groups (unlike
    scikit-learn's ``GroupShuffleSplit``, which counts groups).
    """
    rng = np.random.default_rng(seed)
    uniq, ginv = np.unique(groups.astype(str), return_inverse=True)
    sizes = np.bincount(ginv, minlength=len(uniq))
    n_classes = int(y.max()) + 1 if len(y) else 1
    per_group = np.zeros((len(uniq), n_classes), np.int64)
    np.add.at(per_group, (ginv, y), 1)
    glabel = per_group.argmax(axis=1)
    bounds = np.cumsum(np.asarray(fractions, float))
    assign = np.full(len(uniq), -1)
    for lab in np.unique(glabel):
        gs = rng.permutation(np.flatnonzero(glabel == lab))
        total = sizes[gs].sum()
        mids = (np.cumsum(sizes[gs]) - sizes[gs] / 2) / total
        assign[gs] = np.minimum(np.searchsorted(bounds, mids, side="right"), len(fractions) - 1)
    row_part = assign[ginv]
    parts = [np.flatnonzero(row_part == k).astype(np.int64) for k in range(len(fractions))]
    for k, p in enumerate(parts):
        if len(p) == 0 and fractions[k] > 0:
            logger.warning("group split: part %d is empty (too few groups)", k)
    return parts


def heldout_partition(
    y: np.ndarray, groups: np.ndarray | None, test_groups: Sequence[str],
    fractions: Sequence[float], seed: int, by_group: bool = False,
) -> list[np.ndarray]:
    """Train/dev/test with the texts of ``test_groups`` as the test split (leave groups out).

    The remaining texts are split into train and dev in the ratio of the first two
    ``fractions`` (the third is ignored: the held-out groups fix the test split) -- record-level
    and stratified by ``y``, or keeping every group in one part when ``by_group``. A test
    split of unseen groups asks whether an attack generalises beyond the identities it was
    trained on (e.g. a speaker's gender read from speakers it never saw).

    Raises:
        DatasetConfigError: no group ids, a named group absent from the data, or no group left
            for training.
    """
    if groups is None:
        raise DatasetConfigError("test_groups is set but this dataset has no group ids")
    names = groups.astype(str)
    known = sorted(set(names.tolist()))
    missing = [g for g in test_groups if g not in set(known)]
    if missing:
        hints = {g: difflib.get_close_matches(g, known, n=1) for g in missing}
        hint = "; ".join(f"{g!r} (did you mean {h[0]!r}?)" if h else repr(g)
                         for g, h in hints.items())
        raise DatasetConfigError(f"test_groups: not a group of this dataset: {hint} (groups: "
                                 f"{', '.join(known)})")
    held = np.isin(names, list(test_groups))
    rest = np.flatnonzero(~held)
    if len(rest) == 0:
        raise DatasetConfigError("test_groups holds out every group: nothing left to train on")
    f_train, f_dev = float(fractions[0]), float(fractions[1])
    ratio = (f_train / (f_train + f_dev), f_dev / (f_train + f_dev))
    if by_group:
        tr, dev = group_partition(y[rest], groups[rest], ratio, seed)
    else:
        tr, dev = partition(y[rest], ratio, seed, "train/dev split (test_groups held out)")
    return [np.sort(rest[tr]), np.sort(rest[dev]), np.flatnonzero(held).astype(np.int64)]


def make_splits(
    y: np.ndarray, groups: np.ndarray | None, config: dict[str, Any]
) -> dict[str, np.ndarray]:
    """Train/dev/test and membership-inference splits for one resolved config, stratified by
    ``y`` (the labels of the spec's ``stratify`` task; groups keep their majority label)."""
    seed = config["seed"]
    if config.get("test_groups"):
        tr, dev, te = heldout_partition(y, groups, config["test_groups"], config["split"], seed,
                                        config["split_by_group"])
    elif config["split_by_group"]:
        if groups is None:
            raise DatasetConfigError("split_by_group=True but this dataset has no group ids")
        tr, dev, te = group_partition(y, groups, config["split"], seed)
    else:
        tr, dev, te = partition(y, config["split"], seed, "train/dev/test split")
    # membership inference is about records, so its partition is record-level (stratified)
    mia_seed = int.from_bytes(hashlib.sha256(f"mia:{seed}".encode()).digest()[:4], "little")
    mem, non, shadow = partition(y, config["mia_split"], mia_seed, "membership-inference split")
    return {
        "train": tr,
        "dev": dev,
        "test": te,
        "mia_members": mem,
        "mia_nonmembers": non,
        "mia_shadow": shadow,
    }


def nested_order(y: np.ndarray, seed: int) -> np.ndarray:
    """A seeded order of ``range(len(y))`` whose every prefix is stratified by ``y`` (nested).

    Each item draws a uniform key from ``numpy.random.default_rng(seed)``; within its stratum
    (the items sharing its label) it is ranked by that key and placed at ``(rank + 0.5) /
    stratum size``; the order sorts by that position, ties by the key. Taking the first ``k``
    is Webster/Sainte-Lague apportionment of ``k`` among the strata (Balinski and Young, *Fair
    Representation*, 2nd ed. 2001): every stratum is represented in proportion at every ``k``
    (within about one item), and with the same seed the first ``k`` are contained in the first
    ``k' > k``.

    Example:
        >>> y = np.array([0, 0, 0, 0, 1, 1])
        >>> order = nested_order(y, seed=0)
        >>> sorted(y[order[:3]].tolist())
        [0, 0, 1]
    """
    y = np.asarray(y)
    key = np.random.default_rng(seed).random(len(y))
    pos = np.empty(len(y), np.float64)
    for label in np.unique(y):
        idx = np.flatnonzero(y == label)
        rank = np.empty(len(idx), np.float64)
        rank[np.argsort(key[idx], kind="stable")] = np.arange(len(idx))
        pos[idx] = (rank + 0.5) / len(idx)
    return np.lexsort((key, pos)).astype(np.int64)


def strata(tasks: Sequence[Task], name: str) -> np.ndarray:
    """Stratification labels from task ``name``: its class ids; for a multilabel task, each
    text's rarest label present (by count over these texts; ties by column order) or, for
    a text with none, ``k +`` its utility class (so topics stay balanced among the rest)."""
    by_name = {t.name: t for t in tasks}
    task = by_name[name]
    if task.kind != "multilabel":
        return task.labels
    utility = next(t for t in tasks if t.role == "utility")
    k = task.labels.shape[1]
    if utility.kind == "multilabel":  # no single class to fall back on
        out = np.full(len(task), k, np.int64)
    else:
        out = k + utility.labels.astype(np.int64)
    # most frequent first, so a rarer label present overwrites it
    for j in np.argsort(-task.labels.sum(axis=0), kind="stable").tolist():
        out[task.labels[:, j] == 1] = j
    return out
