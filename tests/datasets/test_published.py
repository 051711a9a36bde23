"""A file named like a published one but with other content warns once (never raises); a
matching file, a file of another name and the thesis' 6-topic AG CSV do not warn."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import logging
import re
from pathlib import Path

import pytest

from bench.datasets import DATASETS, content_digest
from bench.datasets import published as pub
from bench.datasets.base import PublishedFile
from bench.datasets.published import PUBLISHED, check_published

LOGGER = "bench.datasets.published"
AG_ROWS = [("3", "Wall St. rises", "Stocks rose."), ("1", "Iraq vote", "Voters in Iraq.")]


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no file warned about in this process."""
    monkeypatch.setattr(pub, "_WARNED", set())


def write_ag(path: Path, rows: list[tuple[str, str, str]] = AG_ROWS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == LOGGER and r.levelno == logging.WARNING]


def test_published_name_with_other_content_warns_once(tmp_path: Path, caplog) -> None:
    f = write_ag(tmp_path / "train.csv")
    load = DATASETS.get("agnews").load
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        corpus = load(path=f)
        load(path=f)  # the same file again: no second warning
    assert len(corpus.texts) == 2  # a warning, never an error
    [msg] = warnings(caplog)
    published = PUBLISHED["agnews"][0]
    assert published.name == "train.csv"
    assert str(f) in msg and "named like the published train.csv" in msg
    assert f"published sha256 {published.sha256}" in msg
    assert f"sha256 begins {content_digest(f)}" in msg
    assert content_digest(f) == sha256(f)[:16]
    assert "another version of the file" in msg
    assert "not comparable to the paper's" in msg
    assert published.url in msg and "pytorch/text" in msg


def test_folder_warns_once_per_file(tmp_path: Path, caplog) -> None:
    write_ag(tmp_path / "train.csv")
    write_ag(tmp_path / "test.csv")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        DATASETS.get("agnews").load(path=tmp_path)
        DATASETS.get("agnews").load(path=tmp_path)
    msgs = warnings(caplog)
    assert len(msgs) == 2
    assert any("published train.csv" in m for m in msgs)
    assert any("published test.csv" in m for m in msgs)


def test_matching_checksum_does_not_warn(tmp_path: Path, caplog, monkeypatch) -> None:
    f = write_ag(tmp_path / "train.csv")
    release = (dataclasses.replace(PUBLISHED["agnews"][0], sha256=sha256(f)),)
    monkeypatch.setitem(PUBLISHED, "agnews", release)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        DATASETS.get("agnews").load(path=f)
    assert warnings(caplog) == []


def test_unknown_name_is_neither_hashed_nor_warned(tmp_path: Path, caplog, monkeypatch) -> None:
    f = write_ag(tmp_path / "my_ag_news.csv")

    def no_hashing(path: object) -> str:
        raise AssertionError(f"hashed {path}")

    monkeypatch.setattr(pub, "content_digest", no_hashing)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        DATASETS.get("agnews").load(path=f)
        check_published("agnews", f)
        check_published("no_such_dataset", f)
    assert warnings(caplog) == []


def test_thesis_topic_csv_named_train_csv_does_not_warn(tmp_path: Path, caplog) -> None:
    f = tmp_path / "train.csv"  # the 6-topic variant has no published file to compare with
    f.write_text("topic,title,description\nHealth,Flu,A flu season.\nSports,Cup,A final.\n")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        DATASETS.get("agnews").load(path=f)
    assert warnings(caplog) == []


def _sst2(d: Path) -> Path:
    f = d / "train.tsv"
    f.write_text("sentence\tlabel\na charming journey\t1\nno wit\t0\n")
    return f


def _yelp(d: Path) -> Path:
    f = d / "yelp_academic_dataset_review.json"
    f.write_text("".join(json.dumps({"text": f"text {s}", "stars": s}) + "\n" for s in (1, 5)))
    return f


def _trustpilot(d: Path) -> Path:
    f = d / "united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.tmp"
    user = {"gender": "F", "birth_year": 1980, "reviews": [{"text": "great", "rating": 5}]}
    f.write_text(json.dumps(user) + "\n")
    return f


@pytest.mark.parametrize("name,write", [("sst2", _sst2), ("yelp", _yelp),
                                        ("trustpilot", _trustpilot)],
                         ids=["sst2", "yelp", "trustpilot"])  # stable ids for xdist
def test_every_file_loader_checks_what_it_reads(name, write, tmp_path, caplog,
                                                monkeypatch) -> None:
    f = write(tmp_path)
    # these releases publish no checksum of the files read: nothing is hashed or warned ...
    assert not any(p.sha256 for p in PUBLISHED[name] if p.name == f.name)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        DATASETS.get(name).load(path=f)
    assert warnings(caplog) == []
    # ... but the loader does check: with a published checksum, another file warns once
    monkeypatch.setitem(PUBLISHED, name, (PublishedFile(f.name, "https://x", sha256="0" * 64),))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        DATASETS.get(name).load(path=f)
        DATASETS.get(name).load(path=f)
    [msg] = warnings(caplog)
    assert f.name in msg and "0" * 64 in msg and content_digest(f) in msg


@pytest.mark.parametrize("name", sorted(PUBLISHED), ids=str)
def test_published_tables_are_well_formed(name: str) -> None:
    files = PUBLISHED[name]
    assert files and DATASETS.get(name).card.files == files
    for f in files:
        assert f.name and f.url.startswith("http")
        assert not f.md5 or re.fullmatch(r"[0-9a-f]{32}", f.md5)
        assert not f.sha256 or re.fullmatch(r"[0-9a-f]{64}", f.sha256)
        if f.md5 or f.sha256 or f.rows is not None:
            assert f.published_in, f"{f.name}: say where the values are published"
        if not (f.md5 or f.sha256):
            assert f.checksums == "no checksum published"
