"""Vector mappings: from a perturbed vector back to a public-vocabulary word (post-processing).

- ``none``: the mechanism's vectors are the output (only models that take vectors can use them).
- ``nearest``: the exact nearest public-vocabulary word (Euclidean) in the space the noise was
  added in (Feyisetan et al. 2020; Riecker 2023, Sec. 4.6.1).
- ``vickrey`` (Xu et al. 2021b; Riecker 2023, Sec. 4.6.2): with d₁ ≤ d₂ the distances to the 1st
  and 2nd nearest neighbours, output the 1st with probability
  ``p = (1−t)·d₂ / (t·d₁ + (1−t)·d₂)``, else the 2nd; default ``t = 0.75``.

A mapping is post-processing of the mechanism's output, so it never changes the guarantee.

Example:
    >>> m = MAPPINGS.create("vickrey", t=0.75)
    >>> ids = m.map(noisy_vectors, index, rng)
"""

from __future__ import annotations

import math

import numpy as np

from bench.neighbors import NeighborIndex
from bench.registry import Registry

MAPPINGS: Registry = Registry("mapping")


class Mapping:
    """Base class: ``map(vectors, index, rng) -> ids`` or ``None`` for vector output."""

    name = ""
    outputs_text = True
    description = ""
    search_k = 0
    """Nearest neighbours of each perturbed vector the mapping asks for (0: it searches none).
    Cells whose mappings search the same noisy vectors run in one worker, the largest k first,
    so that the others reuse its search (:func:`bench.run.runner.plan`)."""

    def __init__(self, **params) -> None:
        if params:
            raise ValueError(f"mapping {self.name!r} takes no parameters, got {sorted(params)}")
        self.params: dict = {}

    def map(self, vectors: np.ndarray, index: NeighborIndex, rng: np.random.Generator):
        """Vocabulary ids for the rows of ``vectors``, or ``None`` to keep the vectors."""
        raise NotImplementedError

    def describe(self) -> dict:
        """JSON-serialisable description: name and parameters."""
        return {"name": self.name, **self.params}


@MAPPINGS.register()
class NoMapping(Mapping):
    """Keep the perturbed vectors (vector-output; for models with an embedding input)."""

    name = "none"
    outputs_text = False
    search_k = 0
    description = "perturbed vectors are the output (vector-input models only)"

    def map(self, vectors, index, rng):
        """``None``: the perturbed vectors are the output."""
        return None


@MAPPINGS.register()
class NearestMapping(Mapping):
    """Exact nearest public-vocabulary word (Feyisetan et al. 2020, Eq. 2 of Huang et al. 2024)."""

    name = "nearest"
    description = "exact nearest public-vocabulary word (Euclidean)"
    search_k = 1

    def map(self, vectors, index, rng):
        """The id of the nearest vocabulary word of each row."""
        return index.search(vectors, k=1)[0][:, 0]


@MAPPINGS.register()
class VickreyMapping(Mapping):
    """Randomised 1st/2nd-neighbour mapping of Xu et al. (2021b).

    P(1st) = (1−t)·d₂ / (t·d₁ + (1−t)·d₂), else the 2nd nearest neighbour. ``t = 0`` always
    picks the 1st; ``t = 0.5`` weighs by distance only. If d₁ = d₂ = 0 (cannot happen for distinct
    vocabulary vectors) the 1st is chosen.
    """

    name = "vickrey"
    description = "1st or 2nd nearest neighbour, P(1st) = (1-t)d2 / (t d1 + (1-t) d2)"
    search_k = 2

    def __init__(self, t: float = 0.75) -> None:
        t = float(t)
        if not (0.0 <= t < 1.0) or math.isnan(t):
            raise ValueError(f"vickrey: t must be in [0, 1), got {t}")
        self.params = {"t": t}
        self.t = t

    def probability_first(self, d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
        """P(output = 1st nearest neighbour) for distances d₁ ≤ d₂."""
        t = self.t
        num = (1 - t) * d2
        den = t * d1 + (1 - t) * d2
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)
        return p

    def map(self, vectors, index, rng):
        """The 1st or, with probability 1 − P(1st), the 2nd nearest word of each row."""
        ids, d = index.search(vectors, k=2)
        p = self.probability_first(d[:, 0], d[:, 1])
        second = rng.random(len(p)) >= p
        return np.where(second, ids[:, 1], ids[:, 0])


NATURAL_MAPPING = {"additive": "nearest", "selection": "none", "document": "none"}
"""Each mechanism kind's text-output mapping: what an omitted grid ``mapping`` axis and
``Privatizer.build(mapping=None)`` use."""
