"""Shared fixtures of the report tests: the hand-made results folder and a built report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "basic"


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    """A writable copy of ``tests/fixtures/results/basic``."""
    dst = tmp_path / "results"
    shutil.copytree(FIXTURE, dst)
    return dst


@pytest.fixture()
def report(results: Path, tmp_path: Path):
    """The report built from the fixture results: (summary, out folder)."""
    from bench.report import build_report

    out = tmp_path / "report"
    return build_report(results, out), out
