"""The channel cache of a results folder: arrays keyed by what they were computed from.

The informed adversary's channel P(output word | original word) (:mod:`bench.attacks.
informed_channel`) costs seconds to compute and is the same for every cell that asks for the
same key: the same mechanism, parameters, ε, vocabulary and candidates (and, for a sampled
channel, the same random stream). This module stores such entries without knowing what they
mean: a *payload* (a JSON object saying what the entry depends on), its key (a hash of the
payload), named NumPy arrays and a small JSON ``meta`` record.

Two layers:

* in memory, per process (every cell of a worker shares it), bounded by
  :data:`MEMORY_BYTES`;
* on disk, one folder per entry under ``<results>/cache/channels/<key>/``
  (:func:`bench.results.layout.channels_dir`): ``arrays.npz``, ``meta.json`` and a manifest
  with each file's size and sha256 (:func:`bench.results.store.manifest_for`), like a cached
  privatized corpus (:mod:`bench.results.corpus`). An entry is written into a temporary folder
  that is renamed into place (a reader never sees half of one; when two workers finish the
  same entry, the first one's is kept), read only after its checksums match and its payload
  equals the one asked for, and a damaged entry is discarded with a warning and rebuilt by the
  caller (it is a cache: nothing is lost).

Example:
    >>> store = ChannelStore(layout.channels_dir("results"))
    >>> key = entry_key(payload)
    >>> store.put(key, payload, {"Z": z}, {"kind": "exact"})
    >>> arrays, meta = store.get(key, payload)
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from bench.results.corpus import discard
from bench.results.layout import MANIFEST
from bench.results.store import (
    dumps,
    file_mismatch,
    manifest_for,
    parse_object,
    read_regular,
    staged_folder,
)

logger = logging.getLogger(__name__)

ARRAYS = "arrays.npz"
"""An entry's arrays (``numpy.savez``, read without pickle)."""
META = "meta.json"
"""An entry's payload (what it depends on) and meta record."""
MAX_ENTRY_BYTES = 256 * 2**20
"""Largest entry stored on disk or in memory (a dense channel of a large vocabulary is not
cached: recomputing it is the caller's business)."""
MEMORY_BYTES = 512 * 2**20
"""Bytes of arrays the in-memory layer keeps per process (least recently used first out)."""

_MEMORY: OrderedDict[tuple[str, str], tuple[dict[str, np.ndarray], dict, int]] = OrderedDict()
_MEMORY_LOCK = threading.Lock()  # Dask may run cells of one process in threads


def entry_key(payload: dict[str, Any]) -> str:
    """The key of an entry: 32 hex digits of the sha256 of the payload's canonical JSON."""
    return hashlib.sha256(_canonical(payload)).hexdigest()[:32]


def _canonical(payload: dict[str, Any]) -> bytes:
    return dumps(payload)


def _normal(payload: dict[str, Any]) -> Any:
    """The payload as it reads back from JSON (tuples become lists, ...)."""
    return json.loads(_canonical(payload))


def _nbytes(arrays: dict[str, np.ndarray]) -> int:
    return sum(int(a.nbytes) for a in arrays.values())


