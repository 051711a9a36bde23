"""Exact nearest-neighbour search over the public vocabulary by chunked matrix products.

Squared Euclidean distances are computed as ``‖x‖² − 2x·v + ‖v‖²`` one tile of queries at a
time (the hot path of every additive mechanism with a mapping), with a fused
arg-min/arg-partition per tile, so memory stays bounded and no Python loop runs per token. For
k ≤ 3 a full tile is scored in vocabulary blocks whose scores stay in cache
(:data:`VOCAB_BLOCK`), bit for bit the scores of the full-width product (checked at run time,
see :meth:`NeighborIndex.blocks`). The k winners' distances are then recomputed directly as
``‖x − v‖`` in float64, so the reported distances carry no cancellation error. Search is exact
(every vocabulary row is scored), never approximate. With ``BENCH_NUMERIC=native`` on a machine
where torch sees a GPU, the scoring products and the top-k run there instead
(:meth:`NeighborIndex._top_k_torch`; never in the pinned environment, whose CPU search is the
reference).

Example:
    >>> index = NeighborIndex(vocab_vectors)
    >>> ids, dists = index.search(noisy_vectors, k=2)
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

DEFAULT_TILE = 256

VOCAB_BLOCK = 1280
"""Vocabulary columns per block of the blocked scoring product (:meth:`NeighborIndex.blocks`).

A full tile's block of scores (256 × 1,280 float32, 1.3 MB) stays in cache, where the
full-width ``tile × |W|`` product (51 MB at |W| = 50,000) goes to memory and back for the
arg-max pass. 1,280 is a multiple of 320, the column panel of OpenBLAS's Haswell sgemm kernel
(the pinned kernels, :mod:`bench.numeric`): the scores at a panel's edges round differently
from the others, so only panel-aligned blocks give every score exactly as the full-width
product does (measured with one BLAS thread; blocks of 1,024 columns differ in ~1.5% of the
scores, which could flip a near-tie). Whether they do is checked at run time."""


TORCH_TILE = 4096
"""Queries per scoring product on a GPU (:meth:`NeighborIndex._top_k_torch`): a 4,096 × 50,000
float32 score matrix is 0.8 GB of GPU memory."""


def _search_device() -> str | None:
    """Where :meth:`NeighborIndex.search` scores the vocabulary: None for NumPy on the CPU (always
    in the pinned numeric environment, whose search is bit-exact on every x86-64 CPU), else the
    torch device, ``cuda`` with ``BENCH_NUMERIC=native`` where torch sees a GPU
    (:func:`bench.numeric.torch_device`)."""
    from bench.numeric import torch_device

    device = torch_device()  # cpu in the pinned environment, without importing torch
    return None if device == "cpu" else device


MEMO_MIN_ROWS = 4096
"""Searches over fewer queries are not memoised (:meth:`NeighborIndex.search`): a corpus's
search is worth keeping, a tile's is not."""


