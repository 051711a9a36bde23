"""Fixtures of the measure tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """The shipped SmolLM2, converted into a fresh cache folder (the conversion is tested by
    tests/measures/test_perplexity.py).

    The folder is the test session's, not the fixture's: pytest-xdist tears module fixtures
    down between the batches it hands a worker, and a second setup then reads the converted
    copy instead of converting again (about 35 s)."""
    import os

    from bench import lm as lm_mod

    old = os.environ.get(lm_mod.CACHE_ENV)
    cache = os.environ.get("BENCH_TEST_LM_CACHE")  # a session's converted copy, if kept
    if not cache:
        folder = tmp_path_factory.getbasetemp() / "lm-cache"
        folder.mkdir(exist_ok=True)
        cache = str(folder)
    os.environ[lm_mod.CACHE_ENV] = cache
    try:
        yield lm_mod.load_causal_lm()
    finally:
        if old is None:
            os.environ.pop(lm_mod.CACHE_ENV, None)
        else:
            os.environ[lm_mod.CACHE_ENV] = old
