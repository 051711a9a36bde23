"""Experiment grids: YAML files -> validated, frozen :class:`Cell` specs.

A grid file (``experiments/*.yaml``, format reference in ``docs/grids.md``) lists values per
axis (dataset, model, mechanism, sensitivity, mapping, epsilon, seed) and the cartesian product
is expanded; ``exclude`` entries remove cells by partial match, ``include`` entries add cells,
``extends`` inherits another file, ``settings`` carries the run options. A baseline cell (no
privatization: mechanism ``none``, ε = ∞) is added for every dataset × model × seed.

Nothing here loads data, fits a mechanism or trains a model: names are checked against the
registries, parameters by constructing the (cheap, unfitted) components, so a bad grid fails in
well under a second with one :class:`GridError` naming the file and the key. Cells that are
well-formed but cannot run (a text-only model fed vectors, a selection mechanism with a vector
mapping, a mechanism refusing an ε, a dataset whose file is not configured) are not errors: they
land in :attr:`Grid.skipped` with the reason.

Example:
    >>> from bench.grid import load_grid
    >>> grid = load_grid("experiments/quickstart.yaml")
    >>> len(grid.cells), len(grid.skipped)
    (9, 0)
    >>> grid.cells[0].name
    'bbc:model=lstm,mech=none,sens=none,map=none,eps=inf,seed=0'
    >>> grid.cells[0].hash                       # 16 hex digits, stable across runs
    '...'
"""

from __future__ import annotations

import difflib
import hashlib
import inspect
import json
import logging
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import product
from pathlib import Path
from typing import Any

import yaml

import bench

logger = logging.getLogger(__name__)

AXES: tuple[str, ...] = ("dataset", "model", "mechanism", "sensitivity", "mapping", "epsilon",
                         "seed")
"""Axis names, in expansion order (the first varies slowest)."""

REQUIRED_AXES: tuple[str, ...] = ("dataset", "model", "mechanism", "epsilon")
"""Axes a grid must list; the others have defaults (see :data:`AXIS_DEFAULTS`)."""

AXIS_DEFAULTS: dict[str, list[Any]] = {"sensitivity": ["none"], "seed": [0]}
"""Values of omitted axes. An omitted ``mapping`` axis means each mechanism's natural
text-output mapping: ``nearest`` for additive mechanisms, ``none`` for selection mechanisms."""

TOP_KEYS: tuple[str, ...] = ("name", "description", "extends", "axes", "exclude", "include",
                             "settings")
"""Keys allowed at the top level of a grid file."""

BASELINE = "none"
"""Mechanism name of the baseline cells (no privatization, ε = ∞)."""

METRIC_GROUPS: dict[str, str] = {
    "utility": "F1/accuracy of the utility task(s) on the original test split",
    "privacy": "empirical privacy: 1 - F1 of the adversary on the private attribute task(s)",
    "runtime": "wall-clock seconds of privatization and training",
    "guarantee": "the formal per-token guarantee (kind, eps multiplier, delta, proven)",
}
"""Metric groups a grid can ask for in ``settings.metrics`` (membership inference and rewrite
metrics have their own switches, ``settings.mia`` and ``settings.rewrite_metrics``)."""

SETTINGS_DEFAULTS: dict[str, Any] = {
    "embedding": "glove-6b-50d",
    "embedding_path": None,
    "vocab_size": 50_000,
    "oov": "unk",
    "metrics": ["utility", "privacy", "runtime", "guarantee"],
    "mia": False,
    "mia_target": "memorise",
    "mia_query": "original",
    "rewrite_metrics": False,
    "rewrite_max_docs": None,
    "baseline": True,
    "models": {},
    "adversaries": None,
}
"""Every ``settings`` key and its default (documented in ``docs/grids.md``)."""

FALLBACK_MODELS: dict[str, frozenset[str]] = {
    "bow": frozenset({"text", "vectors"}),
    "lstm": frozenset({"text", "vectors"}),
    "transformer": frozenset({"text"}),
}
"""Model name -> accepted inputs, used when ``bench.models`` cannot be imported."""

_PROBE_EPSILONS = (1.0, 0.1, 10.0, 100.0)
_HASH_HEX = 16


class GridError(ValueError):
    """A malformed grid file; the message names the file and the key."""


# --------------------------------------------------------------------------------------------
# Frozen containers
# --------------------------------------------------------------------------------------------


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


def _thaw(value: Any) -> Any:
    if isinstance(value, (str, int, float, type(None))):
        return value
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(v) for v in value]
    return value


