"""`bench data prepare NAME`: tokenized splits in a Parquet cache keyed by content and config.

The cache folder is ``<cache_dir>/<name>-<key16>/`` with one Parquet file per split
(``train.parquet``, ..., ``mia_shadow.parquet``) and ``meta.json``. The key is the sha256 of the
dataset's content hash, the resolved configuration (seed, split fractions, max_tokens, loader
options except the path) and the preparation version, so a changed file, config or tokenizer
gives a new folder, and re-running with the same inputs reuses the existing one. The folder is
written under a temporary name and renamed into place, so a crash leaves nothing half-written.

Columns of each split file: ``index`` (row in the dataset), ``text``, ``tokens`` (list of
strings, at most ``max_tokens``), ``n_tokens`` (before truncation), ``group`` (if the dataset
has groups) and ``label_<task>`` per task (int64 class index; multilabel: list of int8 0/1).

Example:
    >>> from bench.datasets import prepare, read_prepared
    >>> folder = prepare("rt", "cache/datasets", seed=0, max_tokens=500)
    >>> tables = read_prepared(folder)     # {"train": pyarrow.Table, ...}
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets.base import DATASETS, Dataset, load_dataset, resolve_config

logger = logging.getLogger(__name__)

PREPARE_VERSION = "1"
TOKENIZER = "bench.embeddings.tokenize"


def cache_key(ds: Dataset) -> str:
    """sha256 of the content hash, the preparation-relevant config and the versions."""
    spec = DATASETS.get(ds.name)
    # a key added later is left out while unset, so existing cache folders keep their keys
    config = {k: v for k, v in ds.config.items()
              if k != "path" and not (k in _LATER_KEYS and v is None)}
    payload = {
        "dataset": ds.name,
        "loader_version": spec.version,
        "content_hash": ds.content_hash,
        "config": config,
        "tokenizer": TOKENIZER,
        "prepare_version": PREPARE_VERSION,
    }
    blob = json.dumps(payload, sort_keys=True, default=_jsonable)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_LATER_KEYS = ("train_subsample",)
"""Config keys added after the cache key was fixed: hashed only when set."""


def _jsonable(v: Any) -> Any:
    if isinstance(v, (tuple, set)):
        return list(v)
    if isinstance(v, Path):
        return str(v)
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"not JSON-serialisable: {v!r}")


def prepare(
    dataset: str | Dataset, cache_dir: str | Path, *, force: bool = False, **config: Any
) -> Path:
    """Write (or reuse) the tokenized splits of a dataset; return the cache folder.

    Args:
        dataset: a registered name (loaded with ``config``) or an already loaded Dataset.
        cache_dir: parent folder of the cache.
        force: rebuild even if the folder exists.
        **config: dataset configuration (``seed``, ``split``, ``max_tokens``, ``path``, ...);
            only with a name.
    """
    if isinstance(dataset, Dataset):
        if config:
            raise TypeError("pass config only with a dataset name, not with a loaded Dataset")
        ds = dataset
    else:
        ds = load_dataset(dataset, **config)
    key = cache_key(ds)
    cache_dir = Path(cache_dir)
    final = cache_dir / f"{ds.name}-{key[:16]}"
    if final.is_dir() and (final / "meta.json").is_file() and not force:
        logger.info("prepare %s: reusing %s", ds.name, final)
        return final
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{ds.name}-", dir=cache_dir))
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is meant to be shared
    try:
        meta = _write(ds, tmp, key)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, default=_jsonable) + "\n")
        if final.exists():  # force=True, or a folder without meta.json (a foreign leftover)
            shutil.rmtree(final)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "meta.json").is_file():  # lost a race to a finished writer: fine
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    logger.info("prepare %s: wrote %s", ds.name, final)
    return final


def _write(ds: Dataset, folder: Path, key: str) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bench.embeddings import tokenize

    max_tokens = ds.config.get("max_tokens")
    full = [tokenize(t) for t in ds.texts]
    n_tokens = np.fromiter((len(t) for t in full), np.int64, len(full))
    tokens = full if max_tokens is None else [t[:max_tokens] for t in full]
    for name, idx in ds.splits.items():
        ii = idx.tolist()
        cols: dict[str, Any] = {
            "index": pa.array(idx, pa.int64()),
            "text": pa.array([ds.texts[i] for i in ii], pa.string()),
            "tokens": pa.array([tokens[i] for i in ii], pa.list_(pa.string())),
            "n_tokens": pa.array(n_tokens[idx], pa.int64()),
        }
        if ds.groups is not None:
            cols["group"] = pa.array([str(ds.groups[i]) for i in ii], pa.string())
        for tname, task in ds.tasks.items():
            lab = task.labels[idx]
            if task.kind == "multilabel":
                cols[f"label_{tname}"] = pa.array(lab.tolist(), pa.list_(pa.int8()))
            else:
                cols[f"label_{tname}"] = pa.array(lab, pa.int64())
        pq.write_table(pa.table(cols), folder / f"{name}.parquet")
    truncated = int((n_tokens > max_tokens).sum()) if max_tokens is not None else 0
    return {
        "dataset": ds.name,
        "key": key,
        "content_hash": ds.content_hash,
        "prepare_version": PREPARE_VERSION,
        "tokenizer": TOKENIZER,
        "config": {k: v for k, v in ds.config.items()},
        "tasks": {
            k: {"kind": t.kind, "role": t.role, "classes": list(t.classes)}
            for k, t in ds.tasks.items()
        },
        "splits": {k: int(len(v)) for k, v in ds.splits.items()},
        "n_texts": len(ds),
        "n_truncated": truncated,
        "card": ds.card.to_dict(),
    }


def read_prepared(folder: str | Path) -> dict[str, Any]:
    """The split tables of a prepared folder (``{split: pyarrow.Table}``)."""
    import pyarrow.parquet as pq

    folder = Path(folder)
    meta = json.loads((folder / "meta.json").read_text())
    return {name: pq.read_table(folder / f"{name}.parquet") for name in meta["splits"]}


def cli_prepare(name: str, cache_dir: str | Path, **config: Any) -> Path:
    """What ``bench data prepare NAME [--key value ...]`` calls; returns the cache folder.

    ``config`` may hold ``force=True`` to rebuild. Unknown keys raise ``DatasetConfigError``
    before anything is read.
    """
    force = bool(config.pop("force", False))
    resolve_config(DATASETS.get(name), config)  # fail fast on a bad key
    return prepare(name, cache_dir, force=force, **config)
