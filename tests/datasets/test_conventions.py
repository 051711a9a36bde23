"""The conventions corpora: split by speaker, the inferred-gender card, and conventions_speakers
(split within speakers, stratified by speaker)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.datasets import TRAIN_SPLITS, DatasetConfigError, load_dataset


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
    with pytest.raises(DatasetConfigError, match="n_speakers"):
        load_dataset("conventions_speakers", n_speakers=bad)
