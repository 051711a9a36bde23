"""1-Diffractor (``diffractor``; Meisenbacher, Chevli & Matthes 2024): metric DP on the positions
of words in one-dimensional word lists, one independent draw per token occurrence.

Sources. The paper (IWSPA '24, arXiv 2405.01678) describes the mechanism as converting word
embeddings to index-based 1-D lists, adding geometric noise to a word's position and giving
formal ε·d_V-privacy; its body text (section and equation numbers) could not be read where this
module was written, so the algorithm below follows the authors' public code, cited by file:
``Diffractor.py`` at the camera-ready commit c56f560 of github.com/sjmeis/Diffractor (``Lists.
get_lists``, ``Diffractor.rewrite``, ``Diffractor.geometric``, ``Diffractor.
truncated_exponential``) and the package ``dp-diffractor`` 0.2.1 (``diffractor/utils.py``
``create_sorted_list``, ``diffractor/core.py`` ``apply_privacy_mechanism`` and
``_pick_final_word``). The two agree on everything used here. The guarantee over several
lists is derived in :class:`Diffractor`'s docstring.

Example:
    >>> mech = MECHANISMS.create("diffractor", epsilon=1.0, rng=0).fit(space)
    >>> mech.sample(np.array([3, 3, 7]))
"""

from __future__ import annotations

import hashlib
import logging
import math
from typing import Any

import numpy as np
from scipy import sparse

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS, SelectionMechanism, data_dependent
from bench.mechanisms.channels import Channel, TableChannel
from bench.neighbors import NeighborIndex

logger = logging.getLogger(__name__)

METHODS = ("geometric", "tem")
LIST_KNN = 128  # nearest words kept per word for the greedy walk (a fallback scan beyond them)
RERANK = 8  # float32 winners of a fallback scan re-ranked on exact float64 distances
TEM_CHUNK = 1 << 21  # tokens × window entries per TEM sampling chunk (bounded memory)
CHANNEL_TINY = 1e-200  # channel entries below this are 0: Bayes' division stays finite
METRIC = ("d(w, w′) = max over the lists of |position of w − position of w′| "
          "(1-Diffractor's 1-D word lists)")


# --------------------------------------------------------------------------------------------
# The lists (fit time, public vocabulary only)
# --------------------------------------------------------------------------------------------

_KNN: dict[str, np.ndarray] = {}  # space digest -> k-NN table (the largest fit cost)
_LISTS: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # (digest, L, seed) -> (order, pos)
_MEMO_SIZE = 4


def _remember(memo: dict, key: Any, value: Any) -> Any:
    while len(memo) >= _MEMO_SIZE:
        memo.pop(next(iter(memo)))
    memo[key] = value
    return value


def space_digest(space: np.ndarray) -> str:
    """sha256 of a vocabulary space (the key of the list memo)."""
    a = np.ascontiguousarray(space, dtype=np.float64)
    return hashlib.sha256(f"{a.shape}".encode() + a.data).hexdigest()


def knn_table(space: np.ndarray, k: int = LIST_KNN) -> np.ndarray:
    """Each word's k + 1 nearest words (itself included), sorted by float64 distance and then
    id (:meth:`bench.neighbors.NeighborIndex.search`; which words make the table is decided on
    float32 scores, so a word tied within float32 rounding with the last one may be left out),
    int32 ``(|W|, k + 1)``."""
    ids, d = NeighborIndex(space).search(space, k=min(k + 1, space.shape[0]))
    return np.take_along_axis(ids, np.lexsort((ids, d), axis=-1), axis=-1).astype(np.int32)


