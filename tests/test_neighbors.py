"""Exact nearest-neighbour search and pairwise extremes against brute force."""

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from bench.neighbors import NeighborIndex, max_pairwise_distance


@pytest.mark.parametrize("k", [1, 2, 3, 7])
@pytest.mark.parametrize("tile", [16, 256])
def test_search_matches_brute_force(k, tile):
    rng = np.random.default_rng(k)
    v = rng.normal(size=(700, 12)) * rng.uniform(0.2, 3, size=(700, 1))
    q = rng.normal(size=(150, 12))
    d = np.linalg.norm(q[:, None] - v[None], axis=2)
    ref = np.argsort(d, axis=1, kind="stable")[:, :k]
    ids, dist = NeighborIndex(v, tile=tile).search(q, k)
    np.testing.assert_array_equal(ids, ref)
    np.testing.assert_allclose(dist, np.take_along_axis(d, ref, axis=1), rtol=1e-12)


def test_search_vocabulary_word_is_its_own_nearest():
    rng = np.random.default_rng(1)
    v = rng.normal(size=(500, 50))
    ids, dist = NeighborIndex(v).search(v, 1)
    np.testing.assert_array_equal(ids[:, 0], np.arange(500))
    assert np.all(dist == 0)


def test_search_bad_k():
    with pytest.raises(ValueError, match="k must be"):
        NeighborIndex(np.eye(3)).search(np.zeros((1, 3)), 4)


def test_distances_full_matrix():
    rng = np.random.default_rng(2)
    v, q = rng.normal(size=(40, 5)), rng.normal(size=(9, 5))
    np.testing.assert_allclose(NeighborIndex(v).distances(q),
                               np.linalg.norm(q[:, None] - v[None], axis=2), atol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 50, 1500])
def test_max_pairwise_distance_matches_pdist(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 8)) * rng.uniform(0.1, 4, size=(n, 1))
    assert max_pairwise_distance(x, tile=128) == pytest.approx(pdist(x).max(), rel=1e-12)


@pytest.mark.parametrize("scale", [1.0, 2.5])
def test_sq_distances_is_scaled_squared_euclidean(scale):
    rng = np.random.default_rng(7)
    v, q = rng.normal(size=(300, 6)), rng.normal(size=(9, 6))
    idx = NeighborIndex(v, tile=4)
    want = scale**2 * ((q[:, None, :] - v[None]) ** 2).sum(axis=2)
    np.testing.assert_allclose(idx.sq_distances(q, scale=scale), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m, k, block", [(1000, 7, 16), (1003, 20, 16), (50, 5, 16), (640, 40, 16)])
def test_top_k_columns_is_the_exact_top_k(m, k, block):
    from bench.neighbors import top_k_columns

    rng = np.random.default_rng(m + k)
    s = rng.normal(size=(6, m)).astype(np.float32)
    s[0, ::3] = s[0].max() + 1.0  # many equal winners: any k of them will do
    got = top_k_columns(s, k, block=block)
    assert got.shape == (6, k)
    for row, cols in zip(s, got):
        assert len(set(cols.tolist())) == k
        np.testing.assert_array_equal(np.sort(row[cols]), np.sort(row)[-k:])
