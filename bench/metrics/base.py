"""The metric component: what one reported number is, how it is shown and, for a rewrite metric,
how it is computed -- all in one record, registered in :data:`METRICS`.

A :class:`Metric` names a key of a cell's metrics record and carries its direction
(``higher_is_better``, from the point of view of the privatization being evaluated), its
display label and decimals (read by the report and the findings), its bounds, its version and
its kind (the stage that produces it). A metric of kind ``"rewrite"`` also carries its
computation: a function of the original and the privatized documents, which
:func:`bench.metrics.rewrite.rewrite_scores` calls for every registered rewrite metric, in
``order``. Adding a rewrite metric is therefore one definition, registered here directly or by a
plugin through the ``bench.metrics`` entry-point group (docs/plugins.md).

Example:
    >>> METRICS.get("bleu").label, METRICS.get("bleu").digits
    ('BLEU', 2)
    >>> higher_is_better("adversary_macro_f1")
    False
    >>> [m.name for m in rewrite_metrics()]
    ['n_w', 'rouge1', 'bleu', 'bertscore']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.registry import Registry

Doc = str | Sequence[str]
"""One document: a string, or its token list."""

RewriteFn = Callable[[Sequence[Doc], Sequence[Doc]], "float | Mapping[str, float]"]
"""``compute(originals, privatized)`` of a rewrite metric: its value, or a mapping holding its
value under its name plus any values that ride along (ROUGE-2/L with ROUGE-1)."""

KINDS = ("utility", "privacy", "tradeoff", "chance", "rewrite", "membership", "loss")
"""The stages a metric comes from (``Metric.kind``); only ``rewrite`` metrics are computed
here, the others are computed by the stage and described here."""


@dataclass(frozen=True)
class Metric:
    """One reported number: what it means, how it is shown, and (rewrite metrics) how it is
    computed."""

    name: str
    """Key in a cell's metrics record (``metrics.rewrite.<name>`` for a rewrite metric)."""
    higher_is_better: bool
    """Direction, from the privatization's point of view (utility up, privacy up, attack down)."""
    description: str
    """One line, with the source of the definition."""
    lower: float | None = 0.0
    """Smallest possible value (None: unbounded)."""
    upper: float | None = 1.0
    """Largest possible value (None: unbounded)."""
    version: str = "1"
    """Bumped when the computation changes (part of the hash of every cell computing it)."""
    label: str = ""
    """Label in tables and findings (default: the name)."""
    digits: int = 3
    """Decimals shown in the report's Markdown and LaTeX tables."""
    kind: str = ""
    """The stage that produces it, one of :data:`KINDS` (``""``: not said)."""
    compute: RewriteFn | None = None
    """Rewrite metrics: ``compute(originals, privatized)``, see :data:`RewriteFn`."""
    identity: float | None = None
    """Rewrite metrics: the value of a text compared with itself (the report's Original
    column); None: not known."""
    order: int = 100
    """Rewrite metrics: position among them (the order of ``rewrite_scores``' keys and of the
    rewrite table's rows); ties by name."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a metric needs a non-empty name, got {self.name!r}")
        if not self.label:
            object.__setattr__(self, "label", self.name)
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or self.digits < 0:
            raise ValueError(f"metric {self.name!r}: digits must be an int >= 0, got "
                             f"{self.digits!r}")
        if self.kind == "rewrite" and not callable(self.compute):
            raise ValueError(f"rewrite metric {self.name!r} needs a compute(originals, "
                             "privatized) function")


METRICS: Registry[Metric] = Registry("metric")
"""Every metric a result file can hold, by name (plugins: entry-point group ``bench.metrics``)."""


def register_metric(metric: Metric) -> Metric:
    """Register ``metric`` under its name in :data:`METRICS` (a taken name is an error) and
    return it."""
    return METRICS.register()(metric)


def metric(name: str) -> Metric:
    """The registered metric ``name``.

    Raises:
        bench.registry.UnknownNameError: no such metric (the message suggests close names).
    """
    found = METRICS.get(name)
    if not isinstance(found, Metric) or found.name != name:
        raise TypeError(f"metric {name!r} is registered as a {type(found).__name__} named "
                        f"{getattr(found, 'name', None)!r}, not as a bench.metrics.Metric "
                        f"named {name!r} ({METRICS.origin(name)})")
    return found


def higher_is_better(name: str) -> bool:
    """The direction of the registered metric ``name``.

    Raises:
        bench.registry.UnknownNameError: ``name`` is not a registered metric -- a report must
            not guess the direction of a number it does not know.
    """
    return bool(metric(name).higher_is_better)


def rewrite_metrics() -> list[Metric]:
    """The registered rewrite metrics (plugins included), in ``order``, then by name."""
    found = [metric(name) for name, m in METRICS.items() if getattr(m, "kind", "") == "rewrite"]
    return sorted(found, key=lambda m: (m.order, m.name))


def metric_versions(names: Sequence[str]) -> str:
    """``"name=version,..."`` of the named metrics, sorted: part of the identity (hash) of every
    cell that computes them, so a bumped metric never reuses an old cell."""
    return ",".join(f"{n}={METRICS.get(n).version}" for n in sorted(names))


def as_values(m: Metric, value: Any) -> dict[str, float]:
    """A rewrite metric's result as ``{key: value}`` (its own key first where it is a number)."""
    if isinstance(value, Mapping):
        if m.name not in value:
            raise ValueError(f"rewrite metric {m.name!r} returned {sorted(value)} without "
                             f"its own key {m.name!r}")
        return {str(k): float(v) for k, v in value.items()}
    return {m.name: float(value)}
