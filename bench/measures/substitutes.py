"""``s_w``: plausible deniability as N_w *and* S_w (Feyisetan et al. 2020).

Feyisetan, Balle, Drake and Diethe, "Privacy- and Utility-Preserving Textual Analysis via
Calibrated Multivariate Perturbations" (WSDM 2020) report, for a word w privatized many times,
two plausible-deniability statistics: N_w, how often the output is w itself, and S_w, the
number of *distinct* words the output takes (the effective support of w's output
distribution). A mechanism can have a low N_w and still give a word away when its substitutes
are always the same one or two neighbours: S_w says how many.

Here: ``n_words`` distinct in-vocabulary words of the cell's test split (drawn uniformly from
the distinct words, by the measure's own stream) are each privatized ``n_draws`` times through
a privatizer of the cell's configuration, from the measure's own stream
(:meth:`bench.measures.base.MeasureInput.own_stream`); for each word, S_w = distinct outputs,
N_w = fraction of outputs equal to it.
Reported: mean, median and 10th/90th percentiles of S_w over the words, and the mean per-word
N_w (the corpus-level N_w of the cell weighs words by their frequency instead). S_w ranges
from 1 (always one output) to ``n_draws``; it depends on ``n_draws``, which is recorded.

Example:
    >>> rec = substitutes(privatizer, words_ids, rng)
    >>> rec["s_w_mean"], rec["n_w_mean"]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.measures.base import Measure, MeasureInput, measure_seed

N_WORDS = 200
"""Distinct test words privatized per cell."""
N_DRAWS = 50
"""Privatizations of each word."""


def substitutes(privatizer: Any, word_ids: np.ndarray, n_draws: int = N_DRAWS
                ) -> dict[str, Any]:
    """S_w and N_w of each word in ``word_ids`` over ``n_draws`` privatizations (one vectorised
    call: the words repeated ``n_draws`` times, every occurrence with its own noise)."""
    word_ids = np.asarray(word_ids, dtype=np.int64)
    if not len(word_ids):
        raise ValueError("s_w: no in-vocabulary word to privatize")
    reps = np.repeat(word_ids, n_draws)
    out, _ = privatizer.privatize_ids(reps)
    if out is None:
        raise ValueError("s_w: the privatizer outputs vectors, not words")
    out = np.asarray(out, dtype=np.int64).reshape(len(word_ids), n_draws)
    srt = np.sort(out, axis=1)
    s_w = 1 + (np.diff(srt, axis=1) != 0).sum(axis=1)
    n_w = (out == word_ids[:, None]).mean(axis=1)
    return {"s_w": s_w, "n_w": n_w}


def _skip(cell: Any) -> str | None:
    if cell.is_baseline:
        return "the baseline outputs every word unchanged (S_w = 1)"
    if not cell.word_for_word:
        return ("S_w counts the outputs of each input word; a document-level mechanism (a "
                "paraphrase, or words drawn in context) has no per-word output")
    if cell.output != "text" or cell.has_rewriter:
        return "S_w counts the words a mechanism outputs; this cell's mechanism outputs vectors"
    return None


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``s_w`` record of a cell (see the module docstring)."""
    emb = ctx.embedding
    test_docs, _ = ctx.test_split()
    w2i = emb.word_to_id
    ids = np.unique(np.fromiter((w2i.get(t.lower(), -1) for d in test_docs for t in d),
                                np.int64))
    ids = ids[ids >= 0]
    rng = np.random.default_rng(measure_seed(ctx.cell.seed, "s_w"))
    if len(ids) > N_WORDS:
        ids = np.sort(rng.choice(ids, N_WORDS, replace=False))
    with ctx.own_stream("s_w") as privatizer:
        res = substitutes(privatizer, ids)
    s = res["s_w"].astype(np.float64)
    return {"s_w_mean": float(s.mean()), "s_w_median": float(np.median(s)),
            "s_w_q10": float(np.quantile(s, 0.1)), "s_w_q90": float(np.quantile(s, 0.9)),
            "n_w_mean": float(res["n_w"].mean()), "n_words": int(len(ids)),
            "n_draws": N_DRAWS}


S_W = (Measure(
    "s_w", "1", "plausible deniability: distinct substitutes S_w and per-word N_w over "
    "repeated privatizations (Feyisetan et al. 2020)", compute, _skip))
"""The ``s_w`` measure."""
