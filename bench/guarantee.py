"""The privacy guarantee record every mechanism states (frozen, serialisable).

Example:
    >>> Guarantee(kind="metric", epsilon=1.0, multiplier=2.5, metric="euclidean").effective_epsilon
    2.5
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from bench.results.values import to_float

KINDS = ("pure", "approx", "metric", "none")

NO_GUARANTEE = "no DP guarantee"
"""How a void guarantee reads (:attr:`Guarantee.void`)."""


def delta_text(delta: float, log10_delta: float | None = None) -> str:
    """δ as text, to three significant digits as Python's ``.3g`` writes a float: ``0.05``,
    ``1e-06``, ``7.89e-31`` (4^−50); a δ at or below the floats' normal range (4^−1601 is 0.0
    as a float) is written the same way from ``log10_delta``: ``1.26e-964``."""
    if delta >= 1e-300 or log10_delta is None or not math.isfinite(log10_delta):
        return f"{delta:.3g}"
    exp = math.floor(log10_delta)
    mant = float(f"{10.0 ** (log10_delta - exp):.3g}")
    if mant >= 10.0:  # 9.996 rounds up to the next power of ten
        mant, exp = mant / 10.0, exp + 1
    return f"{mant:.3g}e{exp:+03d}"


@dataclass(frozen=True)
class Guarantee:
    """What a (sensitivity approach, mechanism) pair guarantees per token.

    Attributes:
        kind: ``pure`` (ε-DP), ``approx`` ((ε, δ)-DP), ``metric`` (ε·d_X metric DP, possibly with a
            δ), or ``none`` (no privatization).
        epsilon: the ε the mechanism was configured with.
        multiplier: the guarantee holds for ``multiplier * epsilon`` (e.g. the sensitivity bound
            of an approach whose noise is not calibrated to it; Riecker 2023, Eq. 5.1).
        delta: failure probability (0 for pure / pure metric DP).
        metric: the distance d of metric DP (``euclidean`` in the original embedding space unless
            stated), empty for canonical DP.
        proven: False when a bound in the guarantee is only *estimated from data*.
        reason: why the guarantee is not proven (empty when it is).
        log10_delta: log10 of δ when δ is too small for a float (e.g. 4^−1601), else None.
        void: True when the configuration has *no* DP guarantee at all, whatever the other
            fields state (they keep the claim of the paper it departs from): a departure from
            the paper asked for by name (:mod:`bench.mechanisms.departures`, a rewriter that
            reads private text). Written into the record only when True.
        void_reason: why there is no guarantee (empty unless ``void``).
    """

    kind: str
    epsilon: float
    multiplier: float = 1.0
    delta: float = 0.0
    metric: str = ""
    proven: bool = True
    reason: str = ""
    log10_delta: float | None = None
    void: bool = False
    void_reason: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"guarantee kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def effective_epsilon(self) -> float:
        """ε actually guaranteed: ``multiplier * epsilon``."""
        return self.multiplier * self.epsilon

    def to_dict(self) -> dict:
        """A JSON-serialisable dict (``void`` and ``void_reason`` only when void, so the
        records of every configuration with a guarantee are as they always were)."""
        out = asdict(self)
        if not self.void:
            del out["void"], out["void_reason"]
        return out

    def voided(self, reason: str) -> Guarantee:
        """This claim marked void with ``reason`` (appended to an earlier one)."""
        why = "; ".join(r for r in (self.void_reason, reason) if r)
        return replace(self, void=True, void_reason=why)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Guarantee:
        """The guarantee of a :meth:`to_dict` record as a cell stores it (numbers may be JSON
        strings such as ``"inf"``; a missing multiplier is 1, a missing δ 0).

        Raises:
            ValueError: ``d`` is not a guarantee record (unknown kind).
        """
        l10 = d.get("log10_delta")
        return cls(kind=str(d.get("kind")), epsilon=to_float(d.get("epsilon")),
                   multiplier=to_float(d.get("multiplier"), 1.0),
                   delta=to_float(d.get("delta"), 0.0), metric=str(d.get("metric") or ""),
                   proven=d.get("proven") is not False, reason=str(d.get("reason") or ""),
                   log10_delta=None if l10 is None else to_float(l10),
                   void=d.get("void") is True, void_reason=str(d.get("void_reason") or ""))

    def describe(self, symbolic: bool = False) -> str:
        """Human-readable form, e.g. ``(2.53·ε)-metric DP (euclidean) [estimated: ...]``.

        ``symbolic``: the form of the report's tables, where ε is the column's and the
        estimated note is a column of its own: ``ε-DP``, ``(2.535·ε, δ=1e-06)-DP``,
        ``ε·d metric DP [euclidean]``, ``none``. A void record reads ``no DP guarantee``; the
        long form adds the reason and the claim it voids.
        """
        if self.void:
            claim = replace(self, void=False, void_reason="").describe()
            return NO_GUARANTEE if symbolic else (
                f"{NO_GUARANTEE}: {self.void_reason or 'void'} (without that: {claim})")
        if symbolic:
            return self._symbolic()
        if self.kind == "none":
            return "no privacy guarantee"
        eps, dl = self._eps_text(), self._delta_text()
        if self.kind == "pure":
            text = f"{eps}-DP"
        elif self.kind == "approx":
            text = f"({eps}, {dl})-DP"
        else:
            text = (f"{eps}·d metric DP" if not self.has_delta
                    else f"({eps}, {dl})·d metric DP")
            text += f" ({self.metric})" if self.metric else ""
        if not self.proven:
            text += f" [estimated, not proven: {self.reason}]"
        return text

    def _eps_text(self) -> str:
        return "ε" if self.multiplier == 1 else f"{self.multiplier:.4g}·ε"

    @property
    def has_delta(self) -> bool:
        """Whether the guarantee states a δ (a δ too small for a float has ``log10_delta``)."""
        return self.delta > 0 or self.log10_delta is not None

    def _delta_text(self) -> str:
        return delta_text(self.delta, self.log10_delta)

    def _symbolic(self) -> str:
        if self.kind == "none":
            return "none"
        eps, dl = self._eps_text(), self._delta_text()
        has_delta = self.has_delta
        if self.kind == "pure":
            return f"{eps}-DP"
        if self.kind == "approx":
            return f"({eps}, δ={dl})-DP"
        text = f"{eps}·d metric DP" if not has_delta else f"({eps}·d, δ={dl}) metric DP"
        return text + (f" [{self.metric}]" if self.metric else "")

