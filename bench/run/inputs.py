"""A cell's inputs, cached per worker process: the dataset, the embedding and the tokens.

A worker runs many cells of one group (:func:`bench.run.runner.plan`); they share one dataset,
one embedding table and one tokenization, so these are loaded once per process and kept
(:func:`bench.run.worker.keep_worker_caches` stops joblib from mistaking that for a leak).

Example:
    >>> ds = dataset(cell); docs = dataset_tokens(cell, ds); emb = embedding(cell)
"""

from __future__ import annotations

from typing import Any

from bench.grid import Cell, canonical_json
from bench.grid.schema import DATA_KEY

_DATASETS: dict[str, Any] = {}
_EMBEDDINGS: dict[tuple, Any] = {}
_TOKENS: dict[tuple, list[list[str]]] = {}


def dataset(cell: Cell) -> Any:
    """The cell's dataset (:func:`bench.datasets.load_dataset`, seeded by the cell).

    A dataset read from a file is loaded only if the file still has the content the grid was
    read with (the cell's ``data`` digest, :data:`bench.grid.schema.DATA_KEY`); otherwise
    :class:`bench.datasets.DatasetFileChangedError` names the file.
    """
    from bench.datasets import DATASETS, check_digest, load_dataset
    from bench.datasets.base import resolve_config

    kwargs = cell.dataset_kwargs()
    kwargs.setdefault("seed", cell.seed)
    digest = cell.dataset_config.get(DATA_KEY)
    key = canonical_json([cell.dataset, kwargs, digest])
    if key not in _DATASETS:
        if digest:
            path = resolve_config(DATASETS.get(cell.dataset), kwargs).get("path")
            check_digest(cell.dataset, path, str(digest))
        _DATASETS[key] = load_dataset(cell.dataset, **kwargs)
    return _DATASETS[key]


def embedding(cell: Cell) -> Any:
    """The cell's embedding table (grid settings ``embedding``, ``embedding_path``,
    ``vocab_size``)."""
    from bench.embeddings import load_embedding

    s = cell.settings
    key = (s.get("embedding"), s.get("embedding_path"), s.get("vocab_size"))
    if key not in _EMBEDDINGS:
        _EMBEDDINGS[key] = load_embedding(s.get("embedding") or "glove-6b-50d",
                                          int(s.get("vocab_size") or 50_000),
                                          path=s.get("embedding_path"))
    return _EMBEDDINGS[key]


def _tokens(ds: Any, max_tokens: int | None) -> list[list[str]]:
    from bench.embeddings import tokenize

    return [tokenize(t)[:max_tokens] if max_tokens else tokenize(t) for t in ds.texts]


def dataset_tokens(cell: Cell, ds: Any) -> list[list[str]]:
    """Every document of ``ds`` tokenized, cut at the dataset's ``max_tokens`` (default 500)."""
    max_tokens = ds.config.get("max_tokens", 500)
    key = (id(ds), max_tokens)
    if key not in _TOKENS:
        _TOKENS[key] = _tokens(ds, max_tokens)
    return _TOKENS[key]


def privatizer(cell: Cell, seed: Any) -> Any:
    """The cell's privatizer over its embedding, with its own random stream seeded by
    ``seed`` (:meth:`bench.privatize.Privatizer.from_cell`)."""
    from bench.privatize import Privatizer

    return Privatizer.from_cell(cell, embedding(cell), seed)
