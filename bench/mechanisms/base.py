"""The Mechanism interface shared by every word-level mechanism, and its validation helpers.

A mechanism is constructed with keyword-only ``epsilon``, its own parameters and a NumPy
``Generator`` (or an int seed); ``fit(space)`` receives the public vocabulary's vectors in the
transformed space (after the sensitivity approach) so statistics are computed once; then

- additive mechanisms (``kind = "additive"``): ``perturb(ids) -> vectors``, one independent
  noise draw per token occurrence;
- selection mechanisms (``kind = "selection"``): ``sample(ids) -> ids`` of output words, and
  optionally ``channel(words)``, their exact output distribution (the informed adversary
  inverts it instead of sampling; :mod:`bench.mechanisms.channels`).

Input ids index ``input_vectors`` (the vocabulary rows, plus extra input-only rows such as
``<unk>``); output ids index the vocabulary.

Example:
    >>> mech = MECHANISMS.get("mvl")(epsilon=10.0, rng=0).fit(space)
    >>> noisy = mech.perturb(np.array([0, 0, 5]))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.departures import shared_noise
from bench.registry import Registry

MECHANISMS: Registry = Registry("mechanism")


def check_epsilon(epsilon: Any, name: str) -> float:
    """Validate ε: a finite real number > 0."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating, np.integer)):
        raise ValueError(f"{name}: epsilon must be a number > 0, got {epsilon!r}")
    eps = float(epsilon)
    if math.isnan(eps) or math.isinf(eps) or eps <= 0:
        raise ValueError(f"{name}: epsilon must be a finite number > 0, got {epsilon!r}")
    return eps


def check_delta(delta: Any, name: str) -> float:
    """Validate δ ∈ (0, 1)."""
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: delta must be a number in (0, 1), got {delta!r}") from None
    if math.isnan(d) or not 0.0 < d < 1.0:
        raise ValueError(f"{name}: delta must be in (0, 1), got {delta!r}")
    return d


def check_positive(value: Any, what: str, name: str) -> float:
    """Validate a finite real parameter > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: {what} must be a number > 0, got {value!r}") from None
    if math.isnan(v) or math.isinf(v) or v <= 0:
        raise ValueError(f"{name}: {what} must be a finite number > 0, got {value!r}")
    return v


def as_generator(rng: Any) -> np.random.Generator:
    """A NumPy Generator from a Generator, an int seed or None."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise ValueError(f"rng must be a numpy Generator, an int seed or None, got {rng!r}")


def sensitivity_multiplier(sensitivity) -> tuple[float, float, bool, str]:
    """(multiplier, δ, proven, reason) that a metric-DP guarantee inherits from a transform f.

    Metric DP computed in the transformed space composes to the original embedding space with
    the Lipschitz bound Δ_f of f (Riecker 2023, Eq. 5.1): ε·d(f(x), f(y)) ≤ ε·Δ_f·d(x, y). The
    identity (``none``) has Δ_f = 1 (the thesis' "Δ = ∞" in Table 5.2 refers to the unbounded
    embedding space, not to this ratio).
    """
    if sensitivity is None or sensitivity.name == "none":
        return 1.0, 0.0, True, ""
    return (float(sensitivity.bound), float(getattr(sensitivity, "delta", 0.0)),
            bool(sensitivity.proven), str(getattr(sensitivity, "reason", "")))


def data_dependent(sensitivity) -> bool:
    """Whether the sensitivity approach was fitted on (private) training data."""
    params = getattr(sensitivity, "params", None) or {}
    return params.get("fit_on") == "train"


