"""Sensitivity approaches: transforms applied to embedding vectors before a DP mechanism, one
module per approach (``none``, ``unit_norm``, ``unit_norm_clip``, ``minmax``, ``observed_range``,
``clip_observed_range``, ``jl``) and the shared machinery in :mod:`bench.sensitivity.base`.

Each approach is a function ``f`` on embedding vectors plus a bound on its sensitivity in the
sense of Riecker (2023), Definition 2.1.6 / Eq. 2.3 and Eq. 4.2::

    Δ_f = max_{x ≠ y} ‖f(Φ(x)) − f(Φ(y))‖₂ / ‖Φ(x) − Φ(y)‖₂

i.e. a Lipschitz constant of ``f`` with respect to the Euclidean distance of the ORIGINAL vectors.
A mechanism that adds noise calibrated only to ε (not to Δ_f) then gives ``(ε·Δ_f)``-metric DP in
the original space (Riecker 2023, Example 1 and Eq. 5.1). The seven approaches are those of the
thesis, Section 4.5 and Table 5.2:

=======================  ===================================  ======================  ========
name                     transform                            bound                   proven
=======================  ===================================  ======================  ========
``none``                 identity                             ∞ (unbounded range)     yes
``unit_norm``            x / ‖x‖  (Sec. 4.5.1)                2 / min‖x−y‖ (Eq. 4.2)  no
``unit_norm_clip``       x · min(1, C/‖x‖)  (Eq. 4.3)         1 (Eq. 4.4)             yes
``minmax``               per-vector to [−1,1]^d (Sec. 4.5.2)  2√d / min‖x−y‖ (4.6)   no
``observed_range``       per-vector to [v_min,v_max] (4.5.3)  √d(v_max−v_min)/min‖·‖  no
``clip_observed_range``  clip to [v_min,v_max]  (Sec. 4.5.4)  1                       yes*
``jl``                   Gaussian projection  (Sec. 4.5.5)    1+β w.p. ≥ 1−δ (4.10)   yes (δ)
=======================  ===================================  ======================  ========

(*) 1-Lipschitz by construction for any fixed v_min, v_max; the two numbers are statistics of the
fitted vectors (public when fitted on the public vocabulary, the default ``fit_on="vocab"``).

"Estimated" bounds (``proven=False``) divide a bound on the output diameter by the minimum
distance between the *fitted* vectors; they say nothing about pairs of other inputs. With
``fit_on="train"`` the statistics come from the (private) training tokens, as in the thesis, and
every data-dependent bound is labelled as such.

Example:
    >>> from bench.embeddings import load_embedding
    >>> emb = load_embedding("glove-6b-50d", vocab_size=50_000)
    >>> sens = SENSITIVITY.create("unit_norm").fit(emb.vectors)
    >>> space = sens.transform(emb.vectors)             # (50000, 50), rows of unit length
    >>> round(sens.bound, 4), sens.proven               # 2 / min distance, estimated
    (5.6922, False)
    >>> round(sens.stats["min_distance"], 4)             # 'monday' / 'tuesday', exact
    0.3514
"""

from __future__ import annotations

from bench.sensitivity.base import (
    FIT_ON,
    SENSITIVITY,
    NotFittedError,
    SensitivityApproach,
    min_pairwise_distance,
)

# one module per approach; importing each registers it in SENSITIVITY
from bench.sensitivity.clip_observed_range import ClipObservedRange
from bench.sensitivity.jl import (
    JohnsonLindenstrauss,
    gaussian_width_dim,
    jl_union_failure_probability,
)
from bench.sensitivity.minmax import MinMax
from bench.sensitivity.none import NoSensitivity
from bench.sensitivity.observed_range import ObservedRange
from bench.sensitivity.unit_norm import UnitNorm
from bench.sensitivity.unit_norm_clip import UnitNormClip

__all__ = [
    "ClipObservedRange",
    "FIT_ON",
    "JohnsonLindenstrauss",
    "MinMax",
    "NoSensitivity",
    "NotFittedError",
    "ObservedRange",
    "SENSITIVITY",
    "SensitivityApproach",
    "UnitNorm",
    "UnitNormClip",
    "gaussian_width_dim",
    "jl_union_failure_probability",
    "min_pairwise_distance",
]
