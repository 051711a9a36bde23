"""Edge inputs for every `bench` command that reads a user file (docs/reliability.md).

Each input gets a defined result (exit 0) or one line on stderr and exit code 2 -- never a
traceback -- and a refused input writes nothing.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.cli import main

BENCH = [sys.executable, "-m", "bench.cli"]
PRIVATIZE = ["privatize", "-m", "mvl", "-e", "10", "--vocab-size", "2000", "--seed", "0"]


def refused(code: int, err: str, *expected: str) -> bool:
    """Exit code 2 and exactly one stderr line holding every ``expected`` string."""
    return code == 2 and err.count("\n") == 1 and "Traceback" not in err and \
        all(e in err for e in expected)


def bench_bytes(args: list[str], stdin: bytes) -> subprocess.CompletedProcess:
    """Run ``bench`` in a subprocess with raw bytes on standard input."""
    return subprocess.run(BENCH + args, input=stdin, capture_output=True, timeout=300)


# ------------------------------------------------------------------------------- privatize

@pytest.mark.parametrize("text,n_lines", [("", 0), ("\n\n   \n\t\n", 4)], ids=["empty", "blank"])
def test_privatize_no_tokens_gives_one_empty_line_per_input_line(tmp_path, capsys, text, n_lines):
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text(text, encoding="utf-8")
    assert main([*PRIVATIZE, "-i", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "tokens: 0, OOV: 0, N_w: n/a (no tokens)" in err and err.count("\n") == 1
    assert out.read_text(encoding="utf-8") == "\n" * n_lines


def test_privatize_empty_stdin_gives_empty_stdout():
    r = bench_bytes(PRIVATIZE, b"")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"" and b"tokens: 0" in r.stderr


def test_privatize_one_output_line_per_input_line():
    # form feed and U+2028 are line breaks to str.splitlines, not to `wc -l`: they stay inside
    r = bench_bytes(PRIVATIZE, "the cat\x0csat\u2028down\r\nnext\n".encode())
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(b"\n") == 2 and b"tokens: 5" in r.stderr


def test_privatize_single_long_line_without_newline(tmp_path, capsys):
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("the market " * 20_000, encoding="utf-8")  # 220 kB, no newline
    assert main([*PRIVATIZE, "-i", str(src), "-o", str(out)]) == 0
    assert "tokens: 40000, OOV: 0" in capsys.readouterr().err
    result = out.read_text(encoding="utf-8")
    assert result.count("\n") == 1 and result.endswith("\n") and len(result) > 100_000


def test_privatize_drops_a_byte_order_mark(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_bytes(b"\xef\xbb\xbfthe market\n")
    assert main([*PRIVATIZE, "-i", str(src)]) == 0
    assert "tokens: 2, OOV: 0" in capsys.readouterr().err  # not '\ufeffthe' (OOV)


@pytest.mark.parametrize("data,expected", [
    (b"fine\n\xff\xfe\n", "is not UTF-8 text: byte 0xff on line 2"),
    ("hello\n".encode("utf-16"), "is not UTF-8 text: byte 0xff on line 1"),
    ("hello\n".encode("utf-16-le"), "contains a NUL character on line 1"),
    (b"the cat\n\x00sat\n", "contains a NUL character on line 2"),
], ids=["invalid-utf8", "utf16-bom", "utf16-no-bom", "nul"])
def test_privatize_refuses_input_that_is_not_text(tmp_path, capsys, data, expected):
    src, out = tmp_path / "in.bin", tmp_path / "out.txt"
    src.write_bytes(data)
    code = main([*PRIVATIZE, "-i", str(src), "-o", str(out)])
    assert refused(code, capsys.readouterr().err, f"input file {src}", expected)
    assert not out.exists()
    r = bench_bytes(PRIVATIZE, data)
    assert refused(r.returncode, r.stderr.decode(), "standard input", expected)
    assert r.stdout == b""


@pytest.mark.parametrize("oov,expect_out,expect_err", [
    ("unk", None, "tokens: 2, OOV: 2, N_w: 0.000"),
    ("keep", "qzxv wqpt\n", "NO privacy guarantee"),
])
def test_privatize_every_word_out_of_vocabulary(tmp_path, capsys, oov, expect_out, expect_err):
    src = tmp_path / "in.txt"
    src.write_text("qzxv wqpt\n", encoding="utf-8")
    assert main([*PRIVATIZE, "--oov", oov, "-i", str(src)]) == 0
    cap = capsys.readouterr()
    assert expect_err in cap.err
    words = cap.out.split()
    if expect_out is None:  # each <unk> is privatized like a word: vocabulary words come out
        assert len(words) == 2 and not {"qzxv", "wqpt"} & set(words)
    else:
        assert cap.out == expect_out


def test_privatize_output_that_is_a_folder(tmp_path, capsys):
    src, folder = tmp_path / "in.txt", tmp_path / "out"
    src.write_text("the market\n", encoding="utf-8")
    folder.mkdir()
    code = main([*PRIVATIZE, "-i", str(src), "-o", str(folder)])
    assert refused(code, capsys.readouterr().err, f"output {folder} is a folder; expected a "
                   "file path")
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("content,expected", [
    (None, "the"),
    ("", "fewer than 2 word vectors"),
    ("the 0.1 0.2\nca\xfft 0.3 0.4\n", ":2: not valid UTF-8"),
], ids=["valid", "empty", "invalid-utf8"])
def test_privatize_embedding_file(tmp_path, capsys, content, expected):
    emb = tmp_path / "emb.txt"
    if content is None:
        emb.write_text("the 0.1 0.2\nmarket 0.3 0.4\nfell 0.5 0.1\n", encoding="utf-8")
    else:
        emb.write_bytes(content.encode("latin-1"))
    src = tmp_path / "in.txt"
    src.write_text("the\n", encoding="utf-8")
    code = main(["privatize", "-m", "mvl", "-e", "1000", "--vocab-size", "3",
                 "--embedding-file", str(emb), "-i", str(src)])
    cap = capsys.readouterr()
    if content is None:
        assert code == 0 and cap.out == "the\n"
    else:
        assert refused(code, cap.err, str(emb), expected)


# ------------------------------------------------------------------------- grid files

GRID_BYTES = [
    (b"", "the grid file is empty"),
    (b"\n   \n\t\n", "the grid file is empty"),
    (b"x" * 1_000_000, "a grid file must be a mapping"),
    (b"name: a\x00b\naxes: {}\n", "line 1: invalid YAML: character #x0000 is not allowed"),
    (b"name: ok\nname2: caf\xe9\n", "line 2: not UTF-8 text (byte 0xe9)"),
]
GRID_IDS = ["empty", "blank", "long-line", "nul", "invalid-utf8"]


@pytest.mark.parametrize("data,expected", GRID_BYTES, ids=GRID_IDS)
@pytest.mark.parametrize("command", ["validate", "run", "report", "reference"])
def test_grid_file_edge_inputs(tmp_path, capsys, data, expected, command):
    grid = tmp_path / "g.yaml"
    grid.write_bytes(data)
    results = tmp_path / "results"
    args = {"validate": ["validate", str(grid)],
            "run": ["run", str(grid), "--results", str(results), "--no-mlflow"],
            "report": ["report", "--results", str(results), "--grid", str(grid)],
            "reference": ["reference", "check", str(grid), "--root", str(tmp_path / "ref")]}
    if command == "report":
        (results / "cells").mkdir(parents=True)
    if command == "reference":
        (tmp_path / "ref" / "g" / "cells").mkdir(parents=True)
    code = main(args[command])
    assert refused(code, capsys.readouterr().err, str(grid), expected)
    assert not (results / "cells").exists() or command == "report"
    assert not (results / "report").exists()


TINY = """
    name: {name}
    axes:
      dataset: [{dataset}]
      model: [bow]
      mechanism: [mvl]
      sensitivity: [none]
      epsilon: [10]
      seed: [0]
    exclude: {exclude}
    settings:
      vocab_size: 2000
