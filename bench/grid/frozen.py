"""Immutable, hashable containers for cell specs, and the canonical JSON they are hashed as."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class FrozenDict(dict):
    """An immutable, hashable ``dict`` (JSON-serialisable like any dict)."""

    def _readonly(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("FrozenDict is immutable")

    __setitem__ = __delitem__ = _readonly  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = __ior__ = _readonly  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self.__dict__["_hash"]
        except KeyError:
            h = self.__dict__["_hash"] = hash(canonical_json(self))
            return h

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"

    def __reduce__(self):  # pickling (joblib workers) rebuilds through the constructor
        return (FrozenDict, (dict(self),))


def freeze(value: Any) -> Any:
    """Deep-freeze: dicts -> :class:`FrozenDict` (keys as str), lists/tuples -> tuples."""
    if type(value) is FrozenDict:
        return value
    if isinstance(value, (str, int, float, type(None))):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({str(k): freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Inverse of :func:`freeze`: mappings -> plain dicts, tuples/lists -> lists (deep)."""
    if isinstance(value, (str, int, float, type(None))):
        return value
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def canonical_json(obj: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, no NaN/inf (ε = ∞ is written ``"inf"``)."""
    # dict subclasses and tuples serialise as objects and arrays: no copy needed
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=True, default=str)
