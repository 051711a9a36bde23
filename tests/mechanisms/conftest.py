import numpy as np
import pytest


@pytest.fixture(scope="session")
def space():
    """A small random 'vocabulary' in 8 dimensions (norms around 2-3)."""
    return np.random.default_rng(123).normal(size=(200, 8))


@pytest.fixture(scope="session")
def tiny():
    """Five hand-made words in the plane: Δmin = 1 (pairs 0-1, 1-2), Δmax = 4.

    (0,0) (1,0) (2,0) (0,2.5) (0,4)
    """
    return np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 2.5], [0.0, 4.0]])