class ChannelStore:
    """The channel entries of one results folder (see the module docstring).

    Args:
        folder: ``<results>/cache/channels`` (:func:`bench.results.layout.channels_dir`).
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"ChannelStore({str(self.folder)!r})"

    def entry(self, key: str) -> Path:
        """The folder of entry ``key``."""
        if not (len(key) == 32 and all(c in "0123456789abcdef" for c in key)):
            raise ValueError(f"channel cache: not a key: {key!r}")
        return self.folder / key

    # -- reading -----------------------------------------------------------------------------
    def get(self, key: str, payload: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict,
                                                              str] | None:
        """``(arrays, meta, where)`` of entry ``key`` (``where``: ``"memory"`` or ``"disk"``),
        or None when there is no sound one. The arrays are the caller's to keep (copies).

        An entry on disk whose files do not match their checksums, whose meta does not parse or
        whose payload differs from ``payload`` is discarded with a warning (None is returned:
        the caller computes and :meth:`put` s it again)."""
        mem_key = (str(self.folder.resolve()), key)
        with _MEMORY_LOCK:
            hit = _MEMORY.get(mem_key)
            if hit is not None:
                _MEMORY.move_to_end(mem_key)
        if hit is not None:
            arrays, meta, _ = hit
            return {k: v.copy() for k, v in arrays.items()}, dict(meta), "memory"
        folder = self.entry(key)
        if not folder.is_dir():
            return None
        try:
            arrays, meta = self._read(folder, payload)
        except (OSError, ValueError, KeyError) as e:  # damaged: it is a cache, so rebuild it
            logger.warning("channel %s in the cache is damaged (%s): rebuilding it", key, e)
            discard(folder)
            return None
        self._remember(mem_key, arrays, meta)
        return {k: v.copy() for k, v in arrays.items()}, dict(meta), "disk"

    @staticmethod
    def _read(folder: Path, payload: dict[str, Any]) -> tuple[dict[str, np.ndarray], dict]:
        manifest = parse_object(read_regular(folder / MANIFEST), MANIFEST)
        files = manifest.get("files")
        if not isinstance(files, dict) or set(files) != {ARRAYS, META}:
            raise ValueError(f"{MANIFEST} does not list exactly {ARRAYS}, {META}")
        raw = {}
        for name in (ARRAYS, META):
            raw[name] = read_regular(folder / name, MAX_ENTRY_BYTES + 2**20)
            problem = file_mismatch(name, raw[name], files[name])
            if problem:
                raise ValueError(problem)
        meta = parse_object(raw[META], META)
        if meta.get("payload") != _normal(payload):
            raise ValueError("its payload is not the one its key stands for")
        with np.load(io.BytesIO(raw[ARRAYS]), allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        return arrays, meta["meta"]

    # -- writing -----------------------------------------------------------------------------
    def put(self, key: str, payload: dict[str, Any], arrays: dict[str, np.ndarray],
            meta: dict[str, Any]) -> bool:
        """Store an entry in memory and on disk; returns whether it was stored (an entry over
        :data:`MAX_ENTRY_BYTES` is not). When another worker wrote the same entry first, theirs
        is kept. A disk error is logged, never raised (the caller has its result)."""
        arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
        if _nbytes(arrays) > MAX_ENTRY_BYTES:
            logger.info("channel %s: %d bytes, not cached", key, _nbytes(arrays))
            return False
        folder = self.entry(key)
        self._remember((str(self.folder.resolve()), key), {k: v.copy() for k, v in
                                                           arrays.items()}, dict(meta))
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        files = {ARRAYS: buf.getvalue(), META: dumps({"payload": payload, "meta": meta})}
        try:
            with staged_folder(folder) as tmp:  # another worker's finished entry is kept
                for name, data in files.items():
                    (tmp / name).write_bytes(data)
                (tmp / MANIFEST).write_bytes(dumps(manifest_for(key, files)))
        except OSError as e:
            logger.warning("channel %s could not be written to the cache (%s)", key, e)
        return True

    @staticmethod
    def _remember(mem_key: tuple[str, str], arrays: dict[str, np.ndarray], meta: dict) -> None:
        size = _nbytes(arrays)
        if size > MEMORY_BYTES:
            return
        for a in arrays.values():
            a.flags.writeable = False  # shared by the cells of this process: read only
        with _MEMORY_LOCK:
            _MEMORY[mem_key] = (arrays, meta, size)
            _MEMORY.move_to_end(mem_key)
            total = sum(s for _, _, s in _MEMORY.values())
            while total > MEMORY_BYTES and len(_MEMORY) > 1:
                _, (_, _, s) = _MEMORY.popitem(last=False)
                total -= s


def forget_memory() -> None:
    """Empty this process' in-memory layer (tests; the disk entries stay)."""
    with _MEMORY_LOCK:
        _MEMORY.clear()
