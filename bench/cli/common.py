"""What every ``bench`` command shares: the exit codes, the errors that set them, and small
helpers for arguments and output.

Bad input is a :class:`bench.errors.InputError` -- a :class:`UsageError` here, or the input
error a library function raised -- reported as one line on stderr, exit code 2. A command turns
the ``ValueError`` a library function raises while checking the user's own argument into a
:class:`UsageError` at that call (:func:`user_argument`). A check that ran and failed is one
of :class:`AuditViolation`, :class:`ReferenceMismatch`, :class:`VerifyFailed`,
:class:`RunFailed` (exit code 1). Anything else is an internal error (exit code 1, the
traceback under ``bench -v``). :func:`bench.cli.main` turns each into its message and code.

Example:
    >>> key_values(["C=1.0", "calibrate=false"], "--param")
    {'C': 1.0, 'calibrate': False}
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from bench.errors import InputError

EXIT_USAGE = 2
"""Exit code of bad input (an :class:`~bench.errors.InputError`, or an argument argparse
refuses)."""

EXIT_FAILED = 1
"""Exit code of a check that failed, and of an internal error (a bug in bench)."""


class UsageError(InputError):
    """A bad argument: reported as one line on stderr, exit code 2."""


@contextlib.contextmanager
def user_argument(*kinds: type[Exception]) -> Iterator[None]:
    """Turn a ``ValueError`` (or ``kinds``) raised inside the block into a :class:`UsageError`.

    For the one call that checks the user's own arguments (a mechanism built from ``-m`` and
    ``-e``): its ``ValueError`` says what is wrong with them. Keep the block to that call, so
    that a bug elsewhere is not mistaken for bad input.

    Example:
        >>> with user_argument():
        ...     MECHANISMS.create(args.mechanism, epsilon=args.epsilon)
    """
    try:
        yield
    except InputError:
        raise
    except (ValueError, *kinds) as e:
        raise UsageError(error_text(e)) from e


def error_text(e: BaseException) -> str:
    """The message of ``e`` (a ``KeyError``'s without the quotes ``str`` adds)."""
    return str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)


def check_folder(path: str, option: str) -> None:
    """Refuse ``path`` as an output folder when it, or a folder above it, is a file."""
    for p in (Path(path), *Path(path).parents):
        if p.exists():
            if not p.is_dir():
                raise UsageError(f"{option} {path}: {p} is a file; expected a folder")
            return


def key_values(items: list[str] | None, what: str) -> dict[str, Any]:
    """``KEY=VALUE`` arguments of option ``what`` as a dict, each value read as YAML."""
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise UsageError(f"{what} must be key=value, got {item!r}")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = yaml.safe_load(v)
        except yaml.YAMLError:
            raise UsageError(f"{what} {item!r}: value is not valid YAML") from None
    return out


def table(rows: list[tuple[str, ...]]) -> str:
    """``rows`` (the first is the header) as left-aligned columns, one line each."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip()
                     for r in rows) + "\n"


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: all or nothing."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".",
                               prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class AuditViolation(Exception):
    """The audit found a violation of the claimed guarantee (exit code 1)."""


class VerifyFailed(Exception):
    """``bench verify`` found problems it did not (or could not) repair (exit code 1)."""


class ReferenceMismatch(Exception):
    """A committed reference does not check out (exit code 1)."""


class RunFailed(Exception):
    """Some cells failed (exit code 1; the others are saved)."""
