"""Which cells are baselines, and which baseline a cell is compared with: one definition each.

A *baseline* is the unprivatized cell of a dataset × model × seed: mechanism ``none``, ε = ∞.
The rule, :func:`is_baseline`, is :func:`bench.grid.schema.is_baseline`, which the cell, the
record, the report's configurations and the leaderboard's rows all ask. Every comparison of a
privatized cell with "its" baseline -- the runner's deltas (:func:`bench.run.runner.plan`),
``bench verify --repair``, the leaderboard's recomputation, the report's Δ columns -- pairs
them by exact hash: the baseline is the cell :func:`bench.grid.expand.baseline_cell` builds
from the privatized cell (its dataset, model, seed and settings, with the adversaries and
measures a baseline runs and their versions), named by its hash with the cell's dataset content
hash -- so a look-alike baseline (another adversary or measure version, a re-spelled setting)
is never taken for it, whoever wrote it. Only a cell whose exact baseline is absent (cells of
old releases, whose hashes were computed otherwise) falls back to :func:`baseline_key`: the same
dataset (name, configuration without the file's location, loader version, content hash), the
same model (name, hyperparameters, version), the same seed, the same suite version (cells
written before 0.4.0 hashed it) and the same grid settings -- or, failing that, differing in its
settings alone -- and then only to the one baseline that matches, never to one of several.

Example:
    >>> index = BaselineIndex()
    >>> for rec in cells:
    ...     if is_baseline(rec.spec):
    ...         index.add(rec.spec, rec.dataset_hash, rec, hash=rec.hash)
    >>> index.find(cell.spec, cell.dataset_hash)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from bench.grid.schema import is_baseline

T = TypeVar("T")


def _component(spec: Mapping[str, Any], kind: str) -> list[Any]:
    entry = spec.get(kind) or {}
    if not isinstance(entry, Mapping):
        return [str(entry), {}, None]
    params = dict(entry.get("config" if kind == "dataset" else "params") or {})
    if kind == "dataset":
        params.pop("path", None)  # where the file is, not what it holds
    return [entry.get("name"), params, entry.get("version")]


def baseline_key(spec: Mapping[str, Any], dataset_hash: str | None = None,
                 settings: bool = True, suite_version: str | None = None) -> str:
    """What a cell shares with its baseline, as canonical JSON (see the module docstring).

    ``dataset_hash`` and ``suite_version``: a stored spec's own when not given (a cell record
    passes its :attr:`~bench.results.record.CellRecord.dataset_hash` and
    :attr:`~bench.results.record.CellRecord.suite_version`, which also look in its metrics).
    ``settings=False`` leaves the grid settings out (the fallback match)."""
    dh = dataset_hash if dataset_hash is not None else spec.get("dataset_hash")
    suite = suite_version if suite_version is not None else spec.get("suite_version")
    key = [_component(spec, "dataset"), _component(spec, "model"), spec.get("seed"),
           str(suite or ""), str(dh or "")]
    if settings:
        key.append(spec.get("settings") or {})
    return json.dumps(key, sort_keys=True, separators=(",", ":"), default=str)


def expected_baseline_hash(spec: Mapping[str, Any], dataset_hash: str | None = None
                           ) -> str | None:
    """The hash of the baseline a cell's spec is compared with
    (:func:`bench.grid.expand.baseline_cell`), with ``dataset_hash`` (else the spec's own);
    None for a spec that does not describe a cell."""
    from bench.grid import Cell, cell_hash
    from bench.grid.expand import baseline_cell

    try:
        cell = Cell.from_spec(spec)
        dh = dataset_hash if dataset_hash is not None else spec.get("dataset_hash")
        return cell_hash(baseline_cell(cell), dh)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


class BaselineIndex(Generic[T]):
    """Baselines by hash and by :func:`baseline_key`; :meth:`find` gives a cell's baseline (any
    payload: a record, a hash)."""

    def __init__(self) -> None:
        self._by_hash: dict[str, T] = {}
        self._exact: dict[str, list[T]] = {}
        self._loose: dict[str, list[T]] = {}

    def add(self, spec: Mapping[str, Any], dataset_hash: str | None, item: T,
            suite_version: str | None = None, hash: str | None = None) -> None:
        """Index a baseline cell (its stored or expanded spec) under its hash (``hash``, else
        the stored spec's ``hash``) and its keys."""
        h = hash if hash is not None else spec.get("hash")
        if isinstance(h, str):
            self._by_hash.setdefault(h, item)
        self._exact.setdefault(baseline_key(spec, dataset_hash, True, suite_version),
                               []).append(item)
        self._loose.setdefault(baseline_key(spec, dataset_hash, False, suite_version),
                               []).append(item)

    def find(self, spec: Mapping[str, Any], dataset_hash: str | None = None,
             suite_version: str | None = None) -> T | None:
        """The baseline of a cell: the one of its exact baseline's hash
        (:func:`expected_baseline_hash`); where none is indexed, the only one with the same key,
        else the only one that differs in its settings alone; else None (never one of
        several)."""
        want = expected_baseline_hash(spec, dataset_hash)
        if want is not None and want in self._by_hash:
            return self._by_hash[want]
        found = self._exact.get(baseline_key(spec, dataset_hash, True, suite_version)) or []
        if found:
            return found[0] if len(found) == 1 else None
        loose = self._loose.get(baseline_key(spec, dataset_hash, False, suite_version)) or []
        return loose[0] if len(loose) == 1 else None

    def __len__(self) -> int:
        return sum(len(v) for v in self._exact.values())


__all__ = ["BaselineIndex", "baseline_key", "expected_baseline_hash", "is_baseline"]
