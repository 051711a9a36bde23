"""Reading grid files: YAML (duplicate keys refused) -> a checked mapping, ``extends`` merged.

Every problem is one :class:`~bench.grid.schema.GridError` naming the file (and the line, for
YAML syntax), and, through :attr:`RawGrid.origin`, later errors name the file a key was written
in, not the file that extends it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.grid.schema import (
    AXES,
    OPTIONAL_SETTINGS,
    REQUIRED_AXES,
    SETTINGS_DEFAULTS,
    TOP_KEYS,
    GridError,
    unknown,
)
from bench.textio import NotUTF8Error, decode_utf8


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
        text = decode_utf8(raw)
    except NotUTF8Error as e:
        raise GridError(f"{path}: line {e.line}: not UTF-8 text (byte {e.byte:#04x}); a "
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
            raise GridError(f"{path}: {key}: {unknown('top-level key', key, TOP_KEYS)}")
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
                raise GridError(f"{path}: axes.{axis}: {unknown('axis', axis, AXES)}")
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
                                        f"{unknown('axis', axis, AXES)}")
    if "settings" in data:
        if data["settings"] is None:
            data["settings"] = {}
        if not isinstance(data["settings"], dict):
            raise GridError(f"{path}: settings: must be a mapping, got "
                            f"{type(data['settings']).__name__}")
        for key in data["settings"]:
            if key not in SETTINGS_DEFAULTS and key not in OPTIONAL_SETTINGS:
                known = [*SETTINGS_DEFAULTS, *OPTIONAL_SETTINGS]
                raise GridError(f"{path}: settings.{key}: {unknown('setting', key, known)}")


def _merge_settings(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    out = dict(parent)
    for k, v in child.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge_settings(out[k], v)
        else:
            out[k] = v
    return out


@dataclass
class RawGrid:
    """A grid file with its ``extends`` chain merged, and the file each key came from."""

    data: dict[str, Any]
    origin: dict[str, Path]
    files: list[Path]


def read_merged(path: Path, chain: tuple[Path, ...] = ()) -> RawGrid:
    """The grid file at ``path`` with its ``extends`` chain merged (a child's axes replace the
    parent's axis by axis, its settings merge key by key; ``name`` and ``description`` are not
    inherited). ``chain``: the files that extend this one, to detect a cycle."""
    path = Path(os.path.abspath(path))
    if path in chain:
        cycle = " -> ".join(str(p) for p in (*chain, path))
        raise GridError(f"{chain[-1]}: extends: cycle detected: {cycle}")
    data = _read_yaml(path)
    if "extends" not in data:
        origin = {k: path for k in data}
        origin.update({f"axes.{a}": path for a in data.get("axes", {})})
        origin.update({f"settings.{s}": path for s in data.get("settings", {})})
        return RawGrid(data, origin, [path])
    parent_path = path.parent / data["extends"]
    if not parent_path.is_file():
        raise GridError(f"{path}: extends: no grid file at {parent_path} (paths are relative to "
                        f"the extending file)")
    parent = read_merged(parent_path, (*chain, path))
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
    return RawGrid(merged, origin, [*parent.files, path])
