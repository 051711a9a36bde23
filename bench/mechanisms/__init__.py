"""Word-level DP mechanisms, one module per mechanism, named as ``bench ls mechanisms`` names it
(``mvl``, ``laplace``, ``gaussian``, ``trlaplace``, ``tem``, ``truncated_gumbel``,
``mahalanobis``, ``santext``, ``custext``, ``privemb``, ``diffractor``);
:mod:`bench.mechanisms.base` holds the base classes and shared samplers,
:mod:`bench.mechanisms.clipped` the clipping shared by Huang et al.'s three,
:mod:`bench.mechanisms.departures` their public code's departures from the paper (options
without a guarantee). Each module registers its mechanism in :data:`MECHANISMS`.

Example:
    >>> from bench.mechanisms import make_mechanism
    >>> mech = make_mechanism("tem", epsilon=5.0, rng=0)
"""

from __future__ import annotations

from typing import Any

from bench.mechanisms import (  # noqa: F401  (each module registers its mechanism)
    custext,
    diffractor,
    gaussian,
    laplace,
    mahalanobis,
    mvl,
    privemb,
    santext,
    tem,
    trlaplace,
    truncated_gumbel,
)
from bench.mechanisms.base import MECHANISMS, AdditiveMechanism, Mechanism, SelectionMechanism


def make_mechanism(name: str, *, epsilon: float, rng: Any = None, **params) -> Mechanism:
    """Instantiate a registered mechanism; unknown names and parameters raise ``ValueError``."""
    cls = MECHANISMS.get(name)
    try:
        return cls(epsilon=epsilon, rng=rng, **params)
    except TypeError as e:
        raise ValueError(f"mechanism {name!r}: unknown or missing parameter ({e})") from None


__all__ = ["MECHANISMS", "Mechanism", "AdditiveMechanism", "SelectionMechanism", "make_mechanism"]
