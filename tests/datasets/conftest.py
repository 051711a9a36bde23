"""Shared fixtures for the dataset tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_dataset_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests must not pick up a developer's BENCH_*_PATH variables."""
    for var in (
        "BENCH_AGNEWS_PATH",
        "BENCH_TRUSTPILOT_PATH",
        "BENCH_SST2_PATH",
        "BENCH_IMDB_PATH",
        "BENCH_YELP_PATH",
    ):
        monkeypatch.delenv(var, raising=False)