def greedy_list(space: np.ndarray, start: int, knn: np.ndarray | None = None) -> np.ndarray:
    """One 1-D word list: the greedy nearest-neighbour walk from word ``start``.

    The list begins with ``start``; each next word is the nearest (Euclidean, in ``space``)
    word not yet in the list, ties to the lower id (dp-diffractor 0.2.1, ``utils.py``
    ``create_sorted_list``; ``Diffractor.py`` ``generate_with_flat_algo`` at c56f560). The
    authors search approximately (a FAISS IVF index, or the exact 50 nearest with an arbitrary
    remaining word when all 50 are taken); here the search is exact: ``knn`` holds every
    word's nearest words sorted by float64 distance and id (:func:`knn_table`), the first one
    not yet taken is the nearest remaining word, and when all are
    taken one float32 scan over the remaining words (compacted as they are taken) picks
    :data:`RERANK` candidates that are re-ranked on exact float64 distances. Fit time only:
    one step per vocabulary word.

    Returns:
        The word ids in list order, a permutation of ``range(len(space))``.
    """
    x = np.ascontiguousarray(space, dtype=np.float64)
    n = x.shape[0]
    if knn is None:
        knn = knn_table(x)
    aug = np.hstack([x, -0.5 * np.einsum("ij,ij->i", x, x)[:, None]]).astype(np.float32)
    taken = np.zeros(n, dtype=bool)
    order = np.empty(n, dtype=np.int64)
    pool, pool_aug = np.arange(n), aug  # the remaining words plus those taken since compaction
    q = np.ones(x.shape[1] + 1, dtype=np.float32)
    c = int(start)
    for s in range(n):
        order[s] = c
        taken[c] = True
        if s + 1 == n:
            break
        row = knn[c]
        free = ~taken[row]
        k = int(free.argmax())
        if free[k]:
            c = int(row[k])
            continue
        if 8 * (s + 1 - (n - len(pool))) > len(pool):  # over 1/8 of the pool taken
            pool = np.flatnonzero(~taken)
            pool_aug = np.ascontiguousarray(aug[pool])
        q[:-1] = x[c]
        score = np.dot(pool_aug, q)  # x_c·v − ½‖v‖², larger is nearer (np.dot: BLAS gemv)
        score[taken[pool]] = -np.inf
        m = min(RERANK, len(pool))
        top = pool[np.argpartition(-score, m - 1)[:m]] if m < len(pool) else pool
        top = top[~taken[top]]
        d = np.linalg.norm(x[top] - x[c], axis=1)
        c = int(top[np.lexsort((top, d))[0]])
    return order


