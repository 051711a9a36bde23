"""The train-only subsample (config ``train_subsample``): dev, test and the membership-inference
partition unchanged, a seeded nested stratified part of the train split, refused when
malformed, and a grid axis whose entries are different cells."""

import numpy as np
import pytest

from bench.datasets import load_dataset
from bench.datasets.base import DatasetConfigError
from bench.datasets.splits import nested_order, strata
from bench.grid import load_grid


@pytest.fixture(scope="module")
def bbc_full():
    return load_dataset("bbc", seed=0)


@pytest.fixture(scope="module")
def bbc_100():
    return load_dataset("bbc", seed=0, train_subsample=100)


def test_dev_test_and_mia_unchanged(bbc_full, bbc_100):
    for split in ("dev", "test", "mia_members", "mia_nonmembers", "mia_shadow"):
        np.testing.assert_array_equal(bbc_100.splits[split], bbc_full.splits[split], split)
    assert bbc_100.texts == bbc_full.texts
    assert bbc_100.content_hash == bbc_full.content_hash


@pytest.mark.parametrize("value, size", [(100, 100), (0.25, round(0.25 * 1701)), (1701, 1701),
                                         (1.0, 1701)])
def test_train_is_a_sorted_subset_of_the_requested_size(bbc_full, value, size):
    ds = load_dataset("bbc", seed=0, train_subsample=value)
    train = ds.splits["train"]
    assert len(train) == size == ds.card.split_sizes["train"]
    assert np.all(np.diff(train) > 0)
    assert set(train.tolist()) <= set(bbc_full.splits["train"].tolist())


def test_nested_for_the_same_seed(bbc_100):
    bigger = load_dataset("bbc", seed=0, train_subsample=300).splits["train"]
    assert set(bbc_100.splits["train"].tolist()) <= set(bigger.tolist())
    half = load_dataset("bbc", seed=0, train_subsample=0.5).splits["train"]
    assert set(bigger.tolist()) <= set(half.tolist())


@pytest.mark.parametrize("k", [37, 100, 300, 1000])
def test_strata_in_proportion(bbc_full, k):
    """Each topic's share of the k kept documents is within one document of proportional."""
    ds = load_dataset("bbc", seed=0, train_subsample=k)
    y_full = bbc_full.split_labels("train")
    y_sub = ds.split_labels("train")
    for label in np.unique(y_full):
        expected = k * np.mean(y_full == label)
        assert abs(np.sum(y_sub == label) - expected) <= 1, (label, expected)


def test_seeded(bbc_100):
    again = load_dataset("bbc", seed=0, train_subsample=100).splits["train"]
    np.testing.assert_array_equal(again, bbc_100.splits["train"])
    other = load_dataset("bbc", seed=1, train_subsample=100)
    assert set(other.splits["train"].tolist()) != set(bbc_100.splits["train"].tolist())


def test_nested_order_prefixes():
    y = np.repeat([0, 1, 2], [60, 30, 10])
    order = nested_order(y, seed=3)
    assert sorted(order.tolist()) == list(range(100))
    for k in (10, 20, 50):
        counts = np.bincount(y[order[:k]], minlength=3)
        assert np.all(np.abs(counts - k * np.array([0.6, 0.3, 0.1])) <= 1), (k, counts)
    assert not np.array_equal(order, nested_order(y, seed=4))


def test_strata_follow_the_stratify_key():
    ds = load_dataset("bbc", seed=0, stratify="entities", train_subsample=200)
    full = load_dataset("bbc", seed=0, stratify="entities")
    y = strata(list(full.tasks.values()), "entities")
    for label in np.unique(y[full.splits["train"]]):
        expected = 200 * np.mean(y[full.splits["train"]] == label)
        assert abs(np.sum(y[ds.splits["train"]] == label) - expected) <= 1.5, label


@pytest.mark.parametrize("value", [0, -1, 1.5, 0.0, True, "x", [100]])
def test_bad_values_are_refused(value):
    with pytest.raises(DatasetConfigError, match=r"'bbc'.*train_subsample must be a fraction "
                                                 r"in \(0, 1\] or a count >= 1.*got"):
        load_dataset("bbc", train_subsample=value)


def test_count_above_the_train_split_is_refused():
    with pytest.raises(DatasetConfigError, match=r"train_subsample=1702 is larger than the "
                                                 r"train split \(1701 documents\)"):
        load_dataset("bbc", seed=0, train_subsample=1702)


GRID = """\
axes:
  dataset: [{datasets}]
  model: [bow]
  mechanism: [mvl]
  sensitivity: [none]
  mapping: [nearest]
  epsilon: [1]
  seed: [0]
"""


def test_grid_axis_of_train_sizes(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(GRID.format(datasets="{name: bbc, train_subsample: 100}, "
                                         "{name: bbc, train_subsample: 300}, bbc"))
    cells = [c for c in load_grid(path).cells if not c.is_baseline]
    configs = [dict(c.dataset_config) for c in cells]
    assert configs == [{"train_subsample": 100}, {"train_subsample": 300}, {}]
    assert len({c.hash for c in cells}) == 3
    assert "train_subsample=100" in cells[0].name


def test_grid_refuses_a_bad_value(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(GRID.format(datasets="{name: bbc, train_subsample: 0}"))
    with pytest.raises(ValueError, match="train_subsample"):
        load_grid(path)
