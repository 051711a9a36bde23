"""Word-level DP mechanisms, one module per mechanism, named as ``bench ls mechanisms`` names it
(``mvl``, ``laplace``, ``gaussian``, ``trlaplace``, ``tem``, ``truncated_gumbel``,
``mahalanobis``, ``santext``, ``custext``, ``privemb``, ``diffractor``; the known answers
``identity``, ``no_information`` and ``constant`` of :mod:`bench.mechanisms.known`; the
document-level ``dp_prompt``, a paraphrase by a local causal LM, and ``dp_mlm``, words
rewritten by a masked LM in context);
:mod:`bench.mechanisms.base` holds the base classes and shared samplers,
:mod:`bench.mechanisms.clipped` the clipping shared by Huang et al.'s three,
:mod:`bench.mechanisms.departures` their public code's departures from the paper (options
without a guarantee). Each module registers its mechanism in :data:`MECHANISMS`.

Example:
    >>> from bench.mechanisms import MECHANISMS
    >>> mech = MECHANISMS.create("tem", epsilon=5.0, rng=0)
"""

from __future__ import annotations

from bench.mechanisms import (  # noqa: F401  (each module registers its mechanism)
    custext,
    diffractor,
    dp_mlm,
    dp_prompt,
    gaussian,
    known,
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

__all__ = ["MECHANISMS", "Mechanism", "AdditiveMechanism", "SelectionMechanism"]
