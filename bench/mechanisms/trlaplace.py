"""High-dimensional truncated Laplace (``trlaplace``; Huang et al. 2024, Alg. 1, Thm. 3).

Clip to norm C, add noise from a Laplace density truncated to a box per coordinate
(dummy dimensions d′ > d for large ε), map back. Noise is drawn independently for every token
occurrence (the public code's departures are options without a guarantee:
:mod:`bench.mechanisms.departures`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS, check_delta
from bench.mechanisms.clipped import ClippedMechanism, delta_from

CODE_DIMENSION = {10.0: 500}
"""d′ by ε of Huang et al. (2024, Sec. 6.1) and the public code (``method.py``)."""
CODE_DIMENSION_OTHER = 1700
"""d′ of the public code at any other ε > 8.6 (the paper: ε = 20)."""
CODE_EPSILON_LIMIT = 8.6
"""Above this ε the public code replaces d (its limit √300/2 ≈ 8.66 rounded down)."""


@MECHANISMS.register()
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

    ``code_dimension: true``: d′ as the paper's experiments fix it (Sec. 6.1: "d = 500 for
    ε = 10 and d = 1700 for ε = 20") and its public code (``method.py``, ``TrLaplacian``: for
    ε > 8.6, d′ = 500 if ε = 10 else 1,700) instead of the smallest d′: wherever the condition
    fails at d, or ε > 8.6, d′ = 500 at ε = 10 and 1,700 otherwise (refused where that d′ is
    below d or fails the condition, where the code's A is NaN). Still Thm. 3's construction, so
    the guarantee is as without it, with δ = 4^−d′.

    ``clip``, ``noise_shared``, ``batch_sentences``, ``allow_no_guarantee``: the public code's
    departures (:class:`~bench.mechanisms.clipped.ClippedMechanism`).

    Sampling is exact, by inverse CDF: |x| = −ln(1 − U·(1 − e^{−αA}))/α, with a fair random sign.
    """

    name = "trlaplace"
    description = "clipped embedding + truncated Laplace on [-A, A] per coordinate"
    guarantee_kind = "approx"
    version = "2"  # 2: the guarantee is reported as not proven (see UNPROVEN)

    def __init__(self, *, epsilon: float, C: float = 1.0, delta: float | str = "4^-d",
                 dummy_dims: bool = True, code_dimension: bool = False, clip: bool = True,
                 noise_shared: str = "token", batch_sentences: int | None = None,
                 allow_no_guarantee: bool = False, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, C=C, clip=clip, noise_shared=noise_shared,
                         batch_sentences=batch_sentences,
                         allow_no_guarantee=allow_no_guarantee, rng=rng)
        delta_from(delta, 1, self.name)  # validate now, not at fit time
        self._delta_spec = delta
        self.dummy_dims = bool(dummy_dims)
        if not isinstance(code_dimension, (bool, np.bool_)):
            raise ValueError(f"trlaplace: code_dimension must be true or false, got "
                             f"{code_dimension!r}")
        if code_dimension and not self.dummy_dims:
            raise ValueError("trlaplace: code_dimension chooses the dummy dimension d'; it "
                             "needs dummy_dims: true")
        self.code_dimension = bool(code_dimension)
        self.params = {"C": self.C, "delta": delta, "dummy_dims": self.dummy_dims,
                       **({"code_dimension": True} if self.code_dimension else {}),
                       **self.departures}

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
        ok = self._condition(d)[0]
        if not ok and not self.dummy_dims:
            raise ValueError(f"trlaplace: epsilon must be < 2·delta^(1/d)·sqrt(d) = "
                             f"{2 * self._root(d) * math.sqrt(d):.4g} for d={d} (Huang et al. "
                             f"2024, Thm. 3); enable dummy_dims for larger epsilon")
        if self.code_dimension and (not ok or self.epsilon > CODE_EPSILON_LIMIT):
            d_eff = self._code_dimension(d)
        else:
            d_eff = d if ok else self._smallest_dimension(d)
        delta = self._condition(d_eff)[1]
        self.d_eff = d_eff
        self.delta = delta
        self.log10_delta = self._log_delta(d_eff) / math.log(10.0)
        self.delta1 = 2.0 * math.sqrt(d_eff) * self.C
        self.alpha = self.epsilon / self.delta1
        self.A = -(self.delta1 / self.epsilon) * math.log1p(
            -self.epsilon / (2.0 * self._root(d_eff) * math.sqrt(d_eff)))

    def _smallest_dimension(self, d: int) -> int:
        """The smallest d′ > d that satisfies the condition (2·δ(d′)^{1/d′}·√d′ increases with
        d′: exponential, then binary search)."""
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
        return hi

    def _code_dimension(self, d: int) -> int:
        """d′ of the paper's Sec. 6.1 and public code: 500 at ε = 10, 1,700 otherwise."""
        d_eff = CODE_DIMENSION.get(self.epsilon, CODE_DIMENSION_OTHER)
        if d_eff < d:
            raise ValueError(f"trlaplace: code_dimension gives d' = {d_eff} at epsilon = "
                             f"{self.epsilon}, below the embedding's d = {d}")
        if not self._condition(d_eff)[0]:
            raise ValueError(f"trlaplace: code_dimension gives d' = {d_eff} at epsilon = "
                             f"{self.epsilon}, where epsilon < 2·delta^(1/d')·sqrt(d') fails "
                             f"(Huang et al. 2024, Thm. 3; the public code's A is NaN there)")
        return d_eff

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
        return replace(g, proven=False, reason=reason)
