"""High-dimensional truncated Laplace (``trlaplace``; Huang et al. 2024, Alg. 1, Thm. 3).

Clip to norm C, add noise from a Laplace density truncated to a box per coordinate
(dummy dimensions d′ > d for large ε), map back. Noise is drawn independently for every token
occurrence.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS, check_delta
from bench.mechanisms.clipped import ClippedMechanism, delta_from


@MECHANISMS.register("trlaplace")
class TruncatedLaplace(ClippedMechanism):
    """High-dimensional truncated Laplace mechanism (Huang et al. 2024, Thm. 3): (ε, δ)-DP.

    Each coordinate i.i.d. with density ∝ exp(−α|x|) on [−A, A], α = ε/Δ₁, Δ₁ = 2√d·C,
    A = −(Δ₁/ε)·ln(1 − ε/(2δ^{1/d}√d)); requires ε < 2δ^{1/d}√d. Default δ = 4^−d (Sec. 6.1),
    i.e. δ^{1/d} = 1/4 and the condition ε < √d/2.

    For larger ε, the paper's dummy-dimension trick (Sec. 4, after Remark 1): pad the clipped
    vector with zero coordinates to the smallest d′ ≥ d that satisfies the condition, add the
    noise in d′ dimensions, drop the padding (post-processing). All parameters (Δ₁, α, A and,
    for the default, δ = 4^−d′) are then those of dimension d′; the padding's noise is never
    drawn since it is discarded. ``d_eff`` and the resulting (ε, δ) are recorded.

    Sampling is exact, by inverse CDF: |x| = −ln(1 − U·(1 − e^{−αA}))/α, with a fair random sign.
    """

    name = "trlaplace"
    description = "clipped embedding + truncated Laplace on [-A, A] per coordinate"
    guarantee_kind = "approx"
    version = "2"  # 2: the guarantee is reported as not proven (see UNPROVEN)

    def __init__(self, *, epsilon: float, C: float = 1.0, delta: float | str = "4^-d",
                 dummy_dims: bool = True, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, C=C, rng=rng)
        delta_from(delta, 1, self.name)  # validate now, not at fit time
        self._delta_spec = delta
        self.dummy_dims = bool(dummy_dims)
        self.params = {"C": self.C, "delta": delta, "dummy_dims": self.dummy_dims}

    def _log_delta(self, d: int) -> float:
        """ln δ for dimension d (the default 4^−d underflows a float for d > 537)."""
        if isinstance(self._delta_spec, str):
            delta_from(self._delta_spec, 1, self.name)  # validates the spelling
            return -d * math.log(4.0)
        return math.log(check_delta(self._delta_spec, self.name))

    def _root(self, d: int) -> float:
        """δ^{1/d}."""
        return math.exp(self._log_delta(d) / d)

    def _condition(self, d: int) -> tuple[bool, float]:
        limit = 2.0 * self._root(d) * math.sqrt(d)
        return self.epsilon < limit, math.exp(self._log_delta(d))

    def _fit(self) -> None:
        d = self.dim
        ok, delta = self._condition(d)
        if not ok and not self.dummy_dims:
            raise ValueError(f"trlaplace: epsilon must be < 2·delta^(1/d)·sqrt(d) = "
                             f"{2 * self._root(d) * math.sqrt(d):.4g} for d={d} (Huang et al. "
                             f"2024, Thm. 3); enable dummy_dims for larger epsilon")
        d_eff = d
        if not ok:  # 2·δ(d′)^{1/d′}·√d′ increases with d′: exponential then binary search
            hi = 2 * d
            while not self._condition(hi)[0]:
                hi *= 2
                if hi > 10**15:
                    raise ValueError("trlaplace: no dimension satisfies the condition for this "
                                     "epsilon and delta")
            lo = hi // 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if self._condition(mid)[0] else (mid, hi)
            d_eff = hi
            ok, delta = self._condition(d_eff)
        self.d_eff = d_eff
        self.delta = delta
        self.log10_delta = self._log_delta(d_eff) / math.log(10.0)
        self.delta1 = 2.0 * math.sqrt(d_eff) * self.C
        self.alpha = self.epsilon / self.delta1
        self.A = -(self.delta1 / self.epsilon) * math.log1p(
            -self.epsilon / (2.0 * self._root(d_eff) * math.sqrt(d_eff)))

    def noise(self, n: int) -> np.ndarray:
        """``n`` vectors of i.i.d. Laplace noise truncated to [−A, A], shape ``(n, d)``."""
        shape = (n, self.dim)
        u = self.rng.random(shape)
        mass = -math.expm1(-self.alpha * self.A)  # 1 − e^{−αA}
        mag = -np.log1p(-u * mass) / self.alpha
        sign = np.where(self.rng.random(shape) < 0.5, -1.0, 1.0)
        return np.minimum(mag, self.A) * sign

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """Exact CDF of one noise coordinate (for tests)."""
        x = np.clip(np.asarray(x, dtype=np.float64), -self.A, self.A)
        a, A = self.alpha, self.A
        z = 1.0 - math.exp(-a * A)
        return np.where(x < 0, 0.5 * (np.exp(-a * np.abs(x)) - math.exp(-a * A)) / z,
                        0.5 + 0.5 * (1.0 - np.exp(-a * x)) / z)

    def describe(self) -> dict:
        """As :meth:`Mechanism.describe`, plus d_eff, δ, A and α once fitted."""
        out = super().describe()
        if self.space is not None:
            out.update(d_eff=self.d_eff, delta_value=self.delta, log10_delta=self.log10_delta,
                       A=self.A, alpha=self.alpha)
        return out

    UNPROVEN = ("Huang et al. 2024, Thm. 3 bounds the chance that all d coordinates leave the "
                "overlap of the two truncated supports ((δ^{1/d})^d = δ), but one coordinate "
                "suffices for an unbounded loss; `bench audit` finds violations at ε = 1, d = 50 "
                "(docs/audit.md), so the stated δ is not a proven bound")

    def guarantee(self, sensitivity=None) -> Guarantee:
        """(ε, δ)-DP as stated by Thm. 3, reported as not proven (see ``UNPROVEN``)."""
        self._check_fitted()
        g = self._canonical("approx", self.delta, sensitivity)
        reason = "; ".join(r for r in (self.UNPROVEN, g.reason) if r)
        return Guarantee(g.kind, g.epsilon, delta=g.delta, proven=False, reason=reason,
                         log10_delta=g.log10_delta)