def canonical_json(obj: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, no NaN/inf (ε = ∞ is written ``"inf"``)."""
    # dict subclasses and tuples serialise as objects and arrays: no copy needed
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=True, default=str)


# --------------------------------------------------------------------------------------------
# Cell
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One experiment: every axis resolved to concrete parameters.

    Component parameters are the component's own canonical parameters (defaults filled in by
    constructing it), so ``tem`` and ``{name: tem, beta: 0.001}`` are the same cell.
    """

    dataset: str
    """Registered dataset name."""
    dataset_config: FrozenDict
    """Dataset configuration as given in the grid (``path``, ``subsample``, ...); defaults and
    environment variables are resolved by the loader at run time."""
    model: str
    """Registered model name."""
    model_params: FrozenDict
    """Model hyperparameters: ``settings.models[model]`` overridden by the axis entry."""
    mechanism: str
    """Registered mechanism name, or ``"none"`` for the baseline."""
    mechanism_params: FrozenDict
    """Mechanism parameters (without ε and rng)."""
    sensitivity: str
    """Sensitivity approach name."""
    sensitivity_params: FrozenDict
    """Sensitivity approach parameters."""
    mapping: str
    """Mapping name (``none`` for selection mechanisms and vector output)."""
    mapping_params: FrozenDict
    """Mapping parameters."""
    epsilon: float
    """ε > 0, or ``math.inf`` for the baseline."""
    seed: int
    """Seed of the privatization noise and of model training."""
    settings: FrozenDict
    """The grid's settings for this cell (``models`` replaced by ``model_defaults``, the
    hyperparameters of this cell's model only, so other models' settings do not change it)."""
    versions: FrozenDict = field(default_factory=FrozenDict)
    """Component versions (``dataset``, ``model``, ``mechanism``, ``sensitivity``, ``mapping``)
    and ``adversaries``: the attribute adversaries of the cell as ``"name=version,..."``."""

    # -- identity ----------------------------------------------------------------------------
    @property
    def is_baseline(self) -> bool:
        """Whether this is an unprivatized baseline cell."""
        return self.mechanism == BASELINE

    @property
    def output(self) -> str:
        """What the privatization hands the model: ``"text"`` or ``"vectors"``."""
        if self.is_baseline or self.mapping != "none":
            return "text"
        return "vectors" if _mechanism_kind(self.mechanism) == "additive" else "text"

    def spec(self) -> dict[str, Any]:
        """Canonical JSON-able description (``spec.json`` of the cell's result folder)."""
        v = self.versions
        return {
            "dataset": {"name": self.dataset, "config": _thaw(self.dataset_config),
                        "version": v.get("dataset")},
            "model": {"name": self.model, "params": _thaw(self.model_params),
                      "version": v.get("model")},
            "mechanism": {"name": self.mechanism, "params": _thaw(self.mechanism_params),
                          "version": v.get("mechanism")},
            "sensitivity": {"name": self.sensitivity, "params": _thaw(self.sensitivity_params),
                            "version": v.get("sensitivity")},
            "mapping": {"name": self.mapping, "params": _thaw(self.mapping_params),
                        "version": v.get("mapping")},
            "epsilon": _eps_json(self.epsilon),
            "seed": self.seed,
            "settings": _thaw(self.settings),
            # the attribute adversaries run on this cell, ``name=version`` (bench.attacks)
            "adversaries": v.get("adversaries"),
        } | ({"metrics": v["metrics"]} if v.get("metrics") is not None else {})

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Cell:
        """Rebuild a cell from :meth:`spec` output (e.g. a stored ``spec.json``)."""
        eps = spec["epsilon"]
        versions = {k: spec[k].get("version") for k in
                    ("dataset", "model", "mechanism", "sensitivity", "mapping")
                    if spec[k].get("version") is not None}
        for key in ("adversaries", "metrics"):
            if spec.get(key) is not None:
                versions[key] = spec[key]
        return cls(
            dataset=spec["dataset"]["name"], dataset_config=freeze(spec["dataset"]["config"]),
            model=spec["model"]["name"], model_params=freeze(spec["model"]["params"]),
            mechanism=spec["mechanism"]["name"],
            mechanism_params=freeze(spec["mechanism"]["params"]),
            sensitivity=spec["sensitivity"]["name"],
            sensitivity_params=freeze(spec["sensitivity"]["params"]),
            mapping=spec["mapping"]["name"], mapping_params=freeze(spec["mapping"]["params"]),
            epsilon=math.inf if eps == "inf" else float(eps), seed=int(spec["seed"]),
            settings=freeze(spec["settings"]), versions=freeze(versions))

    @property
    def hash(self) -> str:
        """:func:`cell_hash` without a dataset content hash (spec + suite version only)."""
        return cell_hash(self)

    @cached_property
    def _spec_json(self) -> str:
        """Canonical JSON of the hashed spec (computed once; the cell is immutable)."""
        return canonical_json(_hashable_spec(self))

    @property
    def privatization_key(self) -> str:
        """:func:`privatization_hash` without a dataset content hash."""
        return privatization_hash(self)

    @property
    def name(self) -> str:
        """Readable identity, e.g. ``bbc:model=lstm,mech=mvl,sens=none,map=nearest,eps=1,seed=0``.

        Parameters are shown where they differ from the component's defaults (model: from
        ``settings.models``); the dataset ``path`` is never shown. Use :attr:`hash` as the key.
        """
        ds = self.dataset + _fmt_params({k: v for k, v in self.dataset_config.items()
                                         if k != "path"})
        defaults = self.settings.get("model_defaults", {})
        model = self.model + _fmt_params({k: v for k, v in self.model_params.items()
                                          if defaults.get(k, _MISSING) != v})
        mech = _nondefault("mechanism", self.mechanism, self.mechanism_params)
        sens = _nondefault("sensitivity", self.sensitivity, self.sensitivity_params)
        mapping = _nondefault("mapping", self.mapping, self.mapping_params)
        parts = [
            f"model={model}",
            f"mech={self.mechanism}{mech}",
            f"sens={self.sensitivity}{sens}",
            f"map={self.mapping}{mapping}",
            f"eps={_fmt_value(self.epsilon)}",
            f"seed={self.seed}",
        ]
        return f"{ds}:{','.join(parts)}"

    def model_kwargs(self) -> dict[str, Any]:
        """The model's hyperparameters as plain keyword arguments."""
        return _thaw(self.model_params)

    def dataset_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`bench.datasets.load_dataset` (besides the name)."""
        return _thaw(self.dataset_config)

    def __str__(self) -> str:
        return self.name


_MISSING = object()


def _eps_json(eps: float) -> float | str:
    return "inf" if math.isinf(eps) else float(eps)


def _hashable_spec(cell: Cell) -> dict[str, Any]:
    spec = cell.spec()
    # the file location is not the content: the dataset content hash covers the data
    spec["dataset"]["config"].pop("path", None)
    return spec


def _digest(payload: Any, dataset_hash: str | None) -> str:
    h = hashlib.sha256()
    h.update((payload if isinstance(payload, str) else canonical_json(payload)).encode("utf-8"))
    h.update(b"\0bench=" + bench.__version__.encode("utf-8"))
    h.update(b"\0dataset=" + (dataset_hash or "").encode("utf-8"))
    return h.hexdigest()[:_HASH_HEX]


def cell_hash(cell: Cell, dataset_hash: str | None = None) -> str:
    """Identity of a cell's result: sha256 (first 16 hex) of its canonical spec.

    Hashed: the canonical JSON of :meth:`Cell.spec` (sorted keys; the dataset ``path`` left
    out), ``bench.__version__`` and ``dataset_hash`` (the dataset's content hash,
    ``Dataset.content_hash()``). Without ``dataset_hash`` (``Cell.hash``) the dataset is
    identified by name, config and loader version only — cheap, and what ``bench validate``
    shows; the runner passes the content hash so that changed data files never reuse results.
    """
    return _digest(cell._spec_json, dataset_hash)


def privatization_hash(cell: Cell, dataset_hash: str | None = None) -> str:
    """Identity of a cell's privatized corpus, shared by cells that differ only in the model or
    in model/metric settings: dataset (+config, content hash), embedding, vocab size, OOV
    policy, sensitivity, mechanism, mapping (all with parameters and versions), ε and seed."""
    spec = _hashable_spec(cell)
    s = cell.settings
    payload = {
        "dataset": spec["dataset"],
        "embedding": [s.get("embedding"), s.get("embedding_path"), s.get("vocab_size"),
                      s.get("oov")],
        "sensitivity": spec["sensitivity"],
        "mechanism": spec["mechanism"],
        "mapping": spec["mapping"],
        "epsilon": spec["epsilon"],
        "seed": spec["seed"],
    }
    return _digest(payload, dataset_hash)


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:g}"
    if isinstance(v, (list, tuple, Mapping)):
        return canonical_json(v)
    return str(v)


def _fmt_params(params: Mapping[str, Any]) -> str:
    if not params:
        return ""
    return "(" + ",".join(f"{k}={_fmt_value(params[k])}" for k in sorted(params)) + ")"


def _nondefault(kind: str, name: str, params: Mapping[str, Any]) -> str:
    defaults = _component_defaults(kind, name)
    return _fmt_params({k: v for k, v in params.items() if defaults.get(k, _MISSING) != v})


# --------------------------------------------------------------------------------------------
# Component look-ups (registries imported lazily: `import bench.grid` stays cheap)
# --------------------------------------------------------------------------------------------


def _registry(kind: str):
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
    raise KeyError(kind)


def _construct(kind: str, name: str, params: Mapping[str, Any], epsilon: float = 1.0):
    """Build a component (unfitted) with plain params; ValueError/TypeError on bad params."""
    p = _thaw(params)
    if kind == "mechanism":
        from bench.mechanisms import make_mechanism

        return make_mechanism(name, epsilon=epsilon, rng=0, **p)
    if kind == "sensitivity":
        from bench.sensitivity import make_sensitivity

        return make_sensitivity(name, **p)
    if kind == "mapping":
        from bench.mapping import make_mapping

        return make_mapping(name, **p)
    raise KeyError(kind)


@lru_cache(maxsize=None)
def _component_defaults(kind: str, name: str) -> dict[str, Any]:
    if name == BASELINE and kind != "mapping" and kind != "sensitivity":
        return {}
    for eps in _PROBE_EPSILONS:
        try:
            return dict(_construct(kind, name, {}, eps).params)
        except Exception:  # noqa: BLE001 - unknown names/defaults: show every parameter
            continue
    return {}


@lru_cache(maxsize=None)
def _mechanism_kind(name: str) -> str:
    try:
        return _registry("mechanism").get(name).kind
    except Exception:  # noqa: BLE001
        return ""


def _param_names(cls: Any, skip: Iterable[str] = ()) -> list[str] | None:
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
            params = _param_names(cls, skip=("seed", "rng", "random_state"))
            out.append((n, ModelInfo(n, accepts, str(getattr(cls, "version", "1")),
                                     tuple(params) if params is not None else None)))
        except Exception as e:  # noqa: BLE001 - heavy dependency missing for this model
            logger.debug("model %s not importable (%s); using the fallback table", n, e)
            out.append((n, ModelInfo(n, FALLBACK_MODELS.get(n, frozenset({"text"})), "1", None)))
    return tuple(out)


def _unknown(kind: str, name: Any, known: Iterable[str]) -> str:
    known = sorted(known)
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
    return f"unknown {kind} {name!r}{hint} (known: {', '.join(known)})"


# --------------------------------------------------------------------------------------------
# Reading files: YAML, extends, structural checks
# --------------------------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (a silently dropped axis is a bug)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 _construct_mapping)


def _read_yaml(path: Path) -> dict[str, Any]:
    """One grid file's mapping; every problem (unreadable, not UTF-8, empty or whitespace only,
    invalid YAML, not a mapping) is a one-line :class:`GridError` naming the file."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise GridError(f"{path}: grid file not found") from None
    except OSError as e:
        raise GridError(f"{path}: cannot read the grid file ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise GridError(f"{path}: line {line}: not UTF-8 text (byte {raw[e.start]:#04x}); a "
                        "grid file is UTF-8 YAML") from None
    if not text.strip():
        raise GridError(f"{path}: the grid file is empty (it needs at least 'axes')")
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.reader.ReaderError as e:  # a control character such as NUL: no problem_mark
        line = text.count("\n", 0, e.position) + 1
        raise GridError(f"{path}: line {line}: invalid YAML: character #x{e.character:04x} is "
                        "not allowed (a grid file is UTF-8 YAML text)") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark else ""
        problem = " ".join(str(getattr(e, "problem", None) or e).split())
        raise GridError(f"{path}:{where} invalid YAML: {problem}") from None
    if data is None:
        raise GridError(f"{path}: the grid file is empty (it needs at least 'axes')")
    if not isinstance(data, dict):
        raise GridError(f"{path}: a grid file must be a mapping of keys (name, axes, ...), "
                        f"got {type(data).__name__}")
    _check_structure(path, data)
    return data


def _check_structure(path: Path, data: dict[str, Any]) -> None:
    """Per-file type checks, so that errors name the file the key is written in."""
    for key in data:
        if key not in TOP_KEYS:
            raise GridError(f"{path}: {key}: {_unknown('top-level key', key, TOP_KEYS)}")
    for key in ("name", "description", "extends"):
        if key in data and not (isinstance(data[key], str) and data[key].strip()):
            raise GridError(f"{path}: {key}: must be a non-empty string, got {data[key]!r}")
    if "axes" in data:
        axes = data["axes"]
        if not isinstance(axes, dict):
            raise GridError(f"{path}: axes: must be a mapping of axis -> list of values, got "
                            f"{type(axes).__name__}")
        for axis, values in axes.items():
            if axis not in AXES:
                raise GridError(f"{path}: axes.{axis}: {_unknown('axis', axis, AXES)}")
            if not isinstance(values, list):
                raise GridError(f"{path}: axes.{axis}: must be a list of values, e.g. "
                                f"[{'1, 10' if axis == 'epsilon' else 'a, b'}], got {values!r}")
            if not values:
                hint = "" if axis in REQUIRED_AXES else " to use its default"
                raise GridError(f"{path}: axes.{axis}: empty axis (list at least one value, or "
                                f"remove the axis{hint})")
    for key in ("exclude", "include"):
        if key in data:
            entries = data[key]
            if entries is None:
                data[key] = []
                continue
            if not isinstance(entries, list):
                raise GridError(f"{path}: {key}: must be a list of {{axis: value}} mappings, "
                                f"got {type(entries).__name__}")
            for i, entry in enumerate(entries):
                if not isinstance(entry, dict) or not entry:
                    raise GridError(f"{path}: {key}[{i}]: must be a non-empty mapping "
                                    f"{{axis: value, ...}}, got {entry!r}")
                for axis in entry:
                    if axis not in AXES:
                        raise GridError(f"{path}: {key}[{i}].{axis}: "
                                        f"{_unknown('axis', axis, AXES)}")
    if "settings" in data:
        if data["settings"] is None:
            data["settings"] = {}
        if not isinstance(data["settings"], dict):
            raise GridError(f"{path}: settings: must be a mapping, got "
                            f"{type(data['settings']).__name__}")
        for key in data["settings"]:
            if key not in SETTINGS_DEFAULTS:
                raise GridError(f"{path}: settings.{key}: "
                                f"{_unknown('setting', key, SETTINGS_DEFAULTS)}")


def _merge_settings(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(parent)
    for k, v in child.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge_settings(out[k], v)
        else:
            out[k] = v
    return out


@dataclass
class _Raw:
    """A grid file with its ``extends`` chain merged, and the file each key came from."""

    data: dict[str, Any]
    origin: dict[str, Path]
    files: list[Path]


def _read_merged(path: Path, chain: tuple[Path, ...] = ()) -> _Raw:
    path = Path(os.path.abspath(path))
    if path in chain:
        cycle = " -> ".join(str(p) for p in (*chain, path))
        raise GridError(f"{chain[-1]}: extends: cycle detected: {cycle}")
    data = _read_yaml(path)
    if "extends" not in data:
        origin = {k: path for k in data}
        origin.update({f"axes.{a}": path for a in data.get("axes", {})})
        origin.update({f"settings.{s}": path for s in data.get("settings", {})})
        return _Raw(data, origin, [path])
    parent_path = path.parent / data["extends"]
    if not parent_path.is_file():
        raise GridError(f"{path}: extends: no grid file at {parent_path} (paths are relative to "
                        f"the extending file)")
    parent = _read_merged(parent_path, (*chain, path))
    merged = {k: v for k, v in parent.data.items() if k not in ("name", "description")}
    origin = {k: v for k, v in parent.origin.items() if k not in ("name", "description")}
    for key, value in data.items():
        if key == "extends":
            continue
        if key == "axes":
            merged["axes"] = {**parent.data.get("axes", {}), **value}
            origin.update({f"axes.{a}": path for a in value})
        elif key == "settings":
            merged["settings"] = _merge_settings(parent.data.get("settings", {}), value)
            origin.update({f"settings.{s}": path for s in value})
        else:
            merged[key] = value
        origin[key] = path
    return _Raw(merged, origin, [*parent.files, path])


# --------------------------------------------------------------------------------------------
# Parsing values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One parsed axis value of a named axis."""

    kind: str
    name: str
    params: FrozenDict  # resolved (defaults filled) for components; as given for dataset/model
    given: FrozenDict  # as written
    where: str
    version: str = ""
    extra: Any = None  # mechanism: a probe instance; mapping: instance; model: ModelInfo;
    #                    dataset: skip reason or ""


class _Parser:
    """Turns raw YAML values into validated entries; errors name file and key."""

    def __init__(self, raw: _Raw, grid_path: Path) -> None:
        self.raw = raw
        self.grid_path = grid_path
        self.settings: dict[str, Any] = {}
        self._mech_cache: dict[tuple[str, FrozenDict, float], str] = {}

    def file_of(self, key: str) -> Path:
        return self.raw.origin.get(key) or self.raw.origin.get(key.split(".")[0]) or \
            self.grid_path

    def fail(self, key: str, msg: str) -> GridError:
        origin_key = key.split("[")[0]
        if origin_key.startswith("axes."):
            origin_key = ".".join(origin_key.split(".")[:2])
        if origin_key.startswith("settings."):
            origin_key = ".".join(origin_key.split(".")[:2])
        return GridError(f"{self.file_of(origin_key)}: {key}: {msg}")

    # -- settings ----------------------------------------------------------------------------
    def parse_settings(self) -> dict[str, Any]:
        given = self.raw.data.get("settings", {})
        s = {**SETTINGS_DEFAULTS, **given}
        k = "settings."
        emb_reg = _registry("embedding")
        if not isinstance(s["embedding"], str):
            raise self.fail(k + "embedding", f"must be an embedding name, got {s['embedding']!r}")
        if s["embedding_path"] is None and s["embedding"] not in emb_reg:
            raise self.fail(k + "embedding", emb_reg.unknown_message(s["embedding"]))
        if s["embedding_path"] is not None and not isinstance(s["embedding_path"], str):
            raise self.fail(k + "embedding_path", "must be a file path or null")
        vs = s["vocab_size"]
        if isinstance(vs, bool) or not isinstance(vs, int) or vs < 2:
            raise self.fail(k + "vocab_size", f"must be an integer >= 2, got {vs!r}")
        from bench.embeddings import OOV_POLICIES

        if s["oov"] not in OOV_POLICIES:
            raise self.fail(k + "oov", f"must be one of {', '.join(OOV_POLICIES)}, got "
                                       f"{s['oov']!r}")
        metrics = s["metrics"]
        if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
            raise self.fail(k + "metrics", f"must be a list of metric groups, got {metrics!r}")
        for m in metrics:
            if m not in METRIC_GROUPS:
                raise self.fail(k + "metrics", _unknown("metric group", m, METRIC_GROUPS))
        if s["mia_target"] not in ("memorise", "utility"):
            raise self.fail(k + "mia_target", f"must be 'memorise' (the target is trained to "
                                              f"memorise its members, as in TEM's experiment) or "
                                              f"'utility' (the utility model's settings), got "
                                              f"{s['mia_target']!r}")
        if s["mia_query"] not in ("original", "privatized"):
            raise self.fail(k + "mia_query", f"must be 'original' (the attacker holds a record's "
                                             f"original text and queries the target with it) or "
                                             f"'privatized' (it queries with the privatized text "
                                             f"the target was trained on), got "
                                             f"{s['mia_query']!r}")
        for flag in ("mia", "rewrite_metrics", "baseline"):
            if not isinstance(s[flag], bool):
                raise self.fail(k + flag, f"must be true or false, got {s[flag]!r}")
        models = s["models"]
        if not isinstance(models, dict):
            raise self.fail(k + "models", "must map model name -> {hyperparameter: value}")
        catalog = model_catalog()
        for name, params in models.items():
            if name not in catalog:
                raise self.fail(f"{k}models.{name}", _unknown("model", name, catalog))
            if not isinstance(params, dict):
                raise self.fail(f"{k}models.{name}", f"must be a mapping of hyperparameters, "
                                                     f"got {params!r}")
            self._check_model_params(f"{k}models.{name}", catalog[name], params)
        s["metrics"] = sorted(set(metrics), key=metrics.index)
        self._check_adversaries(k + "adversaries", s["adversaries"])
        self.settings = s
        return s

    def _check_adversaries(self, key: str, value: Any) -> None:
        """``adversaries``: null (the default set) or a non-empty list of adversary names."""
        if value is None:
            return
        if (not isinstance(value, list) or not value
                or not all(isinstance(v, str) for v in value)):
            raise self.fail(key, f"must be a non-empty list of adversary names (`bench ls "
                                 f"adversaries`; `model` = the cell's model) or null for the "
                                 f"default set, got {value!r}")
        from bench.attacks.adversary import ADVERSARIES, MODEL_ADVERSARY

        for v in value:
            if v != MODEL_ADVERSARY and v not in ADVERSARIES:
                raise self.fail(key, _unknown("adversary", v, [*ADVERSARIES.names(),
                                                                MODEL_ADVERSARY]))

    def _check_model_params(self, key: str, info: ModelInfo, params: Mapping[str, Any]) -> None:
        if info.params is None:
            return
        for p in params:
            if p not in info.params:
                raise self.fail(key, _unknown(f"model {info.name!r} parameter", p, info.params))

    # -- axis values ---------------------------------------------------------------------------
    @staticmethod
    def _split(value: Any) -> tuple[Any, dict[str, Any]] | None:
        if isinstance(value, str):
            return value, {}
        if isinstance(value, dict):
            if "name" not in value or not isinstance(value["name"], str):
                return None
            return value["name"], {str(k): v for k, v in value.items() if k != "name"}
        return None

    def epsilon(self, value: Any, key: str) -> float:
        eps = value
        if isinstance(value, str):
            try:
                eps = float(value)
            except ValueError:
                eps = None
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise self.fail(key, f"epsilon must be a number > 0, got {value!r}")
        eps = float(eps)
        if math.isnan(eps) or eps <= 0:
            raise self.fail(key, f"epsilon must be > 0, got {value!r}")
        if math.isinf(eps):
            raise self.fail(key, "epsilon must be finite (the eps = inf baseline is added "
                                 "automatically; settings.baseline switches it off)")
        return eps

    def seed(self, value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(key, f"seed must be an integer >= 0, got {value!r}")
        return int(value)

    def named(self, axis: str, value: Any, key: str, *, partial: bool = False) -> _Entry:
        """Parse a named axis value. ``partial``: an exclude pattern (only the given params)."""
        split = self._split(value)
        if split is None:
            raise self.fail(key, f"must be a name or a mapping {{name: ..., <param>: ...}}, got "
                                 f"{value!r}")
        name, params = split
        parse = getattr(self, f"_{axis}")
        return parse(name, params, key, partial)

    def _dataset(self, name: str, params: dict, key: str, partial: bool) -> _Entry:
        reg = _registry("dataset")
        if name not in reg:
            raise self.fail(key, reg.unknown_message(name))
        spec = reg.get(name)
        from bench.datasets.base import resolve_config

        try:
            resolved = resolve_config(spec, params)
        except ValueError as e:
            raise self.fail(key, str(e)) from None
        reason = ""
        if "path" in spec.options and not partial:
            path = resolved.get("path")
            env = f" or set {spec.env_var}" if spec.env_var else ""
            if path is None or str(path) == "":
                reason = (f"dataset {name!r} needs its data file: not configured (set path: in "
                          f"the grid{env})")
            elif not Path(str(path)).expanduser().exists():
                reason = f"dataset {name!r}: nothing at {path} (set path: in the grid{env})"
        return _Entry("dataset", name, freeze(params), freeze(params), key, str(spec.version),
                      reason)

    def _model(self, name: str, params: dict, key: str, partial: bool) -> _Entry:
        catalog = model_catalog()
        if name not in catalog:
            raise self.fail(key, _unknown("model", name, catalog))
        info = catalog[name]
        self._check_model_params(key, info, params)
        if partial:
            return _Entry("model", name, freeze(params), freeze(params), key, info.version, info)
        merged = {**self.settings.get("models", {}).get(name, {}), **params}
        return _Entry("model", name, freeze(merged), freeze(params), key, info.version, info)

    def _component(self, kind: str, name: str, params: dict, key: str, partial: bool) -> _Entry:
        reg = _registry(kind)
        if name == BASELINE and kind == "mechanism":
            raise self.fail(key, "mechanism 'none' is the baseline; it is added automatically "
                                 "for every dataset x model x seed (settings.baseline: false "
                                 "switches it off)")
        if name not in reg:
            raise self.fail(key, reg.unknown_message(name))
        cls = reg.get(name)
        allowed = _param_names(cls, skip=("epsilon", "rng"))
        if allowed is not None:
            for p in params:
                if p not in allowed:
                    raise self.fail(key, _unknown(f"{reg.kind} {name!r} parameter", p, allowed))
        version = str(getattr(cls, "version", "1"))
        if partial:
            return _Entry(kind, name, freeze(params), freeze(params), key, version)
        if kind != "mechanism":
            try:
                obj = _construct(kind, name, params)
            except (ValueError, TypeError) as e:
                raise self.fail(key, str(e)) from None
            return _Entry(kind, name, freeze({**params, **obj.params}), freeze(params), key,
                          version, obj)
        # mechanism: valid parameters must construct at some epsilon (the rules that depend on
        # epsilon, like gaussian's classic calibration, are checked per cell)
        errors = []
        for eps in self.probe_epsilons:
            try:
                obj = _construct(kind, name, params, eps)
            except (ValueError, TypeError) as e:
                errors.append(str(e))
                continue
            return _Entry(kind, name, freeze({**params, **obj.params}), freeze(params), key,
                          version, obj)
        raise self.fail(key, f"{errors[0]} (refused at every epsilon of the grid)")

    def _mechanism(self, name, params, key, partial):
        return self._component("mechanism", name, params, key, partial)

    def _sensitivity(self, name, params, key, partial):
        return self._component("sensitivity", name, params, key, partial)

    def _mapping(self, name, params, key, partial):
        return self._component("mapping", name, params, key, partial)

    probe_epsilons: tuple[float, ...] = _PROBE_EPSILONS

    def mechanism_refusal(self, entry: _Entry, eps: float) -> str:
        """The mechanism's own ValueError at this ε ('' when it constructs)."""
        ck = (entry.name, entry.params, eps)
        if ck not in self._mech_cache:
            try:
                _construct("mechanism", entry.name, entry.given, eps)
                self._mech_cache[ck] = ""
            except (ValueError, TypeError) as e:
                self._mech_cache[ck] = str(e)
        return self._mech_cache[ck]


# --------------------------------------------------------------------------------------------
# Grid
# --------------------------------------------------------------------------------------------


@dataclass
class Grid:
    """An expanded grid."""

    name: str
    """The grid's ``name`` (default: the file stem)."""
    path: str
    """The grid file."""
    cells: list[Cell]
    """Valid cells, deterministic order: baselines, then the axes product, then includes."""
    skipped: list[tuple[Cell, str]]
    """Well-formed cells that cannot run, with the reason."""
    settings: dict[str, Any]
    """The merged settings (defaults filled in)."""
    description: str = ""
    """The grid's ``description``."""
    files: list[str] = field(default_factory=list)
    """Files read: the ``extends`` chain, root first."""
    warnings: list[str] = field(default_factory=list)
    """Non-fatal remarks (e.g. an exclude entry that matched nothing)."""

    def __len__(self) -> int:
        return len(self.cells)

    def __iter__(self):
        return iter(self.cells)

    def by_hash(self) -> dict[str, Cell]:
        """Valid cells keyed by :attr:`Cell.hash`."""
        return {c.hash: c for c in self.cells}


@dataclass(frozen=True)
class _Pattern:
    """One exclude entry: axis -> alternatives (entries, floats or ints)."""

    axes: dict[str, list[Any]]
    where: str

    def matches(self, cell: Cell) -> bool:
        for axis, alts in self.axes.items():
            if not any(_matches(axis, alt, cell) for alt in alts):
                return False
        return True


def _matches(axis: str, alt: Any, cell: Cell) -> bool:
    if axis == "epsilon":
        return math.isclose(cell.epsilon, alt, rel_tol=1e-12)
    if axis == "seed":
        return cell.seed == alt
    name = getattr(cell, axis)
    params = getattr(cell, "dataset_config" if axis == "dataset" else f"{axis}_params")
    if name != alt.name:
        return False
    return all(k in params and _same(params[k], v) for k, v in alt.given.items())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-12)
    return freeze(a) == freeze(b)


def load_grid(path: str | os.PathLike[str]) -> Grid:
    """Read, validate and expand a grid file.

    Raises:
        GridError: malformed YAML, wrong types, unknown names (with did-you-mean), bad
            parameters, ε ≤ 0, an empty or missing axis, an ``extends`` cycle.
    """
    grid_path = Path(path)
    raw = _read_merged(grid_path)
    data = raw.data
    p = _Parser(raw, Path(os.path.abspath(grid_path)))
    if "axes" not in data:
        raise GridError(f"{grid_path}: axes: missing required key 'axes' (the values per axis: "
                        f"{', '.join(AXES)})")
    axes_raw = data["axes"]
    for axis in REQUIRED_AXES:
        if axis not in axes_raw:
            raise GridError(f"{grid_path}: axes.{axis}: missing required axis {axis!r}")
    settings = p.parse_settings()

    # all epsilons first: mechanisms are probed at the grid's own values
    eps_values: list[float] = [p.epsilon(v, f"axes.epsilon[{i}]")
                               for i, v in enumerate(axes_raw["epsilon"])]
    for i, entry in enumerate(data.get("include", [])):
        if "epsilon" in entry:
            vals = entry["epsilon"] if isinstance(entry["epsilon"], list) else [entry["epsilon"]]
            eps_values += [p.epsilon(v, f"include[{i}].epsilon") for v in vals]
    p.probe_epsilons = tuple(dict.fromkeys([*_PROBE_EPSILONS, *eps_values]))

    def parse_axis(axis: str, values: list[Any], key: str, partial: bool = False) -> list[Any]:
        out = []
        for j, v in enumerate(values):
            k = f"{key}[{j}]" if len(values) > 1 or key.startswith("axes.") else key
            if axis == "epsilon":
                out.append(p.epsilon(v, k))
            elif axis == "seed":
                out.append(p.seed(v, k))
            else:
                out.append(p.named(axis, v, k, partial=partial))
        return out

    axes: dict[str, list[Any] | None] = {}
    for axis in AXES:
        if axis in axes_raw:
            axes[axis] = parse_axis(axis, axes_raw[axis], f"axes.{axis}")
        elif axis in AXIS_DEFAULTS:
            axes[axis] = parse_axis(axis, AXIS_DEFAULTS[axis], f"axes.{axis}")
        else:
            axes[axis] = None  # mapping: natural mapping per mechanism

    patterns = []
    for i, entry in enumerate(data.get("exclude", [])):
        pat = {}
        for axis, v in entry.items():
            vals = v if isinstance(v, list) else [v]
            if not vals:
                raise p.fail(f"exclude[{i}].{axis}", "empty list of alternatives")
            pat[axis] = parse_axis(axis, vals, f"exclude[{i}].{axis}", partial=True)
        patterns.append(_Pattern(pat, f"exclude[{i}]"))

    cell_settings = {k: v for k, v in settings.items() if k != "models"}
    settings_for: dict[str, FrozenDict] = {}
    natural = {"additive": "nearest", "selection": "none"}
    mapping_cache: dict[str, _Entry] = {}

    def natural_mapping(mech: _Entry) -> _Entry:
        name = natural.get(mech.extra.kind, "none")
        if name not in mapping_cache:
            mapping_cache[name] = p.named("mapping", name, "axes.mapping (default)")
        return mapping_cache[name]

    adv_cache: dict[tuple[str, str], tuple[str, list]] = {}

    def adversaries_for(model_name: str, output: str) -> tuple[str, list]:
        """``"name=version,..."`` of the cell's adversaries (hashed) and those left out."""
        key = (model_name, output)
        if key not in adv_cache:
            from bench.attacks.adversary import adversary_version, resolve_adversaries

            names, left = resolve_adversaries(settings["adversaries"], model_name, output)
            adv_cache[key] = (",".join(f"{n}={adversary_version(n)}" for n in names), left)
        return adv_cache[key]

    def make(ds: _Entry, model: _Entry, mech: _Entry | None, sens: _Entry | None,
             mapping: _Entry | None, eps: float, seed: int) -> tuple[Cell, str]:
        st = settings_for.get(model.name)
        if st is None:
            st = settings_for[model.name] = FrozenDict({
                **freeze(cell_settings),
                "model_defaults": freeze(settings["models"].get(model.name, {}))})
        if mech is None:  # baseline
            advs, _ = adversaries_for(model.name, "text")
            cell = Cell(ds.name, ds.params, model.name, model.params, BASELINE, FrozenDict(),
                        "none", FrozenDict(), "none", FrozenDict(), math.inf, seed, st,
                        freeze({"dataset": ds.version, "model": model.version,
                                "adversaries": advs}))
            return cell, ds.extra
        out = "vectors" if (mech.extra.kind == "additive" and
                            not mapping.extra.outputs_text) else "text"
        advs, adv_left = adversaries_for(model.name, out)
        versions = {"dataset": ds.version, "model": model.version, "mechanism": mech.version,
                    "sensitivity": sens.version, "mapping": mapping.version,
                    "adversaries": advs}
        if settings["rewrite_metrics"] and out == "text":  # the cells that compute them
            from bench.metrics import REWRITE_METRICS, metric_versions

            versions["metrics"] = metric_versions(REWRITE_METRICS)
        cell = Cell(ds.name, ds.params, model.name, model.params, mech.name, mech.params,
                    sens.name, sens.params, mapping.name, mapping.params, eps, seed, st,
                    freeze(versions))
        # one reason per cell, the most fundamental first: what can never run, then what is
        # refused at this epsilon, then what is missing in this environment
        from bench.privatize import InvalidCombination, check_combination

        try:
            check_combination(mech.extra, mapping.extra)
        except InvalidCombination as e:
            return cell, str(e)
        if out not in model.extra.accepts:
            return cell, (f"model {model.name!r} takes {' or '.join(sorted(model.extra.accepts))}"
                          f" only; mechanism {mech.name!r} with mapping {mapping.name!r} outputs "
                          f"{out} (use mapping nearest or vickrey)")
        if adv_left and settings["adversaries"] is not None:  # explicitly asked for
            name, why = adv_left[0]
            raise p.fail("settings.adversaries",
                         f"{why} (mechanism {mech.name!r} with mapping {mapping.name!r}): "
                         f"remove {name!r} from the list or exclude these cells (the default "
                         f"set, adversaries: null, leaves it out where it cannot run)")
        refusal = p.mechanism_refusal(mech, eps)
        if refusal:
            return cell, refusal
        return cell, ds.extra

    def expand(per_axis: dict[str, list[Any] | None]):
        """Cells of a (sub-)product in AXES order (the first axis varies slowest)."""
        for ds, model, mech, sens in product(per_axis["dataset"], per_axis["model"],
                                             per_axis["mechanism"], per_axis["sensitivity"]):
            maps = per_axis["mapping"] or [natural_mapping(mech)]
            for mapping, eps, seed in product(maps, per_axis["epsilon"], per_axis["seed"]):
                ds_entries.setdefault((ds.name, ds.params), ds)
                model_entries.setdefault((model.name, model.params), model)
                yield make(ds, model, mech, sens, mapping, eps, seed)

    ds_entries: dict[tuple[str, FrozenDict], _Entry] = {}
    model_entries: dict[tuple[str, FrozenDict], _Entry] = {}
    candidates: list[tuple[Cell, str]] = []
    excluded_by: list[int] = [0] * len(patterns)
    for cell, reason in expand(axes):
        hit = [i for i, pat in enumerate(patterns) if pat.matches(cell)]
        for i in hit:
            excluded_by[i] += 1
        if not hit:
            candidates.append((cell, reason))

    warnings = [f"{p.file_of('exclude')}: exclude[{i}] matched no cell"
                for i, n in enumerate(excluded_by) if n == 0]
    for w in warnings:
        logger.warning(w)

    included: list[tuple[Cell, str]] = []
    for i, entry in enumerate(data.get("include", [])):
        per_axis: dict[str, list[Any]] = {}
        for axis in AXES:
            if axis in entry:
                vals = entry[axis] if isinstance(entry[axis], list) else [entry[axis]]
                if not vals:
                    raise p.fail(f"include[{i}].{axis}", "empty list of values")
                per_axis[axis] = parse_axis(axis, vals, f"include[{i}].{axis}")
            else:
                per_axis[axis] = axes[axis]
        included += expand(per_axis)

    baselines: list[tuple[Cell, str]] = []
    if settings["baseline"]:
        seen_triples: dict[tuple[Any, Any, int], None] = {}
        for cell, _ in [*candidates, *included]:
            key = ((cell.dataset, cell.dataset_config), (cell.model, cell.model_params),
                   cell.seed)
            seen_triples.setdefault(key, None)
        for dk, mk, seed in seen_triples:
            baselines.append(make(ds_entries[dk], model_entries[mk], None, None, None,
                                  math.inf, seed))

    cells: list[Cell] = []
    skipped: list[tuple[Cell, str]] = []
    seen: set[str] = set()
    for cell, reason in [*baselines, *candidates, *included]:
        h = cell.hash
        if h in seen:
            continue
        seen.add(h)
        if reason:
            skipped.append((cell, reason))
        else:
            cells.append(cell)
    name = data.get("name") or grid_path.stem
    logger.info("grid %s: %d cells, %d skipped", name, len(cells), len(skipped))
    return Grid(name=name, path=str(grid_path), cells=cells, skipped=skipped,
                settings=settings, description=data.get("description", ""),
                files=[str(f) for f in raw.files], warnings=warnings)


# --------------------------------------------------------------------------------------------
# `bench validate`
# --------------------------------------------------------------------------------------------


def validate_text(path: str | os.PathLike[str], *, verbose: bool = False,
                  max_examples: int = 3) -> str:
    """Human-readable summary for ``bench validate GRID``: counts, skipped cells with reasons.

    Skipped cells are grouped by reason (``max_examples`` names per reason; ``verbose`` lists
    every valid and skipped cell). Raises :class:`GridError` on an invalid grid.
    """
    grid = load_grid(path)
    n_base = sum(c.is_baseline for c in grid.cells)
    lines = [f"grid {grid.name!r} ({grid.path}): {len(grid.cells)} cells "
             f"({n_base} baseline), {len(grid.skipped)} skipped"]
    if len(grid.files) > 1:
        lines.append("  extends: " + " <- ".join(grid.files))
    privatized = [c for c in grid.cells if not c.is_baseline]
    if privatized:
        counts = {a: len({_axis_label(c, a) for c in privatized}) for a in AXES}
        lines.append("  distinct values (baselines aside): "
                     + ", ".join(f"{a} {n}" for a, n in counts.items()))
    for w in grid.warnings:
        lines.append(f"  warning: {w}")
    if verbose:
        lines.append("cells:")
        lines += [f"  {c.hash}  {c.name}" for c in grid.cells]
    if grid.skipped:
        lines.append("skipped:")
        groups: dict[str, list[Cell]] = {}
        for cell, reason in grid.skipped:
            groups.setdefault(reason, []).append(cell)
        for reason, cells in groups.items():
            lines.append(f"  {len(cells)} x {reason}")
            shown = cells if verbose else cells[:max_examples]
            lines += [f"      {c.name}" for c in shown]
            if len(cells) > len(shown):
                lines.append(f"      ... and {len(cells) - len(shown)} more")
    return "\n".join(lines) + "\n"


def _axis_label(cell: Cell, axis: str) -> str:
    if axis in ("epsilon", "seed"):
        return str(getattr(cell, axis))
    params = cell.dataset_config if axis == "dataset" else getattr(cell, f"{axis}_params")
    return getattr(cell, axis) + canonical_json(params)


def cli_validate(path: str | os.PathLike[str], *, verbose: bool = False) -> tuple[str, int]:
    """``bench validate GRID``: (text to print, exit code). Exit 0 for a valid grid; exit 2 and
    the error message (for stderr) for an invalid one. Nothing is run or written."""
    try:
        return validate_text(path, verbose=verbose), 0
    except GridError as e:
        return f"error: {e}\n", 2


__all__ = [
    "AXES",
    "BASELINE",
    "METRIC_GROUPS",
    "SETTINGS_DEFAULTS",
    "Cell",
    "FrozenDict",
    "Grid",
    "GridError",
    "ModelInfo",
    "canonical_json",
    "cell_hash",
    "cli_validate",
    "freeze",
    "load_grid",
    "model_catalog",
    "privatization_hash",
    "validate_text",
]
