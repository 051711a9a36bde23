"""PrivEmb (``privemb``; Feyisetan & Kasiviswanathan 2021): the ``jl`` sensitivity approach
followed by multivariate Laplace noise calibrated to its bound (additive; a named preset
of ``mvl``). Noise is drawn independently for every token occurrence.
"""

from __future__ import annotations

from typing import Any

from bench.mechanisms.base import MECHANISMS
from bench.mechanisms.mvl import MultivariateLaplace


@MECHANISMS.register()
class PrivEmb(MultivariateLaplace):
    """PrivEmb (Feyisetan & Kasiviswanathan 2021): JL projection + calibrated multivariate Laplace.

    A named preset of ``mvl`` with ``calibrate=True`` that *requires* the ``jl`` sensitivity
    approach (unit normalisation and a Gaussian random projection; Riecker 2023, Sec. 4.5.5):
    noise η = l·u, l ~ Gamma(m, Δ_f/ε) in the projected space, Δ_f = 1 + β the approach's
    sensitivity bound. Guarantee: ε·d metric DP in the original space, with the approach's
    failure probability δ over the projection (and ``proven`` as the approach reports it).

    Why a mechanism and not a transform inside ``fit``: the Privatizer applies the sensitivity
    approach to the vocabulary *and* to the nearest-neighbour index; a mechanism projecting
    internally would add noise in a different space than the mapping searches. So ``privemb``
    refuses to bind to any approach but ``jl`` (``bench privatize -m privemb --sensitivity jl``).

    Args:
        epsilon: ε > 0.
        rng: NumPy Generator or seed.
    """

    name = "privemb"
    description = "jl projection + multivariate Laplace calibrated to its bound 1+beta"
    guarantee_kind = "metric"

    def __init__(self, *, epsilon: float, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, calibrate=True, rng=rng)
        self.params = {}
        self._bound = False

    def bind_sensitivity(self, sensitivity) -> None:
        """Take Δ_f from the ``jl`` approach; any other approach is refused."""
        name = getattr(sensitivity, "name", None)
        if name != "jl":
            raise ValueError(f"privemb: needs the 'jl' sensitivity approach (Feyisetan & "
                             f"Kasiviswanathan 2021), got {name or 'none'!r}; use sensitivity jl")
        super().bind_sensitivity(sensitivity)
        self._bound = True

    def _fit(self) -> None:
        if not self._bound:
            raise ValueError("privemb: call bind_sensitivity(jl approach) before fit "
                             "(Privatizer.build does this)")
