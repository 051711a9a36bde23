"""bench: a benchmark suite for word-level differentially private text privatization.

Example:
    >>> from bench.embeddings import load_embedding
    >>> emb = load_embedding("glove-6b-50d", vocab_size=50_000)
"""

__version__ = "0.3.0"
