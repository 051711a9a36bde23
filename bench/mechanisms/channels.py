"""Exact channels P(o | w): a selection mechanism's output distribution, in a form the informed
adversary reads without materialising a (candidates × |W|) matrix.

A mechanism that knows its own output distribution returns one of these from
:meth:`bench.mechanisms.base.Mechanism.channel` (or a plain array / sparse matrix, which
:func:`as_channel` wraps); the informed adversary (:mod:`bench.attacks.informed`) then inverts
it by Bayes' rule instead of estimating it by sampling.

Every channel is written as P(o|w) = f_w + a_w(o) over candidate input words ``cand`` and every
output o ∈ W: a floor f_w common to every output and an excess a_w(o) that may be sparse
(TEM: non-zero only inside the truncation radius γ; CusText: only inside the K-word set).

* :class:`ExpChannel` -- P(o|w) ∝ exp(−ε/2·min(d(w, o), γ)): TEM (Carvalho et al. 2021,
  Sec. 4.2) and SanText (γ = ∞, Yue et al. 2021, Eq. 2);
* :class:`TableChannel` -- floor + a sparse table: CusText's K-word tables (Chen et al. 2023,
  Alg. 1), a plugin's sparse matrix, and the adversary's sampled estimate;
* :class:`DenseChannel` -- a dense ``(len(cand), |W|)`` probability matrix (small vocabularies).

Example:
    >>> ch = mech.channel(np.arange(100))          # a fitted TEM: an ExpChannel
    >>> ch.likelihood(np.array([0, 5]))            # P(o | w) for o ∈ {0, 5}, (2, 100)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse

TILE = 128  # query words per distance tile: a (128 × |W|) float64 block is 51 MB at 50,000
SPARSE_MAX = 0.05  # a tile takes the sparse path when at most this fraction is inside γ


class Channel:
    """P(o | w) for candidate originals ``cand`` (vocabulary ids) and every output o ∈ W.

    Subclasses set ``floor`` and implement :meth:`excess`; ``kind`` is ``"exact"`` (the
    mechanism's own distribution) or ``"sampled"`` (an estimate).

    Attributes:
        cand: sorted vocabulary ids of the candidate originals.
        floor: ``(len(cand),)``: P(o | w) for an output outside w's excess support.
        n_vocab: |W|.
    """

    kind = ""

    def __init__(self, cand: np.ndarray, n_vocab: int) -> None:
        self.cand = np.asarray(cand, dtype=np.int64)
        self.n_vocab = int(n_vocab)
        self.floor = np.zeros(len(self.cand))
        self.seconds = 0.0

    def excess(self, outputs: np.ndarray):
        """The excess a_w(o) for a tile of output ids.

        Returns ``("dense", A)`` with ``A`` ``(len(outputs), len(cand))``, or
        ``("sparse", rows, cols, vals)`` (row into ``outputs``, column into ``cand``).
        """
        raise NotImplementedError

    def likelihood(self, outputs: np.ndarray) -> np.ndarray:
        """Dense P(o | w), ``(len(outputs), len(cand))`` (for tests and small vocabularies)."""
        out = np.tile(self.floor, (len(outputs), 1))
        ex = self.excess(np.asarray(outputs, dtype=np.int64))
        if ex[0] == "dense":
            out += ex[1]
        else:
            np.add.at(out, (ex[1], ex[2]), ex[3])
        return out


class ExpChannel(Channel):
    """Exact exponential channel P(o|w) = exp(−k·min(d(w, o), γ)) / Z_w, k = ε/2.

    TEM (Carvalho et al. 2021, Sec. 4.2; γ of Thm. 4.2) and SanText (Yue et al. 2021, Eq. 2:
    γ = ∞). With c = e^{−kγ} the weight splits as c + a_w(o), a_w(o) = e^{−k·d} − c > 0 only
    inside γ, so Z_w = |W|·c + Σ_{d < γ} a_w(o) and the floor is f_w = c / Z_w (the same
    decomposition TEM's sparse sampler uses). Distances are those of the mechanism's own space
    (after the sensitivity transform), a word's distance to itself exactly 0. Each tile of
    query words gets one float32 screening product (:meth:`SelectionMechanism.
    word_sq_distances`); when few pairs are inside γ only those are recomputed exactly in
    float64 (sparse path), otherwise the tile's float64 distances are computed in full (dense
    path). Either way the values are float64-exact.
    """

    kind = "exact"
    path = "auto"  # "sparse" / "dense" force one (tests run both)

    def __init__(self, mech: Any, cand: np.ndarray, gamma: float,
                 state: dict[str, np.ndarray] | None = None) -> None:
        super().__init__(cand, mech.space.shape[0])
        self.mech = mech
        self.space = mech.space
        self.k = mech.epsilon / 2.0
        self.gamma = float(gamma)
        self.c = 0.0 if math.isinf(self.gamma) else math.exp(-self.k * self.gamma)
        self.sq = np.einsum("ij,ij->i", self.space, self.space)
        self.is_cand = np.zeros(self.n_vocab, dtype=bool)
        self.is_cand[self.cand] = True
        self.col_of = np.full(self.n_vocab, -1, dtype=np.int64)
        self.col_of[self.cand] = np.arange(len(self.cand))
        if state is not None:  # restored (channel_state): the regime and Z_w as computed
            self.dense = bool(state["dense"][0])
            self.Z = state["Z"]
            self.floor = state["floor"]
            return
        # the regime is a property of (ε, γ, space): probe one tile of candidates; when most
        # pairs are inside γ (small ε), skip the float32 screen and go dense everywhere
        self.dense = math.isinf(self.gamma)
        if not self.dense and self.path == "auto":
            probe = self.cand[np.linspace(0, len(self.cand) - 1, min(TILE, len(self.cand))
                                          ).astype(np.int64)]
            d2 = mech.word_sq_distances(probe, scale=self.k)
            self.dense = np.count_nonzero(d2 < np.float32((self.k * self.gamma) ** 2)) > \
                2 * SPARSE_MAX * d2.size
        # Z_w over all of W, one tile of candidates at a time (Carvalho et al. 2021, Sec. 4.2)
        self.Z = np.empty(len(self.cand))
        for a in range(0, len(self.cand), TILE):
            q = self.cand[a:a + TILE]
            kind, *rest = self._pairs(q, None)
            if kind == "dense":
                self.Z[a:a + TILE] = self._weights(rest[0]).sum(axis=1)
            else:
                r, _, d = rest
                ex = np.exp(-self.k * d) - self.c
                self.Z[a:a + TILE] = self.n_vocab * self.c + np.bincount(
                    r, weights=np.maximum(ex, 0.0), minlength=len(q))
        self.floor = self.c / self.Z

    def _weights(self, d: np.ndarray) -> np.ndarray:
        return np.exp(-self.k * np.minimum(d, self.gamma))

    def _dense_distances(self, q: np.ndarray, cols: np.ndarray | None) -> np.ndarray:
        v = self.space if cols is None else self.space[cols]
        sv = self.sq if cols is None else self.sq[cols]
        d2 = self.space[q] @ v.T
        d2 *= -2.0
        d2 += self.sq[q][:, None]
        d2 += sv[None, :]
        np.maximum(d2, 0.0, out=d2)
        # a word's distance to itself is exactly 0 (the mechanism's sampler does the same)
        if cols is None:
            d2[np.arange(len(q)), q] = 0.0
        else:
            r = np.flatnonzero(self.col_of[q] >= 0)
            d2[r, self.col_of[q[r]]] = 0.0
        return np.sqrt(d2, out=d2)

    def _pairs(self, q: np.ndarray, cols: np.ndarray | None):
        """Distances from query words ``q`` to ``cols`` (None: all of W), sparse or dense."""
        if self.path == "dense" or (self.dense and self.path == "auto"):
            return "dense", self._dense_distances(q, cols)
        d2 = self.mech.word_sq_distances(q, scale=self.k)  # float32 k²·d², (len(q), |W|)
        cut = (self.k * self.gamma) ** 2
        # float32 rounding is ~1e−7 of k²(‖q‖² + ‖v‖²): screen with a generous margin, then
        # decide on the exact float64 distance
        tol = 1e-5 * self.k ** 2 * (self.sq[q].max() + self.sq.max()) + 1e-6 * cut
        mask = d2 < np.float32(cut + tol)
        if cols is not None:
            mask &= self.is_cand[None, :]
        n_in = np.count_nonzero(mask)
        if self.path == "auto" and n_in > SPARSE_MAX * mask.size:
            return "dense", self._dense_distances(q, cols)
        r, c = np.divmod(np.flatnonzero(mask), self.n_vocab)
        d = np.linalg.norm(self.space[q[r]] - self.space[c], axis=1)
        d[q[r] == c] = 0.0
        inside = d < self.gamma
        r, c, d = r[inside], c[inside], d[inside]
        if cols is not None:
            c = self.col_of[c]
        return "sparse", r, c, d

    def excess(self, outputs: np.ndarray):
        """See :meth:`Channel.excess`."""
        kind, *rest = self._pairs(outputs, self.cand)
        if kind == "dense":
            a = self._weights(rest[0])
            a -= self.c
            np.maximum(a, 0.0, out=a)
            a /= self.Z[None, :]
            return "dense", a
        r, c, d = rest
        return "sparse", r, c, np.maximum(np.exp(-self.k * d) - self.c, 0.0) / self.Z[c]


class TableChannel(Channel):
    """P(o|w) from a sparse table ``T`` (candidates × W): ``floor + T[w, o]``.

    Exact for CusText (the mechanism's own K-word output tables, Chen et al. 2023, Alg. 1;
    floor 0, :meth:`bench.mechanisms.custext.CusText.channel`) and for a mechanism whose
    :meth:`~bench.mechanisms.base.Mechanism.channel` returns a sparse matrix (floor 0).
    Estimated where the informed adversary samples (``kind="sampled"``): ``n_samples`` draws
    per candidate through the privatizer, counts K[w, o], P̂(o|w) = (K[w, o] + α)/(n + α|W|)
    with α = ``smoothing``/|W| (add-α smoothing whose total pseudo-count is ``smoothing``, so
    an output never drawn from w keeps a small, non-zero likelihood).
    """

    def __init__(self, cand: np.ndarray, n_vocab: int, table: sparse.spmatrix,
                 floor: np.ndarray | float, kind: str) -> None:
        super().__init__(cand, n_vocab)
        self.kind = kind
        self.table = sparse.csc_matrix(table)
        self.floor = np.broadcast_to(np.asarray(floor, dtype=np.float64),
                                     (len(self.cand),)).copy()

    def excess(self, outputs: np.ndarray):
        """See :meth:`Channel.excess` (always sparse)."""
        sub = self.table[:, outputs].tocoo()  # (C, t)
        return "sparse", sub.col.astype(np.int64), sub.row.astype(np.int64), sub.data.astype(
            np.float64)



class DenseChannel(Channel):
    """P(o|w) given as a dense ``(len(cand), |W|)`` matrix ``P`` (floor 0, excess = ``P``).

    What :func:`as_channel` makes of a mechanism's :meth:`~bench.mechanisms.base.Mechanism.
    channel` returned as a NumPy array; it holds len(cand)·|W| float64 values, so it suits small
    vocabularies (a sparse matrix or a :class:`Channel` scales further).
    """

    kind = "exact"

    def __init__(self, cand: np.ndarray, probs: np.ndarray) -> None:
        super().__init__(cand, probs.shape[1])
        self.probs = probs

    def excess(self, outputs: np.ndarray):
        """See :meth:`Channel.excess` (always dense)."""
        return "dense", np.ascontiguousarray(self.probs[:, outputs].T)


def as_channel(value: Any, cand: np.ndarray, n_vocab: int, who: str = "mechanism"
               ) -> Channel | None:
    """A :class:`Channel` from what :meth:`bench.mechanisms.base.Mechanism.channel` returned.

    Args:
        value: ``None``/``NotImplemented`` (no closed form), a :class:`Channel`, a dense array
            or a ``scipy.sparse`` matrix of shape ``(len(cand), n_vocab)`` whose row i is
            P(· | cand[i]).
        cand: the input word ids the channel was asked for.
        n_vocab: |W|.
        who: how an error names the mechanism.

    Raises:
        ValueError: wrong shape, a negative or non-finite entry, or a row that does not sum
            to 1 (within 1e−6).
    """
    if value is None or value is NotImplemented:
        return None
    if isinstance(value, Channel):
        if not np.array_equal(value.cand, cand) or value.n_vocab != n_vocab:
            raise ValueError(f"{who}: channel() returned a channel over other words than asked")
        return value
    is_sparse = sparse.issparse(value)
    mat = sparse.csr_matrix(value, dtype=np.float64) if is_sparse else np.asarray(
        value, dtype=np.float64)
    if mat.shape != (len(cand), n_vocab):
        raise ValueError(f"{who}: channel() must return shape (len(words), |W|) = "
                         f"{(len(cand), n_vocab)}, got {mat.shape}")
    if is_sparse:
        mat.sum_duplicates()
    vals = mat.data if is_sparse else mat
    if not np.all(np.isfinite(vals)) or np.any(vals < 0):
        raise ValueError(f"{who}: channel() returned a negative or non-finite probability")
    sums = np.asarray(mat.sum(axis=1)).ravel()
    if len(sums) and np.abs(sums - 1.0).max() > 1e-6:
        raise ValueError(f"{who}: channel() rows must sum to 1 (P(· | w) over the vocabulary); "
                         f"a row sums to {sums[np.argmax(np.abs(sums - 1.0))]:.6g}")
    if is_sparse:
        return TableChannel(cand, n_vocab, mat, 0.0, "exact")
    return DenseChannel(cand, mat)


# --------------------------------------------------------------------------------------------
# A channel as arrays and back (the channel cache: bench.results.channels)
# --------------------------------------------------------------------------------------------

def channel_state(ch: Channel) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """A built-in channel as named arrays and a JSON-able record, from which
    :func:`restore_channel` rebuilds it bit for bit without recomputing it; None for any other
    :class:`Channel` (a plugin's own class: it is not cached).

    Kept: :class:`ExpChannel` its regime (dense or not) and Z_w and f_w (what costs a
    candidates × |W| pass; the excess is computed per output, as before);
    :class:`TableChannel` its sparse table exactly as stored (data, indices and pointers in
    their order) and floor; :class:`DenseChannel` its matrix."""
    t = type(ch)
    if t is ExpChannel:
        return ({"cand": ch.cand, "Z": ch.Z, "floor": ch.floor,
                 "gamma": np.array([ch.gamma]), "dense": np.array([bool(ch.dense)])},
                {"type": "exp"})
    if t is TableChannel:
        tab = ch.table
        return ({"cand": ch.cand, "data": tab.data, "indices": tab.indices,
                 "indptr": tab.indptr, "shape": np.array(tab.shape, dtype=np.int64),
                 "floor": ch.floor}, {"type": "table", "kind": ch.kind})
    if t is DenseChannel:
        return {"cand": ch.cand, "probs": ch.probs}, {"type": "dense"}
    return None


def restore_channel(arrays: dict[str, np.ndarray], record: dict[str, Any], mech: Any,
                    n_vocab: int) -> Channel:
    """The channel :func:`channel_state` described, over mechanism ``mech`` (an
    :class:`ExpChannel` computes its excess with it).

    Raises:
        ValueError: an unknown type, or arrays that do not fit the vocabulary.
    """
    kind = record.get("type")
    cand = np.asarray(arrays["cand"], dtype=np.int64)
    if kind == "exp":
        if mech.space.shape[0] != n_vocab:
            raise ValueError("channel cache: the mechanism's vocabulary is not the channel's")
        ch: Channel = ExpChannel(mech, cand, float(arrays["gamma"][0]), state=arrays)
    elif kind == "table":
        shape = tuple(int(x) for x in arrays["shape"])
        if shape != (len(cand), n_vocab):
            raise ValueError(f"channel cache: table of shape {shape}, expected "
                             f"{(len(cand), n_vocab)}")
        table = sparse.csc_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                                  shape=shape)
        ch = TableChannel(cand, n_vocab, table, arrays["floor"], str(record.get("kind")))
    elif kind == "dense":
        ch = DenseChannel(cand, arrays["probs"])
    else:
        raise ValueError(f"channel cache: unknown channel type {kind!r}")
    if ch.n_vocab != n_vocab or len(ch.floor) != len(cand):
        raise ValueError("channel cache: the channel does not fit the vocabulary")
    return ch
