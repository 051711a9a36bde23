"""Who produced a result, where and when: the provenance record of a cell.

``bench run`` stores it in each cell's ``manifest.json`` (key ``provenance``) and logs it to
MLflow (the run's ``provenance.json`` artifact); ``bench leaderboard`` shows it next to every
number. The record holds the suite version, the git commit of the checkout the suite runs from
(with ``-dirty`` when tracked files differ from it; null when it is not a git checkout), the
machine's host name, the UTC date, ``run_by``: the value of ``BENCH_RUN_BY`` when set, else
null -- nothing about a person is recorded unless they say so -- and ``numeric``: the numeric
platform the cell was computed on (:func:`bench.numeric.platform`: pinned or not, the kernels
in force, the library versions). The record is written by the process that computed the
cell (a joblib or Dask worker), so it describes that process, not the one that started the run.

Example:
    >>> current()["suite_version"]
    '0.3.0'
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import bench
from bench import numeric

RUN_BY_ENV = "BENCH_RUN_BY"
"""Environment variable naming who ran the cells (optional)."""

KEYS = ("suite_version", "commit", "machine", "date", "run_by", "numeric")
"""The keys of a provenance record, in display order."""


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the checkout the ``bench`` package is imported from (with ``-dirty`` when
    tracked files differ from it), or None: not a git checkout, or no git."""
    root = Path(bench.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    return (commit + "-dirty" if dirty.stdout.strip() else commit) or None


def current() -> dict[str, Any]:
    """The provenance record of a cell written now, by this process."""
    return {
        "suite_version": bench.__version__,
        "commit": git_commit(),
        "machine": socket.gethostname() or None,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "run_by": os.environ.get(RUN_BY_ENV) or None,
        "numeric": numeric.platform(),
    }
