"""Exact nearest-neighbour search over the public vocabulary by chunked matrix products.

Squared Euclidean distances are computed as ``‖x‖² − 2x·v + ‖v‖²`` one cache-sized tile of
queries at a time (the hot path of every additive mechanism with a mapping), with a fused
arg-min/arg-partition per tile, so memory stays bounded and no Python loop runs per token. The
k winners' distances are then recomputed directly as ``‖x − v‖`` in float64, so the reported
distances carry no cancellation error. Search is exact (every vocabulary row is scored), never
approximate.

Example:
    >>> index = NeighborIndex(vocab_vectors)
    >>> ids, dists = index.search(noisy_vectors, k=2)
"""

from __future__ import annotations

import numpy as np

DEFAULT_TILE = 1024


class NeighborIndex:
    """Exact k-nearest-neighbour index over a fixed set of vectors (the public vocabulary).

    Args:
        vectors: ``(|W|, d)`` array of the vocabulary vectors in the space the noise is added in.
        dtype: dtype of the matrix products (float32 by default: twice the throughput; the
            returned distances are recomputed in float64).
        tile: number of queries per matrix-product tile.
    """

    def __init__(self, vectors: np.ndarray, dtype=np.float32, tile: int = DEFAULT_TILE) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float64)
        self._v = np.ascontiguousarray(self.vectors, dtype=dtype)
        self._vt = np.ascontiguousarray(self._v.T)
        self._sq = np.einsum("ij,ij->i", self._v, self._v)
        self.dtype = dtype
        self.tile = int(tile)

    @property
    def size(self) -> int:
        """Number of indexed vectors."""
        return self.vectors.shape[0]

    def _scores(self, q: np.ndarray) -> np.ndarray:
        # ‖q − v‖² − ‖q‖² = ‖v‖² − 2 q·v : the per-row constant ‖q‖² does not change the ranking.
        s = q @ self._vt
        s *= -2.0
        s += self._sq
        return s

    def search(self, queries: np.ndarray, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest vocabulary rows of each query, nearest first.

        Returns:
            ``(ids, dists)``, each ``(n, k)``; ``dists`` are float64 Euclidean distances.
        """
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float64))
        n = queries.shape[0]
        if not 1 <= k <= self.size:
            raise ValueError(f"k must be in [1, {self.size}], got {k}")
        ids = np.empty((n, k), dtype=np.int64)
        for start in range(0, n, self.tile):
            q = queries[start : start + self.tile].astype(self.dtype, copy=False)
            s = self._scores(q)
            if k == 1:
                ids[start : start + len(q), 0] = np.argmin(s, axis=1)
            else:
                part = np.argpartition(s, k - 1, axis=1)[:, :k]
                order = np.argsort(np.take_along_axis(s, part, axis=1), axis=1, kind="stable")
                ids[start : start + len(q)] = np.take_along_axis(part, order, axis=1)
        dists = np.linalg.norm(queries[:, None, :] - self.vectors[ids], axis=2)
        if k > 1:  # re-sort on the exact float64 distances (ties inside float32 rounding)
            order = np.argsort(dists, axis=1, kind="stable")
            ids = np.take_along_axis(ids, order, axis=1)
            dists = np.take_along_axis(dists, order, axis=1)
        return ids, dists

    def distances(self, queries: np.ndarray) -> np.ndarray:
        """Full ``(n, |W|)`` float64 Euclidean distance matrix (for small n; selection mechanisms)."""
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float64))
        sq = np.einsum("ij,ij->i", queries, queries)[:, None]
        d2 = sq - 2.0 * (queries @ self.vectors.T) + np.einsum("ij,ij->i", self.vectors,
                                                                 self.vectors)[None, :]
        np.maximum(d2, 0.0, out=d2)
        return np.sqrt(d2, out=d2)


def pairwise_extremes(vectors: np.ndarray, tile: int = 2048) -> tuple[float, float]:
    """Exact ``(min, max)`` Euclidean distance over all pairs of distinct rows.

    Every pair is scored once by tiled float64 matrix products (blocks on and above the
    diagonal); the best candidates of each block are then recomputed directly as ``‖x − y‖``, so
    the result carries no cancellation error. Rows that are exact duplicates give a minimum of 0.
    """
    x = np.ascontiguousarray(vectors, dtype=np.float64)
    n = x.shape[0]
    if n < 2:
        raise ValueError("pairwise distances need at least 2 vectors")
    sq = np.einsum("ij,ij->i", x, x)
    best_min2, best_max2 = np.inf, -np.inf
    pair_min = pair_max = (0, 1)
    for i in range(0, n, tile):
        a, sa = x[i : i + tile], sq[i : i + tile]
        for j in range(i, n, tile):
            d2 = a @ x[j : j + tile].T
            d2 *= -2.0
            d2 += sa[:, None]
            d2 += sq[None, j : j + tile]
            if i == j:  # a diagonal block is symmetric: only the self-pairs must go
                np.fill_diagonal(d2, np.inf)
                lo = d2.min()
                np.fill_diagonal(d2, -np.inf)
            else:
                lo = d2.min()
            hi = d2.max()
            if lo < best_min2:
                if i == j:
                    np.fill_diagonal(d2, np.inf)
                r, c = np.unravel_index(int(np.argmin(d2)), d2.shape)
                best_min2, pair_min = lo, (i + r, j + c)
                if i == j:
                    np.fill_diagonal(d2, -np.inf)
            if hi > best_max2:
                r, c = np.unravel_index(int(np.argmax(d2)), d2.shape)
                best_max2, pair_max = hi, (i + r, j + c)
    # float64 products are accurate to ~1e-12·‖x‖²; recompute the two winning pairs directly
    dmin = float(np.linalg.norm(x[pair_min[0]] - x[pair_min[1]]))
    dmax = float(np.linalg.norm(x[pair_max[0]] - x[pair_max[1]]))
    return dmin, dmax
