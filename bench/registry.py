"""One generic registry for every kind of component (mechanisms, sensitivity approaches, ...),
and the discovery of third-party components (plugins) through Python entry points.

Registration is by decorator, under the component's own ``name`` attribute (the name is
written once); a duplicate name is an error; an unknown name answers with "did you mean ...?";
heavy components can be registered lazily as ``"module:attr"`` strings so importing the package
stays fast (the name is then given with the string, and checked against the class's ``name`` on
first use). :meth:`Registry.create` builds a component that is a class (mechanism, sensitivity
approach, mapping, model, adversary, rewriter), with one error for an unknown name
(:class:`UnknownNameError`) and one for a bad parameter (:class:`ParameterError`);
:func:`declared_params` reads a component's parameter record from its constructor, so the
parameters are declared once too.

Plugins: an installed distribution declares components in an entry-point group, one entry point
per component, ``<registry name> = "<module>:<attr>"``. Each registry reads its group
(:data:`ENTRY_POINT_GROUPS`) once, lazily, the first time it is asked for names, membership,
a component or an origin -- never at ``import bench`` -- and registers every entry point as a
lazy ``"module:attr"`` entry, so nothing of the plugin is imported before it is used:

=========================  ====================  ==========================================
kind (``Registry.kind``)   entry-point group     what the entry point names
=========================  ====================  ==========================================
``mechanism``              ``bench.mechanisms``  a ``bench.mechanisms.base.Mechanism`` class
``sensitivity approach``   ``bench.sensitivity`` a ``SensitivityApproach`` class
``mapping``                ``bench.mappings``    a ``bench.mapping.Mapping`` class
``embedding``              ``bench.embeddings``  a loader ``(vocab_size) -> Embedding``
``dataset``                ``bench.datasets``    a ``bench.datasets.DatasetSpec``
``model``                  ``bench.models``      a ``bench.models.base.Model`` class
``adversary``              ``bench.adversaries`` a ``Model`` class (attribute adversary)
``metric``                 ``bench.metrics``     a ``bench.metrics.Metric`` record
``rewriter``               ``bench.rewriters``   a ``bench.rewriters.Rewriter`` class
``measure``                ``bench.measures``    a ``bench.measures.Measure`` record
=========================  ====================  ==========================================

Rules (docs/plugins.md):

- Built-ins win. A plugin name that is already taken -- by a built-in, or by a plugin found
  earlier on ``sys.path`` -- is refused with one warning naming the package; the first owner
  stays. A built-in registered *after* discovery (registration order does not matter) also
  replaces the plugin entry, with the same warning.
- A plugin that fails to import (any exception on the first :meth:`Registry.get`) gives one
  warning naming the package and the error, and is from then on unknown: ``get`` raises
  :class:`UnknownNameError` saying why, and it leaves :meth:`Registry.names`.
- :meth:`Registry.origin` says where a component comes from: ``"bench"`` for built-ins,
  ``"<distribution> <version>"`` for plugins.

Example:
    >>> MECHANISMS = Registry("mechanism", group="")   # "": no entry-point discovery
    >>> @MECHANISMS.register()
    ... class MVL:
    ...     name = "mvl"
    ...     def __init__(self, *, epsilon: float, calibrate: bool = False) -> None: ...
    >>> MECHANISMS.get("mvl") is MVL
    True
    >>> MECHANISMS.origin("mvl")
    'bench'
    >>> mech = MECHANISMS.create("mvl", epsilon=1.0)
    >>> MECHANISMS.create("mvl", epsilon=1.0, calibrat=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ParameterError: mechanism 'mvl': unknown parameter 'calibrat' (did you mean 'calibrate'?)...
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import logging
import re
import sys
import threading
from collections.abc import Callable, Collection, Iterator
from typing import Any, Generic, TypeVar

from bench.errors import InputError

T = TypeVar("T")

logger = logging.getLogger(__name__)

BUILTIN = "bench"
"""Origin of the components registered by the suite itself (and by code calling ``register``)."""

ENTRY_POINT_GROUPS: dict[str, str] = {
    "mechanism": "bench.mechanisms",
    "sensitivity approach": "bench.sensitivity",
    "mapping": "bench.mappings",
    "embedding": "bench.embeddings",
    "dataset": "bench.datasets",
    "model": "bench.models",
    "adversary": "bench.adversaries",
    "metric": "bench.metrics",
    "rewriter": "bench.rewriters",
    "measure": "bench.measures",
}
"""Registry kind -> the entry-point group its plugins are declared in."""


class UnknownNameError(InputError, KeyError, ValueError):
    """Raised for a name that is not registered; the message suggests close matches."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
