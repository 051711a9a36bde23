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


SECRET = "zebra-secret-words"  # a dropped row's value: never in a message


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_dropped_rows_are_a_warning_naming_file_count_and_columns_never_values(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, fmt: str) -> None:
    from bench.datasets.generic import collect_dropped

    rows = [{"body": f"doc {i}", "y": "ab"[i % 2], "age": "xy"[i % 2]} for i in range(20)]
    rows += [{"body": SECRET, "y": "", "age": "x"}, {"body": "", "y": "a", "age": SECRET},
             {"body": SECRET, "y": "b", "age": ""}, {"body": SECRET, "y": "", "age": ""}]
    f = tmp_path / f"holes.{fmt}"
    if fmt == "csv":
        f.write_text("body,y,age\n" + "".join(f"{r['body']},{r['y']},{r['age']}\n" for r in rows))
    else:
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    caplog.set_level("WARNING")
    with collect_dropped() as dropped:
        ds = load_dataset(fmt, path=f, text="body", label="y", private=["age"])
    assert len(ds) == 20
    first = 22 if fmt == "csv" else 21  # a CSV's line 1 is its header
    want = (f"{f}: dropped 4 of 24 rows with an empty field ('body' empty in 1, 'y' in 2, "
            f"'age' in 2; first at line {first})")
    assert [d.text() for d in dropped] == [want]
    warned = [r for r in caplog.records if r.name == "bench.datasets.generic"]
    assert [(r.levelname, r.getMessage()) for r in warned] == [("WARNING", want)]
    assert SECRET not in caplog.text
    # the same file loaded again (a grid loads it once per seed): warned once per process,
    # still handed to every collector
    caplog.clear()
    with collect_dropped() as again:
        load_dataset(fmt, path=f, text="body", label="y", private=["age"], seed=1)
    assert [d.text() for d in again] == [want] and not caplog.records


@pytest.mark.parametrize("case", ["malformed_line", "nested_value", "one_valued_column"])
def test_error_messages_name_line_and_column_never_the_value(tmp_path: Path, case: str) -> None:
    """A malformed line, a non-scalar field or a one-valued column is reported by file, line
    and column; the data (maybe a person's name, maybe private text) is not printed."""
    f = tmp_path / "mine.jsonl"
    good = [json.dumps({"text": f"t{i}", "y": i % 2, "who": "x"}) for i in range(6)]
    bad = {"malformed_line": '{"text": "' + SECRET + '", y: 1',
           "nested_value": json.dumps({"text": "t", "y": 1, "who": {"name": SECRET}}),
           "one_valued_column": json.dumps({"text": "t", "y": 1, "who": "x"})}[case]
    rows = good + [bad]
    if case == "one_valued_column":
        rows = [r.replace('"x"', json.dumps(SECRET)) for r in rows]
    f.write_text("\n".join(rows) + "\n")
    with pytest.raises(DatasetFormatError) as e:
        load_dataset("jsonl", path=f, text="text", label="y", private="who")
    assert "mine.jsonl" in str(e.value) and SECRET not in str(e.value)
    if case != "one_valued_column":
        assert "mine.jsonl:7" in str(e.value)


def test_more_private_columns_than_a_cell_may_measure_are_refused_up_front(tmp_path):
    """A cell measures at most 16 private attributes (a reader leaves out one with more:
    issue 48, trial 10), so a dataset naming more is refused before anything runs."""
    from bench.datasets.generic import _columns

    with pytest.raises(DatasetConfigError, match="17 private columns, more than the 16"):
        _columns("csv", "t", "y", [f"p{i}" for i in range(17)], None)
    with pytest.raises(DatasetConfigError, match="printable text of 1 to 128"):
        _columns("csv", "t", "y", ["p" * 129], None)
    assert _columns("csv", "t", "y", [f"p{i}" for i in range(16)], None)[2][-1] == "p15"
