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


def _full_width_search(v, q, k, tile=256):
    """The search before vocabulary blocks: per tile of queries, the float32 full-width
    product [q, 1]·[v; −½‖v‖²], k arg-max passes, float64 re-rank. Also returns how many
    queries had their two best float32 scores exactly tied."""
    at = np.ascontiguousarray(np.hstack([v, -0.5 * np.einsum("ij,ij->i", v, v)[:, None]])
                              .astype(np.float32).T)
    ids, dists, ties = [], [], 0
    for start in range(0, len(q), tile):
        qt = q[start : start + tile]
        qa = np.empty((len(qt), at.shape[0]), dtype=np.float32)
        qa[:, :-1], qa[:, -1] = qt, 1.0
        s = qa @ at
        ties += int(((s == s.max(axis=1, keepdims=True)).sum(axis=1) > 1).sum())
        rows = np.arange(len(qt))
        c = np.empty((len(qt), k), dtype=np.int64)
        for j in range(k):
            c[:, j] = np.argmax(s, axis=1)
            s[rows, c[:, j]] = -np.inf
        d = np.linalg.norm(qt[:, None, :] - v[c], axis=2)
        order = np.argsort(d, axis=1, kind="stable")
        ids.append(np.take_along_axis(c, order, axis=1))
        dists.append(np.take_along_axis(d, order, axis=1))
    return np.vstack(ids), np.vstack(dists), ties


def _tied_table_and_queries(rng, size, d):
    """A GloVe-like table (rows of varied norm) with duplicate rows and rows one float32 step
    apart, and queries on top of it: noisy words, midpoints of word pairs (equidistant in
    exact arithmetic) and the duplicated words themselves: many exact float32 ties (the
    rounding of a score depends on its column's position in the product, so duplicates do
    not always tie)."""
    v = rng.normal(size=(size, d)) * rng.uniform(0.2, 1.5, size=(size, 1))
    v = v.astype(np.float32).astype(np.float64)
    pick = rng.permutation(size)
    dup, near = pick[:400], pick[400:500]
    v[dup[:200]] = v[dup[200:]]  # exact duplicates: equal scores, the lower id must win
    v[near[:50]] = np.nextafter(v[near[50:]].astype(np.float32), np.float32(np.inf))
    a, b = rng.integers(0, size, (2, 300))
    q = np.vstack([v[rng.integers(0, size, 500)] + rng.normal(scale=0.5, size=(500, d)),
                   (v[a] + v[b]) / 2, v[dup]])
    return v, q[rng.permutation(len(q))]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_blocked_search_is_bit_identical_to_full_width(k):
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(40 + k)
    v, q = _tied_table_and_queries(rng, 6_000, 50)
    with threadpool_limits(limits=1):
        index = NeighborIndex(v)
        assert len(index.blocks()) == 4  # the blocked path is the one under test
        ids, dists = index.search(q, k)
        ref_ids, ref_dists, ties = _full_width_search(v, q, k)
    assert ties > 100  # the tie-breaking is exercised
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_array_equal(dists, ref_dists)  # bit for bit, not approximately


def test_blocked_search_glove_50k_matches_full_width():
    """The real shape (GloVe 50d, |W| = 50,000): noisy words and midpoints of word pairs."""
    from threadpoolctl import threadpool_limits

    from bench.embeddings import load_embedding

    v = load_embedding("glove-6b-50d", 50_000).vectors.astype(np.float64)
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, len(v), (2, 300))
    q = np.vstack([v[rng.integers(0, len(v), 300)] + rng.laplace(scale=0.3, size=(300, 50)),
                   (v[a] + v[b]) / 2])
    with threadpool_limits(limits=1):
        index = NeighborIndex(v)
        assert len(index.blocks()) > 1
        for k in (1, 2):
            ids, dists = index.search(q, k)
            ref_ids, ref_dists, _ = _full_width_search(v, q, k)
            np.testing.assert_array_equal(ids, ref_ids)
            np.testing.assert_array_equal(dists, ref_dists)


