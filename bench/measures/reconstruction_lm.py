"""``reconstruction_lm``: token reconstruction by an attacker with a language-model prior.

The ``reconstruction`` measure's attacker sees one privatized token at a time and guesses its
original by Bayes' rule under a context-free Zipf prior (:mod:`bench.measures.reconstruction`).
Text has context: a word the channel leaves ambiguous is often fixed by the words around it.
This attacker replaces the Zipf prior by a causal language model's prediction of each word from
the words before it (issue 49, item 1):

    ŵ_j = argmax_{w ∈ K_j}  [λ·P_LM(w | c_<j) + (1 − λ)·π(w)] · P(o_j | w)

where o_j is the j-th privatized token, P(o | w) the mechanism's channel (the informed
adversary's: exact where the mechanism has one, else sampled; the same candidates and channel
cache as ``reconstruction``), K_j the ``CANDIDATES`` most probable originals of o_j under
the unigram posterior π(w)·P(o_j | w), and c_<j the attacker's reading of the words before j:
its unigram MAP guesses ŵ(o_1) … ŵ(o_{j−1}) (a function of the privatized text alone, so
post-processing; closer to the original than the privatized words wherever the unigram attacker
is right). The causal LM reads the whole context in one forward pass per document, each word
as " " + word; P_LM(w | c_<j) is the probability of w's first word piece at the position before
word j, renormalised over K_j -- exact for one-piece words, an upper bound for longer ones
(the continuation's probability is not computed: that would cost a pass per candidate). Only
the left context is used: the model is causal (a right-to-left pass would need a model trained
on reversed text).

The prior is the LM's interpolated with the unigram prior π (both renormalised over K_j), the
classic smoothing of a language model: where the channel nearly decides, a context read partly
wrong can mislead the LM alone (tem at ε = 6 on BBC: LM alone 0.943, unigram 0.960), and λ = 0
is the unigram attacker. The attacker fits λ ∈ ``LAMBDAS`` on examples, as the attribute
adversaries fit theirs on a training split, but honestly for a measure read on the test split:
by 2-fold cross-fitting over documents (even and odd), each fold's tokens guessed with the λ
that reconstructs most of the other fold's (ties: the smaller λ), so no token is guessed with a
weight chosen on itself (``lm_lambda``: the two weights). ``lm_alone_top1`` is λ = 1.

It reads the first ``MAX_DOCS`` test documents, ``MAX_WORDS`` words each (the LM is the
expensive part: about 45 word pieces a second per core in the pinned environment). On the same
tokens it also records the unigram attacker's rates (``map_top1``/``map_top5``), "the output is
the original" (``unchanged``) and the prior's best words (``prior_top1``/``prior_top5``, the
chance level); the headline ``top1``/``top5`` is the strongest of ``lm``, ``map``, ``identity``
and ``prior`` (``attack``), so it is never below the unigram attacker on these tokens nor below
chance. Intervals: 95% percentile bootstrap over documents. Tokens whose original is not a
candidate, or out of the public vocabulary, are left out as in ``reconstruction``
(``coverage``).

Example:
    >>> from bench.measures import measure
    >>> measure("reconstruction_lm").version
    '2'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.measures.base import Measure, MeasureInput, measure_seed, rate_with_ci
from bench.measures.reconstruction import (
    TOP_K,
    _by_value_then_id,
    _skip,
    _strongest,
    attack_channel,
    scored,
    unigram_rates,
)

MAX_DOCS = 100
"""Test documents read (the first of the test split)."""
MAX_WORDS = 48
"""Words read of each document (about 60 word pieces of English prose)."""
CANDIDATES = 50
"""Originals considered per token: the most probable under the unigram posterior."""
LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Weights of the LM in the interpolated prior the attacker chooses from (0: the unigram
prior alone, 1: the LM alone)."""
BATCH = 16
"""Documents per forward pass."""