"""A component's name: ASCII letters, digits, ``_``, ``.`` and ``-``, at most 64 characters.
Nothing invisible or look-alike (``t\u200bem``, a Cyrillic ``е`` in ``tem``) can be a name, so a
name on a page is the component it says (issue 48)."""


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a component's name (None: it can). The character is named by
    its code point, never printed, so an invisible one shows."""
    if not isinstance(name, str):
        return f"is a {type(name).__name__}, not text"
    if NAME.fullmatch(name):
        return None
    bad = next((i for i, c in enumerate(name)
                if not (c.isascii() and (c.isalnum() or c in "_.-"))), None)
    if bad is not None:
        return (f"has the character U+{ord(name[bad]):04X} at position {bad + 1}: a name is "
                "ASCII letters, digits, '_', '.' and '-' only")
    return "must start with a letter or digit and have at most 64 characters"


class ParameterError(InputError, TypeError, ValueError):
    """Raised by :meth:`Registry.create` for an unknown, missing or invalid parameter; the
    message names the component, the parameter and (when unknown or missing) the accepted ones.
    A ``TypeError`` and a ``ValueError`` too, as the constructor's own errors were."""


class Registry(Generic[T]):
    """A name -> component mapping with decorator registration, lazy entries and plugins.

    Args:
        kind: what the registry holds, in messages (``"mechanism"``).
        group: the entry-point group plugins are read from; ``None`` (default): the kind's
            group in :data:`ENTRY_POINT_GROUPS` (none for other kinds); ``""``: no discovery.
    """

    def __init__(self, kind: str, group: str | None = None) -> None:
        self.kind = kind
        self.group = ENTRY_POINT_GROUPS.get(kind, "") if group is None else group
        self._entries: dict[str, T | str] = {}  # a lazy entry holds its "module:attr" target
        self._lazy: set[str] = set()  # names whose entry is still a target string
        self._origins: dict[str, str] = {}  # plugin entries only; every other name is BUILTIN
        self._broken: dict[str, tuple[str, str]] = {}  # name -> (origin, error) of failed plugins
        self._discovered = not self.group
        self._lock = threading.RLock()
        self._loading: tuple[str, dict[str, T]] | None = None  # (origin, registered) of a plugin

    # -- registration ----------------------------------------------------------------------
    def register(self, name: str | None = None) -> Callable[[T], T]:
        """Decorator registering ``obj`` under its own ``name`` attribute (written once).

        ``register("x")`` gives the name explicitly (an object without a ``name`` attribute,
        such as a loader function); a class that declares its own different ``name`` is then
        refused, and a class that inherits ``name`` gets it set to ``"x"``. A duplicate name
        raises ``ValueError``.
        """

        def deco(obj: T) -> T:
            self._add(self._name_of(obj, name), obj)
            return obj

        return deco

    def _name_of(self, obj: Any, name: str | None) -> str:
        own = vars(obj).get("name") if isinstance(obj, type) else getattr(obj, "name", None)
        if name is None:
            if not isinstance(own, str) or not own:
                raise ValueError(f"{self.kind} {obj!r} has no 'name' attribute of its own; "
                                 f"declare one or register it as register('<name>')")
            return own
        if isinstance(own, str) and own and own != name:
            raise ValueError(f"{self.kind} {obj!r} declares name {own!r} but is registered "
                             f"as {name!r}; write the name once: register() takes it")
        if isinstance(obj, type) and own is None and hasattr(obj, "name"):
            obj.name = name  # an inherited default name: the registered one is the class's
        return name

    def register_lazy(self, name: str, target: str) -> None:
        """Register ``"package.module:attr"``, imported on first ``get``."""
        if ":" not in target:
            raise ValueError(f"lazy {self.kind} entry must be 'module:attr', got {target!r}")
        self._add(name, target, lazy=True)

    def _add(self, name: str, obj: T | str, lazy: bool = False) -> None:
        why = name_problem(name)
        if why:
            raise ValueError(f"{self.kind} name {ascii(name)} {why}")
        if self._loading is not None:  # registration from inside a plugin's own import
            origin, registered = self._loading
            if self._origins.get(name) == origin:  # declared by its entry point: use this object
                if not lazy:  # (a lazy target: the entry point's own target is used)
                    registered[name] = obj  # type: ignore[assignment]
                return
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is already registered (plugin package "
                                 f"{origin} registers it again)")
            self._origins[name] = origin  # not declared: still the plugin's
        elif name in self._entries:
            plugin = self._origins.pop(name, None)
            if plugin is None:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            # a built-in registered after discovery: it wins over the plugin entry
            self._refuse(name, plugin, BUILTIN)
        self._entries[name] = obj
        if lazy:
            self._lazy.add(name)
        else:
            self._lazy.discard(name)

    # -- plugin discovery ------------------------------------------------------------------
    def _discover(self) -> None:
        """Register this registry's entry points, once (lazy: on the first query)."""
        if self._discovered:
            return
        with self._lock:
            if self._discovered:
                return
            try:
                found = _entry_points(self.group)
            except Exception as e:  # noqa: BLE001 - broken metadata must not break bench
                logger.warning("reading the %r entry points failed (%s: %s); no %s plugins are "
                               "used", self.group, type(e).__name__, e, self.kind)
                found = []
            for ep in found:
                origin = _origin_of(ep)
                if ep.name in self._entries:
                    self._refuse(ep.name, origin, self._origins.get(ep.name, BUILTIN))
                elif name_problem(ep.name):
                    logger.warning("%s plugin %s from package %s is ignored: its name %s",
                                   self.kind, ascii(ep.name), origin, name_problem(ep.name))
                elif not ep.attr:
                    logger.warning("%s plugin %r from package %s is ignored: its entry point "
                                   "%r must be 'module:attr'", self.kind, ep.name, origin,
                                   ep.value)
                else:
                    self._entries[ep.name] = f"{ep.module}:{ep.attr}"
                    self._lazy.add(ep.name)
                    self._origins[ep.name] = origin
            self._discovered = True

    def _refuse(self, name: str, plugin: str, owner: str) -> None:
        who = "a built-in" if owner == BUILTIN else f"plugin package {owner}"
        logger.warning("%s plugin %r from package %s is refused: the name belongs to %s %s, "
                       "which is used", self.kind, name, plugin, who, self.kind)

    def _load_plugin(self, name: str, target: str, origin: str) -> T:
        module, attr = target.split(":", 1)
        registered: dict[str, T] = {}
        self._loading = (origin, registered)
        try:
            mod = importlib.import_module(module)
            # a plugin module may also register itself with the decorator: that object is used
            obj = registered[name] if name in registered else functools.reduce(
                getattr, attr.split("."), mod)
        except Exception as e:  # noqa: BLE001 - any import-time error: the plugin is broken
            del self._entries[name], self._origins[name]
            self._lazy.discard(name)
            self._broken[name] = (origin, f"{type(e).__name__}: {e}")
            logger.warning("%s plugin %r from package %s cannot be loaded (%s: %s); it is "
                           "ignored", self.kind, name, origin, type(e).__name__, e)
            logger.debug("import of %s failed", target, exc_info=True)
            raise UnknownNameError(self.unknown_message(name)) from e
        finally:
            self._loading = None
        return obj

    # -- look-up ---------------------------------------------------------------------------
    def get(self, name: str) -> T:
        """Return the component registered as ``name`` (importing it if lazy).

        Raises:
            UnknownNameError: ``name`` is not registered, or is a plugin that failed to load
                (the first such call also logs one warning naming the package).
        """
        self._discover()
        try:
            obj = self._entries[name]
        except KeyError:
            raise UnknownNameError(self.unknown_message(name)) from None
        if name in self._lazy:
            with self._lock:
                obj = self._entries[name]
                if name in self._lazy:
                    origin = self._origins.get(name)
                    if origin is None:  # built-in: an import error is a bug, raised as it is
                        module, attr = obj.split(":", 1)
                        obj = getattr(importlib.import_module(module), attr)
                        if isinstance(obj, type) and getattr(obj, "name", name) != name:
                            raise ValueError(f"{self.kind} {name!r} ({module}:"
                                             f"{attr}) declares name {obj.name!r}")
                    else:
                        obj = self._load_plugin(name, obj, origin)
                    self._entries[name] = obj
                    self._lazy.discard(name)
        return obj  # type: ignore[return-value]

    def create(self, name: str, /, **params: Any) -> Any:
        """Build the component registered as ``name`` (a class) with keyword ``params``.

        The one way to build a mechanism, sensitivity approach, mapping, model, adversary or
        rewriter: the parameters are checked against the constructor's signature first, so an
        unknown or missing one names the component and the accepted ones; a ``ValueError`` or
        ``TypeError`` the constructor raises while validating a value becomes the same error
        (a more specific error, such as an :class:`~bench.errors.InputError`, is raised as it
        is).

        Raises:
            UnknownNameError: ``name`` is not registered (with did-you-mean).
            ParameterError: an unknown, missing or invalid parameter.
            TypeError: this registry's components are not classes (datasets, metrics, ...).
        """
        cls = self.get(name)
        if not isinstance(cls, type):
            raise TypeError(f"{self.kind} {name!r} is a {type(cls).__name__}, not a class "
                            f"to build; get() returns it")
        check_params(cls, params, f"{self.kind} {name!r}")
        try:
            return cls(**params)
        except (ValueError, TypeError) as e:
            if type(e) not in (ValueError, TypeError):  # a precise error: raised as it is
                raise
            msg = str(e).removeprefix(f"{name}: ").removeprefix(f"{self.kind} {name!r}: ")
            raise ParameterError(f"{self.kind} {name!r}: {msg}") from e

    def origin(self, name: str) -> str:
        """Where ``name`` comes from: ``"bench"``, or ``"<distribution> <version>"`` of a plugin
        (also for a plugin that failed to load)."""
        self._discover()
        if name in self._broken:
            return self._broken[name][0]
        if name not in self._entries:
            raise UnknownNameError(self.unknown_message(name))
        return self._origins.get(name, BUILTIN)

    def origin_note(self, name: str) -> str:
        """``" [plugin: <distribution> <version>]"`` for a plugin, ``""`` for a built-in (the
        suffix ``bench ls`` puts on a plugin's row)."""
        origin = self.origin(name)
        return "" if origin == BUILTIN else f" [plugin: {origin}]"

    def items(self) -> list[tuple[str, T]]:
        """``(name, component)`` for every usable name, sorted, importing lazy entries.

        A plugin that fails to import is left out (one warning, then :meth:`broken` has it); a
        built-in lazy entry that fails to import raises as :meth:`get` does.
        """
        out = []
        for name in self.names():
            try:
                out.append((name, self.get(name)))
            except UnknownNameError:
                if name not in self._broken:
                    raise
        return out

    def broken(self) -> dict[str, tuple[str, str]]:
        """Plugins that failed to load: name -> (origin, error)."""
        self._discover()
        return dict(self._broken)

    def broken_note(self) -> str:
        """One line per plugin that failed to load (``""`` when none), for ``bench ls``."""
        return "".join(f"not loaded: {self.kind} {name!r} [plugin: {origin}]: {err}\n"
                       for name, (origin, err) in sorted(self.broken().items()))

    def plugins_note(self) -> str:
        """``"plugins: name [dist version], ..."`` (one line) or ``""`` without plugins."""
        self._discover()
        names = sorted(n for n in self._entries if n in self._origins)
        if not names:
            return ""
        return "plugins: " + ", ".join(f"{n} [{self._origins[n]}]" for n in names) + "\n"

    def unknown_message(self, name: str) -> str:
        """Message for an unknown name, with did-you-mean suggestions."""
        self._discover()
        if name in self._broken:
            origin, err = self._broken[name]
            return (f"{self.kind} {name!r} comes from plugin package {origin}, which failed to "
                    f"load ({err}); it is ignored")
        close = difflib.get_close_matches(str(name), list(self._entries), n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        return f"unknown {self.kind} {name!r}{hint} (known: {', '.join(sorted(self._entries))})"

    def names(self) -> list[str]:
        """Registered names, sorted (plugins included, broken plugins not)."""
        self._discover()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._discover()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._discover()
        return len(self._entries)


# ------------------------------------------------------------------------------ parameters

_KEYWORD = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@functools.lru_cache(maxsize=256)
def constructor_params(cls: type) -> tuple[inspect.Parameter, ...] | None:
    """The keyword parameters of ``cls``'s constructor, in order; ``None`` when it also takes
    ``**kwargs`` (any name may then be valid)."""
    params = inspect.signature(cls).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return tuple(p for p in params if p.kind in _KEYWORD)


def check_params(cls: type, params: dict[str, Any], who: str) -> None:
    """Raise :class:`ParameterError` when ``params`` has a name ``cls()`` does not take, or
    lacks a required one; ``who`` names the component in the message (``"mechanism 'tem'"``)."""
    declared = constructor_params(cls)
    if declared is None:
        return
    accepted = [p.name for p in declared]
    listed = f"accepted: {', '.join(accepted) or 'none'}"
    for key in params:
        if key not in accepted:
            close = difflib.get_close_matches(str(key), accepted, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ParameterError(f"{who}: unknown parameter {key!r}{hint}; {listed}")
    missing = [p.name for p in declared if p.default is p.empty and p.name not in params]
    if missing:
        raise ParameterError(f"{who}: missing required parameter {missing[0]!r}; {listed}")


def declared_params(obj: Any, exclude: Collection[str] = (),
                    omit_default: Collection[str] = ()) -> dict[str, Any]:
    """A component's parameter record read from its one declaration, the constructor.

    Each keyword parameter of ``type(obj).__init__`` in signature order, valued by the
    attribute of the same name (the constructor stores the validated value there; a tuple is
    recorded as a list), except those in ``exclude`` (not hyperparameters: ``n_classes``,
    ``num_threads``) and those in ``omit_default`` while they hold their default (an option
    recorded only when set, so older records and their hashes stay as they were).
    """
    out: dict[str, Any] = {}
    for p in constructor_params(type(obj)) or ():
        if p.name in exclude:
            continue
        try:
            value = getattr(obj, p.name)
        except AttributeError:
            raise AttributeError(f"{type(obj).__name__} does not store its parameter {p.name!r} "
                                 f"as self.{p.name} (exclude it, or store it)") from None
        if p.name in omit_default and value == p.default:
            continue
        out[p.name] = list(value) if isinstance(value, tuple) else value
    return out


# ------------------------------------------------------------------------------ entry points

@functools.lru_cache(maxsize=4)
def _scan(path: tuple[str, ...]) -> Any:
    """Every installed entry point, once per ``sys.path`` (reading the metadata of all
    distributions costs ~20-30 ms; the registries share one scan)."""
    from importlib.metadata import entry_points

    return entry_points()


def _entry_points(group: str) -> list[Any]:
    """The entry points of ``group`` (one per distribution name: the first on ``sys.path``)."""
    return list(_scan(tuple(sys.path)).select(group=group))


def _origin_of(ep: Any) -> str:
    """``"<distribution> <version>"`` of an entry point."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown package"
    name = dist.metadata["Name"] or "unknown package"
    return f"{name} {dist.version}"
