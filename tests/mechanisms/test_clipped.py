"""Shared base of laplace, gaussian, trlaplace: norm clipping to C and validation of δ."""

import numpy as np
import pytest

from bench.mechanisms import MECHANISMS


@pytest.mark.parametrize("name", ["laplace", "gaussian", "trlaplace"])
def test_clipping(space, name):
    m = MECHANISMS.create(name, epsilon=0.5, C=1.0).fit(space)
    x = m.prepare(space)
    norms = np.linalg.norm(x, axis=1)
    assert np.all(norms <= 1.0 + 1e-12)
    small = space / np.linalg.norm(space, axis=1, keepdims=True) * 0.5
    np.testing.assert_allclose(m.prepare(small), small)


@pytest.mark.parametrize("name", ["gaussian", "trlaplace"])
@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, float("nan"), "abc"])
def test_invalid_delta(name, delta):
    with pytest.raises(ValueError, match="delta"):
        MECHANISMS.create(name, epsilon=0.5, delta=delta)

