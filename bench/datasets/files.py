"""Reading a researcher's data files: the ``path`` option, UTF-8 text, JSON lines, empty results.

Each loader reads the dataset's original distribution format from a user-given path (the
``path`` config key, or an environment variable such as ``BENCH_AGNEWS_PATH``). A missing file
raises :class:`DatasetFileNotFoundError`; a malformed row, a missing column, a file that is not
UTF-8 or an empty result raises :class:`DatasetFormatError`; both say what was expected and where.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from bench.datasets.errors import (
    DatasetFileChangedError,
    DatasetFileNotFoundError,
    DatasetFormatError,
)
from bench.textio import first_non_utf8_line

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


def require_path(spec_name: str, path: Any, env_var: str | None, expected: str) -> Path:
    """Resolve a loader's ``path`` option; raise one clear error if unset or missing.

    Raises:
        DatasetFileNotFoundError: no path given, or nothing at the path.
    """
    if path is None or str(path) == "":
        env = f" or set {env_var}" if env_var else ""
        raise DatasetFileNotFoundError(
            f"dataset {spec_name!r} needs its data file: pass path=...{env}; expected {expected}"
        )
    p = Path(path).expanduser()
    if not p.exists():
        raise DatasetFileNotFoundError(
            f"dataset {spec_name!r}: nothing at {p}; expected {expected}"
        )
    return p


@contextmanager
def open_utf8(file: Path, **kwargs: Any) -> Iterator[TextIO]:
    """``file`` opened for reading as UTF-8 text (``kwargs`` go to :meth:`Path.open`).

    Raises:
        DatasetFormatError: a byte that is not UTF-8 was read inside the ``with`` block; the
            message names the file and its first line that is not UTF-8.
    """
    try:
        with file.open(encoding="utf-8", **kwargs) as f:
            yield f
    except UnicodeDecodeError:
        raise DatasetFormatError(
            f"{file}:{first_non_utf8_line(file)}: not UTF-8 text; expected a UTF-8 file "
            "(convert it, e.g. with iconv -t utf-8)"
        ) from None


def iter_json_lines(file: Path, max_rows: int | None = None) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; Python-literal lines are accepted too
    (some Trustpilot copies were written with ``repr``).

    Raises:
        DatasetFormatError: a line that is neither JSON nor a Python dict literal.
    """
    count = 0
    with open_utf8(file) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                try:
                    obj = ast.literal_eval(line.strip())
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    raise DatasetFormatError(
                        f"{file}:{lineno}: not a JSON object ({e.msg} at column {e.colno}; "
                        "the line is not shown: it may be private)"
                    ) from None
            if not isinstance(obj, dict):
                raise DatasetFormatError(f"{file}:{lineno}: expected a JSON object per line")
            yield lineno, obj
            count += 1
            if max_rows is not None and count >= max_rows:
                return


def empty_check(name: str, texts: Sequence[str], where: Path, why: str) -> None:
    """Raise :class:`DatasetFormatError` if a loader kept no text (``why`` says why)."""
    if not texts:
        raise DatasetFormatError(f"dataset {name!r}: no usable rows in {where} ({why})")


DIGEST_HEX = 16
"""Hex digits of :func:`content_digest` (64 bits, as a cell hash)."""

_DIGESTS: dict[tuple[str, int, int], str] = {}


def content_digest(path: str | Path) -> str:
    """sha256 (first :data:`DIGEST_HEX` hex) of a data file's bytes, or of a folder's regular
    files (each one's path relative to the folder and its bytes, in sorted order).

    It identifies a dataset read from a file by its content (:mod:`bench.grid.validate` puts it
    in the cell's dataset config as ``data``), so two files are two datasets and a file that
    changes after the grid was read is caught (:func:`check_digest`). Memoised per process by
    path, size and modification time; symbolic links inside a folder are not followed.
    """
    p = Path(path).expanduser()
    st = p.stat()
    memo = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if not p.is_dir() and memo in _DIGESTS:
        return _DIGESTS[memo]
    h = hashlib.sha256()
    if p.is_dir():
        for f in sorted(q for q in p.rglob("*") if q.is_file() and not q.is_symlink()):
            h.update(b"\0file=" + f.relative_to(p).as_posix().encode("utf-8") + b"\0")
            _update_file(h, f)
    else:
        _update_file(h, p)
    digest = h.hexdigest()[:DIGEST_HEX]
    if not p.is_dir():
        _DIGESTS[memo] = digest
    return digest


def _update_file(h: Any, file: Path) -> None:
    with file.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)


def check_digest(name: str, path: str | Path, expected: str) -> None:
    """Raise :class:`DatasetFileChangedError` when the data at ``path`` is not the content the
    grid was read with (``expected``: its :func:`content_digest`)."""
    p = Path(path).expanduser()
    if not p.exists():
        raise DatasetFileNotFoundError(
            f"dataset {name!r}: nothing at {p}; expected the data file the grid was read with "
            f"(content {expected})")
    now = content_digest(p)
    if now != expected:
        raise DatasetFileChangedError(
            f"dataset {name!r}: {p} changed since the grid was read (content {now}, expected "
            f"{expected}); nothing was reused: validate or run the grid again to use the new "
            f"content as a new dataset")
