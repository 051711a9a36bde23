"""A stored spec checked as ``bench run`` checks a grid, before anything recomputes it.

``bench verify --repair`` and ``bench leaderboard --verify`` rebuild a cell from the spec of a
results folder, which anyone may have written. :func:`spec_refusal` reads the spec back into
the grid values it stands for (each component's name and parameters, ε, seed, the settings
with ``model_defaults`` as ``settings.models``) and puts them through the same
:class:`~bench.grid.validate.Parser` a grid file goes through: names known, parameters valid,
the resource limits of :mod:`bench.grid.limits`. So a spec that ``bench run`` would refuse as
a grid is never recomputed, and a spec of another format gets one line, never an exception.

What a grid only skips (a mechanism refusing its ε, a dataset whose file is missing here) is
not checked: the recomputation fails on it with the same reason, at no great cost.

Example:
    >>> spec_refusal({"model": {"name": "lstm", "params": {"epochs": 1e9}}, ...})
    "model: model 'lstm' parameter epochs = 1000000000.0 is above its limit 1,000 (...)"
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.grid.parse import RawGrid
from bench.grid.schema import (
    BASELINE,
    OPTIONAL_SETTINGS,
    PROBE_EPSILONS,
    SETTINGS_DEFAULTS,
    GridError,
)
from bench.grid.validate import Parser

_PARTS = ("dataset", "model", "mechanism", "sensitivity", "mapping")
"""The components every spec names, in the order they are checked."""


class _SpecParser(Parser):
    """A :class:`Parser` whose errors name the spec's key only (there is no grid file)."""

    def fail(self, key: str, msg: str) -> GridError:
        """A :class:`GridError` ``<key>: <msg>``."""
        return GridError(f"{key}: {msg}")


def spec_refusal(spec: Any) -> str | None:
    """Why ``bench run`` would refuse the grid values a stored spec describes (one line), or
    None when it would accept them. Never raises: a spec of another format is a reason."""
    try:
        why = _refusal(spec)
    except GridError as e:
        why = str(e)
    except Exception as e:  # noqa: BLE001 - an old or hostile spec: one line, never a crash
        why = f"not a spec of this version ({type(e).__name__}: {e})"
    return None if why is None else " ".join(why.split())


def _part(spec: Mapping[str, Any], key: str) -> tuple[str, dict[str, Any]] | str:
    """``(name, params)`` of one component of the spec, or why it is not one."""
    field = "config" if key == "dataset" else "params"
    part = spec.get(key)
    if (not isinstance(part, Mapping) or not isinstance(part.get("name"), str)
            or not isinstance(part.get(field), Mapping)
            or not all(isinstance(k, str) for k in part[field])):
        return (f"{key}: not {{name: ..., {field}: {{...}}}} (a spec of another format), got "
                f"{type(part).__name__}")
    return part["name"], dict(part[field])


def _refusal(spec: Any) -> str | None:
    if not isinstance(spec, Mapping):
        return f"not a JSON object, got {type(spec).__name__}"
    parts = {}
    for key in (*_PARTS, *(["rewriter"] if "rewriter" in spec else [])):
        part = _part(spec, key)
        if isinstance(part, str):
            return part
        parts[key] = part
    settings = spec.get("settings")
    if not isinstance(settings, Mapping):
        return f"settings: not a mapping (a spec of another format), got {type(settings).__name__}"
    allowed = {*SETTINGS_DEFAULTS, *OPTIONAL_SETTINGS, "model_defaults"} - {"models"}
    extra = sorted(str(k) for k in settings if k not in allowed)
    if extra:
        return f"settings: unknown key(s) {', '.join(extra)} (a spec of another format)"
    model, model_params = parts["model"]
    grid_settings = {k: v for k, v in settings.items() if k != "model_defaults"}
    grid_settings["models"] = {model: settings.get("model_defaults") or {}}
    p = _SpecParser(RawGrid({"settings": grid_settings}, {}, []), Path("spec"))
    p.parse_settings()
    p.seed(spec.get("seed"), "seed")
    mech, mech_params = parts["mechanism"]
    if mech == BASELINE:
        why = _baseline_refusal(spec, parts)
        if why:
            return why
    elif (known := _stored_epsilon(mech)) is not None:  # a known answer: its own ε, none
        why = _known_answer_refusal(spec, parts, known)
        if why:
            return why
    else:
        eps = p.epsilon(spec.get("epsilon"), "epsilon")
        p.probe_epsilons = (*PROBE_EPSILONS, eps)
    ds = p._dataset(*parts["dataset"], "dataset", False)
    p._model(model, model_params, "model", False)
    if mech == BASELINE:
        return None
    m = p._component("mechanism", mech, mech_params, "mechanism", False)
    p._component("sensitivity", *parts["sensitivity"], "sensitivity", False)
    mp = p._component("mapping", *parts["mapping"], "mapping", False)
    if "rewriter" in parts:
        _check_rewriter(p, parts["rewriter"], ds, m, mp)
    return None


def _stored_epsilon(mech: str) -> float | str | None:
    from bench.mechanisms.known import stored_epsilon

    return stored_epsilon(mech)


def _known_answer_refusal(spec: Mapping[str, Any], parts: dict[str, tuple[str, dict]],
                          want: float | str) -> str | None:
    """A known-answer cell as the grid expander writes it (:mod:`bench.mechanisms.known`):
    its own ε (``want``, as stored), sensitivity and mapping ``none``."""
    got = spec.get("epsilon")
    if got != want or isinstance(got, bool):
        return f"epsilon: a {parts['mechanism'][0]} cell's is {want!r}, got {got!r}"
    for key in ("sensitivity", "mapping"):
        if parts[key][0] != "none":
            return f"{key}: a known answer has {key} none, got {parts[key][0]!r}"
    return None  # the components' parameters are checked as every cell's


def _baseline_refusal(spec: Mapping[str, Any], parts: dict[str, tuple[str, dict]]) -> str | None:
    """A baseline as ``bench run`` writes it: ε = ∞, no parameters, no privatization."""
    if spec.get("epsilon") != "inf":
        return f"epsilon: a baseline's is 'inf', got {spec.get('epsilon')!r}"
    for key in ("mechanism", "sensitivity", "mapping"):
        if parts[key] != ("none", {}):
            return f"{key}: a baseline has {key} none without parameters, got {parts[key]!r}"
    if "rewriter" in parts:
        return "rewriter: a baseline has none"
    return None


def _check_rewriter(p: Parser, rewriter: tuple[str, dict], ds: Any, mech: Any,
                    mapping: Any) -> None:
    """The rewriter's parameters and its training corpus, as a grid's are checked."""
    from bench.rewriters.base import PRIVATE_CORPUS

    name, params = rewriter
    if p.fit_on() == "private" and params.get("corpus") == PRIVATE_CORPUS:
        params = {k: v for k, v in params.items() if k != "corpus"}  # recorded, not written
    rw = p._rewriter(name, params, "rewriter", False)
    output = "vectors" if (mech.extra.kind == "additive" and
                           not mapping.extra.outputs_text) else "text"
    p.rewriter_params(rw, ds, output)
