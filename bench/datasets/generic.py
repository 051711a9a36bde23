"""Generic loaders: ``csv`` / ``jsonl`` -- any file; the config names the text, label and private
columns.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("csv", path="mine.csv", text="body", label="stance",
    ...                   private=["age_group"], group="author_id")
"""

from __future__ import annotations

import csv
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetConfigError, DatasetFileNotFoundError, DatasetFormatError
from bench.datasets.files import empty_check, iter_json_lines, open_utf8, require_path
from bench.datasets.labels import encode_labels, kind_for
from bench.defaults import MAX_ATTRIBUTE_NAME, MAX_ATTRIBUTES, is_attribute_name

logger = logging.getLogger(__name__)

GENERIC_CONFIG = (
    ("path", "the file"),
    ("text", "name of the text column (required)"),
    ("label", "name of the utility label column (required)"),
    ("private", "names of private-attribute columns (privacy tasks)"),
    ("group", "name of a group-id column (author, speaker), optional"),
    ("max_rows", "read only the first N rows"),
)


def _generic_card(fmt: str) -> DatasetCard:
    return DatasetCard(
        name=fmt,
        title=f"Your own {fmt.upper()} file",
        source="a file you supply",
        licence="yours to check",
        tasks=(
            TaskInfo("<label>", "utility", "binary/multiclass", "the column named by `label`"),
            TaskInfo(
                "<private...>",
                "privacy",
                "binary/multiclass",
                "one task per column named in `private` (task name = column name)",
            ),
        ),
        caveats=(
            "Rows with an empty text, label, private attribute or group are dropped, with a "
            "warning naming the file, the count and the empty columns, never a value "
            "(`bench validate GRID --data` reports it before a run).",
            "Classes are the distinct values, sorted (numerically if all are integers); two "
            "classes make a binary task.",
        )
        + (
            ("The delimiter is ',' or, for a .tsv file, a tab (config `delimiter`).",)
            if fmt == "csv"
            else ("Values may be strings, numbers or booleans; nested values are rejected.",)
        ),
        expected_size="your file",
        how_to_get=(
            f"bench data prepare {fmt} --set path=FILE --set text=COL --set label=COL "
            f"[--set private=[COL,...]]"
        ),
        config=GENERIC_CONFIG + ((("delimiter", "field delimiter"),) if fmt == "csv" else ()),
    )


def _columns(
    fmt: str, text: Any, label: Any, private: Any, group: Any
) -> tuple[str, str, list[str], str | None]:
    if not text or not label:
        raise DatasetConfigError(
            f"dataset {fmt!r} needs the column names: text=<text column>, label=<utility "
            f"label column> (and optionally private=[...], group=...)"
        )
    priv = [private] if isinstance(private, str) else list(private or ())
    names = [str(label)] + [str(p) for p in priv]
    if len(set(names)) != len(names):
        raise DatasetConfigError(f"dataset {fmt!r}: label and private columns must differ")
    if len(priv) > MAX_ATTRIBUTES:
        raise DatasetConfigError(f"dataset {fmt!r}: {len(priv)} private columns, more than "
                                 f"the {MAX_ATTRIBUTES} a cell may measure")
    if not all(is_attribute_name(n) for n in names[1:]):
        raise DatasetConfigError(f"dataset {fmt!r}: a private column's name must be printable "
                                 f"text of 1 to {MAX_ATTRIBUTE_NAME} characters")
    return str(text), str(label), [str(p) for p in priv], (str(group) if group else None)


def _generic_build(
    fmt: str,
    path: Path,
    rows: Iterator[tuple[int, dict[str, Any]]],
    available: Any,
    text: str,
    label: str,
    private: list[str],
    group: str | None,
) -> Corpus:
    needed = [text, label, *private] + ([group] if group else [])
    _check_header(path, needed, available())
    texts: list[str] = []
    values: dict[str, list[str]] = {c: [] for c in [label, *private]}
    groups: list[str] = []
    dropped = 0
    empty: Counter[str] = Counter()
    first: int | None = None
    for lineno, row in rows:
        missing = [c for c in needed if c not in row]
        if missing:
            raise DatasetFormatError(
                f"{path}:{lineno}: field(s) {', '.join(map(repr, missing))} missing; found "
                f"{', '.join(map(repr, sorted(row)))}"
            )
        vals = {c: _scalar(path, lineno, c, row[c]) for c in needed}
        if any(v == "" for v in vals.values()):
            dropped += 1
            empty.update(c for c in needed if vals[c] == "")
            first = lineno if first is None else first
            continue
        texts.append(vals[text])
        for c in values:
            values[c].append(vals[c])
        if group:
            groups.append(vals[group])
    if dropped:
        _report_dropped(DroppedRows(str(path), dropped, dropped + len(texts),
                                    tuple((c, empty[c]) for c in needed if empty[c]),
                                    first or 0))
    empty_check(fmt, texts, path, "every row had an empty text, label or attribute" if dropped
                else "the file has no rows")
    return Corpus(
        texts=texts,
        tasks=[_generic_task(path, c, values[c], c == label) for c in [label, *private]],
        groups=np.array(groups, dtype=object) if group else None,
        source=str(path),
    )