class SearchMemo:
    """The raw winners (before the float64 re-rank) of the last few large searches, per process.

    ``get(key, k)`` returns the first k columns of a stored search with at least k columns, or
    None. Only k ≤ 3 (repeated arg-max passes) is stored: the first k of K passes are the k
    passes themselves, so a stored K-search answers every k ≤ K exactly as a k-search would,
    ties included (lowest column first in both; in the blocked search a block's winners come
    out in pass order, so a word outside a block's first k can only be taken after k of that
    block's others, i.e. never within the first k passes).
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._store: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # a Dask worker may run cells in several threads
        self._local = threading.local()
        self.hits = 0

    @property
    def enabled(self) -> bool:
        """Whether this thread is inside :meth:`active`: the memo is consulted only while a
        corpus is privatized, since the many searches of a sampled channel or of a measure
        would otherwise push a corpus's search out."""
        return getattr(self._local, "depth", 0) > 0

    @contextmanager
    def active(self) -> Iterator[None]:
        """This thread's searches inside the block use the memo (:meth:`NeighborIndex.search`)."""
        self._local.depth = getattr(self._local, "depth", 0) + 1
        try:
            yield
        finally:
            self._local.depth -= 1

    def get(self, key: tuple, k: int) -> np.ndarray | None:
        """The stored winners' first k columns (a copy), or None."""
        with self._lock:
            raw = self._store.get(key)
            if raw is None or raw.shape[1] < k:
                return None
            self._store.move_to_end(key)
            self.hits += 1
            return raw[:, :k].copy()

    def put(self, key: tuple, raw: np.ndarray) -> None:
        """Keep ``raw`` (an (n, k) array of columns) under ``key``, unless more columns are
        already kept; the least recently used entry goes when full."""
        with self._lock:
            old = self._store.get(key)
            if old is None or old.shape[1] < raw.shape[1]:
                self._store[key] = raw.copy()
            self._store.move_to_end(key)
            while len(self._store) > self.size:
                self._store.popitem(last=False)

    def clear(self) -> None:
        """Forget every stored search."""
        with self._lock:
            self._store.clear()
            self.hits = 0


SEARCH_MEMO = SearchMemo()
"""The process's :class:`SearchMemo` (a cell worker keeps it across the cells it runs)."""


