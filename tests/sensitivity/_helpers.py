"""Shared helpers of the sensitivity tests: groups of approach names and distance ratios."""

from __future__ import annotations

import numpy as np

from bench.sensitivity import SENSITIVITY

ALL = SENSITIVITY.names()
PROVEN_LIPSCHITZ = ["none", "unit_norm_clip", "clip_observed_range"]
ESTIMATED = ["unit_norm", "minmax", "observed_range"]


def _ratios(f, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.linalg.norm(f(a) - f(b), axis=1) / np.linalg.norm(a - b, axis=1)


def _pairs(x: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    i = rng.integers(0, len(x), n)
    j = rng.integers(0, len(x), n)
    keep = np.any(x[i] != x[j], axis=1)
    return x[i[keep]], x[j[keep]]

