"""Cell locks (bench.results.locks): a lock no live run holds never locks its cell forever
(issue 48, trial 11: a full disk while taking a lock left an empty lock file, and the cell was
"locked by another run" for good while ``bench verify`` said nothing)."""

from __future__ import annotations

import errno
import os
import time

import pytest

from bench.results.locks import UNWRITTEN_AGE, CellLock, is_stale
from bench.verify import verify_results


def test_a_lock_that_cannot_be_written_leaves_nothing_behind(tmp_path, monkeypatch):
    lock = CellLock(tmp_path / "locks" / "abc.lock")

    class FullDisk:
        def __init__(self, fd, mode):
            os.close(fd)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("bench.results.locks.os.fdopen", FullDisk)
    with pytest.raises(OSError, match="No space left"):
        lock.acquire()
    assert not lock.path.exists() and not lock.held


def test_an_empty_lock_is_stale_once_old_and_a_live_one_never(tmp_path):
    path = tmp_path / "locks" / "abc.lock"
    path.parent.mkdir()
    path.write_text("")
    assert not is_stale(path) and not CellLock(path).acquire()  # a writer may be at work
    old = time.time() - UNWRITTEN_AGE - 5
    os.utime(path, (old, old))
    assert is_stale(path)
    lock = CellLock(path)
    assert lock.acquire() and lock.held and not is_stale(path)  # ours: this process is alive
    lock.release()
    assert not path.exists()


def test_verify_reports_stale_locks_and_repair_removes_them(tmp_path):
    results = tmp_path / "r"
    (results / "cells").mkdir(parents=True)
    (results / "locks").mkdir()
    stale = results / "locks" / "0123456789abcdef.lock"
    stale.write_text("")
    old = time.time() - UNWRITTEN_AGE - 5
    os.utime(stale, (old, old))
    live = CellLock(results / "locks" / "fedcba9876543210.lock")
    assert live.acquire()
    report = verify_results(results)
    assert report.stale_locks == [stale.name] and not report.ok
    assert f"stale lock {stale.name}" in report.text()
    fixed = verify_results(results, repair=True)
    assert fixed.ok and f"removed stale lock {stale.name}" in fixed.actions
    assert not stale.exists() and live.path.exists()
    live.release()