def metric_guarantee(epsilon: float, sensitivity, *, scale: float = 1.0, calibrated: bool = False,
                     metric: str = "euclidean (original embedding space)", proven: bool = True,
                     reason: str = "") -> Guarantee:
    """The ε·d metric-DP guarantee of a mechanism run after the sensitivity approach.

    The multiplier is the approach's Lipschitz bound Δ_f (Riecker 2023, Eq. 5.1; 1 when the
    noise was ``calibrated`` to it) times ``scale`` (a mechanism's own metric-to-Euclidean
    factor, e.g. Mahalanobis' κ); δ is the approach's. Not proven when the approach's bound is
    estimated, when its statistics were fitted on private training data, or when the mechanism
    says so (``proven=False`` with its ``reason``).
    """
    mult, delta, s_proven, s_reason = sensitivity_multiplier(sensitivity)
    if calibrated:
        mult = 1.0
    if data_dependent(sensitivity):
        s_proven = False
        s_reason = s_reason or "sensitivity statistics fitted on private training data"
    why = "; ".join(r for r in (reason, s_reason) if r)
    return Guarantee("metric", epsilon, multiplier=mult * scale, delta=delta, metric=metric,
                     proven=proven and s_proven, reason=why)


class Mechanism:
    """Base class of all mechanisms (see the module docstring)."""

    name: str = ""
    kind: str = ""  # "additive" or "selection"
    description: str = ""
    guarantee_kind: str = ""  # "pure", "approx" or "metric"
    version: str = "1"

    def __init__(self, *, epsilon: float, rng: Any = None) -> None:
        self.epsilon = check_epsilon(epsilon, self.name)
        self.rng = as_generator(rng)
        self.space: np.ndarray | None = None
        self.inputs: np.ndarray | None = None
        self.params: dict = {}

    # -- fitting ---------------------------------------------------------------------------
    def fit(self, space: np.ndarray, input_vectors: np.ndarray | None = None) -> Mechanism:
        """Receive the public vocabulary in the transformed space (and the input-id table)."""
        space = np.ascontiguousarray(space, dtype=np.float64)
        if space.ndim != 2 or space.shape[0] < 2:
            raise ValueError(f"{self.name}: the vocabulary space must be (|W| >= 2, d)")
        self.space = space
        self.inputs = space if input_vectors is None else np.asarray(input_vectors, np.float64)
        if self.inputs.shape[1] != space.shape[1]:
            raise ValueError(f"{self.name}: input vectors and vocabulary differ in dimension")
        # input id i < |W| is vocabulary word i (the privatizer's layout: vocabulary + <unk>)
        self.inputs_start_with_vocab = (
            self.inputs is space or np.array_equal(self.inputs[: len(space)], space))
        self._fit()
        return self

    def _fit(self) -> None:  # statistics computed once per vocabulary
        pass

    def _check_fitted(self) -> None:
        if self.space is None:
            raise RuntimeError(f"{self.name}: call fit(space) first")

    def _lookup(self, ids: np.ndarray) -> np.ndarray:
        self._check_fitted()
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.inputs.shape[0]):
            raise ValueError(f"{self.name}: input ids out of range [0, {self.inputs.shape[0]})")
        return ids

    # -- exact channel (optional) ----------------------------------------------------------
    def channel(self, words: np.ndarray) -> Any:
        """The exact output distribution P(o | w) of input words ``words`` over the vocabulary.

        Optional: a selection mechanism with a closed-form output distribution overrides this,
        and the informed adversary (:mod:`bench.attacks.informed`, docs/informed.md) then
        inverts it exactly instead of estimating it by sampling the mechanism. ``words`` are
        sorted input ids below |W| (vocabulary words), up to several thousand of them.

        Returns:
            ``None`` here (no closed form: the adversary samples). An override returns row i =
            P(· | words[i]) over the |W| outputs as a dense array ``(len(words), |W|)`` (small
            vocabularies), a ``scipy.sparse`` matrix of that shape, or a
            :class:`bench.mechanisms.channels.Channel` (floor + sparse excess, for large
            vocabularies: :class:`~bench.mechanisms.channels.ExpChannel`); ``None`` or
            ``NotImplemented`` when this configuration has no closed form.
        """
        return None

    @classmethod
    def has_channel(cls) -> bool:
        """Whether the mechanism provides an exact :meth:`channel` over output words (a
        selection mechanism that overrides it; an additive mechanism's output words depend on
        the mapping, so its channel is never the mechanism's alone)."""
        return cls.kind == "selection" and cls.channel is not Mechanism.channel

    # -- guarantee -------------------------------------------------------------------------
    def guarantee(self, sensitivity=None) -> Guarantee:
        """The per-token guarantee with the given sensitivity approach."""
        raise NotImplementedError

    def describe(self) -> dict:
        """JSON-serialisable description: name, version, ε and parameters."""
        return {"name": self.name, "version": self.version, "epsilon": self.epsilon,
                **self.params}


