"""Word-level DP mechanisms; each module registers its mechanisms in :data:`MECHANISMS`.

Example:
    >>> from bench.mechanisms import make_mechanism
    >>> mech = make_mechanism("tem", epsilon=5.0, rng=0)
"""

from __future__ import annotations

from typing import Any

from bench.mechanisms import extra, laplace, selection  # noqa: F401  (registration)
from bench.mechanisms.base import MECHANISMS, AdditiveMechanism, Mechanism, SelectionMechanism


def make_mechanism(name: str, *, epsilon: float, rng: Any = None, **params) -> Mechanism:
    """Instantiate a registered mechanism; unknown names and parameters raise ``ValueError``."""
    cls = MECHANISMS.get(name)
    try:
        return cls(epsilon=epsilon, rng=rng, **params)
    except TypeError as e:
        raise ValueError(f"mechanism {name!r}: unknown or missing parameter ({e})") from None


__all__ = ["MECHANISMS", "Mechanism", "AdditiveMechanism", "SelectionMechanism", "make_mechanism"]
