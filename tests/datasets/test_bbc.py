"""The bbc corpus: split sizes, entity mention labels, stratify=entities, raw-file counts."""

from __future__ import annotations

import numpy as np

from bench.datasets import load_dataset
from bench.datasets.bbc import _bbc_raw
from bench.datasets.labels import THESIS_ENTITIES, dedup_keep_first, entity_labels, entity_pattern


def test_bbc_exact_split_sizes() -> None:
    sizes = {k: len(v) for k, v in load_dataset("bbc").splits.items()}
    assert sizes == {
        "train": 1701,
        "dev": 213,
        "test": 213,
        "mia_members": 531,
        "mia_nonmembers": 532,
        "mia_shadow": 1064,
    }


def test_bbc_entity_labels_match_whole_words() -> None:
    ds = load_dataset("bbc")
    ent = ds.tasks["entities"]
    assert ent.kind == "multilabel" and ent.labels.shape == (2127, 5)
    for j, name in enumerate(ent.classes):
        pat = entity_pattern(name)
        for i in np.flatnonzero(ent.labels[:, j])[:20].tolist():
            assert pat.search(ds.texts[i])
    assert entity_pattern("china").search("in China.") is not None
    assert entity_pattern("china").search("chinaware") is None
    assert entity_pattern("united states").search("the United\nStates") is not None
    assert entity_pattern("bush").search("Bushes") is None


def test_bbc_entity_labels_are_mentions_in_the_tokens_models_see() -> None:
    """Task.mentions: labels are recomputed on the first max_tokens tokens, so no document is
    labelled with an entity the models are never shown; max_tokens=None keeps the full text."""
    from bench.embeddings import tokenize

    full = load_dataset("bbc", max_tokens=None).tasks["entities"]
    assert full.counts() == {"iraq": 85, "china": 87, "united states": 50, "bush": 57,
                             "british": 301}
    ds = load_dataset("bbc", max_tokens=200)
    ent = ds.tasks["entities"]
    assert ent.mentions and ds.card.class_balance["entities"] == ent.counts()
    assert (ent.labels <= full.labels).all() and ent.labels.sum() < full.labels.sum()
    lost = np.flatnonzero(full.labels[:, 0] > ent.labels[:, 0])  # iraq only after token 200
    assert len(lost) > 0
    for i in lost[:5].tolist():
        seen = [w.lower() for w in tokenize(ds.texts[i])[:200]]
        assert "iraq" not in seen and entity_pattern("iraq").search(ds.texts[i])
    for i in np.flatnonzero(ent.labels[:, 0])[:5].tolist():
        assert "iraq" in [w.lower() for w in tokenize(ds.texts[i])[:200]]
    assert load_dataset("bbc", max_tokens=200).content_hash == ds.content_hash
    assert load_dataset("bbc", max_tokens=300).content_hash != ds.content_hash


def test_stratify_by_entities_gives_every_label_test_positives() -> None:
    """The quickstart subset stratified by its rarest entity: every label has positives in dev
    and test (stratified by topic, seed 1 leaves 'bush' with none in test)."""
    cfg = {"subsample": 600, "max_tokens": 200, "split": (0.6, 0.2, 0.2)}
    by_topic = load_dataset("bbc", seed=1, **cfg)
    assert by_topic.split_labels("test", "entities").sum(axis=0).min() == 0
    for seed in (0, 1):
        ds = load_dataset("bbc", seed=seed, stratify="entities", **cfg)
        assert len(ds) == 600 and ds.config["stratify"] == "entities"
        for part in ("dev", "test"):
            assert ds.split_labels(part, "entities").sum(axis=0).min() >= 1, (seed, part)
        topics = np.bincount(ds.split_labels("test"), minlength=5)
        assert topics.min() >= 15  # topics stay balanced among the texts with no entity
    again = load_dataset("bbc", seed=1, stratify="entities", **cfg)
    assert again.content_hash == ds.content_hash
    assert all((again.splits[k] == v).all() for k, v in ds.splits.items())


def test_bbc_custom_entities() -> None:
    ds = load_dataset("bbc", entities=["london"])
    assert ds.tasks["entities"].classes == ("london",)
    assert 100 < ds.tasks["entities"].counts()["london"] < len(ds)


def test_bbc_raw_files_duplicates_and_issue_counts() -> None:
    """The issue's 88/92/53/58/310 are counts over all 2,225 files, before deduplication."""
    texts, _ = _bbc_raw()
    assert len(texts) == 2225
    assert len(texts) - len(dedup_keep_first(texts)) == 98
    assert entity_labels(texts, THESIS_ENTITIES).sum(axis=0).tolist() == [88, 92, 53, 58, 310]
