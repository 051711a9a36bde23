"""A cell's inputs (bench.run.inputs): a dataset read from a file is loaded only with the content
the grid was read with."""

from __future__ import annotations

import textwrap

import pytest

from bench.cli import main
from bench.datasets import DatasetFileChangedError, DatasetFileNotFoundError
from bench.grid import load_grid
from bench.run import inputs
from bench.run.runner import run_grid

ROWS = [("the bank raised rates again", "econ"), ("the team won the match", "sport")] * 30


def _csv(path, rows=ROWS):
    path.write_text("body,topic,author\n" + "".join(
        f"{t},{y},{['ann', 'bob'][i % 2]}\n" for i, (t, y) in enumerate(rows)), encoding="utf-8")
    return path


def _grid(tmp_path, *files, name="g.yaml", private=""):
    ds = "\n".join(f"    - {{name: csv, path: {f}, text: body, label: topic{private}}}"
                   for f in files)
    p = tmp_path / name
    p.write_text(textwrap.dedent("""\
        name: files
        axes:
          dataset:
        """) + ds + textwrap.dedent("""
          model: [bow]
          mechanism: [tem]
          mapping: [none]
          epsilon: [10]
        settings: {mia: false, vocab_size: 2000, metrics: [utility, runtime]}
        """), encoding="utf-8")
    return p


def test_a_file_changed_after_the_grid_was_read_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "_DATASETS", {})
    f = _csv(tmp_path / "mine.csv")
    cell = load_grid(_grid(tmp_path, f)).cells[0]
    assert len(inputs.dataset(cell)) == len(ROWS)
    monkeypatch.setattr(inputs, "_DATASETS", {})
    _csv(f, ROWS + [("one more row", "econ")])
    with pytest.raises(DatasetFileChangedError, match=r"mine\.csv changed since the grid was read"):
        inputs.dataset(cell)
    f.unlink()
    with pytest.raises(DatasetFileNotFoundError, match=r"nothing at .*mine\.csv"):
        inputs.dataset(cell)


def test_two_files_run_as_two_datasets_and_a_changed_file_is_new_cells(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "_DATASETS", {})
    a = _csv(tmp_path / "a.csv")
    b = _csv(tmp_path / "b.csv", [(t + " today", y) for t, y in ROWS])
    res = tmp_path / "res"
    s = run_grid(_grid(tmp_path, a, b), res, mlflow=False)
    assert (s.count("done"), s.count("cached")) == (4, 0)
    _csv(b, [(t + " yesterday", y) for t, y in ROWS])  # b changes: its cells are new ones
    s = run_grid(_grid(tmp_path, a, b), res, mlflow=False)
    assert (s.count("done"), s.count("cached")) == (2, 2)
    assert {r.name.split(":")[0] for r in s.results if r.status == "done"} == {
        "csv(file=b.csv,label=topic,text=body)"}


def test_cli_refuses_a_grid_naming_a_missing_file_and_writes_nothing(tmp_path, capsys):
    a = _csv(tmp_path / "a.csv")
    res = tmp_path / "res"
    assert main(["run", str(_grid(tmp_path, a, tmp_path / "gone.csv")), "--results", str(res),
                 "--no-mlflow"]) == 2
    err = capsys.readouterr().err
    assert "nothing at" in err and "gone.csv" in err and "set by path: in the grid" in err
    assert not (res / "cells").exists() or not any((res / "cells").iterdir())


def test_the_report_pairs_each_file_with_its_own_baseline(tmp_path, monkeypatch):
    from bench.report.build import build_report

    monkeypatch.setattr(inputs, "_DATASETS", {})
    a = _csv(tmp_path / "a.csv")
    b = _csv(tmp_path / "b.csv", [(t + " today", y) for t, y in ROWS])
    grid = _grid(tmp_path, a, b, private=", private: [author]")
    res = tmp_path / "res"
    run_grid(grid, res, mlflow=False)
    s = build_report(res, tmp_path / "report", grid=str(grid))
    assert (s.n_cells, s.n_groups) == (4, 4)
    table = (tmp_path / "report" / "tables" / "tradeoff_none.md").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if "| 10 | author |" in line]
    assert len(rows) == 2 and any("a.csv" in r for r in rows) and any("b.csv" in r for r in rows)
    # each file's privatized cell is paired with the baseline of the same file
    from bench.analysis.privacy import baseline_index, baseline_of
    from bench.results.record import scan

    cells = scan(res).cells
    index = baseline_index(cells)
    for rec in (r for r in cells if not r.is_baseline):
        base = baseline_of(rec, index)
        assert base is not None and base.spec["dataset"]["config"]["path"] == \
            rec.spec["dataset"]["config"]["path"]
