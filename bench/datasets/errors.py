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
