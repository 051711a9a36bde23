"""What every ``bench`` command shares: the exit codes, the errors that set them, and small
helpers for arguments and output.

Bad input is a :class:`UsageError` (one line on stderr, exit code 2); a check that ran and
failed is one of :class:`AuditViolation`, :class:`ReferenceMismatch`, :class:`VerifyFailed`,
:class:`RunFailed` (exit code 1). :func:`bench.cli.main` turns each into its message and code.

Example:
    >>> key_values(["C=1.0", "calibrate=false"], "--param")
    {'C': 1.0, 'calibrate': False}
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

EXIT_USAGE = 2
"""Exit code of bad input (a :class:`UsageError`, or an argument argparse refuses)."""


class UsageError(Exception):
    """A bad argument: reported as one line on stderr, exit code 2."""


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
