"""Dataset errors: one base class and the three things that go wrong.

A missing file raises :class:`DatasetFileNotFoundError`; a malformed row, a missing column, a file
that is not UTF-8 or an empty result raises :class:`DatasetFormatError`; an unknown or invalid
configuration key raises :class:`DatasetConfigError`; a data file whose content is not the one
the grid was read with raises :class:`DatasetFileChangedError`. Each message says what was
expected and where.
"""

from __future__ import annotations

from bench.errors import InputError


class DatasetError(InputError):
    """Base class of every dataset error (catch this to report any of them)."""


class DatasetFileNotFoundError(DatasetError, FileNotFoundError):
    """A dataset file or folder is missing; the message says what was expected and where."""


class DatasetFormatError(DatasetError, ValueError):
    """A malformed file, a missing column/field, a bad label, or nothing left after filtering."""


class DatasetConfigError(DatasetError, ValueError):
    """An unknown or invalid configuration key for a dataset."""


class DatasetFileChangedError(DatasetError, ValueError):
    """A data file changed between reading the grid and loading it (its content digest differs
    from the one in the cell's dataset config): results are never reused for other content."""


def check_int(dataset: str, key: str, value: object, lo: int, hi: int | None = None) -> int:
    """``value`` if it is an integer (not a boolean) in ``[lo, hi]`` (``hi`` None: no upper
    bound), else :class:`DatasetConfigError` naming the dataset, the key and the bound."""
    if isinstance(value, bool) or not isinstance(value, int) or value < lo \
            or (hi is not None and value > hi):
        bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise DatasetConfigError(f"dataset {dataset!r}: {key} must be an integer {bound}, "
                                 f"got {value!r}")
    return value


def check_bool(dataset: str, key: str, value: object) -> bool:
    """``value`` if it is true or false, else :class:`DatasetConfigError` naming the key."""
    if not isinstance(value, bool):
        raise DatasetConfigError(f"dataset {dataset!r}: {key} must be true or false, got "
                                 f"{value!r}")
    return value