class NeighborIndex:
    """Exact k-nearest-neighbour index over a fixed set of vectors (the public vocabulary).

    Ranking uses ``argmax_v (q·v − ½‖v‖²)``, which equals ``argmin_v ‖q − v‖²``; the ``−½‖v‖²``
    column is folded into the matrix (an augmented ``[v, −½‖v‖²]`` against ``[q, 1]``), so one
    float32 matrix product into a reused buffer plus one arg-max pass per tile (for k ≤ 3, per
    vocabulary block of a tile: :meth:`blocks`) does the whole search; every vocabulary row is
    scored (exact search, never approximate). The k winners are re-ranked on exact float64
    distances; which k words win is decided on the float32 scores, so words tied within
    float32 rounding (~1e-6 relative) may be exchanged.

    Args:
        vectors: ``(|W|, d)`` array of the vocabulary vectors in the space the noise is added in.
        tile: number of queries per matrix-product tile (the score buffer is ``tile × |W|``).
    """

    def __init__(self, vectors: np.ndarray, tile: int = DEFAULT_TILE) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float64)
        half_sq = -0.5 * np.einsum("ij,ij->i", self.vectors, self.vectors)
        aug = np.hstack([self.vectors, half_sq[:, None]]).astype(np.float32)
        self._at = np.ascontiguousarray(aug.T)  # (d + 1, |W|): the fast layout for q @ at
        self.tile = int(tile)
        self._buf: np.ndarray | None = None
        self._at_sq: np.ndarray | None = None  # (d + 2, |W|): [v; ‖v‖²; 1], built on first use
        self._block_buf: np.ndarray | None = None
        self._blocks_ok: dict[tuple[int, ...], bool] = {}  # BLAS thread counts -> verdict
        self._vocab_digest: bytes | None = None  # for the search memo, computed on first use
        self._at_torch = None  # self._at on the GPU (:meth:`_top_k_torch`), on first use

    @property
    def size(self) -> int:
        """Number of indexed vectors."""
        return self.vectors.shape[0]

    def scores(self, queries: np.ndarray) -> np.ndarray:
        """``q·v − ½‖v‖²`` for a tile of queries (higher is nearer), in a reused buffer."""
        n = queries.shape[0]
        if self._buf is None or self._buf.shape[0] < n:
            self._buf = np.empty((max(n, self.tile), self.size), dtype=np.float32)
        out = self._buf[:n]
        np.matmul(self._augment(queries), self._at, out=out)
        return out

    def _augment(self, queries: np.ndarray) -> np.ndarray:
        """``[q, 1]`` in float32, the left factor of the scoring product."""
        qa = np.empty((queries.shape[0], self._at.shape[0]), dtype=np.float32)
        qa[:, :-1] = queries
        qa[:, -1] = 1.0
        return qa

    def _block_scores(self, qa: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Scores of the augmented queries ``qa`` against vocabulary columns ``lo:hi``, in a
        reused cache-sized buffer."""
        n, w = qa.shape[0], hi - lo
        if self._block_buf is None or self._block_buf.size < n * w:
            self._block_buf = np.empty(max(n * w, self.tile * 2 * VOCAB_BLOCK), np.float32)
        out = self._block_buf[: n * w].reshape(n, w)
        np.matmul(qa, self._at[:, lo:hi], out=out)
        return out

    def blocks(self) -> list[tuple[int, int]]:
        """The vocabulary column blocks ``[(lo, hi), …]`` a full tile is scored in.

        Blocks of :data:`VOCAB_BLOCK` columns (the last one takes the remainder), used only if
        their products give bit for bit the scores of the full-width product, so that the
        search returns what the full-width search returns, ties included. That depends on the
        BLAS kernels and their thread count, so it is checked once per thread count on a
        seeded random tile (vocabulary rows plus noise): every score of every block compared.
        A BLAS whose rounding depends on the column position differs in thousands of them, so
        a pass is not luck. Otherwise (or with fewer than two blocks) one block of every column:
        the full-width product.
        """
        whole = [(0, self.size)]
        if self.size < 2 * VOCAB_BLOCK:
            return whole
        starts = list(range(0, self.size - VOCAB_BLOCK + 1, VOCAB_BLOCK))
        cut = list(zip(starts, starts[1:] + [self.size]))
        key = _blas_threads()
        if key not in self._blocks_ok:
            self._blocks_ok[key] = self._blocks_agree(cut)
        return cut if self._blocks_ok[key] else whole

    def _blocks_agree(self, cut: list[tuple[int, int]]) -> bool:
        """Whether the products of the blocks ``cut`` equal the full-width product bit for bit
        on a seeded random full tile (see :meth:`blocks`)."""
        rng = np.random.default_rng(0)
        rows = rng.integers(0, self.size, self.tile)
        q = self.vectors[rows] + rng.normal(size=(self.tile, self.vectors.shape[1])) \
            * self.vectors.std(axis=0)
        full = self.scores(q)
        qa = self._augment(q)
        return all(np.array_equal(self._block_scores(qa, lo, hi), full[:, lo:hi])
                   for lo, hi in cut)

    def score_only(self, n: int, blocked: bool) -> None:
        """Compute the scoring product of ``n`` queries and nothing else (``bench perf``'s
        limit): full tiles, in :meth:`blocks` if ``blocked`` else full width."""
        qa = np.ones((self.tile, self._at.shape[0]), dtype=np.float32)
        cut = self.blocks() if blocked else [(0, self.size)]
        for start in range(0, n, self.tile):
            q = qa[: min(self.tile, n - start)]
            for lo, hi in cut:
                if hi - lo == self.size:
                    self.scores(q[:, :-1])
                else:
                    self._block_scores(q, lo, hi)

    def sq_distances(self, queries: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """``scale²·‖q − v‖²`` for a tile of queries, float32, in the reused buffer.

        One matrix product does it: ``[−2s²q, s², s²‖q‖²] · [v; ‖v‖²; 1]`` (s = ``scale``), so
        no element-wise pass is needed to turn scores into squared distances. Rounding is
        float32's on ``s²(‖q‖² + ‖v‖²)``: a relative 1e−7 of that, absolute, so entries near 0
        (a word's distance to itself) can come out slightly negative or positive; callers clip
        and treat the exactly known zero distances themselves.
        """
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float64))
        n, d = queries.shape
        if self._at_sq is None:
            v = self.vectors
            self._at_sq = np.ascontiguousarray(np.vstack(
                [v.T, np.einsum("ij,ij->i", v, v)[None, :], np.ones((1, len(v)))]
            ).astype(np.float32))
        if self._buf is None or self._buf.shape[0] < n:
            self._buf = np.empty((max(n, self.tile), self.size), dtype=np.float32)
        s2 = float(scale) ** 2
        qa = np.empty((n, d + 2), dtype=np.float32)
        qa[:, :d] = -2.0 * s2 * queries
        qa[:, d] = s2
        qa[:, d + 1] = s2 * np.einsum("ij,ij->i", queries, queries)
        out = self._buf[:n]
        np.matmul(qa, self._at_sq, out=out)
        return out

    def search(self, queries: np.ndarray, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The k nearest vocabulary rows of each query, nearest first.

        Inside ``SEARCH_MEMO.active()`` (a corpus's privatization,
        :meth:`bench.privatize.Privatizer.privatize`), a call over at least
        :data:`MEMO_MIN_ROWS` queries keeps its winners (before the float64 re-rank) in
        :data:`SEARCH_MEMO`, keyed by the bytes of the vocabulary and of the
        queries: a later call with the same vectors and a k no larger reuses them instead of
        scoring the vocabulary again (the ``nearest`` and ``vickrey`` cells of one seed search
        the same noisy vectors, :func:`bench.run.runner.plan`). Their first k columns are what a
        search for k would have found, bit for bit (:class:`SearchMemo`).

        Returns:
            ``(ids, dists)``, each ``(n, k)``; ``dists`` are float64 Euclidean distances.
        """
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float64))
        n = queries.shape[0]
        if not 1 <= k <= self.size:
            raise ValueError(f"k must be in [1, {self.size}], got {k}")
        device = _search_device()
        cut = self.blocks() if k <= 3 and n >= 2 * self.tile and device is None \
            else [(0, self.size)]
        key = self._memo_key(queries, cut, device) if SEARCH_MEMO.enabled \
            and n >= MEMO_MIN_ROWS and k <= 3 else None
        raw = SEARCH_MEMO.get(key, k) if key is not None else None
        if raw is None and device is not None:
            raw = self._top_k_torch(queries, k, device)
            if key is not None:
                SEARCH_MEMO.put(key, raw)
        if raw is None:
            raw = np.empty((n, k), dtype=np.int64)
            for start in range(0, n, self.tile):
                q = queries[start : start + self.tile]
                if len(cut) > 1 and len(q) == self.tile:
                    raw[start : start + len(q)] = self._top_k_blocked(q, k, cut)
                elif k <= 3:  # repeated arg-max passes beat a partition for tiny k
                    raw[start : start + len(q)] = top_k_by_argmax(self.scores(q), k)
                else:
                    raw[start : start + len(q)] = top_k_columns(self.scores(q), k)
            if key is not None:
                SEARCH_MEMO.put(key, raw)
        cand = np.empty((n, k), dtype=np.int64)
        dists = np.empty((n, k), dtype=np.float64)
        for start in range(0, n, self.tile):
            q = queries[start : start + self.tile]
            c = raw[start : start + len(q)]
            # exact float64 re-rank of the k winners, one tile at a time (bounded memory)
            d = np.linalg.norm(q[:, None, :] - self.vectors[c], axis=2)
            order = np.argsort(d, axis=1, kind="stable")
            cand[start : start + len(q)] = np.take_along_axis(c, order, axis=1)
            dists[start : start + len(q)] = np.take_along_axis(d, order, axis=1)
        return cand, dists

    def _memo_key(self, queries: np.ndarray, cut: list[tuple[int, int]],
                  device: str | None = None) -> tuple:
        """What a search's raw winners depend on: the vocabulary, the queries, the tile, the
        scoring blocks and the device (digests of the float64 bytes, so equal keys mean equal
        inputs)."""
        if self._vocab_digest is None:
            self._vocab_digest = hashlib.blake2b(self.vectors.tobytes(), digest_size=16).digest()
        q = hashlib.blake2b(np.ascontiguousarray(queries).tobytes(), digest_size=16).digest()
        return (self._vocab_digest, q, queries.shape, self.tile, tuple(cut), device)

    def _top_k_torch(self, queries: np.ndarray, k: int, device: str) -> np.ndarray:
        """The raw k winners of :meth:`search` computed with torch on ``device`` (a GPU:
        :func:`_search_device`): the same float32 scores ``[q, 1]·[v, −½‖v‖²]`` against every
        vocabulary row, :data:`TORCH_TILE` queries per product, ``torch.topk`` per row. Exact
        search as on the CPU; only the order among words tied in float32 may differ (the
        float64 re-rank in :meth:`search` follows)."""
        import torch

        if self._at_torch is None or str(self._at_torch.device) != str(torch.device(device)):
            self._at_torch = torch.as_tensor(self._at, device=device)
        n = queries.shape[0]
        raw = np.empty((n, k), dtype=np.int64)
        with torch.no_grad():
            for start in range(0, n, TORCH_TILE):
                qa = torch.as_tensor(self._augment(queries[start : start + TORCH_TILE]),
                                     device=device)
                top = torch.topk(qa @ self._at_torch, k, dim=1, largest=True, sorted=True)
                raw[start : start + len(qa)] = top.indices.cpu().numpy()
        return raw

    def _top_k_blocked(self, q: np.ndarray, k: int, cut: list[tuple[int, int]]) -> np.ndarray:
        """:func:`top_k_by_argmax` of the full-width scores, computed block by block.

        Each block's k winners by arg-max passes, then k arg-max passes over the candidates
        (block by block, each block's in its own order). Among equal scores that order is
        column order (a block's winners come out lowest column first, and blocks are in
        column order), so the lowest column wins a tie, as in the full-width passes.
        """
        n = len(q)
        qa = self._augment(q)
        rows = np.arange(n)
        cols = np.empty((len(cut) * k, n), dtype=np.int64)
        vals = np.empty((len(cut) * k, n), dtype=np.float32)
        for j, (lo, hi) in enumerate(cut):
            s = self._block_scores(qa, lo, hi)
            for r in range(k):
                c = np.argmax(s, axis=1)
                vals[j * k + r] = s[rows, c]
                np.add(c, lo, out=cols[j * k + r])
                if r + 1 < k:
                    s[rows, c] = -np.inf
        return top_k_by_argmax(vals.T, k, cols.T)

    def distances(self, queries: np.ndarray) -> np.ndarray:
        """Full ``(n, |W|)`` float64 Euclidean distance matrix.

        For small n (selection mechanisms).
        """
        queries = np.atleast_2d(np.asarray(queries, dtype=np.float64))
        sq = np.einsum("ij,ij->i", queries, queries)[:, None]
        d2 = sq - 2.0 * (queries @ self.vectors.T) + np.einsum("ij,ij->i", self.vectors,
                                                                 self.vectors)[None, :]
        np.maximum(d2, 0.0, out=d2)
        return np.sqrt(d2, out=d2)