@dataclass(frozen=True)
class DroppedRows:
    """Rows a generic loader dropped because a needed field was empty: where and how many,
    never the rows' values (the data may be private)."""

    path: str
    """The file."""
    count: int
    """Rows dropped."""
    rows: int
    """Rows read (kept and dropped)."""
    empty: tuple[tuple[str, int], ...]
    """(column, rows where it was empty), in the order the loader needs the columns; a row with
    several empty columns counts in each."""
    first_line: int
    """Line (CSV: the row's last physical line) of the first dropped row."""

    def text(self) -> str:
        """``data.csv: dropped 3 of 120 rows with an empty field ('label' empty in 2, 'text'
        in 1; first at line 5)``."""
        cols = ", ".join(f"{c!r} empty in {n}" if i == 0 else f"{c!r} in {n}"
                         for i, (c, n) in enumerate(self.empty))
        return (f"{self.path}: dropped {self.count} of {self.rows} rows with an empty field "
                f"({cols}; first at line {self.first_line})")


_WARNED: set[DroppedRows] = set()
_COLLECTORS: list[list[DroppedRows]] = []


@contextmanager
def collect_dropped() -> Iterator[list[DroppedRows]]:
    """Collect the :class:`DroppedRows` of every generic load inside the ``with`` block (each
    load, even one whose warning this process already logged).

    Example:
        >>> with collect_dropped() as dropped:
        ...     load_dataset("csv", path="mine.csv", text="body", label="topic")
        >>> [d.text() for d in dropped]
    """
    found: list[DroppedRows] = []
    _COLLECTORS.append(found)
    try:
        yield found
    finally:
        _COLLECTORS.remove(found)


def _report_dropped(rec: DroppedRows) -> None:
    """Hand ``rec`` to the collectors and log it as a warning, once per process (a grid loads
    the same file once per seed, and again in each worker)."""
    for found in _COLLECTORS:
        found.append(rec)
    if rec not in _WARNED:
        _WARNED.add(rec)
        logger.warning("%s", rec.text())


def _check_header(path: Path, needed: list[str], cols: list[str] | None) -> None:
    """The header (None: a format without one) names every needed column."""
    if cols == []:
        raise DatasetFormatError(
            f"{path}:1: no header row (the file is empty or its first line is blank); expected "
            f"a header naming the columns {', '.join(map(repr, needed))}"
        )
    if cols is not None:
        missing = [c for c in needed if c not in cols]
        if missing:
            raise DatasetFormatError(
                f"{path}: column(s) {', '.join(map(repr, missing))} not found; the file has "
                f"{', '.join(map(repr, cols))}"
            )


def _generic_task(path: Path, column: str, values: list[str], utility: bool) -> Task:
    y, classes = encode_labels(values)
    if len(classes) < 2:
        raise DatasetFormatError(
            f"{path}: column {column!r} has a single value in every kept row; a task needs >= 2 "
            f"(the value is not shown: it may be private)"
        )
    role = "utility" if utility else "privacy"
    return Task(column, y, kind_for(classes), role, classes)


def _scalar(path: Path, lineno: int, col: str, v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        raise DatasetFormatError(f"{path}:{lineno}: field {col!r} must be a scalar (a string, "
                                 f"number or boolean), got a {type(v).__name__}")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


@register_dataset(
    "csv",
    card=_generic_card("csv"),
    options={
        "path": None,
        "text": None,
        "label": None,
        "private": (),
        "group": None,
        "max_rows": None,
        "delimiter": None,
    },
)
def load_csv(
    path: str | Path | None = None,
    text: str | None = None,
    label: str | None = None,
    private: Sequence[str] = (),
    group: str | None = None,
    max_rows: int | None = None,
    delimiter: str | None = None,
) -> Corpus:
    """A CSV/TSV with a header row; the config names the columns."""
    t, lab, priv, grp = _columns("csv", text, label, private, group)
    p = require_path("csv", path, None, "a CSV file with a header row")
    if p.is_dir():
        raise DatasetFileNotFoundError(f"dataset 'csv': {p} is a folder; expected a CSV file")
    delim = delimiter or ("\t" if p.suffix.lower() == ".tsv" else ",")
    with open_utf8(p, newline="") as f:
        reader = csv.DictReader(f, delimiter=delim)

        def rows() -> Iterator[tuple[int, dict[str, Any]]]:
            for i, row in enumerate(reader):
                if max_rows is not None and i >= max_rows:
                    return
                if None in row:  # more fields than the header
                    raise DatasetFormatError(
                        f"{p}:{reader.line_num}: more fields than the header's "
                        f"{len(reader.fieldnames or [])}"
                    )
                yield reader.line_num, row

        return _generic_build(
            "csv", p, rows(), lambda: list(reader.fieldnames or []), t, lab, priv, grp
        )


@register_dataset(
    "jsonl",
    card=_generic_card("jsonl"),
    options={
        "path": None,
        "text": None,
        "label": None,
        "private": (),
        "group": None,
        "max_rows": None,
    },
)
def load_jsonl(
    path: str | Path | None = None,
    text: str | None = None,
    label: str | None = None,
    private: Sequence[str] = (),
    group: str | None = None,
    max_rows: int | None = None,
) -> Corpus:
    """A JSON-lines file (one object per line); the config names the fields."""
    t, lab, priv, grp = _columns("jsonl", text, label, private, group)
    p = require_path("jsonl", path, None, "a JSON-lines file, one object per line")
    if p.is_dir():
        raise DatasetFileNotFoundError(f"dataset 'jsonl': {p} is a folder; expected a file")
    return _generic_build("jsonl", p, iter_json_lines(p, max_rows), lambda: None, t, lab, priv, grp)
