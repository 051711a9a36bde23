"""The trustpilot loader parses the Hovy et al. JSONL (a file or a folder of subcorpora), keeps
users with gender and birth year, and rejects malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.datasets import DatasetFileNotFoundError, DatasetFormatError, load_dataset


def tp_user(uid: str, gender, year, reviews) -> dict:
    return {
        "user_id": uid,
        "gender": gender,
        "birth_year": year,
        "location": "x",
        "reviews": [
            {
                "text": [t],
                "rating": str(r),
                "title": "t",
                "company_id": "c",
                "date": "2012-01-01T00:00:00.000+00:00",
            }
            for t, r in reviews
        ],
    }


def write_tp(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    uk = [
        tp_user("u1", "M", 1980, [("Great service", 5), ("Slow delivery", 2)]),
        tp_user("u2", "F", 1975, [("Lovely shop", 5)]),
        tp_user("u3", None, 1990, [("no gender", 4)]),  # dropped: no gender
        tp_user("u4", "F", None, [("no year", 4)]),  # dropped: no birth year
    ]
    us = [
        tp_user("u5", "F", "1988", [("Awful", 1), ("", 3)]),  # empty review dropped
        tp_user("u6", "M", 1960, [("Fine", 3), ("Okay", 4)]),
    ]
    de = [tp_user("u7", "M", 1970, [("Sehr gut", 5)])]  # other subcorpus: not read
    for name, users in [
        ("united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.tmp", uk),
        ("united_states.auto-adjusted_gender.geocoded.jsonl.tmp", us),
        ("germany.auto-adjusted_gender.NUTS-regions.jsonl.tmp", de),
    ]:
        (folder / name).write_text("".join(json.dumps(u) + "\n" for u in users))
    return folder


def test_trustpilot_parses_folder_and_filters(tmp_path: Path) -> None:
    ds = load_dataset("trustpilot", path=write_tp(tmp_path / "tp"), split=(0.5, 0.25, 0.25))
    assert len(ds) == 6
    assert ds.texts == ["Great service", "Slow delivery", "Lovely shop", "Awful", "Fine", "Okay"]
    assert ds.utility_task.classes == ("1", "2", "3", "4", "5")
    assert [ds.utility_task.classes[i] for i in ds.utility_task.labels] == list("525134")
    assert [ds.tasks["gender"].classes[i] for i in ds.tasks["gender"].labels] == list("MMFFMM")
    assert ds.groups.tolist() == ["u1", "u1", "u2", "u5", "u6", "u6"]
    assert ds.config["split_by_group"] is False


def test_trustpilot_python_literal_lines_and_split_by_user(tmp_path: Path) -> None:
    users = [
        tp_user(
            f"u{i}", "MF"[i % 2], 1970 + i, [(f"review {i} {j}", 1 + (i + j) % 5) for j in range(3)]
        )
        for i in range(20)
    ]
    f = tmp_path / "united_kingdom.jsonl"
    f.write_text("".join(repr(u) + "\n" for u in users))  # some copies were written with repr
    ds = load_dataset("trustpilot", path=f, split_by_group=True)
    assert len(ds) == 60
    tr = set(ds.groups[ds.splits["train"]].tolist())
    assert not tr & set(ds.groups[ds.splits["test"]].tolist())


def test_trustpilot_rejects_malformed(tmp_path: Path) -> None:
    f = tmp_path / "united_kingdom.jsonl"
    f.write_text(json.dumps(tp_user("u1", "M", 1980, [("ok", 5)])) + "\n{not json\n")
    with pytest.raises(DatasetFormatError, match=r"united_kingdom.jsonl:2: not a JSON object"):
        load_dataset("trustpilot", path=f)
    f.write_text(json.dumps({"gender": "M", "birth_year": 1980}) + "\n")
    with pytest.raises(DatasetFormatError, match="expected a 'reviews' list"):
        load_dataset("trustpilot", path=f)
    f.write_text(json.dumps({"gender": "M", "birth_year": 1980, "reviews": [{"stars": 5}]}))
    with pytest.raises(DatasetFormatError, match="needs 'text' and 'rating'"):
        load_dataset("trustpilot", path=f)
    f.write_text(json.dumps(tp_user("u1", None, 1980, [("ok", 5)])) + "\n")
    with pytest.raises(DatasetFormatError, match="no user with gender"):
        load_dataset("trustpilot", path=f)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetFileNotFoundError, match="no file starting with united_kingdom"):
        load_dataset("trustpilot", path=tmp_path / "empty")
