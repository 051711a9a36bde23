"""The generic csv / jsonl loaders read a researcher's own file; the config names the columns."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bench.datasets import DatasetConfigError, DatasetFormatError, load_dataset


def test_generic_csv(tmp_path: Path) -> None:
    f = tmp_path / "mine.csv"
    with f.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "body", "stance", "age", "author"])
        for i in range(40):
            w.writerow(
                [
                    i,
                    f"text, number {i}",
                    ["pro", "con", "neutral"][i % 3],
                    "young" if i % 2 else "old",
                    f"a{i % 8}",
                ]
            )
        w.writerow([99, "", "pro", "old", "a1"])  # empty text: dropped
    ds = load_dataset(
        "csv",
        path=f,
        text="body",
        label="stance",
        private=["age"],
        group="author",
        split_by_group=True,
    )
    assert len(ds) == 40
    assert ds.texts[0] == "text, number 0"
    assert ds.utility_task.name == "stance" and ds.utility_task.classes == ("con", "neutral", "pro")
    assert ds.tasks["age"].role == "privacy" and ds.tasks["age"].kind == "binary"
    tr = set(ds.groups[ds.splits["train"]].tolist())
    assert not tr & set(ds.groups[ds.splits["test"]].tolist())
    with pytest.raises(DatasetFormatError, match=r"column\(s\) 'gender' not found.*'body'"):
        load_dataset("csv", path=f, text="body", label="stance", private=["gender"])
    with pytest.raises(DatasetConfigError, match="needs the column names"):
        load_dataset("csv", path=f, text="body")


def test_generic_tsv_numeric_labels(tmp_path: Path) -> None:
    f = tmp_path / "mine.tsv"
    f.write_text("t\ty\n" + "".join(f"doc {i}\t{[2, 10, 1][i % 3]}\n" for i in range(30)))
    ds = load_dataset("csv", path=f, text="t", label="y")
    assert ds.utility_task.classes == ("1", "2", "10")  # numeric order, not "1","10","2"


def test_generic_jsonl(tmp_path: Path) -> None:
    f = tmp_path / "mine.jsonl"
    rows = [
        {"text": f"t{i}", "y": i % 2 == 0, "region": ["n", "s", "e"][i % 3], "extra": [1]}
        for i in range(30)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_dataset("jsonl", path=f, text="text", label="y", private="region")
    assert ds.utility_task.classes == ("False", "True")
    assert ds.tasks["region"].counts() == {"e": 10, "n": 10, "s": 10}
    with pytest.raises(DatasetFormatError, match="must be a scalar"):
        load_dataset("jsonl", path=f, text="text", label="extra")
    f.write_text(json.dumps({"text": "a"}) + "\n")
    with pytest.raises(DatasetFormatError, match=r"mine.jsonl:1: field\(s\) 'y' missing"):
        load_dataset("jsonl", path=f, text="text", label="y")
