"""Reading a researcher's data files: the ``path`` option, UTF-8 text, JSON lines, empty results.

Each loader reads the dataset's original distribution format from a user-given path (the
``path`` config key, or an environment variable such as ``BENCH_AGNEWS_PATH``). A missing file
raises :class:`DatasetFileNotFoundError`; a malformed row, a missing column, a file that is not
UTF-8 or an empty result raises :class:`DatasetFormatError`; both say what was expected and where.
"""

from __future__ import annotations

import ast
import csv
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from bench.datasets.errors import DatasetFileNotFoundError, DatasetFormatError
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
                        f"{file}:{lineno}: not a JSON object ({e.msg}): {line[:80]!r}"
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
