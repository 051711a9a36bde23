"""Shared fixtures of the sensitivity tests: real GloVe rows and every approach fitted on them.

Session-scoped: one copy shared by all sensitivity tests, as the module-scoped fixtures were when
the tests lived in one file (no test modifies them).
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.embeddings import load_embedding
from bench.sensitivity import SENSITIVITY

from ._helpers import ALL


@pytest.fixture(scope="session")
def glove() -> np.ndarray:
    """2,000 real GloVe 6B 50d rows (frequency order)."""
    return load_embedding("glove-6b-50d", vocab_size=2_000).vectors


@pytest.fixture(scope="session")
def fitted(glove):
    return {name: SENSITIVITY.create(name).fit(glove) for name in ALL}

