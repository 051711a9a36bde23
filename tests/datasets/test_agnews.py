"""The agnews loader parses the original AG News CSV and the thesis' 6-topic variant and rejects
malformed input."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from bench.datasets import DatasetFileNotFoundError, DatasetFormatError, load_dataset


def write_ag(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    # the original files quote every field and have no header row
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    return path


AG_ROWS = [
    ("3", "Wall St. Bears Claw Back (Reuters)", "Reuters - Short-sellers, Wall Street's\\band"),
    ("1", "Iraq vote", "Baghdad #39;s voters in IRAQ went to the polls."),
    ("2", "Bush hails team", "President bush and the United  States team."),
    ("4", "China chips", "Chinese firms; china's chip output &lt;b&gt;rises&lt;/b&gt;."),
    ("1", "British troops", "British forces leave Basra."),
    ("2", "Empty", ""),
]


def ag_dataset(tmp_path: Path, rows: list[tuple[str, str, str]] = AG_ROWS, **kw):
    write_ag(tmp_path / "train.csv", rows * 4)
    return load_dataset("agnews", path=tmp_path / "train.csv", **kw)


def test_agnews_parses_original_csv(tmp_path: Path) -> None:
    ds = ag_dataset(tmp_path)
    assert len(ds) == 20  # the row with an empty description is dropped
    assert ds.utility_task.classes == ("World", "Sports", "Business", "Sci/Tech")
    assert (
        ds.texts[0]
        == "Wall St. Bears Claw Back (Reuters) Reuters - Short-sellers, Wall Street's band"
    )
    assert ds.texts[1] == "Iraq vote Baghdad 's voters in IRAQ went to the polls."
    assert ds.texts[3].endswith("chip output <b>rises</b>.")
    assert ds.utility_task.labels[:5].tolist() == [2, 0, 1, 3, 0]
    ent = ds.tasks["entities"]
    assert ent.classes == ("iraq", "china", "united states", "bush", "british")
    assert ent.labels[:5].tolist() == [
        [0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0],
        [0, 0, 1, 1, 0],
        [0, 1, 0, 0, 0],  # "Chinese" does not count, "china's" does
        [0, 0, 0, 0, 1],
    ]


def test_agnews_folder_reads_train_and_test(tmp_path: Path) -> None:
    write_ag(tmp_path / "train.csv", AG_ROWS[:3] * 4)
    write_ag(tmp_path / "test.csv", AG_ROWS[3:5] * 4)
    ds = load_dataset("agnews", path=tmp_path)
    assert len(ds) == 20


def test_agnews_env_var_and_require_entity(tmp_path: Path, monkeypatch) -> None:
    write_ag(tmp_path / "a.csv", AG_ROWS * 4)
    monkeypatch.setenv("BENCH_AGNEWS_PATH", str(tmp_path / "a.csv"))
    ds = load_dataset("agnews", require_entity=True)
    assert len(ds) == 16
    assert ds.tasks["entities"].labels.any(axis=1).all()


def test_agnews_thesis_topic_variant(tmp_path: Path) -> None:
    topics = [
        "Business",
        "Sci/Tech",
        "Software and Development",
        "Entertainment",
        "Sports",
        "Health",
    ]
    with (tmp_path / "ag6.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["topic", "title", "description"])
        for i in range(30):
            w.writerow([topics[i % 6], f"title {i}", f"Bush met China's leader {i}"])
    ds = load_dataset("agnews", path=tmp_path / "ag6.csv")
    assert ds.utility_task.classes == tuple(topics)
    assert ds.utility_task.kind == "multiclass"
    assert ds.utility_task.counts() == {t: 5 for t in topics}
    assert ds.tasks["entities"].counts()["bush"] == 30


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([("5", "t", "d")], r"class must be 1-4"),
        ([("1", "t")], r"expected 3 columns"),
        ([("1", "t", "d", "x")], r"expected 3 columns"),
    ],
)
def test_agnews_rejects_malformed_rows(tmp_path: Path, rows, match: str) -> None:
    write_ag(tmp_path / "bad.csv", [("1", "ok", "fine")] + rows)
    with pytest.raises(DatasetFormatError, match=match) as e:
        load_dataset("agnews", path=tmp_path / "bad.csv")
    assert "bad.csv:2" in str(e.value)  # file and line


def test_agnews_missing_file_and_no_path(tmp_path: Path) -> None:
    with pytest.raises(DatasetFileNotFoundError, match="BENCH_AGNEWS_PATH"):
        load_dataset("agnews")
    with pytest.raises(FileNotFoundError, match="nothing at"):
        load_dataset("agnews", path=tmp_path / "nope.csv")
    with pytest.raises(DatasetFileNotFoundError, match="no train.csv or test.csv"):
        load_dataset("agnews", path=tmp_path)


def test_agnews_empty_result(tmp_path: Path) -> None:
    write_ag(tmp_path / "e.csv", [("1", "title", "")])
    with pytest.raises(DatasetFormatError, match="no usable rows"):
        load_dataset("agnews", path=tmp_path / "e.csv")
