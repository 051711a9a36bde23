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
from pathlib import Path


class CellLock:
    """An exclusive lock file per cell, so two runs on one results folder never collide.

    A lock whose owner process is gone (same host) is stale and taken over.
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
            with os.fdopen(fd, "w") as f:
                f.write(f"{socket.gethostname()} {os.getpid()}\n")
            self.held = True
            return True
        return False

    def _stale(self) -> bool:
        try:
            host, pid = self.path.read_text().split()
        except (OSError, ValueError):
            return False
        if host != socket.gethostname():
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def release(self) -> None:
        """Remove the lock file if this instance holds it."""
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False