def unigram_candidates(channel: Any, prior: np.ndarray, outputs: np.ndarray,
                       k: int = CANDIDATES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each output id: the ``k`` most probable candidate originals under π(w)·P(o|w)
    (vocabulary ids, most probable first, ties by id), log P(o|w) of each and log π(w).

    Where no candidate can produce an output, its candidates are the output itself (log
    likelihood and log prior 0) -- the unigram attacker's guess there too."""
    from bench.mechanisms.channels import TILE

    outputs = np.asarray(outputs, dtype=np.int64)
    cand = channel.cand
    k = min(k, len(cand))
    ids = np.empty((len(outputs), k), dtype=np.int64)
    loglik = np.empty((len(outputs), k))
    logprior = np.empty((len(outputs), k))
    with np.errstate(divide="ignore"):
        log_pi = np.log(prior)
    for a in range(0, len(outputs), TILE):
        o = outputs[a:a + TILE]
        lik = channel.likelihood(o)
        s = lik * prior[None, :]
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        vals = np.take_along_axis(s, top, axis=1)
        order = _by_value_then_id(vals, top)  # column indices, most probable first
        got = cand[order]
        with np.errstate(divide="ignore"):
            ll = np.log(np.take_along_axis(lik, order, axis=1))
        lp = log_pi[order]
        none = s.max(axis=1) <= 0
        got[none], ll[none], lp[none] = o[none, None], 0.0, 0.0
        sl = slice(a, a + len(o))
        ids[sl], loglik[sl], logprior[sl] = got, ll, lp
    return ids, loglik, logprior


def first_pieces(lm: Any, words: list[str]) -> np.ndarray:
    """The LM's first word piece of " " + word for each word."""
    enc = lm.tokenizer([" " + w for w in words], add_special_tokens=False)["input_ids"]
    return np.array([e[0] for e in enc], dtype=np.int64)


def lm_log_prior(lm: Any, docs: list[list[str]], first: list[np.ndarray]
                 ) -> list[np.ndarray]:
    """Per document, per word j: log P_LM(piece | words before j) of each piece id in
    ``first[d][j]`` (an array of piece ids per word, ``(n_words, k)`` per document), read from
    one forward pass over the document (words joined as " " + word after the start token)."""
    from bench.models.base import default_threads
    from bench.numeric import torch_threads

    tok = lm.tokenizer
    seqs, where = [], []
    for words in docs:
        pieces = tok([" " + w for w in words], add_special_tokens=False)["input_ids"] \
            if words else []
        ids, pos = [lm.start_id], []
        for p in pieces:
            pos.append(len(ids) - 1)  # the position whose next-piece logits predict the word
            ids.extend(p)
        seqs.append(ids)
        where.append(np.array(pos, dtype=np.int64))
    out: list[np.ndarray] = []
    with torch_threads(default_threads()) as torch, torch.no_grad():
        for b in range(0, len(seqs), BATCH):
            chunk = seqs[b:b + BATCH]
            logp = torch.log_softmax(lm.padded_forward(chunk)[2].float(), dim=-1)
            for i in range(len(chunk)):
                d = b + i
                rows = logp[i, torch.from_numpy(where[d]).to(logp.device)]  # (n_words, |V|)
                pick = torch.from_numpy(first[d]).to(logp.device)
                out.append(rows.gather(1, pick).double().cpu().numpy())
    return out


def _renormalised(logp: np.ndarray) -> np.ndarray:
    """exp(logp) renormalised over each row (rows of −inf: uniform)."""
    m = logp.max(axis=1, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    p = np.exp(logp - m)
    total = p.sum(axis=1, keepdims=True)
    bad = total[:, 0] <= 0
    p[bad], total[bad] = 1.0, p.shape[1]
    return p / total


def mixture_guesses(lm_logp: np.ndarray, log_prior: np.ndarray, loglik: np.ndarray,
                    cand_ids: np.ndarray, lam: float, k: int = TOP_K) -> np.ndarray:
    """The ``k`` best guesses (vocabulary ids) under the prior λ·P_LM + (1 − λ)·π, both
    renormalised over each token's candidates (rows), times the channel (ties: the unigram
    order, the candidates' column order)."""
    with np.errstate(divide="ignore"):
        prior = np.log(lam * _renormalised(lm_logp) + (1.0 - lam) * _renormalised(log_prior))
    top = np.argsort(-(prior + loglik), axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cand_ids, top, axis=1)


def lm_guesses(lm: Any, words: np.ndarray, outputs: list[np.ndarray], cand_ids: np.ndarray,
               cand_loglik: np.ndarray, cand_logprior: np.ndarray, index: list[np.ndarray],
               lambdas: tuple[float, ...] = LAMBDAS, k: int = TOP_K
               ) -> dict[float, list[np.ndarray]]:
    """The LM-prior attacker's ``k`` best guesses (vocabulary ids) of each token, for each
    weight λ of the LM in the prior (:func:`mixture_guesses`).

    Args:
        lm: a :class:`bench.lm.LocalLM`.
        words: the public vocabulary's words (``words[id]``).
        outputs: per document, the privatized tokens' vocabulary ids.
        cand_ids, cand_loglik, cand_logprior: :func:`unigram_candidates` of the distinct
            outputs.
        index: per document, each token's row in ``cand_ids``.
        lambdas: the weights.

    Returns:
        ``{λ: per document, an (n_words, k) array}``.
    """
    context = [[str(words[i]) for i in cand_ids[ix, 0]] for ix in index]  # unigram MAP text
    piece_of = {}
    uniq = np.unique(cand_ids)
    for w, p in zip(uniq.tolist(), first_pieces(lm, [str(words[i]) for i in uniq]).tolist(),
                    strict=True):
        piece_of[w] = p
    pieces = np.vectorize(piece_of.__getitem__, otypes=[np.int64])(cand_ids)
    prior = lm_log_prior(lm, context, [pieces[ix] for ix in index])
    return {lam: [mixture_guesses(lp, cand_logprior[ix], cand_loglik[ix], cand_ids[ix], lam, k)
                  for ix, lp in zip(index, prior, strict=True)]
            for lam in lambdas}


def cross_fitted(guesses: dict[float, np.ndarray], orig: np.ndarray, doc: np.ndarray
                 ) -> tuple[np.ndarray, list[float]]:
    """Each token's guesses under the weight λ that reconstructs most top-1 tokens of the
    other fold of documents (folds: even and odd document index; ties: the smaller λ), and
    the weight each fold was guessed with.

    Args:
        guesses: ``{λ: (n, k) guesses}`` of the same tokens.
        orig: the tokens' originals.
        doc: each token's document index.
    """
    lambdas = sorted(guesses)
    fold = doc % 2
    out = np.empty_like(guesses[lambdas[0]])
    chosen: list[float] = []
    for f in (0, 1):
        other = fold != f
        hits = [int((guesses[lam][other, 0] == orig[other]).sum()) for lam in lambdas]
        lam = lambdas[int(np.argmax(hits))]  # first maximum: the smaller λ
        out[fold == f] = guesses[lam][fold == f]
        chosen.append(float(lam))
    return out, chosen


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``reconstruction_lm`` record of a cell (see the module docstring)."""
    from bench.lm import load_causal_lm

    priv, cand, channel, prior = attack_channel(ctx)
    emb = priv.embedding
    w2i = emb.word_to_id
    originals, privatized = ctx.test_split()
    originals = [list(d[:MAX_WORDS]) for d in originals[:MAX_DOCS]]
    privatized = [list(d[:MAX_WORDS]) for d in privatized[:MAX_DOCS]]
    if [len(d) for d in originals] != [len(d) for d in privatized]:
        raise ValueError("reconstruction_lm: privatized documents are not word for word")
    orig = [np.fromiter((w2i.get(t.lower(), -1) for t in d), np.int64, len(d))
            for d in originals]
    outp = [np.fromiter((w2i.get(t.lower(), -1) for t in d), np.int64, len(d))
            for d in privatized]
    # out-of-vocabulary outputs (<unk>) stay in the context as themselves, but are not scored
    uniq, inv = np.unique(np.concatenate(outp + [np.zeros(0, np.int64)]), return_inverse=True)
    cand_ids, cand_ll, cand_lp = unigram_candidates(channel, prior, np.maximum(uniq, 0))
    cand_ids[uniq < 0] = -1
    bounds = np.cumsum([0] + [len(d) for d in outp])
    index = [inv[bounds[i]:bounds[i + 1]] for i in range(len(outp))]
    words = np.append(np.asarray(emb.words, dtype=object), "<unk>")  # id −1 → "<unk>"
    lm = load_causal_lm()
    by_lambda = lm_guesses(lm, words, outp, cand_ids, cand_ll, cand_lp, index)
    o, p = np.concatenate(orig + [np.zeros(0, np.int64)]), np.concatenate(outp + [np.zeros(0,
                                                                                   np.int64)])
    m = cand_ids[np.concatenate(index + [np.zeros(0, np.int64)])]
    doc = np.repeat(np.arange(len(outp)), [len(d) for d in outp])
    keep, coverage = scored(o, p, cand)
    o, p, m, doc = o[keep], p[keep], m[keep], doc[keep]
    by_lambda = {lam: np.concatenate(g + [np.zeros((0, TOP_K), np.int64)])[keep]
                 for lam, g in by_lambda.items()}
    g, lam = cross_fitted(by_lambda, o, doc)
    seed = measure_seed(ctx.cell.seed, "reconstruction_lm")
    n_docs = len(outp)
    unigram, chance = unigram_rates(m, o, p, cand[np.argsort(-prior, kind="stable")], doc,
                                    n_docs, seed)
    rates = {"lm_top1": rate_with_ci(g[:, 0] == o, doc, n_docs, seed),
             f"lm_top{TOP_K}": rate_with_ci((g == o[:, None]).any(axis=1), doc, n_docs, seed),
             **unigram}
    alone = rate_with_ci(by_lambda[1.0][:, 0] == o, doc, n_docs, seed)
    return {"top1": strongest(rates, 1), f"top{TOP_K}": strongest(rates, TOP_K), **rates,
            **chance, "lm_alone_top1": alone, "lm_lambda": lam,
            "coverage": coverage, "n_tokens": int(len(o)), "n_candidates": int(len(cand)),
            "channel": channel.kind, "model": lm.name, "max_docs": MAX_DOCS,
            "max_words": MAX_WORDS, "candidates_per_token": CANDIDATES}


def strongest(rates: dict[str, dict[str, Any]], k: int) -> dict[str, Any]:
    """The strongest top-``k`` guess: the LM-prior attacker, else as
    :func:`bench.measures.reconstruction._strongest` (ties: ``lm`` first)."""
    best = _strongest(rates, k)
    lm = rates[f"lm_top{k}"]
    return dict(lm, attack="lm") if (lm["rate"] or 0.0) >= (best["rate"] or 0.0) else best


RECONSTRUCTION_LM = Measure(
    "reconstruction_lm", "2", "token reconstruction with a language-model prior: the local "
    "causal LM's prediction of each word from the attacker's reading of the words before it, "
    "interpolated with the unigram prior (weight cross-fitted over documents), times the "
    "mechanism's channel; top-1 and top-5 rate beside the unigram attacker's on the same "
    "tokens", compute, _skip)
"""The ``reconstruction_lm`` measure."""