def test_blocks_that_round_differently_are_not_used(monkeypatch):
    """Blocks of 1,000 columns are not panel-aligned: some scores round differently from the
    full-width product, so the check refuses them and the search stays full width."""
    from threadpoolctl import threadpool_limits

    import bench.neighbors as nb

    monkeypatch.setattr(nb, "VOCAB_BLOCK", 1_000)
    rng = np.random.default_rng(9)
    v, q = _tied_table_and_queries(rng, 6_000, 50)
    with threadpool_limits(limits=1):
        index = NeighborIndex(v)
        cut = [(lo, min(lo + 1_000, 6_000)) for lo in range(0, 6_000, 1_000)]
        assert not index._blocks_agree(cut)
        assert index.blocks() == [(0, 6_000)]
        ids, _ = index.search(q, 2)
        np.testing.assert_array_equal(ids, _full_width_search(v, q, 2)[0])


def test_top_k_by_argmax_ties_go_to_the_lowest_column():
    from bench.neighbors import top_k_by_argmax

    s = np.array([[1.0, 3.0, 3.0, 2.0, 3.0], [0.0, -1.0, 0.0, 5.0, 5.0]], dtype=np.float32)
    np.testing.assert_array_equal(top_k_by_argmax(s.copy(), 3), [[1, 2, 4], [3, 4, 0]])
    labels = np.array([[10, 11, 12, 13, 14], [20, 21, 22, 23, 24]])
    np.testing.assert_array_equal(top_k_by_argmax(s.copy(), 2, labels), [[11, 12], [23, 24]])


@pytest.mark.parametrize("size", [6_000, 1_500])  # blocked search, full-width search
def test_memoised_search_answers_a_smaller_k_bit_for_bit(size):
    """A stored k = 3 search answers k = 2 and k = 1 exactly as fresh searches do, ties
    included (the ``vickrey`` and ``nearest`` cells of one seed share their search)."""
    from threadpoolctl import threadpool_limits

    import bench.neighbors as nb

    rng = np.random.default_rng(size)
    v, q = _tied_table_and_queries(rng, size, 50)
    q = np.vstack([q] * 4)[: max(nb.MEMO_MIN_ROWS, 4 * 256)]
    assert len(q) >= nb.MEMO_MIN_ROWS
    with threadpool_limits(limits=1), nb.SEARCH_MEMO.active():
        index = NeighborIndex(v)
        assert (len(index.blocks()) > 1) == (size == 6_000)
        nb.SEARCH_MEMO.clear()
        fresh = {k: index.search(q, k) for k in (1, 2)}  # each stored, then replaced by k = 3
        nb.SEARCH_MEMO.clear()
        index.search(q, 3)
        for k in (2, 1):
            ids, dists = index.search(q, k)
            np.testing.assert_array_equal(ids, fresh[k][0])
            np.testing.assert_array_equal(dists, fresh[k][1])
        assert nb.SEARCH_MEMO.hits == 2
        ref_ids, _, ties = _full_width_search(v, q, 1)
    np.testing.assert_array_equal(fresh[1][0], ref_ids)
    assert ties > 100


def test_search_memo_misses_on_other_queries_or_vocabulary():
    import bench.neighbors as nb

    rng = np.random.default_rng(5)
    v = rng.normal(size=(900, 8))
    q = rng.normal(size=(nb.MEMO_MIN_ROWS, 8))
    nb.SEARCH_MEMO.clear()
    a = NeighborIndex(v)
    a.search(q, 2)  # outside SEARCH_MEMO.active(): not kept
    a.search(q, 1)
    assert nb.SEARCH_MEMO.hits == 0
    with nb.SEARCH_MEMO.active():
        _memo_checks(nb, a, v, q)
    assert not nb.SEARCH_MEMO.enabled


