"""Mappings: nearest and the Vickrey 1st/2nd-neighbour rule (Xu et al. 2021b)."""

import numpy as np
import pytest
from scipy import stats

from bench.mapping import MAPPINGS
from bench.neighbors import NeighborIndex

VOCAB = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 10.0]])


def test_nearest():
    index = NeighborIndex(VOCAB)
    q = np.array([[0.4, 0.1], [2.9, 0.2], [0.0, 7.0]])
    ids = MAPPINGS.create("nearest").map(q, index, np.random.default_rng(0))
    np.testing.assert_array_equal(ids, [0, 1, 2])


@pytest.mark.parametrize("t", [0.0, 0.5, 0.75])
def test_vickrey_probability_matches_formula(t):
    index = NeighborIndex(VOCAB)
    q = np.array([[1.0, 0.0]])  # d1 = 1 (word 0), d2 = 2 (word 1)
    m = MAPPINGS.create("vickrey", t=t)
    p_first = (1 - t) * 2 / (t * 1 + (1 - t) * 2)
    assert m.probability_first(np.array([1.0]), np.array([2.0]))[0] == pytest.approx(p_first)
    n = 20_000
    ids = m.map(np.repeat(q, n, axis=0), index, np.random.default_rng(1))
    assert set(np.unique(ids)) <= {0, 1}
    k = int((ids == 0).sum())
    assert stats.binomtest(k, n, p_first).pvalue > 1e-3
    if 0 < t:
        assert stats.binomtest(k, n, min(p_first + 0.03, 1.0)).pvalue < 1e-3


def test_vickrey_invalid_t():
    for t in (-0.1, 1.0, 2, float("nan")):
        with pytest.raises(ValueError, match="t must be"):
            MAPPINGS.create("vickrey", t=t)


def test_unknown_mapping_and_params():
    with pytest.raises(ValueError, match="did you mean 'nearest'"):
        MAPPINGS.create("neares")
    with pytest.raises(ValueError, match="no parameters"):
        MAPPINGS.create("nearest", t=1)
    assert MAPPINGS.names() == ["nearest", "none", "vickrey"]
    assert MAPPINGS.create("none").map(VOCAB, NeighborIndex(VOCAB), None) is None
