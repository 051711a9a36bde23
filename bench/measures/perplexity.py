"""``perplexity_smollm2``: how natural the privatized text reads to a language model -- the
fluency measure LM-based privatization papers report beside utility (e.g. Utpala et al. 2023,
DP-Prompt; Meisenbacher et al. 2024, DP-MLM), under the suite's local causal LM
(:mod:`bench.lm`: SmolLM2-135M-Instruct, shipped offline).

For each of the first ``MAX_DOCS`` test documents, original o_i and privatized p_i (the cell's
tokens joined by spaces, as every text-pair measure reads them), the LM reads its first
``MAX_TOKENS`` word pieces after the tokenizer's beginning-of-text token, and
NLL(x) = −Σ_t log P(x_t | x_<t) over those pieces. Reported:

* ``perplexity`` = exp(Σ_i NLL(p_i) / Σ_i |p_i|), the privatized documents' corpus perplexity,
  and ``original_perplexity``, the same for the originals (tokenized text reads less naturally
  than prose: the originals anchor it);
* ``log_ratio``: the mean over documents of NLL(p_i)/|p_i| − NLL(o_i)/|o_i| (nats per word
  piece), with its 95% percentile-bootstrap interval over documents (``log_ratio_ci``), and
  ``ratio`` = exp(``log_ratio``): 1 for the text unchanged (an exact known answer), above 1 the
  less fluent the output.

Word-level mechanisms replace words one by one, so their output loses fluency as ε falls;
DP-Prompt's paraphrases are fluent by construction: this is the axis on which the two differ.
The model is a 135M-parameter one with Q4-rounded weights: its perplexities are its own, not
those a larger model gives (docs/measures.md).

Example:
    >>> from bench.measures import measure
    >>> measure("perplexity_smollm2").version
    '1'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.measures.base import (
    Measure,
    MeasureInput,
    bootstrap_ci,
    last_for_texts,
    measure_seed,
)
from bench.measures.linkage import skip_text, texts

MAX_DOCS = 100
"""Test documents read (the first of the test split): the LM is the slowest part of a cell
under the pinned environment (about 100 word pieces a second per core)."""
MAX_TOKENS = 64
"""Word pieces read of each document."""
BATCH = 16
"""Documents per forward pass."""


def token_nll(lm: Any, docs: list[str], max_tokens: int = MAX_TOKENS
              ) -> tuple[np.ndarray, np.ndarray]:
    """Per document: the summed negative log-likelihood (nats) of its first ``max_tokens`` word
    pieces under ``lm`` (a :class:`bench.lm.LocalLM`) and how many pieces were scored."""
    from bench.models.base import default_threads
    from bench.numeric import torch_threads

    tok = lm.tokenizer
    ids = [[lm.start_id] + tok(d, add_special_tokens=False)["input_ids"][:max_tokens]
           for d in docs]
    nll = np.zeros(len(docs), dtype=np.float64)
    count = np.array([len(x) - 1 for x in ids], dtype=np.int64)
    with torch_threads(default_threads()) as torch, torch.no_grad():
        for b in range(0, len(ids), BATCH):
            chunk = ids[b:b + BATCH]
            inp, mask, logits = lm.padded_forward(chunk)
            logits = logits[:, :-1].float()
            logp = torch.log_softmax(logits, dim=-1).gather(-1, inp[:, 1:, None])[..., 0]
            nll[b:b + len(chunk)] = (-(logp * mask[:, 1:])).sum(dim=1).double().cpu().numpy()
    return nll, count


def perplexity_scores(nll_p: np.ndarray, n_p: np.ndarray, nll_o: np.ndarray, n_o: np.ndarray,
                      seed: Any = 0) -> dict[str, Any]:
    """The record's numbers from per-document NLLs and piece counts (privatized, original)."""
    nll_p, nll_o = np.asarray(nll_p, dtype=np.float64), np.asarray(nll_o, dtype=np.float64)
    n_p, n_o = np.asarray(n_p, dtype=np.float64), np.asarray(n_o, dtype=np.float64)
    keep = (n_p > 0) & (n_o > 0)
    if keep.sum() < 2:
        raise ValueError("perplexity: need at least two documents with text on both sides")
    per_doc = nll_p[keep] / n_p[keep] - nll_o[keep] / n_o[keep]
    log_ratio = float(per_doc.mean())
    return {"perplexity": float(np.exp(nll_p[keep].sum() / n_p[keep].sum())),
            "original_perplexity": float(np.exp(nll_o[keep].sum() / n_o[keep].sum())),
            "log_ratio": log_ratio, "log_ratio_ci": list(bootstrap_ci(per_doc, seed=seed)),
            "ratio": float(np.exp(log_ratio)), "n_docs": int(keep.sum()),
            "n_tokens": int(n_p[keep].sum())}


def _original_nll(lm: Any, originals: list[str]) -> tuple[np.ndarray, np.ndarray]:
    return last_for_texts("nll:" + lm.name, originals, lambda t: token_nll(lm, t))


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``perplexity_smollm2`` record."""
    from bench.lm import load_causal_lm

    lm = load_causal_lm()
    originals, privatized = texts(ctx)
    originals, privatized = originals[:MAX_DOCS], privatized[:MAX_DOCS]
    nll_o, n_o = _original_nll(lm, originals)
    nll_p, n_p = token_nll(lm, privatized)
    return perplexity_scores(nll_p, n_p, nll_o, n_o,
                             seed=measure_seed(ctx.cell.seed, "perplexity_smollm2")) | {
        "model": lm.name, "max_docs": MAX_DOCS, "max_tokens": MAX_TOKENS}


PERPLEXITY_SMOLLM2 = Measure(
    "perplexity_smollm2", "1", "perplexity of the privatized test documents under the local "
    "SmolLM2-135M-Instruct, beside the originals', and their per-document log ratio (1 = as "
    "fluent as the original)", compute, skip_text)
"""The ``perplexity_smollm2`` measure."""
