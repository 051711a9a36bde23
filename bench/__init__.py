"""bench: a benchmark suite for word-level differentially private text privatization.

Example:
    >>> from bench.embeddings import load_embedding
    >>> emb = load_embedding("glove-6b-50d", vocab_size=50_000)
"""

from importlib import metadata as _metadata

try:  # the version is written once, in pyproject.toml; the installed metadata carries it
    __version__ = _metadata.version("bench")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
    __version__ = "0+unknown"

# Before any bench module loads NumPy or torch: one numeric environment for every process that
# computes a cell (bench.numeric; BENCH_NUMERIC=native turns it off, and cells then say so).
from bench import numeric as _numeric  # noqa: E402  (stdlib-only module)

_numeric.pin()
