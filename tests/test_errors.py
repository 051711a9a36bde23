"""bench.errors: every error the user's own input causes is an InputError (exit code 2 in the
CLI) and keeps its built-in kind, so `except ValueError` callers catch what they did."""

from __future__ import annotations

import errno
import os

import pytest

from bench.cli.common import UsageError, user_argument
from bench.datasets.errors import (
    DatasetConfigError,
    DatasetError,
    DatasetFileChangedError,
    DatasetFileNotFoundError,
    DatasetFormatError,
)
from bench.embedding_cache import EmbeddingNotInstalledError
from bench.embeddings import EmbeddingFormatError
from bench.errors import InputError
from bench.grid import GridError
from bench.leaderboard import LeaderboardError
from bench.privatize import InvalidCombination
from bench.reference import ReferenceError
from bench.registry import UnknownNameError
from bench.report import ReportError
from bench.results.layout import NoResultsError, UnsafeResultsError
from bench.results.record import RecordError
from bench.results.signing import SignatureError
from bench.textio import NotUTF8Error

INPUT_ERRORS = {
    GridError: ValueError, UnknownNameError: KeyError, InvalidCombination: ValueError,
    DatasetFileNotFoundError: FileNotFoundError, DatasetFormatError: ValueError,
    DatasetConfigError: ValueError, DatasetFileChangedError: ValueError,
    EmbeddingFormatError: ValueError, EmbeddingNotInstalledError: FileNotFoundError,
    NotUTF8Error: ValueError, RecordError: ValueError, SignatureError: ValueError,
    ReportError: ValueError, LeaderboardError: ValueError, ReferenceError: ValueError,
    NoResultsError: FileNotFoundError, UnsafeResultsError: ValueError,
}


@pytest.mark.parametrize("cls", list(INPUT_ERRORS), ids=lambda c: c.__name__)
def test_every_input_error_is_an_input_error_of_its_builtin_kind(cls):
    assert issubclass(cls, InputError) and issubclass(cls, INPUT_ERRORS[cls])


def test_unknown_name_error_is_still_a_value_error_and_reads_unquoted():
    e = UnknownNameError("unknown mechanism 'x'")
    assert isinstance(e, ValueError) and str(e) == "unknown mechanism 'x'"


def test_dataset_errors_keep_their_kinds_apart():
    assert issubclass(DatasetError, InputError) and not issubclass(DatasetError, ValueError)
    assert not issubclass(DatasetFileNotFoundError, ValueError)


def test_usage_error_is_an_input_error():
    assert issubclass(UsageError, InputError)


def test_user_argument_turns_only_value_errors_into_usage_errors():
    with pytest.raises(UsageError, match="^epsilon must be > 0$"):
        with user_argument():
            raise ValueError("epsilon must be > 0")
    with pytest.raises(KeyError):  # not a check of the argument: stays what it is
        with user_argument():
            raise KeyError("x")
    with pytest.raises(UsageError, match="no such file"):
        with user_argument(FileNotFoundError):
            raise FileNotFoundError("no such file")
    with pytest.raises(GridError):  # an input error already says it is one
        with user_argument():
            raise GridError("bad grid")


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_full_disk_or_read_only_folder_is_one_line_not_an_internal_error(
        code, tmp_path, monkeypatch, capsys):
    """Issue 48, trial 11: a full disk or a read-only folder while a command writes gave a
    traceback (then an "internal error" line). Now it is one line naming the cause and the
    path, exit code 1."""
    import bench.cli.components
    from bench.cli import main

    out = tmp_path / "out.txt"

    def full(path, text):
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(bench.cli.components, "atomic_write", full)
    src = tmp_path / "in.txt"
    src.write_text("the bank raised rates\n")
    assert main(["privatize", "-m", "tem", "-e", "10", "-i", str(src), "-o", str(out)]) == 1
    err = [ln for ln in capsys.readouterr().err.strip().splitlines()
           if ln.startswith("bench:")]
    assert err == [f"bench: error: {os.strerror(code)}: {out} (free space or fix the "
                   "permissions, then run the command again)"]
