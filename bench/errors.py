"""What counts as bad input: :class:`InputError`, the base of every error the user's own input
causes (a grid file, a results folder, a name, a path, a key, a parameter).

The ``bench`` command reports an :class:`InputError` as one line on stderr with exit code 2;
any other exception that escapes a command is an internal error -- a bug in bench -- reported
with exit code 1 and, under ``bench -v``, its traceback (:func:`bench.cli.main`). A module
declares its input errors by deriving them from :class:`InputError`; each keeps its built-in
base too (``ValueError``, ``KeyError``, ``FileNotFoundError``), so ``except ValueError`` in a
caller still catches what it did. The input errors of the suite:

- ``bench.grid.GridError``: a malformed grid file;
- ``bench.registry.UnknownNameError``: a component name that is not registered;
- ``bench.registry.ParameterError``: an unknown, missing or invalid parameter of a component
  built with ``Registry.create``;
- ``bench.privatize.InvalidCombination``: a mechanism × mapping that makes no sense;
- ``bench.datasets.DatasetError`` (and its kinds): a dataset's file, format or configuration;
- ``bench.embeddings.EmbeddingFormatError``: a malformed embedding file;
- ``bench.embedding_cache.EmbeddingNotInstalledError``: an embedding to fetch first;
- ``bench.textio.NotUTF8Error``: bytes that are not UTF-8 text;
- ``bench.results.record.RecordError``: a cell folder that cannot be read as a cell;
- ``bench.results.signing.SignatureError``: a key, keyring or signature that cannot be used;
- ``bench.report.ReportError``: a report's results folder, grid or output folder;
- ``bench.leaderboard.LeaderboardError``: a leaderboard's sources or options;
- ``bench.reference.ReferenceError``: no such committed reference;
- ``bench.cli.common.UsageError``: a bad command-line argument.

A ``ValueError`` that a library function raises while checking its arguments (a mechanism's
``epsilon``, an auditor's ``draws``) is not an :class:`InputError` by itself: the command that
passed the user's argument turns it into a :class:`~bench.cli.common.UsageError` at that call.

Example:
    >>> class ThingError(InputError, ValueError):
    ...     '''A thing the user named cannot be used.'''
    >>> isinstance(ThingError("no such thing"), ValueError)
    True
"""

from __future__ import annotations


class InputError(Exception):
    """Bad input from the user: the message says what is wrong with it, in one line.

    A marker base: derive an error from it and from its built-in kind
    (``class GridError(InputError, ValueError)``).
    """


__all__ = ["InputError"]
