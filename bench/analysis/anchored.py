"""Scores anchored at both ends: utility retained, privacy gained, and their product.

The thesis' deltas (Riecker 2023, Sec. 4.2: Δutility = F1_priv − F1_base, Δprivacy =
privacy_priv − privacy_base, trade-off = Δutility + Δprivacy) have no fixed ends: an output
that carries nothing about its input loses utility only down to chance and gains all the
privacy there is, so its trade-off is positive and it ranks above real mechanisms. The suite
reports, beside them, both measurements on a scale anchored at chance and at the unprivatized
baseline of the same dataset, model and seed (same split, same model seed):

* **utility retained** ``R = clip((U − C_U) / (U_b − C_U), 0, 1)``, U the utility model's
  macro-F1 on the privatized text, U_b on the original, C_U the chance threshold of the
  utility labels (:func:`bench.metrics.classification.chance_level`: the macro-F1 a label-blind
  guesser stays under with 95 % probability, or the best constant guesser's). An output that
  carries nothing about its input (utility at chance) retains 0; the input itself retains 1.
* **privacy gained** ``G = clip((A_b − A) / (A_b − C_A), 0, 1)``, A the attack's macro-F1 on the
  private attribute (privacy = 1 − A, Riecker 2023, Sec. 4.2), A_b on the original text, C_A its
  chance threshold. Equivalently ``G = Δprivacy / ((1 − C_A) − privacy_b)``: the thesis'
  Δprivacy as a share of the privacy there was to gain. The input itself gains 0; an attack
  pushed to chance, 1. It exists only where the privacy measurement is valid (A_b > C_A).
* **trade-off** ``T = R · G``: the area of the box between (0, 0) and the point (G, R) — the
  hypervolume (Zitzler & Thiele 1998) of one point, which is what the leaderboard's score adds
  up over ε (:mod:`bench.leaderboard.rank`). T = 0 for the identity (G = 0) and for an output
  that ignores its input (R = 0); T = 1 only for text that keeps all the utility and lets the
  attack do no better than chance.

Both ends clip: a privatized model that beats its baseline keeps R = 1 (it cannot earn more
than the input has), an attack below chance gives G = 1. Each seed is scored against the
baseline of its own seed; a configuration's values are the mean over its seeds with the
t interval (:class:`bench.analysis.results.Stat`), and R, G and T of a row are always over the
same seeds. With one seed, R and G carry the cell's bootstrap interval mapped through the same
formula (the baseline held fixed); T of one seed has no interval.

Example:
    >>> retained(0.7, 0.9, 0.5), gained(0.3, 0.5, 0.2)
    (0.5, 0.6666666666666667)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.analysis.baseline import BaselineIndex
from bench.analysis.results import CellRecord, Group, Stat, stat, to_float
from bench.results.sections import CellMetrics

VERSION = "1"
"""Version of the anchored scores (written into the report's CSV records)."""



def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def retained(u: float, u_base: float, chance: float) -> float | None:
    """Utility retained, ``clip((u − chance) / (u_base − chance), 0, 1)``; None when the
    baseline is no better than chance (nothing to retain) or a value is missing."""
    if not all(math.isfinite(x) for x in (u, u_base, chance)) or u_base <= chance:
        return None
    return _clip((u - chance) / (u_base - chance))


def gained(a: float, a_base: float, chance: float) -> float | None:
    """Privacy gained, ``clip((a_base − a) / (a_base − chance), 0, 1)`` for attack macro-F1s
    ``a`` (privatized) and ``a_base`` (original); None when the attack is no better than chance
    on the baseline (no valid privacy measurement) or a value is missing."""
    if not all(math.isfinite(x) for x in (a, a_base, chance)) or a_base <= chance:
        return None
    return _clip((a_base - a) / (a_base - chance))


def _num(v: Any) -> float:
    f = to_float(v)
    return f if math.isfinite(f) else math.nan


def _chance(m: CellMetrics, b: CellMetrics, get: Callable[[CellMetrics], Any]) -> float:
    """The chance threshold of the cell, else its baseline's (same split, same labels)."""
    c = _num(get(m))
    return c if math.isfinite(c) else _num(get(b))


@dataclass(frozen=True)
class CellAnchored:
    """One cell's anchored scores on one private attribute."""

    retained: float | None
    gained: float | None
    retained_ci: tuple[float, float] | None = None
    """The cell's bootstrap interval of the utility mapped through the formula."""
    gained_ci: tuple[float, float] | None = None
    """The cell's bootstrap interval of the privacy mapped through the formula."""

    @property
    def tradeoff(self) -> float | None:
        """``retained · gained`` (None unless both exist)."""
        if self.retained is None or self.gained is None:
            return None
        return self.retained * self.gained


def _map_ci(ci: Any, f: Callable[[float], float | None]) -> tuple[float, float] | None:
    if not (isinstance(ci, (list, tuple)) and len(ci) == 2):
        return None
    lo, hi = (f(_num(x)) for x in ci)
    if lo is None or hi is None:
        return None
    return (min(lo, hi), max(lo, hi))


UTILITIES = ("model", "reference")
"""Whose utility is anchored: the cell's own utility model, or the reference classifier of the
``reference_utility`` measure (:mod:`bench.measures.reference_utility`)."""


def _utility(m: CellMetrics, which: str) -> tuple[Any, Any, Any, Any]:
    """(macro-F1, its interval, chance threshold, at chance) of the chosen utility."""
    if which == "reference":
        r = m.measure("reference_utility")
        return r.get("macro_f1"), r.get("macro_f1_ci95"), r.get("chance_threshold"), \
            r.get("chance_level")
    u = m.utility
    return u.macro_f1, u.macro_f1_ci95, u.chance_threshold, u.chance_level


def has_reference(records: Any) -> bool:
    """Whether any of the records holds the ``reference_utility`` measure."""
    return any(r.sections.measure("reference_utility") for r in records)


def cell_anchored(rec: CellRecord, base: CellRecord | None, task: str | None,
                  utility: str = "model") -> CellAnchored:
    """The anchored scores of a privatized cell against the baseline of its seed.

    Privacy is the attribute's record as :func:`bench.analysis.privacy.select_privacy` left it
    (the strongest adversary by default; the baseline's the same way); it counts unless the
    cell's measurement is marked not valid (``privacy_valid`` False) and only where the attack
    beats chance on the baseline. ``task`` None: utility only.
    """
    if base is None:
        return CellAnchored(None, None)
    m, b = rec.sections, base.sections
    u, u_ci, *_ = _utility(m, utility)
    cu = _chance(m, b, lambda s: _utility(s, utility)[2])
    ub = _num(_utility(b, utility)[0])
    r = retained(_num(u), ub, cu)
    r_ci = _map_ci(u_ci, lambda x: retained(x, ub, cu)) if r is not None else None
    g = g_ci = None
    if task is not None and task in m.attributes and task in b.attributes:
        p, pb = m.attribute(task), b.attribute(task)
        if p.privacy_valid is not False:  # None: older cells; gained() checks the baseline
            ca = _chance(m, b, lambda s: s.attribute(task).chance_threshold)
            ab = 1.0 - _num(pb.privacy)
            g = gained(1.0 - _num(p.privacy), ab, ca)
            if g is not None:
                g_ci = _map_ci(p.privacy_ci95, lambda q: gained(1.0 - q, ab, ca))
    return CellAnchored(r, g, r_ci, g_ci)


@dataclass(frozen=True)
class GroupAnchored:
    """A configuration's anchored scores on one attribute, over its seeds.

    ``retained`` is over every seed with a utility (as the thesis' Δutility); ``gained`` and
    ``tradeoff`` over the seeds that also have a valid privacy measurement (as Δprivacy)."""

    retained: Stat | None
    gained: Stat | None
    tradeoff: Stat | None
    n_utility: int
    """Seeds with a retained utility."""
    n_privacy: int
    """Seeds with both values (those of ``gained`` and ``tradeoff``)."""
    utility_at_chance: int
    """Seeds whose utility model is no better than chance (R = 0 there)."""
    retained_paired: Stat | None = None
    """Utility retained over the seeds of ``gained`` (the favourable rule pairs them)."""

    def without_privacy(self) -> GroupAnchored:
        """The same utility with no privacy columns (an invalid privacy measurement)."""
        return GroupAnchored(self.retained, None, None, self.n_utility, 0,
                             self.utility_at_chance)

    @property
    def favourable(self) -> bool:
        """Whether the trade-off is above 0 beyond its interval, with no seed's utility at
        chance. Several seeds: the t interval of the trade-off lies above 0. One seed (no
        interval of its own): that seed's bootstrap intervals of both retained and gained lie
        above 0. No interval at all: not judged, never favourable."""
        t = self.tradeoff
        if t is None or not (t.mean > 0) or self.utility_at_chance:
            return False
        if t.has_interval:
            return float(t.lo) > 0  # type: ignore[arg-type]
        r, g = self.retained_paired, self.gained
        return bool(r is not None and g is not None and r.has_interval and g.has_interval
                    and float(r.lo) > 0 and float(g.lo) > 0)  # type: ignore[arg-type]


def anchored_cells(g: Group, task: str | None, index: BaselineIndex[CellRecord],
                   utility: str = "model") -> list[CellAnchored]:
    """:func:`cell_anchored` of every cell of ``g`` (seed order) against its seed's baseline in
    ``index`` (:func:`bench.analysis.privacy.baseline_index`)."""
    from bench.analysis.privacy import baseline_of

    return [cell_anchored(r, baseline_of(r, index), task, utility) for r in g.records]


def group_anchored(g: Group, task: str | None, index: BaselineIndex[CellRecord],
                   utility: str = "model", cells: list[CellAnchored] | None = None
                   ) -> GroupAnchored:
    """:class:`GroupAnchored` of a privatized configuration; ``index`` holds the baselines
    (:func:`bench.analysis.privacy.baseline_index`). With ``task`` None only ``retained``.
    ``utility``: whose utility (:data:`UTILITIES`); ``cells``: :func:`anchored_cells` of the
    same arguments when the caller has them already."""
    if cells is None:
        cells = anchored_cells(g, task, index, utility)
    both = [c for c in cells if c.retained is not None and c.gained is not None]
    util = [c for c in cells if c.retained is not None]
    at_chance = g.count(lambda m: _utility(m, utility)[3] is True)
    return GroupAnchored(_stat(util, "retained"), _stat(both, "gained"),
                         stat([c.tradeoff for c in both]), len(util), len(both), at_chance,
                         _stat(both, "retained"))


def _stat(cells: list[CellAnchored], what: str) -> Stat | None:
    return stat([getattr(c, what) for c in cells], [getattr(c, f"{what}_ci") for c in cells])
