"""The Mechanism interface shared by every word-level mechanism, and its validation helpers.

A mechanism is constructed with keyword-only ``epsilon``, its own parameters and a NumPy
``Generator`` (or an int seed); ``fit(space)`` receives the public vocabulary's vectors in the
transformed space (after the sensitivity approach) so statistics are computed once; then

- additive mechanisms (``kind = "additive"``): ``perturb(ids) -> vectors``, one independent
  noise draw per token occurrence;
- selection mechanisms (``kind = "selection"``): ``sample(ids) -> ids`` of output words.

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

    def perturb(self, ids: np.ndarray) -> np.ndarray:
        """Noisy vectors, one independent noise draw per token occurrence."""
        ids = self._lookup(ids)
        x = self.prepare(self.inputs[ids])
        return x + self.noise(len(ids))

    def perturb_vectors(self, x: np.ndarray) -> np.ndarray:
        """Like :meth:`perturb`, for arbitrary input vectors in the transformed space."""
        self._check_fitted()
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        return self.prepare(x) + self.noise(len(x))


class SelectionMechanism(Mechanism):
    """A mechanism that samples an output word directly."""

    kind = "selection"

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """Output word ids, sampled independently for every occurrence."""
        raise NotImplementedError


def sample_from_cdf(cdf: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one category per entry of ``rows`` from the unnormalised row CDFs ``cdf[row]``.

    Vectorised inverse-CDF sampling: each row is normalised and shifted by its row number (row
    r's CDF occupies (r, r+1]), so one ``searchsorted`` over the flattened array serves every
    draw. ``cdf`` is modified in place.
    """
    n_rows, n_cat = cdf.shape
    cdf /= cdf[:, -1:]
    cdf += np.arange(n_rows, dtype=np.float64)[:, None]
    u = rng.random(len(rows)) + rows
    flat = np.searchsorted(cdf.ravel(), u, side="right")
    out = flat - rows * n_cat
    return np.minimum(np.maximum(out, 0), n_cat - 1)


def sample_per_unique_word(mech: Mechanism, ids: np.ndarray, weights) -> np.ndarray:
    """Exact per-occurrence sampling with the per-word work done once per unique input word.

    ``weights(vectors)`` returns the unnormalised output weights ``(n, |W|)`` of a tile of input
    vectors; every occurrence of a word then gets its own independent inverse-CDF draw from that
    word's row (equal in distribution to running the mechanism once per occurrence).
    """
    uniq, inverse = np.unique(ids, return_inverse=True)
    out = np.empty(len(ids), dtype=np.int64)
    order = np.argsort(inverse, kind="stable")
    rows_sorted = inverse[order]
    tile = mech.index.tile
    cdf = np.empty((min(tile, len(uniq)), mech.space.shape[0]), dtype=np.float64)
    for start in range(0, len(uniq), tile):
        stop = min(start + tile, len(uniq))
        lo, hi = np.searchsorted(rows_sorted, [start, stop])
        w = weights(mech.inputs[uniq[start:stop]])
        c = cdf[: stop - start]
        np.cumsum(w, axis=1, dtype=np.float64, out=c)
        out[order[lo:hi]] = sample_from_cdf(c, rows_sorted[lo:hi] - start, mech.rng)
    return out
