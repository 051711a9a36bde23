"""Look-ups of the components a grid names, in their registries.

The registries are imported lazily, so ``import bench.grid`` stays cheap and a grid can be
checked without loading torch: :func:`construct` builds an unfitted component from plain
parameters (its ``ValueError`` / ``TypeError`` is the grid's error message), and
:func:`model_catalog` falls back to :data:`~bench.grid.schema.FALLBACK_MODELS` when the models
cannot be imported.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bench.grid.frozen import thaw
from bench.grid.schema import BASELINE, FALLBACK_MODELS, PROBE_EPSILONS

logger = logging.getLogger(__name__)

def registry(kind: str):
    """The registry of a component kind (imported on first use); KeyError if unknown."""
    if kind == "mechanism":
        from bench.mechanisms import MECHANISMS

        return MECHANISMS
    if kind == "sensitivity":
        from bench.sensitivity import SENSITIVITY

        return SENSITIVITY
    if kind == "mapping":
        from bench.mapping import MAPPINGS

        return MAPPINGS
    if kind == "dataset":
        from bench.datasets import DATASETS

        return DATASETS
    if kind == "embedding":
        from bench.embeddings import EMBEDDINGS

        return EMBEDDINGS
    if kind == "rewriter":
        from bench.rewriters import REWRITERS

        return REWRITERS
    raise KeyError(kind)


def construct(kind: str, name: str, params: Mapping[str, Any], epsilon: float = 1.0):
    """Build a component (unfitted) with plain params; ValueError/TypeError on bad params."""
    p = thaw(params)
    if kind == "mechanism":
        from bench.mechanisms import MECHANISMS

        return MECHANISMS.create(name, epsilon=epsilon, rng=0, **p)
    if kind == "sensitivity":
        from bench.sensitivity import SENSITIVITY

        return SENSITIVITY.create(name, **p)
    if kind == "mapping":
        from bench.mapping import MAPPINGS

        return MAPPINGS.create(name, **p)
    if kind == "rewriter":
        from bench.rewriters import REWRITERS

        return REWRITERS.create(name, **p)
    raise KeyError(kind)


@lru_cache(maxsize=None)
def component_defaults(kind: str, name: str) -> dict[str, Any]:
    """A component's parameters with their defaults (``{}`` when it cannot be built)."""
    if name == BASELINE and kind not in ("mapping", "sensitivity"):
        return {}
    for eps in PROBE_EPSILONS:
        try:
            return dict(construct(kind, name, {}, eps).params)
        except Exception:  # noqa: BLE001 - unknown names/defaults: show every parameter
            continue
    return {}


@lru_cache(maxsize=None)
def mechanism_kind(name: str) -> str:
    """A mechanism's kind (``"additive"`` or ``"selection"``; ``""`` if unknown)."""
    try:
        return registry("mechanism").get(name).kind
    except Exception:  # noqa: BLE001
        return ""


def param_names(cls: Any, skip: Iterable[str] = ()) -> list[str] | None:
    """Named constructor parameters, or None when it takes ``**kwargs`` / is not inspectable."""
    try:
        sig = inspect.signature(cls.__init__ if inspect.isclass(cls) else cls)
    except (TypeError, ValueError):
        return None
    names = []
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            return None
        if p.kind is inspect.Parameter.VAR_POSITIONAL or p.name in ("self", *skip):
            continue
        names.append(p.name)
    return names


@dataclass(frozen=True)
class ModelInfo:
    """What the grid needs to know about a model."""

    name: str
    accepts: frozenset[str]
    """``{"text"}`` or ``{"text", "vectors"}``."""
    version: str
    params: tuple[str, ...] | None
    """Allowed hyperparameter names, or None when unknown (not checked)."""


def model_catalog() -> dict[str, ModelInfo]:
    """Known models: from ``bench.models.MODELS`` when importable, else :data:`FALLBACK_MODELS`."""
    return dict(_model_catalog())


@lru_cache(maxsize=1)
def _model_catalog() -> tuple[tuple[str, ModelInfo], ...]:
    try:
        from bench.models import MODELS  # type: ignore[import-not-found]

        names = list(MODELS.names())
    except Exception as e:  # noqa: BLE001 - package missing or its dependencies missing
        logger.debug("bench.models not importable (%s); using the fallback model table", e)
        return tuple((n, ModelInfo(n, a, "1", None)) for n, a in FALLBACK_MODELS.items())
    out = []
    for n in names:
        try:
            cls = MODELS.get(n)
            accepts = frozenset(getattr(cls, "accepts", FALLBACK_MODELS.get(n, {"text"})))
            params = param_names(cls, skip=("seed", "rng", "random_state"))
            out.append((n, ModelInfo(n, accepts, str(getattr(cls, "version", "1")),
                                     tuple(params) if params is not None else None)))
        except Exception as e:  # noqa: BLE001 - heavy dependency missing for this model
            logger.debug("model %s not importable (%s); using the fallback table", n, e)
            out.append((n, ModelInfo(n, FALLBACK_MODELS.get(n, frozenset({"text"})), "1", None)))
    return tuple(out)


def plugin_origins(cell: Any) -> dict[str, str]:
    """``{"<kind> <name>": "<distribution> <version>"}`` for every component of ``cell`` that
    a plugin distribution provides (built-ins are left out: a cell of built-ins only gets an
    empty mapping). A cell records it (``metrics["plugins"]``) so that whoever reads or ranks
    it knows which package, at which version, computed its numbers."""
    from bench.attacks.adversary import ADVERSARIES
    from bench.models import MODELS
    from bench.registry import BUILTIN

    parts = [("dataset", cell.dataset, registry("dataset")),
             ("model", cell.model, MODELS),
             ("sensitivity", cell.sensitivity, registry("sensitivity")),
             ("mapping", cell.mapping, registry("mapping"))]
    if cell.mechanism != BASELINE:
        parts.append(("mechanism", cell.mechanism, registry("mechanism")))
    if cell.rewriter != "none":
        parts.append(("rewriter", cell.rewriter, registry("rewriter")))
    for item in str(cell.versions.get("adversaries") or "").split(","):
        if item:
            parts.append(("adversary", item.split("=")[0], ADVERSARIES))
    out = {}
    for kind, name, reg in parts:
        try:
            origin = reg.origin(name)
        except KeyError:  # not registered (e.g. an adversary built from the model): built in
            continue
        if origin != BUILTIN:
            out[f"{kind} {name}"] = origin
    return out
