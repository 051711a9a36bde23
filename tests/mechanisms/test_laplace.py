"""Laplace with clipping (``laplace``): i.i.d. noise of scale 2C√d/ε, pure guarantee."""

import math

import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS

from ._stats import P_MIN, N, noise_of


def test_laplace_coordinates(space):
    m = MECHANISMS.create("laplace", epsilon=1.5, C=0.7, rng=3).fit(space)
    z = noise_of(m).ravel()[:N]
    scale = 2 * math.sqrt(space.shape[1]) * 0.7 / 1.5
    assert m.scale == pytest.approx(scale)
    assert stats.kstest(z, stats.laplace(scale=scale).cdf).pvalue > P_MIN
    assert stats.kstest(z, stats.laplace(scale=scale * 1.1).cdf).pvalue < P_MIN
    assert m.guarantee().kind == "pure" and m.guarantee().delta == 0