"""


def tiny_grid(tmp_path: Path, dataset: str = "{name: bbc, subsample: 40}", exclude: str = "[]",
              name: str = "tiny") -> Path:
    p = tmp_path / f"{name}.yaml"
    p.write_text(textwrap.dedent(TINY.format(name=name, dataset=dataset, exclude=exclude)),
                 encoding="utf-8")
    return p


def test_run_grid_whose_every_cell_is_skipped(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("BENCH_AGNEWS_PATH", raising=False)
    grid = tiny_grid(tmp_path, dataset="agnews", name="allskip")
    assert main(["validate", str(grid)]) == 0  # validate reports it: 0 cells, 2 skipped
    assert "0 cells (0 baseline), 2 skipped" in capsys.readouterr().out
    results = tmp_path / "results"
    code = main(["run", str(grid), "--results", str(results), "--no-mlflow"])
    assert refused(code, capsys.readouterr().err, "grid 'allskip': none of its 2 cells can run "
                   "here, all are skipped: dataset 'agnews' needs its data file",
                   f"bench validate {grid} --details")
    assert not results.exists()


def test_run_grid_with_no_cells(tmp_path, capsys):
    grid = tiny_grid(tmp_path, exclude="[{mechanism: mvl}]", name="nocells")
    results = tmp_path / "results"
    code = main(["run", str(grid), "--results", str(results), "--no-mlflow"])
    assert refused(code, capsys.readouterr().err, "grid 'nocells' has no cells")
    assert not results.exists()


def test_run_results_folder_that_is_a_file(tmp_path, capsys):
    results = tmp_path / "results"
    results.write_text("not a folder\n", encoding="utf-8")
    code = main(["run", str(tiny_grid(tmp_path)), "--results", str(results / "sub"),
                 "--no-mlflow"])
    assert refused(code, capsys.readouterr().err, f"{results} is a file; expected a folder")
    assert results.read_text(encoding="utf-8") == "not a folder\n"


# --------------------------------------------------------------------- csv / jsonl files

PREPARE = ["--set", "text=text", "--set", "label=label", "--set", "private=[priv]"]


@pytest.mark.parametrize("name,data,expected", [
    ("f.csv", b"", ":1: no header row (the file is empty or its first line is blank)"),
    ("f.csv", b"\n\n  \n", ":1: no header row"),
    ("f.csv", b"text,label,priv\nthe cat,a,x\nthe \xff dog,b,y\n", ":3: not UTF-8 text"),
    ("f.jsonl", b"", "no usable rows in {path} (the file has no rows)"),
    ("f.jsonl", b"\n  \n\t\n", "(the file has no rows)"),
    ("f.jsonl", b'{"text": "caf\xe9", "label": "a", "priv": "x"}\n', ":1: not UTF-8 text"),
    ("f.jsonl", b"\x00\n", ":1: not a JSON object"),
    ("f.jsonl", b'{"text": "' + b"word " * 200_000, ":1: not a JSON object"),
], ids=["csv-empty", "csv-blank", "csv-invalid-utf8", "jsonl-empty", "jsonl-blank",
        "jsonl-invalid-utf8", "jsonl-nul", "jsonl-long-unterminated"])
def test_data_prepare_file_edge_inputs(tmp_path, capsys, name, data, expected):
    path = tmp_path / name
    path.write_bytes(data)
    cache = tmp_path / "cache"
    code = main(["data", "prepare", path.suffix[1:], "--cache-dir", str(cache),
                 "--set", f"path={path}", *PREPARE])
    assert refused(code, capsys.readouterr().err, str(path), expected.format(path=path))
    assert not cache.exists() or not any(cache.iterdir())


def test_data_prepare_keeps_nul_and_long_texts(tmp_path, capsys):
    path = tmp_path / "f.csv"
    path.write_bytes(b"text,label,priv\nthe\x00 cat,a,x\nthe dog,b,y\n" +
                     b'"' + b"market " * 30_000 + b'",a,y')  # a 210 kB row, no final newline
    code = main(["data", "prepare", "csv", "--cache-dir", str(tmp_path / "cache"),
                 "--set", f"path={path}", *PREPARE])
    assert code == 0, capsys.readouterr().err
    from bench.datasets import load_dataset

    texts = load_dataset("csv", path=str(path), text="text", label="label",
                         private=["priv"]).texts
    assert texts[0] == "the\x00 cat" and len(texts[2]) == 7 * 30_000 - 1


def test_run_grid_whose_csv_is_not_utf8(tmp_path, capsys):
    data = tmp_path / "f.csv"
    data.write_bytes(b"text,label,priv\nthe cat,a,x\nthe \xff dog,b,y\n")
    grid = tiny_grid(tmp_path, dataset=f"{{name: csv, path: {data}, text: text, label: label, "
                     "private: [priv]}")
    results = tmp_path / "results"
    code = main(["run", str(grid), "--results", str(results), "--no-mlflow"])
    assert refused(code, capsys.readouterr().err, f"{data}:3: not UTF-8 text")
    assert not (results / "cells").exists()


# ------------------------------------------------------------------ report, audit, perf

def test_report_on_results_without_cells(tmp_path, capsys):
    (tmp_path / "cells").mkdir()
    assert main(["report", "--results", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    assert "report 0 cells in 0 configurations, 0 failed" in capsys.readouterr().out


def test_audit_results_dir_that_is_a_file(tmp_path, capsys):
    status = tmp_path / "status"
    status.write_text("", encoding="utf-8")
    code = main(["audit", "-m", "mvl", "-e", "1", "--vocab-size", "2000", "--draws", "100",
                 "--results-dir", str(status)])
    assert refused(code, capsys.readouterr().err, f"{status} is a file; expected a folder")


def test_perf_with_no_tokens(capsys):
    assert refused(main(["perf", "--tokens", "0"]), capsys.readouterr().err,
                   "--tokens must be >= 1")
