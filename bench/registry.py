"""One generic registry for every kind of component (mechanisms, sensitivity approaches, ...).

Registration is by decorator; a duplicate name is an error; an unknown name answers with
"did you mean ...?"; heavy components can be registered lazily as ``"module:attr"`` strings so
importing the package stays fast.

Example:
    >>> MECHANISMS = Registry("mechanism")
    >>> @MECHANISMS.register("mvl")
    ... class MVL: ...
    >>> MECHANISMS.get("mvl") is MVL
    True
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError, ValueError):
    """Raised for a name that is not registered; the message suggests close matches."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Registry(Generic[T]):
    """A name -> component mapping with decorator registration and lazy entries."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator registering ``obj`` under ``name``; a duplicate name raises ``ValueError``."""

        def deco(obj: T) -> T:
            self._add(name, obj)
            return obj

        return deco

    def register_lazy(self, name: str, target: str) -> None:
        """Register ``"package.module:attr"``, imported on first ``get``."""
        if ":" not in target:
            raise ValueError(f"lazy {self.kind} entry must be 'module:attr', got {target!r}")
        self._add(name, target)

    def _add(self, name: str, obj: T | str) -> None:
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = obj

    def get(self, name: str) -> T:
        """Return the component registered as ``name`` (importing it if lazy)."""
        try:
            obj = self._entries[name]
        except KeyError:
            raise UnknownNameError(self.unknown_message(name)) from None
        if isinstance(obj, str):
            module, attr = obj.split(":", 1)
            obj = getattr(importlib.import_module(module), attr)
            self._entries[name] = obj
        return obj  # type: ignore[return-value]

    def unknown_message(self, name: str) -> str:
        """Message for an unknown name, with did-you-mean suggestions."""
        close = difflib.get_close_matches(str(name), list(self._entries), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        return f"unknown {self.kind} {name!r}{hint} (known: {', '.join(sorted(self._entries))})"

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)
