"""Shared base of the canonical-DP mechanisms of Huang et al. (2024) with norm clipping
(``laplace``, ``gaussian``, ``trlaplace``): CLIPEmb(w) = φ(w)·min(1, C/‖φ(w)‖₂) (Eq. 1),
and the parsing of their δ (a number or ``4^-d``).

The three share the options that reproduce the paper's public code where it departs from the
paper (``clip: false``, ``noise_shared: batch``; :mod:`bench.mechanisms.departures`): off by
default, refused without ``allow_no_guarantee: true``, and then reported as "no DP guarantee".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import AdditiveMechanism, check_delta, check_positive, data_dependent
from bench.mechanisms.departures import check_departures, void_reasons


class ClippedMechanism(AdditiveMechanism):
    """Canonical-DP mechanisms: CLIPEmb(w) = φ(w)·min(1, C/‖φ(w)‖₂) (Huang et al. 2024, Eq. 1).

    Clipping is part of the mechanism, so the canonical guarantee holds for every pair of words
    whatever sensitivity approach ran before it.

    Args:
        epsilon: ε.
        C: the clipping norm, to which the noise is calibrated.
        clip: False: the public code's departure, no clipping (C then only calibrates the
            noise); needs ``allow_no_guarantee``.
        noise_shared: ``batch``: the public code's departure, one noise vector per batch of
            ``batch_sentences`` sentences (default 1,024); needs ``allow_no_guarantee``.
        batch_sentences: B of ``noise_shared: batch``.
        allow_no_guarantee: acknowledges a departure; its guarantee is then void.
        rng: NumPy Generator or seed.
    """

    def __init__(self, *, epsilon: float, C: float = 1.0, clip: bool = True,
                 noise_shared: str = "token", batch_sentences: int | None = None,
                 allow_no_guarantee: bool = False, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        self.C = check_positive(C, "C (clipping norm)", self.name)
        self.departures = check_departures(
            self.name, clip=clip, noise_shared=noise_shared, batch_sentences=batch_sentences,
            allow_no_guarantee=allow_no_guarantee)
        self.clip = "clip" not in self.departures
        self.noise_shared = self.departures.get("noise_shared", "token")
        self.batch_sentences = self.departures.get("batch_sentences")
        self.params = {"C": self.C, **self.departures}

    def prepare(self, x: np.ndarray) -> np.ndarray:
        """Clip each row to L2 norm at most C (CLIPEmb); unchanged with ``clip: false``."""
        if not self.clip:
            return x
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            factor = np.minimum(1.0, self.C / norms)
        return x * factor

    @property
    def dim(self) -> int:
        """Dimension d of the space the noise is added in."""
        return self.space.shape[1]

    def _canonical(self, kind: str, delta: float, sensitivity) -> Guarantee:
        proven, reason = True, ""
        if data_dependent(sensitivity):
            proven, reason = False, "sensitivity transform fitted on private training data"
        log10 = math.log10(delta) if delta > 0 else getattr(self, "log10_delta", None)
        g = Guarantee(kind, self.epsilon, delta=delta, proven=proven, reason=reason,
                      log10_delta=log10 if kind == "approx" else None)
        return self._void_departures(g)

    def _void_departures(self, g: Guarantee) -> Guarantee:
        """``g`` void for each departure asked for (:mod:`bench.mechanisms.departures`)."""
        for reason in void_reasons(self.departures):
            g = g.voided(reason)
        return g


def delta_from(delta: Any, d: int, name: str) -> float:
    """δ: a number in (0, 1) or the paper's default ``"4^-d"`` (Huang et al. 2024, Sec. 6.1)."""
    if isinstance(delta, str):
        if delta.replace(" ", "") in ("4^-d", "4**-d", "1/4^d"):
            return 4.0 ** (-d)
        raise ValueError(f"{name}: delta must be a number in (0, 1) or '4^-d', got {delta!r}")
    return check_delta(delta, name)