class AdditiveMechanism(Mechanism):
    """A mechanism that adds noise to the (transformed) embedding of each token."""

    kind = "additive"

    def noise(self, n: int) -> np.ndarray:
        """``n`` independent noise vectors, shape ``(n, d)``."""
        raise NotImplementedError

    def prepare(self, x: np.ndarray) -> np.ndarray:
        """Pre-noise step on the input vectors (identity; clipping for canonical DP)."""
        return x

    noise_shared: str = "token"
    """``token``: one independent noise draw per token occurrence (the rule); ``batch``: one
    draw per batch of sentences, a departure of the public code of Huang et al. (2024) that a
    mechanism offers only as a named option (:mod:`bench.mechanisms.departures`)."""

    def perturb(self, ids: np.ndarray, batches: np.ndarray | None = None) -> np.ndarray:
        """Noisy vectors, one independent noise draw per token occurrence.

        ``batches`` (per-token batch index) matters only with ``noise_shared = "batch"``: the
        tokens of a batch then share one draw (None: every token its own batch).
        """
        ids = self._lookup(ids)
        x = self.prepare(self.inputs[ids])
        return x + self._draw(len(ids), batches)

    def perturb_vectors(self, x: np.ndarray, batches: np.ndarray | None = None) -> np.ndarray:
        """Like :meth:`perturb`, for arbitrary input vectors in the transformed space."""
        self._check_fitted()
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        return self.prepare(x) + self._draw(len(x), batches)

    def _draw(self, n: int, batches: np.ndarray | None) -> np.ndarray:
        if self.noise_shared == "token":
            return self.noise(n)
        return shared_noise(self.noise, n, batches)


