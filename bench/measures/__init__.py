"""Measures: named, versioned measurements a grid adds to its cells (``settings.measures``).

Built in (each module cites its definition):

=================  ===============================================================  ========
name               what it reports                                                   applies
=================  ===============================================================  ========
``reconstruction`` top-1/top-5 rate of the MAP guess of each original word          word output
``s_w``            S_w (distinct substitutes) and per-word N_w over repeated draws   word output
``linkage``        top-1 and MRR of finding each original by tf-idf cosine          text cells
``linkage_minilm`` the same by MiniLM-L6 sentence-embedding cosine                  text cells
``similarity_      cosine similarity (CS) of each privatized document's MiniLM-L6   text cells
minilm``           embedding to its original's, with its chance level
``perplexity_      perplexity of the privatized test documents under the local     text cells
smollm2``          SmolLM2-135M, beside the originals' (log ratio: 0 = as fluent)
``mia_low_fpr``    TPR at 1% and 0.1% FPR of every membership attack                cells with mia
``mia_rmia``       RMIA (offline reference models): AUC, TPR at 1% and 0.1% FPR     cells with mia
``reference_       the utility task by tf-idf + logistic regression (C on dev): a    text cells
utility``          utility no failed training moves; also on original test text
=================  ===============================================================  ========

:func:`compute_measures` runs a cell's measures (the ``measures`` stage of
:mod:`bench.run.stages`). See ``docs/measures.md``.

Example:
    >>> from bench.measures import MEASURES
    >>> sorted(MEASURES.names())
    ['linkage', 'linkage_minilm', 'mia_low_fpr', 'mia_rmia', 'perplexity_smollm2',
     'reconstruction', 'reference_utility', 's_w', 'similarity_minilm']
"""

from __future__ import annotations

import time
from typing import Any

from bench.measures.base import (
    MEASURES,
    NEEDS,
    Measure,
    MeasureInput,
    measure,
    measure_seed,
    measure_versions,
    parse_versions,
    register_measure,
)

MEASURES.register_lazy("reconstruction", "bench.measures.reconstruction:RECONSTRUCTION")
MEASURES.register_lazy("reconstruction_lm",
                       "bench.measures.reconstruction_lm:RECONSTRUCTION_LM")
MEASURES.register_lazy("s_w", "bench.measures.substitutes:S_W")
MEASURES.register_lazy("linkage", "bench.measures.linkage:LINKAGE")
MEASURES.register_lazy("linkage_minilm", "bench.measures.linkage:LINKAGE_MINILM")
MEASURES.register_lazy("similarity_minilm", "bench.measures.similarity:SIMILARITY_MINILM")
MEASURES.register_lazy("perplexity_smollm2", "bench.measures.perplexity:PERPLEXITY_SMOLLM2")
MEASURES.register_lazy("mia_low_fpr", "bench.measures.mia_low_fpr:MIA_LOW_FPR")
MEASURES.register_lazy("mia_rmia", "bench.measures.rmia:MIA_RMIA")
MEASURES.register_lazy("reference_utility",
                       "bench.measures.reference_utility:REFERENCE_UTILITY")


def applicable(cell: Any, names: list[str] | tuple[str, ...]) -> list[str]:
    """The measures among ``names`` that apply to ``cell`` (in the given order)."""
    return [n for n in names if measure(n).skip(cell) is None]


def compute_measures(ctx: MeasureInput, names: list[str] | tuple[str, ...]
                     ) -> dict[str, dict[str, Any]]:
    """``{name: record}`` of the measures among ``names`` that apply to the cell; each record
    carries its measure's ``version`` and the ``seconds`` it took (a run-time measurement:
    never compared by a rerun, :func:`bench.results.compare.comparable`)."""
    from bench.measures.base import as_record

    out: dict[str, dict[str, Any]] = {}
    for name in applicable(ctx.cell, names):
        m = measure(name)
        t0 = time.perf_counter()
        out[name] = as_record(m.compute(ctx)) | {"version": m.version,
                                                 "seconds": time.perf_counter() - t0}
    return out


__all__ = ["MEASURES", "NEEDS", "Measure", "MeasureInput", "applicable", "compute_measures",
           "measure", "measure_seed", "measure_versions", "parse_versions", "register_measure"]