def top_k_by_argmax(s: np.ndarray, k: int, labels: np.ndarray | None = None) -> np.ndarray:
    """The k largest entries of each row of ``s``, largest first, by k arg-max passes.

    Each pass takes the first (lowest-column) maximum and masks it with ``−inf`` for the next,
    so ties go to the lowest column. Returns their columns, or ``labels`` at those positions.
    ``s`` is overwritten.
    """
    rows = np.arange(s.shape[0])
    c = np.empty((s.shape[0], k), dtype=np.int64)
    for j in range(k):
        c[:, j] = np.argmax(s, axis=1)
        if j + 1 < k:
            s[rows, c[:, j]] = -np.inf
    return c if labels is None else np.take_along_axis(labels, c, axis=1)


def _blas_threads() -> tuple[int, ...]:
    """The thread counts of the BLAS libraries loaded (the scores' rounding may depend on
    them: OpenBLAS splits a product's columns between its threads)."""
    return tuple(lib.get_num_threads() for lib in _thread_controller().lib_controllers
                 if lib.user_api == "blas")


@lru_cache(maxsize=1)
def _thread_controller():
    """threadpoolctl's view of the thread pools loaded (NumPy's BLAS is, once NumPy is)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


TOPK_BLOCK = 16


def top_k_columns(s: np.ndarray, k: int, block: int = TOPK_BLOCK) -> np.ndarray:
    """Column indices of the k largest entries of each row of ``s`` (in no particular order).

    Exact, by block maxima: cut each row into blocks of ``block`` columns; the k largest
    entries all lie in the k blocks with the largest maxima (if an entry's block is not among
    them, k other blocks each hold a larger-or-equal entry, so it is not in the top k, up to
    ties). So one max-reduction pass over the row, an arg-partition of its block maxima and
    one of the k·``block`` surviving entries replace an arg-partition of the whole row
    (~5x faster at |W| = 50,000, k = 64). Ties at the k-th value are broken arbitrarily, as
    ``np.argpartition`` does.
    """
    n, m = s.shape
    nb = m // block
    if nb <= k:  # too few blocks to prune anything
        return np.argpartition(-s, k - 1, axis=1)[:, :k]
    full = nb * block
    # block j = columns j, j + nb, j + 2nb, …: the max runs over the outer axis with the inner
    # one contiguous (vectorised), much faster than a max over short contiguous blocks
    bmax = s[:, :full].reshape(n, block, nb).max(axis=1)
    top_blocks = np.argpartition(bmax, nb - k, axis=1)[:, nb - k:]  # (n, k), unordered
    cols = (top_blocks[:, :, None] + nb * np.arange(block)).reshape(n, k * block)
    if full < m:  # the ragged tail is always a candidate
        cols = np.hstack([cols, np.broadcast_to(np.arange(full, m), (n, m - full))])
    vals = np.take_along_axis(s, cols, axis=1)
    best = np.argpartition(vals, vals.shape[1] - k, axis=1)[:, vals.shape[1] - k:]
    return np.take_along_axis(cols, best, axis=1)


def max_pairwise_distance(vectors: np.ndarray, tile: int = 2048) -> float:
    """Exact maximum Euclidean distance over all pairs of rows (Δmax of Riecker 2023, Alg. 1).

    Pruned by norms: with x₀ the longest row, b = max_j ‖x₀ − x_j‖ is a lower bound, and a pair
    can exceed it only if ‖x_i‖ + ‖x_j‖ ≥ b, so both rows have norm ≥ b − ‖x₀‖. The maximum over
    that subset is then computed exactly by tiled float64 products, and the winning pair's
    distance is recomputed directly as ‖x − y‖.
    """
    x = np.ascontiguousarray(vectors, dtype=np.float64)
    if x.shape[0] < 2:
        raise ValueError("pairwise distances need at least 2 vectors")
    norms = np.linalg.norm(x, axis=1)
    top = int(np.argmax(norms))
    best = float(np.linalg.norm(x - x[top], axis=1).max())
    # slack for the float64 products below (relative error ~1e-15·‖x‖²)
    keep = np.nonzero(norms >= best - norms[top] - 1e-9 * (1.0 + norms[top]))[0]
    s = x[keep]
    sq = np.einsum("ij,ij->i", s, s)
    best2, pair = -np.inf, (0, 0)
    for i in range(0, len(s), tile):
        d2 = s[i : i + tile] @ s.T
        d2 *= -2.0
        d2 += sq[i : i + tile, None]
        d2 += sq[None, :]
        hi = float(d2.max())
        if hi > best2:
            r, c = np.unravel_index(int(np.argmax(d2)), d2.shape)
            best2, pair = hi, (i + r, c)
    return max(best, float(np.linalg.norm(s[pair[0]] - s[pair[1]])))
