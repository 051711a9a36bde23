"""A cell's rewriter: train it where the grid allows, rewrite the cell's privatized vectors.

Called by the runner (:func:`bench.run.stages.evaluate_cell`) for a cell with a rewriter, after the
privatized vectors are made (and cached) and before the models see anything:

1. **Training pairs** (:func:`training_pairs`): the rewriter's public corpus (the dataset's
   held-apart public part, or another registered corpus), tokenized like the cell's documents
   and privatized with the cell's own configuration but a noise stream of its own; or, only
   under ``rewriter_fit_on: private``, the cell's own privatized train split.
2. **Fit and rewrite**: the rewriter (seeded with the cell's seed) is fitted on those pairs and
   rewrites every document of the cell; its reconstruction loss is measured on the test split.
3. **The ε = ∞ reference** (:func:`reference_scores`, when the grid asks for rewrite metrics):
   the same rewriter trained and applied on the *unperturbed* embeddings, the "Original"
   column of Huang et al. (2024, Tables 1-3), a measurement and not the identity.

Both results are cached under ``results/cache/rewritten/<key>/`` (checksummed like the
privatized corpora), keyed by everything they depend on, so cells that differ only in the
model train the rewriter once. The reference keeps its scores only, never its rewrite of the
unperturbed (i.e. nearly the private) text.
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from bench.grid.cell import PIPELINE_VERSION
from bench.grid.frozen import canonical_json, thaw

logger = logging.getLogger(__name__)

PRIVATE_NOISE_STREAM = 2
"""Second word of the seed of the noise that privatizes the rewriter's training corpus
(``[cell seed, 2]``): independent of the cell's own noise (``cell seed``) and of the informed
adversary's (``[cell seed, 1]``)."""


def _key(payload: Any) -> str:
    h = hashlib.sha256(canonical_json(payload).encode("utf-8"))
    h.update(b"\0pipeline=" + str(PIPELINE_VERSION).encode("utf-8"))
    return h.hexdigest()[:16]


def _rewriter_spec(cell: Any) -> dict[str, Any]:
    return {"name": cell.rewriter, "params": thaw(cell.rewriter_params),
            "version": cell.versions.get("rewriter"),
            "fit_on": cell.settings.get("rewriter_fit_on", "public"), "seed": cell.seed}


def _tokens(texts: list[str], max_tokens: int | None) -> list[list[str]]:
    from bench.embeddings import tokenize

    return [tokenize(t)[:max_tokens] if max_tokens else tokenize(t) for t in texts]


def public_corpus(cell: Any, ds: Any) -> tuple[list[list[str]], dict[str, Any]]:
    """The tokens of the rewriter's public training corpus and a description of it.

    Raises:
        ValueError: ``corpus: public`` on a dataset without a held-apart public part.
    """
    from bench.rewriters.base import PUBLIC_PART

    corpus = cell.rewriter_params["corpus"]
    max_tokens = ds.config.get("max_tokens", 500)
    if corpus == PUBLIC_PART:
        texts = list(getattr(ds, "public_texts", []) or [])
        if not texts:
            raise ValueError(f"rewriter corpus 'public': dataset {cell.dataset!r} has no "
                             f"held-apart public part (dataset config public: N)")
        return _tokens(texts, max_tokens), {"corpus": PUBLIC_PART, "dataset": cell.dataset,
                                            "docs": len(texts)}
    from bench.datasets import load_dataset

    other = load_dataset(corpus, seed=cell.seed)
    return (_tokens(list(other.texts), other.config.get("max_tokens", 500)),
            {"corpus": corpus, "dataset": corpus, "docs": len(other),
             "content_hash": other.content_hash})


def _privatizer(cell: Any, embedding: Any, seed: Any):
    from bench.privatize import Privatizer

    return Privatizer.from_cell(cell, embedding, seed)


def clean_vectors(docs: list[list[str]], embedding: Any) -> list[np.ndarray]:
    """Unperturbed input vectors of token lists (OOV tokens get the ``<unk>`` vector)."""
    table = embedding.input_vectors()
    return [table[embedding.encode(d, "unk")[0]] for d in docs]


def training_pairs(cell: Any, ds: Any, docs: list[list[str]], vectors: list[np.ndarray],
                   embedding: Any, *, clean: bool = False
                   ) -> tuple[list[np.ndarray], list[list[str]], dict[str, Any]]:
    """(privatized vectors, original tokens, description) the rewriter trains on.

    ``rewriter_fit_on: private``: the cell's own train split (``vectors`` are the cell's
    privatized documents). Otherwise the public corpus (:func:`public_corpus`), privatized with
    the cell's configuration and the noise stream ``[seed, 2]``. ``clean``: the unperturbed
    embeddings instead (the ε = ∞ reference).
    """
    from bench.rewriters.base import PRIVATE_CORPUS

    if cell.settings.get("rewriter_fit_on", "public") == "private":
        idx = ds.splits["train"].tolist()
        toks = [docs[i] for i in idx]
        noisy = clean_vectors(toks, embedding) if clean else [vectors[i] for i in idx]
        return noisy, toks, {"corpus": PRIVATE_CORPUS, "dataset": cell.dataset,
                             "docs": len(idx)}
    toks, desc = public_corpus(cell, ds)
    if clean:
        return clean_vectors(toks, embedding), toks, desc
    out = _privatizer(cell, embedding, [cell.seed, PRIVATE_NOISE_STREAM]).privatize(toks)
    return out.vectors, toks, desc


