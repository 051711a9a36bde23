"""Across mechanisms: registry metadata, independent seeded noise, ε and parameter checks."""

import re

import numpy as np
import pytest

from bench.mechanisms import MECHANISMS
from bench.registry import ParameterError


@pytest.mark.parametrize("name", MECHANISMS.names())
def test_registered_with_metadata_and_citation(name):
    cls = MECHANISMS.get(name)
    assert cls.description and cls.kind in ("additive", "selection", "document")
    # "none" only for the known answer whose output is its input (bench.mechanisms.known)
    assert cls.guarantee_kind in ("pure", "approx", "metric") or (
        cls.guarantee_kind == "none" and getattr(cls, "known_answer", "") == "privacy")
    assert re.search(r"\b(19|20)\d\d\b", cls.__doc__), "its docstring cites no paper (year)"


@pytest.mark.parametrize("name", ["mvl", "laplace", "gaussian", "trlaplace"])
def test_independent_noise_per_occurrence(space, name):
    m = MECHANISMS.create(name, epsilon=0.5, rng=6).fit(space)
    out = m.perturb(np.zeros(2000, dtype=np.int64))
    z = out - out.mean(axis=0)
    assert len(np.unique(out[:, 0])) == 2000  # no shared noise vector
    # consecutive occurrences uncorrelated
    r = np.corrcoef(z[:-1, 0], z[1:, 0])[0, 1]
    assert abs(r) < 0.1


@pytest.mark.parametrize("name", ["mvl", "laplace", "gaussian", "trlaplace"])
def test_same_seed_same_output(space, name):
    ids = np.arange(50)
    a = MECHANISMS.create(name, epsilon=0.5, rng=7).fit(space).perturb(ids)
    b = MECHANISMS.create(name, epsilon=0.5, rng=7).fit(space).perturb(ids)
    c = MECHANISMS.create(name, epsilon=0.5, rng=8).fit(space).perturb(ids)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("name", ["mvl", "laplace", "gaussian", "trlaplace", "tem",
                                  "truncated_gumbel"])
@pytest.mark.parametrize("eps", [0, -1, float("nan"), float("inf"), "1", True, None])
def test_invalid_epsilon(name, eps):
    with pytest.raises(ValueError, match="epsilon"):
        MECHANISMS.create(name, epsilon=eps)


def test_invalid_parameters():
    with pytest.raises(ValueError, match="C"):
        MECHANISMS.create("laplace", epsilon=1, C=0)
    with pytest.raises(ValueError, match="calibration"):
        MECHANISMS.create("gaussian", epsilon=1, calibration="fancy")
    with pytest.raises(ParameterError, match="mechanism 'mvl': unknown parameter 'sigma'; "
                       "accepted: epsilon, calibrate, rng"):
        MECHANISMS.create("mvl", epsilon=1, sigma=3)
    with pytest.raises(ParameterError, match="missing required parameter 'epsilon'"):
        MECHANISMS.create("mvl")
    with pytest.raises(ValueError, match="did you mean 'mvl'"):
        MECHANISMS.create("mvll", epsilon=1)

