"""No paper-dataset path from the environment leaks into the grid tests (skips depend on it)."""

import pytest

PATH_ENV = ("BENCH_AGNEWS_PATH", "BENCH_TRUSTPILOT_PATH", "BENCH_SST2_PATH", "BENCH_IMDB_PATH",
            "BENCH_YELP_PATH")


@pytest.fixture(autouse=True)
def _no_dataset_env(monkeypatch):
    for var in PATH_ENV:
        monkeypatch.delenv(var, raising=False)
