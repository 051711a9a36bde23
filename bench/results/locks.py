"""Lock files of a results folder: one per cell being computed, so two runs on one folder
never compute (or log) the same cell at once.

Example:
    >>> lock = CellLock(lock_file(results, cell_hash))
    >>> if lock.acquire():
    ...     try: ...
    ...     finally: lock.release()
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

UNWRITTEN_AGE = 60
"""Seconds after which a lock file without its owner line is stale: a run writes the line
right after creating the file, so an empty lock this old was left by a run that failed to
write it (a full disk) and would otherwise lock its cell forever."""


class CellLock:
    """An exclusive lock file per cell, so two runs on one results folder never collide.

    A lock whose owner process is gone (same host) is stale and taken over, and so is a lock
    file without its owner line older than :data:`UNWRITTEN_AGE`. Taking a lock that cannot be
    written (a full disk) leaves no lock file behind.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.held = False

    def acquire(self) -> bool:
        """Take the lock (a stale one is taken over); False when another run holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if self._stale():
                    self.path.unlink(missing_ok=True)
                    continue
                return False
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(f"{socket.gethostname()} {os.getpid()}\n")
            except OSError:
                self.path.unlink(missing_ok=True)  # nothing left behind to lock the cell
                raise
            self.held = True
            return True
        return False

    def _stale(self) -> bool:
        return is_stale(self.path)

    def release(self) -> None:
        """Remove the lock file if this instance holds it."""
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False


def is_stale(path: Path) -> bool:
    """Whether the lock file ``path`` is stale: its owner process (on this host) is gone, or it
    has no owner line and is older than :data:`UNWRITTEN_AGE` seconds."""
    try:
        text = path.read_text()
        age = time.time() - path.stat().st_mtime
    except OSError:
        return False
    try:
        host, pid = text.split()
        int(pid)
    except ValueError:
        return not text.strip() and abs(age) > UNWRITTEN_AGE
    if host != socket.gethostname():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