def _memo_checks(nb, a, v, q):
    a.search(q, 2)
    q2 = q.copy()
    q2[-1, -1] = np.nextafter(q2[-1, -1], np.inf)  # one query one step away: a new search
    np.testing.assert_array_equal(a.search(q2, 1)[0], np.argmin(
        np.linalg.norm(q2[:, None] - v[None], axis=2), axis=1)[:, None])
    v2 = v.copy()
    v2[0, 0] += 1.0  # another vocabulary, same queries: a new search
    b = NeighborIndex(v2)
    np.testing.assert_array_equal(b.search(q, 1)[0], np.argmin(
        np.linalg.norm(q[:, None] - v2[None], axis=2), axis=1)[:, None])
    assert nb.SEARCH_MEMO.hits == 0
    a.search(q, 1)  # the first search, k ≤ its k: reused
    assert nb.SEARCH_MEMO.hits == 1
    a.search(q, 3)  # a larger k than stored: searched again
    assert nb.SEARCH_MEMO.hits == 1


def test_search_memo_is_per_thread_and_safe_across_threads():
    """A Dask worker may run cells in threads (each with its own index, as each cell has): one
    thread's active() does not switch the memo on for another, and concurrent searches through
    the shared memo give what each gives alone."""
    import threading

    import bench.neighbors as nb

    rng = np.random.default_rng(6)
    v = rng.normal(size=(700, 8))
    qs = [rng.normal(size=(nb.MEMO_MIN_ROWS, 8)) for _ in range(6)]
    index = NeighborIndex(v)
    alone = [index.search(q, 2)[0] for q in qs]
    nb.SEARCH_MEMO.clear()
    seen: dict[int, bool] = {}
    out: dict[int, list] = {}

    def work(i):
        index = NeighborIndex(v)
        if i % 2:
            with nb.SEARCH_MEMO.active():
                out[i] = [index.search(q, 2)[0] for q in qs] + [index.search(q, 1)[0]
                                                                for q in qs]
                seen[i] = nb.SEARCH_MEMO.enabled
        else:
            out[i] = [index.search(q, 2)[0] for q in qs]
            seen[i] = nb.SEARCH_MEMO.enabled

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {0: False, 1: True, 2: False, 3: True}
    assert not nb.SEARCH_MEMO.enabled
    for res in out.values():
        for j, ids in enumerate(res[:6]):
            np.testing.assert_array_equal(ids, alone[j])
        for j, ids in enumerate(res[6:]):
            np.testing.assert_array_equal(ids, alone[j][:, :1])


@pytest.mark.parametrize("k", [1, 2, 5])
def test_torch_search_path_finds_the_numpy_winners(monkeypatch, k):
    """The GPU path (:meth:`NeighborIndex._top_k_torch`, taken where ``_search_device`` names
    a torch device: ``cuda`` under ``BENCH_NUMERIC=native``) run here with torch on the CPU:
    on tie-free data it returns the NumPy search's ids and float64 distances, across several
    of its tiles, and the search memo keeps the two paths apart."""
    import bench.neighbors as nb

    rng = np.random.default_rng(k)
    v = rng.normal(size=(3000, 20))
    q = v[rng.integers(0, 3000, 9000)] + rng.normal(scale=0.3, size=(9000, 20))
    ref_ids, ref_d = NeighborIndex(v).search(q, k)
    monkeypatch.setattr(nb, "TORCH_TILE", 4000)  # three products, the last one partial
    monkeypatch.setattr(nb, "_search_device", lambda: "cpu")
    index = NeighborIndex(v)
    calls = []
    real = index._top_k_torch
    monkeypatch.setattr(index, "_top_k_torch", lambda *a: calls.append(a[2]) or real(*a))
    ids, d = index.search(q, k)
    assert calls == ["cpu"]
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_array_equal(d, ref_d)
    assert NeighborIndex(v)._memo_key(q, [(0, 3000)], "cuda") \
        != NeighborIndex(v)._memo_key(q, [(0, 3000)])


def test_search_stays_on_numpy_in_the_pinned_environment(monkeypatch):
    """Pinned (the default): no torch device, whatever the machine has."""
    import bench.neighbors as nb
    from bench import numeric

    monkeypatch.setenv("BENCH_NUMERIC", "pinned")
    assert numeric.torch_device() == "cpu" and nb._search_device() is None
