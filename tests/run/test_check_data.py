"""``bench validate GRID --data`` (bench.run.check_data): the grid's datasets are loaded as the run
loads them, and what is wrong with a file is one error line naming it, before any run."""

from __future__ import annotations

import json
import textwrap

import pytest

from bench.cli import main
from bench.grid import load_grid
from bench.run import inputs
from bench.run.check_data import check_data

ROWS = [("the bank raised rates again", "econ", "young"),
        ("the team won the match", "sport", "old")] * 15
SECRET = "zebra-secret-words"  # a dropped row's text: it must never be printed


@pytest.fixture(autouse=True)
def fresh_datasets(monkeypatch):
    monkeypatch.setattr(inputs, "_DATASETS", {})


def _csv(path, rows=ROWS, header="body,topic,age"):
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _grid(tmp_path, *datasets, name="data.yaml"):
    ds = "\n".join(f"    - {d}" for d in datasets)
    p = tmp_path / name
    p.write_text(textwrap.dedent("""\
        name: data
        axes:
          dataset:
        """) + ds + textwrap.dedent("""
          model: [bow]
          mechanism: [tem]
          mapping: [none]
          epsilon: [10]
          seed: [0, 1]
        settings: {mia: false, vocab_size: 2000, metrics: [utility, runtime]}
        """), encoding="utf-8")
    return p


def csv_entry(path, text="body", label="topic", private="[age]"):
    return f"{{name: csv, path: {path}, text: {text}, label: {label}, private: {private}}}"


def test_a_wrong_column_name_is_an_error_naming_the_column(tmp_path, capsys):
    f = _csv(tmp_path / "mine.csv")
    grid = _grid(tmp_path, csv_entry(f, text="txt"))
    assert main(["validate", str(grid)]) == 0  # without --data the file is not read
    capsys.readouterr()
    assert main(["validate", str(grid), "--data"]) == 2
    cap = capsys.readouterr()
    errors = cap.err.strip().splitlines()
    assert errors == [f"bench: error: dataset csv(file=mine.csv,label=topic,private=[\"age\"],"
                      f"text=txt): {f}: column(s) 'txt' not found; the file has 'body', "
                      "'topic', 'age'"]
    assert "data: 0 dataset(s) loaded, 1 error(s)" in cap.out


def test_a_file_that_is_not_utf8_is_an_error_naming_the_line(tmp_path, capsys):
    f = tmp_path / "latin1.csv"
    f.write_bytes(b"body,topic,age\nthe bank,econ,young\nthe caf\xe9 opened,sport,old\n")
    assert main(["validate", str(_grid(tmp_path, csv_entry(f))), "--data"]) == 2
    err = capsys.readouterr().err
    assert f"{f}:3: not UTF-8 text" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("content", "suffix", "want"), [
    ("", "csv", "no header row (the file is empty"),
    ("", "jsonl", "no usable rows"),
    ("body,topic,age\n", "csv", "no usable rows"),
])
def test_an_empty_file_is_an_error(tmp_path, capsys, content, suffix, want):
    f = tmp_path / f"empty.{suffix}"
    f.write_text(content, encoding="utf-8")
    entry = csv_entry(f).replace("name: csv", f"name: {suffix}")
    assert main(["validate", str(_grid(tmp_path, entry)), "--data"]) == 2
    err = capsys.readouterr().err
    assert want in err and str(f) in err


def test_every_bad_dataset_is_reported_not_only_the_first(tmp_path, capsys):
    good = _csv(tmp_path / "good.csv")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"body": "the bank", "topic": "econ"}) + "\n", encoding="utf-8")
    grid = _grid(tmp_path, csv_entry(good, text="txt"), csv_entry(good),
                 csv_entry(bad).replace("name: csv", "name: jsonl"))
    assert main(["validate", str(grid), "--data"]) == 2
    cap = capsys.readouterr()
    errors = cap.err.strip().splitlines()
    assert len(errors) == 2 and all(e.startswith("bench: error: dataset ") for e in errors)
    assert "'txt' not found" in errors[0] and "field(s) 'age' missing" in errors[1]
    assert "data: 1 dataset(s) loaded, 2 error(s)" in cap.out
    assert 'csv(file=good.csv,label=topic,private=["age"],text=body): 30 texts' in cap.out


def test_dropped_rows_are_counted_by_column_without_their_values(tmp_path, capsys):
    rows = ROWS + [(SECRET, "", "young"), (SECRET + " again", "econ", ""), ("", "sport", "old")]
    f = _csv(tmp_path / "holes.csv", rows)
    assert main(["validate", str(_grid(tmp_path, csv_entry(f))), "--data"]) == 0
    cap = capsys.readouterr()
    assert (f"  warning: {f}: dropped 3 of 33 rows with an empty field ('body' empty in 1, "
            f"'topic' in 1, 'age' in 1; first at line 32)") in cap.out.splitlines()
    assert SECRET not in cap.out + cap.err


def test_a_grid_of_embedded_datasets_loads(tmp_path):
    grid = load_grid(_grid(tmp_path, "{name: bbc, subsample: 60}"))
    report = check_data(grid)
    assert report.errors == [] and report.warnings == []
    assert report.loaded == ["bbc(subsample=60): 60 texts"]
    assert report.text().startswith("data: 1 dataset(s) loaded, 0 error(s)\n")
