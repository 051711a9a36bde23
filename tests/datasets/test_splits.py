"""Splits: disjoint, covering, stratified, reproducible and seed-dependent on every embedded
corpus; strata of a multilabel task; subsample and custom split fractions."""

from __future__ import annotations

import numpy as np
import pytest

from bench.datasets import DATASETS, MIA_SPLITS, TRAIN_SPLITS, load_dataset
from bench.datasets.base import Task
from bench.datasets.splits import strata

EMBEDDED = [n for n in DATASETS.names() if DATASETS.get(n).embedded]


@pytest.mark.parametrize("name", EMBEDDED, ids=str)
def test_splits_sizes_disjoint_and_covering(name: str) -> None:
    ds = load_dataset(name)
    n = len(ds)
    for family in (TRAIN_SPLITS, MIA_SPLITS):
        parts = [ds.splits[s] for s in family]
        allidx = np.concatenate(parts)
        assert len(np.unique(allidx)) == len(allidx), f"{family} overlap"
        assert len(allidx) == n  # default fractions cover the dataset
        assert all(np.all(np.diff(p) > 0) for p in parts)  # sorted, unique
    sizes = {k: len(v) for k, v in ds.splits.items()}
    assert sizes == ds.card.split_sizes
    tol = 0.02 if not ds.config["split_by_group"] else 0.04
    assert abs(sizes["train"] / n - 0.8) <= tol
    assert abs(sizes["dev"] / n - 0.1) <= tol
    assert abs(sizes["test"] / n - 0.1) <= tol
    assert abs(sizes["mia_members"] / n - 0.25) < 0.002
    assert abs(sizes["mia_nonmembers"] / n - 0.25) < 0.002
    assert abs(sizes["mia_shadow"] / n - 0.5) < 0.002


@pytest.mark.parametrize("name", ["bbc", "rt"], ids=str)
def test_train_dev_test_stratified(name: str) -> None:
    ds = load_dataset(name)
    y = ds.utility_task.labels
    overall = np.bincount(y) / len(y)
    for split in ("train", "test", "mia_members"):
        part = np.bincount(y[ds.splits[split]], minlength=len(overall)) / len(ds.splits[split])
        assert np.abs(part - overall).max() < 0.01


@pytest.mark.parametrize("name", EMBEDDED, ids=str)
def test_splits_reproducible_and_seed_dependent(name: str) -> None:
    a, b, c = load_dataset(name, seed=3), load_dataset(name, seed=3), load_dataset(name, seed=4)
    for s in a.splits:
        assert np.array_equal(a.splits[s], b.splits[s])
    assert not np.array_equal(a.splits["test"], c.splits["test"])
    assert not np.array_equal(a.splits["mia_members"], c.splits["mia_members"])
    assert a.content_hash == c.content_hash  # the seed does not change the content


def test_strata_of_a_multilabel_task() -> None:
    topic = Task("topic", np.array([0, 1, 0, 1, 1]), "binary", "utility", ("a", "b"))
    ents = Task("e", np.array([[1, 0], [1, 1], [0, 0], [1, 0], [0, 0]]), "multilabel",
                "privacy", ("common", "rare"))
    # rarest label present; none -> 2 + topic
    assert strata([topic, ents], "e").tolist() == [0, 1, 2, 0, 3]
    assert strata([topic, ents], "topic").tolist() == [0, 1, 0, 1, 1]


def test_subsample_and_custom_split() -> None:
    ds = load_dataset("rt", subsample=1000, split=(0.6, 0.2, 0.2), mia_split=(0.1, 0.1, 0.2))
    assert len(ds) == 1000
    assert {k: len(v) for k, v in ds.splits.items()} == {
        "train": 600,
        "dev": 200,
        "test": 200,
        "mia_members": 100,
        "mia_nonmembers": 100,
        "mia_shadow": 200,
    }
    frac = load_dataset("rt", subsample=0.1)
    assert len(frac) == 1275
