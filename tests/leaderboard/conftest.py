"""Shared fixtures of the leaderboard tests: a small synthetic leaderboard and headless Chromium.

The Chromium fixtures skip only when no ``chromium`` (or ``chromium-browser``) binary is
installed; CI installs Debian's ``chromium`` so they run there.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.leaderboard.synthetic import synthetic_leaderboard

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture()
def small_board() -> dict[str, Any]:
    """12 synthetic entries on 2 boards (every hostile string and special case included)."""
    return synthetic_leaderboard(12, seed=0)


@pytest.fixture()
def dump_dom(tmp_path: Path) -> Callable[..., str]:
    """``dump_dom(url, window=(1280, 900))``: the DOM after load, from ``chromium --headless
    --dump-dom`` (in a window of that size when given)."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    profile = tmp_path / "chromium-profile"

    def run(url: str, window: tuple[int, int] | None = None) -> str:
        size = [f"--window-size={window[0]},{window[1]}"] if window else []
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", *size,
               f"--user-data-dir={profile}", "--virtual-time-budget=2000", "--dump-dom", url]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
        assert res.returncode == 0, res.stderr[-2000:]
        return res.stdout

    return run
