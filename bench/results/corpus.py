"""The corpus caches of a results folder: privatized and rewritten corpora, checksummed.

One entry is a folder ``<key>/`` holding the corpus (``tokens.parquet`` for text,
``vectors.npz`` for vectors), ``stats.json`` (what produced it) and a manifest with each
file's size and sha256 (:func:`bench.results.store.manifest_for`). An entry is written into a
temporary folder renamed into place, read only after its checksums match, and a damaged one is
discarded and rebuilt (it is a cache: nothing is lost). The cache holds privatized output only,
never the private text.

Example:
    >>> write(folder, out, stats)
    >>> docs, stats = load(folder, what="privatized corpus")
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from bench.results.layout import MANIFEST
from bench.results.store import file_mismatch, manifest_for, staged_folder, write_json

logger = logging.getLogger(__name__)

STATS = "stats.json"
"""An entry's record of what produced it."""


def write(folder: Path, out: Any, stats: dict) -> None:
    """Write an entry: ``out.tokens`` (lists of tokens) or ``out.vectors`` (arrays) and
    ``stats``; when another worker finished the same entry first, theirs is kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    with staged_folder(folder) as tmp:
        if out.tokens is not None:
            pq.write_table(pa.table({"tokens": out.tokens}), tmp / "tokens.parquet")
        else:
            lengths = np.array([len(v) for v in out.vectors], dtype=np.int64)
            flat = np.concatenate(out.vectors) if len(out.vectors) else np.zeros((0, 0))
            np.savez(tmp / "vectors.npz", vectors=flat.astype(np.float32), lengths=lengths)
        write_json(tmp / STATS, stats)
        files = {p.name: p.read_bytes() for p in sorted(tmp.iterdir())}
        write_json(tmp / MANIFEST, manifest_for(folder.name, files))


def verify(folder: Path) -> None:
    """Raise ``ValueError`` unless every file of an entry matches its manifest."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        raise ValueError(f"no {MANIFEST}") from None
    for name, want in manifest["files"].items():
        problem = file_mismatch(name, (folder / name).read_bytes(), want)
        if problem:
            raise ValueError(problem)


def discard(folder: Path) -> None:
    """Remove a damaged entry (renamed first, so no reader sees it half-deleted)."""
    tmp = folder.with_name(f".{folder.name}.damaged-{os.getpid()}")
    try:
        os.replace(folder, tmp)
    except OSError:  # another worker got there first
        return
    shutil.rmtree(tmp, ignore_errors=True)


def read(folder: Path, output: str) -> list:
    """An entry's corpus (``output``: ``"text"`` or ``"vectors"``), after checking its files
    against their checksums."""
    verify(folder)
    if output == "text":
        import pyarrow.parquet as pq

        return pq.read_table(folder / "tokens.parquet").column("tokens").to_pylist()
    data = np.load(folder / "vectors.npz")
    bounds = np.cumsum(data["lengths"])[:-1]
    return [v.astype(np.float64) for v in np.split(data["vectors"], bounds)]


def exists(folder: Path) -> bool:
    """Whether an entry has been written (it may still be damaged: :func:`load` checks)."""
    return (folder / STATS).is_file()


def load(folder: Path, what: str, output: str | None = None,
         require: tuple[str, ...] = ()) -> tuple[Any, dict] | None:
    """``(corpus, stats)`` of a sound entry, or None when there is none; a damaged entry (a
    checksum mismatch, unparsable stats, or stats without a ``require``d key) is discarded,
    with a warning naming ``what``, and None returned so the caller rebuilds it.

    ``output`` is the corpus kind (``"text"`` / ``"vectors"``), by default the one the stats
    record.
    """
    if not exists(folder):
        return None
    try:
        stats = json.loads((folder / STATS).read_text())
        missing = [key for key in require if key not in stats]
        if missing:
            raise KeyError(missing[0])
        return read(folder, output or stats["output"]), stats
    except (OSError, ValueError, KeyError) as e:  # damaged: it is a cache, so rebuild it
        logger.warning("%s %s in the cache is damaged (%s): rebuilding it", what, folder.name, e)
        discard(folder)
        return None