class SelectionMechanism(Mechanism):
    """A mechanism that samples an output word directly from the public vocabulary.

    The work that depends only on the input word is done once per *unique* input word; every
    occurrence then gets its own independent draw from that word's distribution (equal in
    distribution to the per-word algorithm; tests compare the two).
    """

    kind = "selection"

    def word_sq_distances(self, words: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """``scale²·d²`` from input words to every vocabulary word, float32, ``(n, |W|)``.

        One matrix product into ``self.index``'s reused buffer
        (:meth:`bench.neighbors.NeighborIndex.sq_distances`). When input id i < |W| is
        vocabulary word i, a word's distance to itself is set to exactly 0 (float32
        cancellation would otherwise leave up to ~1e−3 there).
        """
        d2 = self.index.sq_distances(self.inputs[words], scale=scale)
        if self.inputs_start_with_vocab:
            in_vocab = np.nonzero(words < self.space.shape[0])[0]
            d2[in_vocab, words[in_vocab]] = 0.0
        return d2

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """Output word ids, sampled independently for every occurrence."""
        raise NotImplementedError


CATEGORICAL_BLOCK = 256
DRAW_CHUNK = 8192


def sample_categorical(weights: np.ndarray, rows: np.ndarray, rng: np.random.Generator,
                       block: int = CATEGORICAL_BLOCK) -> np.ndarray:
    """One independent draw per entry of ``rows`` from the categorical ``weights[row]``.

    ``weights`` is ``(t, m)``, non-negative, every row with a positive sum. Two-level inverse
    CDF, exact up to floating-point rounding: the row is cut into blocks of ``block`` entries,
    a draw first picks a block from the CDF of the block sums (one vectorised ``searchsorted``
    over all rows, row r's normalised CDF shifted into (r, r+1]), then an entry inside the block
    from the cumulative sum of that block alone. Per row this costs one summing pass (no
    ``m``-long cumulative sum, the slow part of a plain inverse CDF); per draw, ``block``
    entries. Returns the column indices.
    """
    rows = np.asarray(rows, dtype=np.int64)
    t, m = weights.shape
    nb_full, tail = divmod(m, block)
    nb = nb_full + (tail > 0)
    bsum = np.empty((t, nb), dtype=np.float64)
    if nb_full:
        bsum[:, :nb_full] = weights[:, : nb_full * block].reshape(t, nb_full, block).sum(axis=2)
    if tail:
        bsum[:, -1] = weights[:, nb_full * block:].sum(axis=1)
    cdf = np.cumsum(bsum, axis=1)
    total = cdf[:, -1:].copy()
    if not np.all(total > 0):
        raise ValueError("sample_categorical: a row of weights sums to 0")
    cdf /= total
    cdf += np.arange(t, dtype=np.float64)[:, None]
    out = np.empty(len(rows), dtype=np.int64)
    offsets = np.arange(block)
    for a in range(0, len(rows), DRAW_CHUNK):  # bounds the (draws × block) temporaries
        r = rows[a : a + DRAW_CHUNK]
        u = rng.random(len(r))
        blk = np.searchsorted(cdf.ravel(), u + r, side="right") - r * nb
        np.clip(blk, 0, nb - 1, out=blk)
        prev = np.where(blk > 0, cdf[r, np.maximum(blk - 1, 0)] - r, 0.0)
        resid = (u - prev) * total[r, 0]  # the mass still to cover inside the chosen block
        cols = blk[:, None] * block + offsets[None, :]
        inside = cols < m
        vals = weights[r[:, None], np.minimum(cols, m - 1)]
        vals[~inside] = 0
        cs = np.cumsum(vals, axis=1, dtype=np.float64)
        pos = np.count_nonzero(cs <= resid[:, None], axis=1)
        # rounding can leave resid ≥ the block's own sum: take its last positive entry then
        last = block - 1 - np.argmax(vals[:, ::-1] > 0, axis=1)
        out[a : a + DRAW_CHUNK] = blk * block + np.minimum(pos, last)
    return out


def unique_word_tiles(ids: np.ndarray, tile: int):
    """Group token occurrences by unique input word, ``tile`` unique words at a time.

    Yields ``(words, positions, rows)``: the tile's unique input ids, the positions in ``ids``
    of their occurrences, and for each such occurrence its row in ``words``.
    """
    uniq, inverse = np.unique(ids, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    rows_sorted = inverse[order]
    for start in range(0, len(uniq), tile):
        stop = min(start + tile, len(uniq))
        lo, hi = np.searchsorted(rows_sorted, [start, stop])
        yield uniq[start:stop], order[lo:hi], rows_sorted[lo:hi] - start


SAMPLE_TILE = 64  # unique words per tile: a (64 × |W|) float32 buffer stays cache-friendly


def sample_per_unique_word(mech: Mechanism, ids: np.ndarray, weights,
                           tile: int = SAMPLE_TILE) -> np.ndarray:
    """Exact per-occurrence sampling with the per-word work done once per unique input word.

    ``weights(words)`` returns the unnormalised output weights ``(n, |W|)`` of a tile of
    unique input ids; every occurrence of a word then gets its own independent draw from that
    word's row (:func:`sample_categorical`), equal in distribution to running the mechanism
    once per occurrence.
    """
    out = np.empty(len(ids), dtype=np.int64)
    for words, positions, rows in unique_word_tiles(ids, tile):
        w = weights(words)
        out[positions] = sample_categorical(w, rows, mech.rng)
    return out
