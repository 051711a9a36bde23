"""Shared data for the model tests: a small real two-topic task and synthetic vector tasks."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def bbc_two_topics():
    """BBC business vs sport, 160 train / 80 test documents, first 150 tokens (seeded)."""
    from bench.datasets import load_dataset
    from bench.embeddings import tokenize

    ds = load_dataset("bbc", seed=0)
    topic = ds.tasks["topic"]
    keep = [topic.classes.index("business"), topic.classes.index("sport")]
    rng = np.random.default_rng(0)
    idx = np.flatnonzero(np.isin(topic.labels, keep))
    idx = rng.choice(idx, 240, replace=False)
    X = [tokenize(ds.texts[i])[:150] for i in idx]
    y = (topic.labels[idx] == keep[1]).astype(np.int64)
    return X[:160], y[:160], X[160:], y[160:]


def vector_task(n: int, d: int = 16, k: int = 3, seed: int = 0, length: tuple[int, int] = (3, 12)):
    """Documents of noisy vectors whose mean direction depends on the class."""
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(99).normal(size=(k, d)) * 1.5
    y = rng.integers(0, k, n)
    X = [centers[c] + rng.normal(size=(rng.integers(*length), d)) for c in y]
    return X, y


@pytest.fixture(scope="session")
def make_vectors():
    """The :func:`vector_task` factory."""
    return vector_task


@pytest.fixture(scope="session")
def vectors3():
    """3-class vector task: 300 train, 150 test documents."""
    X, y = vector_task(450)
    return X[:300], y[:300], X[300:], y[300:]
