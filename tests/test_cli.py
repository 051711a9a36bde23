"""The `bench` console script: ls, privatize round trip, errors with exit code 2, internal
errors with exit code 1 (the traceback under -v), --version."""

import io
import subprocess
import sys

import pytest

from bench.cli import main

BENCH = [sys.executable, "-m", "bench.cli"]


def run(args, stdin=""):
    return subprocess.run(BENCH + args, input=stdin, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("what,expect", [("mechanisms", "truncated_gumbel"),
                                         ("sensitivity", "unit_norm_clip"),
                                         ("mappings", "vickrey"), ("embeddings", "glove-6b-50d"),
                                         ("datasets", "conventions")])
def test_ls(capsys, what, expect):
    assert main(["ls", what]) == 0
    assert expect in capsys.readouterr().out


def test_privatize_round_trip_file(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("The cat sat on the mat.\nMarkets fell sharply on Monday.\n")
    out = tmp_path / "out.txt"
    args = ["privatize", "-m", "mvl", "-e", "20", "--vocab-size", "5000", "--seed", "7",
            "-i", str(src), "-o", str(out)]
    r = run(args)
    assert r.returncode == 0, r.stderr
    assert "guarantee:" in r.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 2 and all(lines)
    first = out.read_text()
    assert run(args).returncode == 0 and out.read_text() == first  # same seed, same output


def test_privatize_stdin_stdout_selection():
    r = run(["privatize", "-m", "tem", "-e", "3", "--vocab-size", "5000"], "hello world\n")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 1


@pytest.mark.parametrize("args,msg", [
    (["-m", "mvl", "-e", "0"], "epsilon"),
    (["-m", "mvll", "-e", "1"], "did you mean 'mvl'"),
    (["-m", "tem", "-e", "1", "--mapping", "nearest"], "does not apply"),
    (["-m", "mvl", "-e", "1", "--mapping", "none"], "vectors, not text"),
    (["-m", "gaussian", "-e", "5"], "epsilon <= 1"),
    (["-m", "mvl", "-e", "1", "--sensitivity", "unit"], "did you mean"),
    (["-m", "mvl", "-e", "1", "-p", "sigma=2"], "unknown parameter 'sigma'"),
    (["-m", "mvl", "-e", "1", "-i", "/nonexistent/file.txt"], "input file not found"),
    (["-m", "mvl", "-e", "1", "--vocab-size", "1"], "vocab_size"),
])
def test_privatize_bad_arguments_exit_2_and_write_nothing(tmp_path, args, msg):
    out = tmp_path / "out.txt"
    r = run(["privatize", *args, "--vocab-size" if "--vocab-size" not in args else "--seed",
             "5000" if "--vocab-size" not in args else "0", "-o", str(out)], "some text\n")
    assert r.returncode == 2
    assert msg in r.stderr and r.stderr.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_data_prepare_unknown_dataset(tmp_path):
    r = run(["data", "prepare", "bbcc", "--cache-dir", str(tmp_path)])
    assert r.returncode == 2 and "did you mean 'bbc'" in r.stderr


def test_dropped_rows_warning_shows_without_verbose_and_holds_no_row_text(tmp_path):
    secret = "zebra-secret-words"
    data = tmp_path / "holes.csv"
    data.write_text("body,topic\n" + "the bank raised rates,econ\nthe team won,sport\n" * 10
                    + f"{secret},\n,{secret}\n", encoding="utf-8")
    grid = tmp_path / "g.yaml"
    grid.write_text(f"name: g\naxes:\n  dataset: [{{name: csv, path: {data}, text: body, "
                    "label: topic}]\n  model: [bow]\n  mechanism: [tem]\n  mapping: [none]\n"
                    "  epsilon: [10]\nsettings: {mia: false, vocab_size: 2000, "
                    "metrics: [utility, runtime]}\n", encoding="utf-8")
    r = run(["validate", str(grid), "--data"])
    assert r.returncode == 0, r.stderr
    assert (f"WARNING bench.datasets.generic: {data}: dropped 2 of 22 rows with an empty field "
            "('body' empty in 1, 'topic' in 1; first at line 22)") in r.stderr.splitlines()
    assert secret not in r.stdout + r.stderr


def test_version_is_the_package_metadata_written_once_in_pyproject():
    import importlib.metadata
    from pathlib import Path

    import tomllib

    import bench

    version = importlib.metadata.version("bench")
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    assert tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"] == version
    assert bench.__version__ == version
    r = run(["--version"])
    assert r.returncode == 0 and r.stdout == f"bench {version}\n" and r.stderr == ""


def _boom(error):
    def raise_it(*args, **kwargs):
        raise error

    return raise_it


@pytest.mark.parametrize("error", [KeyError("entries"), ValueError("bad state"),
                                   ZeroDivisionError("division by zero")],
                         ids=lambda e: type(e).__name__)
def test_an_internal_error_exits_1_in_one_line_without_traceback(monkeypatch, capsys, error):
    import bench.datasets

    monkeypatch.setattr(bench.datasets, "cli_ls", _boom(error))  # a bug in what `ls` calls
    assert main(["ls", "datasets"]) == 1
    err = capsys.readouterr().err
    kind = type(error).__name__
    message = {"KeyError": "'entries'"}.get(kind, error.args[0])  # as Python prints it
    assert err.splitlines()[-2:] == [f"bench: internal error: {kind}: {message}",
                                      "bench: run with -v for the traceback"]
    assert "Traceback" not in err and "bench: error:" not in err


def test_an_internal_error_under_verbose_prints_its_traceback(monkeypatch, capsys):
    import bench.datasets

    monkeypatch.setattr(bench.datasets, "cli_ls", _boom(ZeroDivisionError("division by zero")))
    assert main(["-v", "ls", "datasets"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "in raise_it" in err
    assert err.splitlines()[-1] == "bench: internal error: ZeroDivisionError: division by zero"
    assert "run with -v" not in err


def test_a_value_error_after_the_arguments_are_checked_is_internal(monkeypatch, capsys):
    """`bench privatize` turns the ValueError of building its privatizer (the user's own
    configuration) into bad input; the same error from privatizing itself is a bug."""
    from bench.privatize import Privatizer

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"some text\n")))
    monkeypatch.setattr(Privatizer, "privatize", _boom(ValueError("shapes do not match")))
    assert main(["privatize", "-m", "mvl", "-e", "1", "--vocab-size", "2000"]) == 1
    err = capsys.readouterr().err
    assert "bench: internal error: ValueError: shapes do not match" in err
    assert main(["privatize", "-m", "mvl", "-e", "0", "--vocab-size", "2000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bench: error: ") and "epsilon" in err


@pytest.mark.parametrize("args,msg", [
    (["data", "prepare", "bbcc"], "did you mean 'bbc'"),              # UnknownNameError
    (["validate", "/nonexistent/grid.yaml"], "grid file not found"),  # GridError
    (["verify", "--results", "/nonexistent"], "no results under"),    # NoResultsError
    (["audit", "-m", "mvl", "-e", "1", "--draws", "5"], "draws must be >= 100"),  # user_argument
    (["perf", "--vocab-size", "1"], "vocab_size must be in [2, "),   # user_argument
])
def test_bad_input_still_exits_2_in_one_line(tmp_path, capsys, args, msg):
    assert main([*args, *(["--cache-dir", str(tmp_path)] if args[0] == "data" else [])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bench: error: ") and msg in err