def build_lists(space: np.ndarray, num_lists: int, list_seed: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """``num_lists`` greedy lists of the vocabulary ``space``, from distinct start words.

    The start words are drawn by ``np.random.default_rng(list_seed)`` without replacement (the
    authors' default "flat" algorithm starts each list at a random word: ``Lists.
    get_starting_idx_fn`` at c56f560), so the lists are a public, seeded function of the
    vocabulary and never touch the mechanism's random stream. Memoised per process (the
    corpus and the attack privatizer of a cell, and cells that differ only in ε, share them).

    Returns:
        ``(order, pos)``, each ``(num_lists, |W|)`` int64: ``order[l, i]`` the word at position
        i of list l, ``pos[l, w]`` the position of word w in list l.
    """
    n = space.shape[0]
    digest = space_digest(space)
    key = (digest, int(num_lists), int(list_seed))
    if key in _LISTS:
        return _LISTS[key]
    knn = _KNN.get(digest)
    if knn is None:
        knn = _remember(_KNN, digest, knn_table(space))
    starts = np.random.default_rng(list_seed).choice(n, size=num_lists,
                                                     replace=num_lists > n)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # the walk's small products: one thread is fastest
        order = np.stack([greedy_list(space, int(s), knn) for s in starts])
    pos = np.empty_like(order)
    rows = np.arange(num_lists)[:, None]
    pos[rows, order] = np.arange(n)[None, :]
    order.flags.writeable = False
    pos.flags.writeable = False
    return _remember(_LISTS, key, (order, pos))


# --------------------------------------------------------------------------------------------
# The 1-D mechanisms on one list of n positions
# --------------------------------------------------------------------------------------------

def geometric_probs(j: np.ndarray, i: np.ndarray, n: int, epsilon: float) -> np.ndarray:
    """P(j | i) of the truncated geometric mechanism on positions 0 … n−1 (broadcast).

    Two-sided geometric noise P(k) = (1−α)/(1+α)·α^|k|, α = e^{−ε} (sensitivity 1), added to
    position i and clamped to [0, n−1] (``Diffractor.geometric`` at c56f560: diffprivlib's
    ``GeometricTruncated(epsilon, lower=0, upper=n−1)``; dp-diffractor 0.2.1: G₁ − G₂ of two
    Geometric(1 − e^{−ε}) draws, clipped). Folding the tails onto the ends gives
    P(0 | i) = α^i/(1+α), P(n−1 | i) = α^{n−1−i}/(1+α) and (1−α)/(1+α)·α^|j−i| between. Each
    ratio P(j | i)/P(j | i′) is at most α^{−|i−i′|}: ε·|i − i′| metric DP.
    """
    a = math.exp(-epsilon)
    k = np.abs(np.asarray(j) - np.asarray(i))
    tail = np.exp(-epsilon * k)
    end = (np.asarray(j) == 0) | (np.asarray(j) == n - 1)
    return np.where(end, tail / (1.0 + a), tail * (-math.expm1(-epsilon) / (1.0 + a)))


def tem_floor(epsilon: float, gamma: int) -> float:
    """c = e^{−εγ/2}: the TEM weight of every position outside the window |j − i| ≤ γ."""
    return math.exp(-epsilon * gamma / 2.0)


def tem_window(i: np.ndarray, n: int, epsilon: float, gamma: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """The TEM window of positions ``i``: ``(j, a)``, each ``(len(i), 2γ−1)``, the positions
    with |j − i| < γ and their excess weight a = e^{−ε|j−i|/2} − c above the floor c
    (0 outside 0 … n−1; positions at |j − i| = γ have no excess)."""
    off = np.arange(-(gamma - 1), gamma)
    j = np.asarray(i)[:, None] + off[None, :]
    a = np.exp(-epsilon / 2.0 * np.abs(off)) - tem_floor(epsilon, gamma)
    return j, np.where((j >= 0) & (j < n), a[None, :], 0.0)


def tem_probs(j: np.ndarray, i: np.ndarray, n: int, epsilon: float, gamma: int) -> np.ndarray:
    """P(j | i) of TEM on positions 0 … n−1 with d = |i − j| (broadcast over j and i ≥ 1-D).

    Carvalho et al. 2021, Alg. 2 with the distance |i − j| and threshold γ
    (``Diffractor.truncated_exponential`` / ``score`` at c56f560, dp-diffractor 0.2.1
    ``apply_privacy_mechanism``: L_i = {j : |i − j| ≤ γ}, scores −|i − j|, ⊥ scoring
    −γ + 2 ln|W∖L_i|/ε, Gumbel(0, 2/ε) noise, ⊥ replaced by a uniform position outside L_i).
    By the Gumbel-max trick P(j | i) = e^{−(ε/2)·min(|i−j|, γ)} / Z_i (Carvalho et al. 2021,
    Sec. 4.2); ε·|i − i′| metric DP (Thm. 4.1).
    """
    c = tem_floor(epsilon, gamma)
    _, a = tem_window(np.atleast_1d(i).ravel(), n, epsilon, gamma)
    z = (n * c + a.sum(axis=1)).reshape(np.shape(i))
    w = np.exp(-epsilon / 2.0 * np.minimum(np.abs(np.asarray(j) - np.asarray(i)), gamma))
    return w / z


# --------------------------------------------------------------------------------------------
# The mechanism
# --------------------------------------------------------------------------------------------

@MECHANISMS.register()
class Diffractor(SelectionMechanism):
    """1-Diffractor (Meisenbacher, Chevli & Matthes 2024; public code, see the module docstring).

    Lists: ``num_lists`` orderings L_1 … L_L of the public vocabulary, each the greedy
    nearest-neighbour walk (:func:`greedy_list`) from a seeded random start word
    (:func:`build_lists`) in the space passed to :meth:`fit`. π_l(w) is the position of w in L_l.

    Per token occurrence (``Diffractor.rewrite`` at c56f560, dp-diffractor 0.2.1 ``rewrite`` /
    ``_pick_final_word``): the word is perturbed in every list — a position j_l drawn from the
    1-D mechanism at π_l(w) (``method``: ``geometric``, the truncated geometric mechanism,
    :func:`geometric_probs`; or ``tem``, the truncated exponential mechanism with window
    ``gamma`` positions, :func:`tem_probs`) and candidate L_l[j_l] — and the output is one
    candidate chosen uniformly at random. The lists' draws are independent, so this equals
    (in distribution) choosing one list l uniformly and perturbing only in it, which is what
    is sampled: P(o | w) = (1/L)·Σ_l P_1D(π_l(o) | π_l(w)).

    Guarantee (derived here; the paper states ε·d_V-privacy for the position distance of a
    list): each 1-D mechanism is ε·|π_l(w) − π_l(w′)| metric DP (:func:`geometric_probs`;
    Carvalho et al. 2021, Thm. 4.1 for TEM), so every term of the mixture obeys
    P_l(o | w) ≤ e^{ε·d_l(w, w′)}·P_l(o | w′) and hence
    P(o | w) ≤ e^{ε·max_l d_l(w, w′)}·P(o | w′): ε·d metric DP with
    d(w, w′) = max_l |π_l(w) − π_l(w′)|, a metric on W (a maximum of metrics, π_l being
    bijections). Releasing all L candidates instead would cost Σ_l d_l (sequential
    composition); one uniform choice costs only the maximum. The lists depend on the public
    vocabulary only, so the guarantee is proven — unless the sensitivity approach was fitted
    on private training data (then the lists, built in its space, depend on it). The metric is
    not the embedding's Euclidean distance, so the record carries no Euclidean multiplier;
    :meth:`pair_distance` gives d for the auditor.

    Input-only rows (``<unk>``) take the positions of their nearest vocabulary word in the
    fitted space (a public choice): P(· | <unk>) = P(· | that word). No input word passes
    through: outputs are always list entries.

    Departures from the authors' setup, by necessity or choice (docs/diffractor.md):
    the lists come from the one embedding of the cell (``glove-6b-50d`` or ``glove-6b-100d``,
    first |W| GloVe rows), not one list per embedding model (the authors' default: five
    300-d/200-d models over their 34,573-word vocabulary); several lists from one embedding
    differ only by their start word (the code's ``num_lists`` per model), so their candidates
    are more alike than lists from different models. The nearest-neighbour walk is exact. Every
    in-vocabulary token is perturbed: the authors keep NLTK stopwords, punctuation and unknown
    tokens unchanged by default (no guarantee for those); here stopwords are perturbed like
    any word and unknown tokens follow the suite's OOV policy.

    Args:
        epsilon: ε > 0 (per token; the position mechanism's sensitivity is 1).
        method: ``"geometric"`` (default, as the authors') or ``"tem"``.
        num_lists: L ≥ 1, the number of lists (default 5, the authors' number of lists).
        gamma: TEM's window in positions, a positive integer (default 5, as the authors');
            only with ``method="tem"``.
        list_seed: seeds the lists' start words (public; default 0).
        rng: NumPy Generator or seed (the per-token draws).
    """

    name = "diffractor"
    version = "1"
    description = ("1-Diffractor: geometric (or TEM) noise on word positions in 1-D lists, one "
                   "of L lists per token")
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, method: str = "geometric", num_lists: int = 5,
                 gamma: int | None = None, list_seed: int = 0, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        if method not in METHODS:
            raise ValueError(f"diffractor: method must be one of {METHODS}, got {method!r}")
        self.method = method
        self.num_lists = _positive_int(num_lists, "num_lists")
        if isinstance(list_seed, bool) or not isinstance(list_seed, (int, np.integer)) \
                or list_seed < 0:
            raise ValueError(f"diffractor: list_seed must be an integer >= 0, got {list_seed!r}")
        self.list_seed = int(list_seed)
        if method == "geometric" and gamma is not None:
            raise ValueError("diffractor: gamma is TEM's window; it applies to method='tem' only")
        self.gamma = _positive_int(5 if gamma is None else gamma, "gamma") \
            if method == "tem" else None
        self.params = {"method": method, "num_lists": self.num_lists,
                       "list_seed": self.list_seed}
        if self.gamma is not None:
            self.params["gamma"] = self.gamma

    def _fit(self) -> None:
        n = self.space.shape[0]
        self.order, self.pos = build_lists(self.space, self.num_lists, self.list_seed)
        anchor = np.empty(self.inputs.shape[0], dtype=np.int64)
        first = n if self.inputs_start_with_vocab else 0
        anchor[:first] = np.arange(first)
        if first < len(anchor):  # input-only rows: their nearest vocabulary word
            anchor[first:] = NeighborIndex(self.space).search(self.inputs[first:], k=1)[0][:, 0]
        self.anchor = anchor

    # -- exact distribution ------------------------------------------------------------------
    def list_probs(self, j: np.ndarray, i: np.ndarray) -> np.ndarray:
        """P_1D(j | i) of the configured 1-D mechanism on one list (broadcast)."""
        n = self.space.shape[0]
        if self.method == "geometric":
            return geometric_probs(j, i, n, self.epsilon)
        return tem_probs(j, i, n, self.epsilon, self.gamma)

    def likelihood(self, outputs: np.ndarray, words: np.ndarray) -> np.ndarray:
        """P(o | w) = (1/L)·Σ_l P_1D(π_l(o) | π_l(w)), ``(len(outputs), len(words))``
        (``words`` are input ids; outputs vocabulary ids)."""
        self._check_fitted()
        a = self.anchor[np.asarray(words, dtype=np.int64)]
        outputs = np.asarray(outputs, dtype=np.int64)
        out = np.zeros((len(outputs), len(a)))
        for l in range(self.num_lists):  # noqa: E741  (the paper's list index)
            out += self.list_probs(self.pos[l, outputs][:, None], self.pos[l, a][None, :])
        return out / self.num_lists

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact output distributions, one row per input id, ``(len(ids), |W|)``."""
        ids = self._lookup(ids)
        return self.likelihood(np.arange(self.space.shape[0]), ids).T

    def channel(self, words: np.ndarray) -> Channel:
        """The exact channel of input words ``words`` (:meth:`Mechanism.channel`).

        ``geometric``: every output has positive probability, so a :class:`ListChannel`
        computes P(o | w) for each tile of outputs on demand (floor 0). ``tem``: floor
        f_w = (1/L)·Σ_l c/Z_l(w) with c = e^{−εγ/2}, plus the sparse excess of each list's
        window, (1/L)·(e^{−ε|j−i|/2} − c)/Z_l(w) for |j − i| < γ, as a
        :class:`~bench.mechanisms.channels.TableChannel`. Entries below
        :data:`CHANNEL_TINY` (1e−200) are set to 0: no draw will ever show such an output
        (its total chance is below |W|·1e−200), and a subnormal likelihood would make the
        informed adversary's 1/N_o overflow (0·∞ = NaN in its posteriors).
        """
        self._check_fitted()
        words = np.asarray(words, dtype=np.int64)
        if self.method == "geometric":
            return ListChannel(self, words)
        n, big_l = self.space.shape[0], self.num_lists
        c = tem_floor(self.epsilon, self.gamma)
        floor = np.zeros(len(words))
        rows, cols, vals = [], [], []
        for l in range(big_l):  # noqa: E741
            i = self.pos[l, self.anchor[words]]
            j, a = tem_window(i, n, self.epsilon, self.gamma)
            z = n * c + a.sum(axis=1)
            floor += c / z / big_l
            v = a / z[:, None] / big_l
            keep = (a > 0) & (v >= CHANNEL_TINY)
            rows.append(np.broadcast_to(np.arange(len(words))[:, None], j.shape)[keep])
            cols.append(self.order[l, j[keep]])
            vals.append(v[keep])
        table = sparse.coo_matrix((np.concatenate(vals), (np.concatenate(rows),
                                                          np.concatenate(cols))),
                                  shape=(len(words), n))
        return TableChannel(words, n, table, np.where(floor >= CHANNEL_TINY, floor, 0.0),
                            "exact")

    def pair_distance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """d(a, b) = max_l |π_l(a) − π_l(b)| for input ids ``a``, ``b`` (the guarantee's metric;
        the auditor's claim is ε·d)."""
        self._check_fitted()
        pa = self.pos[:, self.anchor[np.asarray(a, dtype=np.int64)]]
        pb = self.pos[:, self.anchor[np.asarray(b, dtype=np.int64)]]
        return np.abs(pa - pb).max(axis=0)

    # -- sampling (the hot path) -------------------------------------------------------------
    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One independent draw per occurrence, vectorised over tokens: a uniform list l, then
        the 1-D mechanism at π_l(w), then the word at the drawn position of L_l."""
        ids = self._lookup(ids)
        t = len(ids)
        lst = (self.rng.integers(0, self.num_lists, size=t) if self.num_lists > 1
               else np.zeros(t, dtype=np.int64))
        i = self.pos[lst, self.anchor[ids]]
        j = self._geometric(i) if self.method == "geometric" else self._tem(i)
        return self.order[lst, j]

    def _geometric(self, i: np.ndarray) -> np.ndarray:
        """i + G₁ − G₂ with G ~ Geometric(1 − e^{−ε}) on {1, 2, …}, clamped to [0, n−1]."""
        n = self.space.shape[0]
        p = -math.expm1(-self.epsilon)
        k = self.rng.geometric(p, size=len(i)) - self.rng.geometric(p, size=len(i))
        return np.clip(i + np.clip(k, -n, n), 0, n - 1)

    def _tem(self, i: np.ndarray) -> np.ndarray:
        """Exact TEM draws on positions: weight c + a(j), so with Z = n·c + Σ a a uniform
        u·Z < n·c gives the uniform position ⌊u·Z/c⌋, otherwise the window's inverse CDF
        over a (the decomposition of :meth:`bench.mechanisms.tem.TEM.sample`)."""
        n, g = self.space.shape[0], self.gamma
        c = tem_floor(self.epsilon, g)
        out = np.empty(len(i), dtype=np.int64)
        step = max(1, TEM_CHUNK // (2 * g - 1))
        for s in range(0, len(i), step):  # bounded (tokens × window) temporaries
            ii = i[s:s + step]
            j, a = tem_window(ii, n, self.epsilon, g)
            cs = np.cumsum(a, axis=1)
            u = self.rng.random(len(ii)) * (n * c + cs[:, -1])
            uni = u < n * c
            k = np.minimum((cs <= (u - n * c)[:, None]).sum(axis=1), 2 * g - 2)
            last = 2 * g - 2 - np.argmax(a[:, ::-1] > 0, axis=1)  # rounding: last in range
            inside = j[np.arange(len(ii)), np.minimum(k, last)]
            out[s:s + step] = np.where(uni, np.minimum((u / c if c > 0 else u), n - 1)
                                       .astype(np.int64), inside)
        return out

    # -- description and guarantee -----------------------------------------------------------
    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε·d metric DP with d = max_l |π_l(w) − π_l(w′)| (see the class docstring)."""
        if data_dependent(sensitivity):
            return Guarantee("metric", self.epsilon, metric=METRIC, proven=False,
                             reason="lists built in a space fitted on private training data")
        return Guarantee("metric", self.epsilon, metric=METRIC)


class ListChannel(Channel):
    """The exact channel of ``diffractor`` with ``method="geometric"``: floor 0 and the
    excess P(o | w) = (1/L)·Σ_l P_1D(π_l(o) | π_l(w)) computed densely per tile of outputs
    (:meth:`Diffractor.likelihood`; the truncated geometric gives every output a positive
    probability, so there is no sparse part to store). Computing it draws nothing."""

    kind = "exact"

    def __init__(self, mech: Diffractor, cand: np.ndarray) -> None:
        super().__init__(cand, mech.space.shape[0])
        self.mech = mech

    def excess(self, outputs: np.ndarray):
        """See :meth:`Channel.excess` (always dense; entries below :data:`CHANNEL_TINY` are 0,
        see :meth:`Diffractor.channel`)."""
        p = self.mech.likelihood(outputs, self.cand)
        p[p < CHANNEL_TINY] = 0.0
        return "dense", p


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"diffractor: {what} must be a positive integer, got {value!r}")
    return int(value)
