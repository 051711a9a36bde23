"""The held-apart public part of a dataset (config ``public``): disjoint from every split and
from the subsample, seeded, covered by the content hash, and refused when malformed."""

import pytest

from bench.datasets import load_dataset
from bench.datasets.base import DatasetConfigError


@pytest.fixture(scope="module")
def rt_public():
    return load_dataset("rt", public=500, subsample=2000, seed=0)


def test_public_part_is_in_no_split(rt_public):
    ds = rt_public
    assert len(ds.public_texts) == 500 and len(ds) == 2000
    public = set(ds.public_texts)
    assert not public & set(ds.texts)
    for name, idx in ds.splits.items():
        assert not public & {ds.texts[i] for i in idx.tolist()}, name
    assert ds.card.split_sizes["public"] == 500


def test_seeded_and_fraction_or_count():
    a = load_dataset("rt", public=300, seed=0)
    assert a.public_texts == load_dataset("rt", public=300, seed=0).public_texts
    assert a.public_texts != load_dataset("rt", public=300, seed=1).public_texts
    frac = load_dataset("rt", public=0.1, seed=0)
    assert len(frac.public_texts) == round(0.1 * (len(frac) + len(frac.public_texts)))


def test_stratified_like_the_subsample():
    """The public part keeps the corpus' class balance (about 58% fresh)."""
    full = load_dataset("rt", seed=0)
    public = set(load_dataset("rt", public=1000, seed=0).public_texts)
    labels = full.utility_task.labels
    fresh_public = labels[[i for i, t in enumerate(full.texts) if t in public]].mean()
    assert abs(fresh_public - labels.mean()) < 0.02


def test_content_hash_unchanged_without_and_changed_with_public():
    plain = load_dataset("rt", seed=0)
    assert "public" not in plain.card.split_sizes and plain.public_texts == []
    assert plain.content_hash == load_dataset("rt", seed=3).content_hash  # texts only
    with_public = load_dataset("rt", public=200, seed=0)
    assert with_public.content_hash != plain.content_hash
    assert with_public.content_hash != load_dataset("rt", public=200, seed=1).content_hash


@pytest.mark.parametrize("value", [0, 1.0, -1, True, "x", 0.0, 12_752, 10**6])
def test_bad_values_are_refused(value):
    with pytest.raises(DatasetConfigError, match="public"):
        load_dataset("rt", public=value)
