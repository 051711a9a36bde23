"""The suite's defaults are written once (bench.defaults) and every default is that value."""

from __future__ import annotations

import inspect

from bench.defaults import DEFAULT_EMBEDDING, DEFAULT_VOCAB_SIZE
from bench.embeddings import load_embedding
from bench.grid.schema import SETTINGS_DEFAULTS
from bench.models import MODELS
from bench.models.base import public_embedding
from bench.privatize import Privatizer


def _default(fn, name):
    return inspect.signature(fn).parameters[name].default


def test_every_default_embedding_and_vocabulary_is_the_one_in_bench_defaults():
    assert (SETTINGS_DEFAULTS["embedding"], SETTINGS_DEFAULTS["vocab_size"]) == (
        DEFAULT_EMBEDDING, DEFAULT_VOCAB_SIZE)
    for fn, emb, vocab in ((load_embedding, "name", "vocab_size"),
                           (public_embedding, "name", "vocab_size"),
                           (MODELS.get("bow").__init__, "embedding", "vocab_size"),
                           (MODELS.get("lstm").__init__, "embedding", "vocab_size")):
        assert (_default(fn, emb), _default(fn, vocab)) == (DEFAULT_EMBEDDING,
                                                            DEFAULT_VOCAB_SIZE), fn
    assert _default(Privatizer.build, "embedding") == DEFAULT_EMBEDDING
    assert _default(Privatizer.build, "vocab_size") == DEFAULT_VOCAB_SIZE