def _fit(cell: Any, noisy: list[np.ndarray], toks: list[list[str]], embedding: Any):
    from bench.rewriters import REWRITERS

    rw = REWRITERS.create(cell.rewriter, **thaw(cell.rewriter_params), seed=cell.seed)
    return rw.fit(noisy, toks, embedding)


def _test_idx(cell: Any, ds: Any) -> np.ndarray:
    limit = cell.settings.get("rewrite_max_docs")
    test = ds.splits["test"]
    return test[: int(limit)] if limit else test


def rewrite_cell(cell: Any, ds: Any, docs: list[list[str]], vectors: list[np.ndarray],
                 cache: Path, embedding: Any) -> tuple[list[list[str]], dict[str, Any]]:
    """The cell's rewritten documents (every split) and the rewriter's record.

    The record (``metrics["rewriter"]`` of the cell) names the rewriter, its training corpus,
    ``fit_on``, whether the guarantee is void (and why: trained on the evaluated data, or a
    rewriter that reads the original words), the training size and time, and
    ``test_loss``, the reconstruction loss on the test split. Cached (see the module
    docstring).
    """
    from bench.grid import privatization_hash
    from bench.results import corpus
    from bench.rewriters.base import VOID_REASON

    folder = cache / "rewritten" / _key(["rewrite", privatization_hash(cell, ds.content_hash),
                                         _rewriter_spec(cell),
                                         cell.settings.get("rewrite_max_docs")])  # test loss
    cached = corpus.load(folder, "rewritten corpus", output="text")
    if cached is not None:
        return cached[0], cached[1] | {"cache_hit": True}
    t0 = time.perf_counter()
    noisy, toks, desc = training_pairs(cell, ds, docs, vectors, embedding)
    rw = _fit(cell, noisy, toks, embedding)
    t1 = time.perf_counter()
    rewritten = rw.rewrite(vectors, docs if rw.reads_tokens else None)
    test = _test_idx(cell, ds).tolist()
    loss = rw.loss([vectors[i] for i in test], [docs[i] for i in test])
    reasons = ([VOID_REASON] if desc["corpus"] == "train" else []) + rw.void_reasons()
    stats = {"name": cell.rewriter, "version": cell.versions.get("rewriter"),
             "params": thaw(cell.rewriter_params),
             "fit_on": cell.settings.get("rewriter_fit_on", "public"), **desc,
             "guarantee_void": bool(reasons), "void_reason": "; ".join(reasons) or None,
             "train_tokens": rw.train_tokens_, "train_loss": rw.train_loss_,
             "output_vocabulary": len(rw.vocab_), "test_loss": loss,
             "fit_seconds": t1 - t0, "rewrite_seconds": time.perf_counter() - t1}
    corpus.write(folder, SimpleNamespace(tokens=rewritten, vectors=None), stats)
    return rewritten, stats | {"cache_hit": False}


def reference_folder(cell: Any, ds: Any, cache: Path) -> Path:
    """The cache entry of :func:`reference_scores` for ``cell`` (per dataset, embedding,
    rewriter and seed)."""
    s = cell.settings
    return cache / "rewritten" / _key([
        "reference", cell.dataset, thaw(cell.dataset_config), ds.content_hash,
        [s.get("embedding"), s.get("embedding_path"), s.get("vocab_size")],
        s.get("rewrite_max_docs"), _rewriter_spec(cell)])


def store_reference(cell: Any, ds: Any, cache: Path, scores: dict[str, Any]) -> None:
    """Put ``scores`` in ``cell``'s :func:`reference_scores` cache entry, as if computed (a
    reference check that takes the ε = ∞ reference from a committed cell, see
    :func:`bench.reference.rerun_cells`)."""
    from bench.results import corpus

    corpus.write(reference_folder(cell, ds, cache), SimpleNamespace(tokens=[], vectors=None),
                 {"reference": scores})


def reference_scores(cell: Any, ds: Any, docs: list[list[str]], cache: Path, embedding: Any
                     ) -> dict[str, Any]:
    """Rewrite metrics and loss of the cell's rewriter at ε = ∞: trained on the unperturbed
    embeddings of the same corpus and applied to the unperturbed test documents (the
    "Original" column of Huang et al. 2024, Tables 1-3). Cached per dataset, embedding,
    rewriter and seed: every mechanism and ε shares it."""
    from bench.metrics.rewrite import rewrite_scores
    from bench.results import corpus

    folder = reference_folder(cell, ds, cache)
    # the entry holds the scores only (an empty corpus: the rewrite of unperturbed embeddings
    # is close to the private text)
    cached = corpus.load(folder, "rewriter reference", output="text", require=("reference",))
    if cached is not None:
        return cached[1]["reference"]
    noisy, toks, _desc = training_pairs(cell, ds, docs, [], embedding, clean=True)
    rw = _fit(cell, noisy, toks, embedding)
    test = _test_idx(cell, ds).tolist()
    originals = [docs[i] for i in test]
    clean = clean_vectors(originals, embedding)
    rewritten = rw.rewrite(clean, originals if rw.reads_tokens else None)
    scores = rewrite_scores(originals, rewritten)
    scores |= {"n_docs": len(test), "loss": rw.loss(clean, originals)}
    # only the scores: the rewrite of unperturbed embeddings is close to the private text
    corpus.write(folder, SimpleNamespace(tokens=[], vectors=None), {"reference": scores})
    return scores
