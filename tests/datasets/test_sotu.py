"""sotu: passages of the Democratic and Republican addresses, the period and the party, every
address inside one split (needs `bench data fetch sotu`, which `make test` runs)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.datasets import DatasetConfigError, DatasetFormatError, load_dataset
from bench.datasets.sotu import PARTIES, passages, period_of


def test_passages_cut_at_sentence_ends_with_at_least_the_words_asked():
    text = "One two three. Four five six! Seven eight? Nine ten eleven. Twelve."
    assert passages(text, 5) == ["One two three. Four five six!",
                                 "Seven eight? Nine ten eleven. Twelve."]
    assert passages(text, 100) == [text]
    assert passages("Mr. Speaker, the U.S. Army. It is 1.5 times larger.", 3) == [
        "Mr. Speaker, the U.S. Army.", "It is 1.5 times larger."]


def test_period_bounds():
    assert [period_of(y) for y in (1829, 1900, 1901, 1945, 1946, 1980, 1981, 2021)] == [
        0, 0, 1, 1, 2, 2, 3, 3]
    with pytest.raises(DatasetFormatError, match="after 2021"):
        period_of(2022)


def test_the_fetched_corpus_and_its_group_split():
    ds = load_dataset("sotu", seed=0)
    assert len(ds) == 9138 == ds.card.size
    assert ds.tasks["party"].counts() == {"Democratic": 4527, "Republican": 4611}
    assert ds.tasks["period"].counts() == {"1829-1900": 3888, "1901-1945": 2320,
                                           "1946-1980": 1289, "1981-2021": 1641}
    assert ds.tasks["party"].classes == PARTIES and ds.tasks["party"].role == "privacy"
    groups = ds.groups.astype(str)
    assert len(set(groups)) == 182 and "1981 Jimmy Carter" in set(groups)
    parts = {s: set(groups[ds.splits[s]]) for s in ("train", "dev", "test")}
    assert not (parts["train"] & parts["test"]) and not (parts["dev"] & parts["test"])
    assert not (parts["train"] & parts["dev"])
    # a party is one per address
    for g in list(parts["test"])[:20]:
        assert len(set(ds.tasks["party"].labels[groups == g].tolist())) == 1
    lengths = np.array([len(t.split()) for t in ds.texts])
    assert lengths.min() >= 75 and np.median(lengths) >= 150
    assert ds.content_hash.startswith("d34b8db5972d670d")


def test_passage_words_is_checked():
    with pytest.raises(DatasetConfigError, match="passage_words"):
        load_dataset("sotu", passage_words=5)
    assert len(load_dataset("sotu", passage_words=400)) < 9138 / 2
