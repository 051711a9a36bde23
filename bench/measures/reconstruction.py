"""``reconstruction``: how many original words the Bayes-optimal attacker recovers.

For a word-level mechanism with channel P(o | w) and a public prior π, the guess of the
original of a privatized token o that is right most often is the maximum-a-posteriori word

    ŵ(o) = argmax_w π(w)·P(o | w)          (Bayes' rule; the posterior of ``informed``),

and no attacker who sees one token at a time does better on average under that prior. The
reconstruction rate is the fraction of the test split's tokens whose original is ŵ(o) (top-1),
or among the five most probable words (top-5). It says whether a *changed* word still gives
the original away: N_w counts the unchanged words, the reconstruction rate every word the
attacker gets right.

The channel is the informed adversary's (:mod:`bench.attacks.informed`: the mechanism's exact
channel where it has one, else sampled through a fresh privatizer), over the same candidate
originals -- the most frequent public words (5,000 for an exact channel, 2,000 for a sampled
one) plus the private attribute's words -- and with its Zipf prior over them, so the channel
computed for the attack is reused from the channel cache. The posterior is exact over the
candidates, i.e. conditioned on the original being one of them, and so are the rates: they are
taken over the test tokens whose original is a candidate (``coverage``: their fraction of the
in-vocabulary test tokens; tokens out of the public vocabulary, privatized as ``<unk>``, are
left out). An output no candidate can produce (P(o|w) = 0 for all of them) is guessed to be
itself.

The MAP guess is Bayes-optimal only under the true prior and channel. With the public Zipf
prior (steeper than a document's own word distribution) and a sampled channel estimated from
32 draws per candidate it can do worse than the naive guess "the output is the original"
(whose rate is N_w on these tokens, ``unchanged``: mvl ε = 10 on BBC) and, where the channel is
nearly uniform (mvl ε = 1), worse than guessing the prior's best words whatever the output
(a single sampled hit outweighs the prior). As privacy is the strongest attack, the headline
``top1`` / ``top5`` is the strongest of the three (``attack``: ``map``, ``identity`` or
``prior``), never below the chance level; each is kept (``map_top1``, ``map_top5``,
``unchanged``, ``prior_top1``, ``prior_top5``). Chance level: the prior's own best guesses
(the most frequent word; the five most frequent), also as plain numbers ``chance_top1`` /
``chance_top5``. Intervals: 95% percentile bootstrap over test documents.

Example:
    >>> top, p = map_guesses(channel, prior, np.array([17, 4031]), k=5)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.measures.base import (
    Measure,
    MeasureInput,
    measure_seed,
    rate_with_ci,
)

TOP_K = 5
"""The top-k rate reported besides the top-1."""


def map_guesses(channel: Any, prior: np.ndarray, outputs: np.ndarray, k: int = TOP_K
                ) -> np.ndarray:
    """The ``k`` most probable originals of each output id, most probable first.

    ``(len(outputs), k)`` vocabulary ids; where no candidate can produce an output (its
    normaliser N_o = 0) every guess is the output itself.
    """
    from bench.mechanisms.channels import TILE

    outputs = np.asarray(outputs, dtype=np.int64)
    cand, C = channel.cand, len(channel.cand)
    k = min(k, C)
    base = prior * channel.floor  # π(w)·f_w, the same for every output
    out = np.empty((len(outputs), k), dtype=np.int64)
    for a in range(0, len(outputs), TILE):
        o = outputs[a:a + TILE]
        ex = channel.excess(o)
        s = np.tile(base, (len(o), 1))
        if ex[0] == "dense":
            s += ex[1] * prior[None, :]
        else:
            _, r, c, v = ex
            np.add.at(s, (r, c), v * prior[c])
        top = np.argpartition(-s, k - 1, axis=1)[:, :k]
        vals = np.take_along_axis(s, top, axis=1)
        # most probable first; ties by vocabulary id (the more frequent word)
        guess = _by_value_then_id(vals, cand[top])
        none = s.max(axis=1) <= 0
        guess[none] = o[none, None]
        out[a:a + len(o)] = guess
    return out


def _by_value_then_id(vals: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``ids`` of each row sorted by value descending, ties by id ascending (a stable sort by
    value after a sort by id)."""
    by_id = np.argsort(ids, axis=1, kind="stable")
    ids, vals = np.take_along_axis(ids, by_id, axis=1), np.take_along_axis(vals, by_id, axis=1)
    return np.take_along_axis(ids, np.argsort(-vals, axis=1, kind="stable"), axis=1)


def candidates(privatizer: Any, attribute_ids: np.ndarray) -> tuple[np.ndarray, str]:
    """The informed adversary's candidate originals (its ``candidates="auto"``) and the
    channel kind."""
    from bench.attacks.informed import auto_candidates
    from bench.attacks.informed_channel import channel_kind

    kind = channel_kind(privatizer)
    size = auto_candidates(kind)
    n = privatizer.embedding.size
    return np.union1d(np.arange(min(size, n)), attribute_ids).astype(np.int64), kind


def attribute_word_ids(names: Any, w2i: dict[str, int]) -> np.ndarray:
    """Sorted vocabulary ids of the words of attribute label ``names`` (what the informed
    adversary adds to its candidates); words outside the vocabulary are left out."""
    ids = {w2i[w] for name in names for w in str(name).lower().split() if w in w2i}
    return np.array(sorted(ids), dtype=np.int64)


def _attribute_ids(ds: Any, w2i: dict[str, int]) -> np.ndarray:
    """:func:`attribute_word_ids` of the dataset's multilabel private attributes."""
    return attribute_word_ids([name for t in ds.privacy_tasks.values()
                               if t.kind == "multilabel" for name in t.classes], w2i)


def _skip(cell: Any) -> str | None:
    if cell.is_baseline:
        return "the baseline's text is the original (every word reconstructed)"
    if cell.has_rewriter:
        return "a rewriter's output is not word for word: no per-token channel"
    if not cell.word_for_word:
        return ("a document-level mechanism (a paraphrase, or words drawn in context) has no "
                "per-word channel")
    if cell.output != "text":
        return "the mechanism outputs vectors, not words"
    return None


def attack_channel(ctx: MeasureInput) -> tuple[Any, np.ndarray, Any, np.ndarray]:
    """``(privatizer, candidates, channel, prior)`` of the attacker: the informed adversary's
    candidate originals and channel (from the cache; the privatizer seeded like the attack
    privatizer) and its Zipf prior (s = 1) over their rank."""
    priv = ctx.privatizer()
    cand, channel, prior, _ = channel_and_prior(
        priv, _attribute_ids(ctx.ds, priv.embedding.word_to_id), ctx.channel_cache)
    return priv, cand, channel, prior


def channel_and_prior(privatizer: Any, attribute_ids: np.ndarray, store: Any = None
                      ) -> tuple[np.ndarray, Any, np.ndarray, dict[str, Any]]:
    """``(candidates, channel, prior, how)``: the informed adversary's candidate originals
    (:func:`candidates`) and channel over them (``store``: the channel cache; ``how``: as
    :func:`bench.attacks.informed_channel.get_channel` reports it), and the Zipf prior
    (s = 1) over their frequency rank."""
    from bench.attacks.informed_channel import get_channel

    cand, kind = candidates(privatizer, attribute_ids)
    channel, how = get_channel(privatizer, cand, sampled=kind == "sampled", store=store)
    prior = 1.0 / (cand + 1.0)
    prior /= prior.sum()
    return cand, channel, prior, how


def scored(orig: np.ndarray, outp: np.ndarray, cand: np.ndarray
           ) -> tuple[np.ndarray, float | None]:
    """The tokens the attacker is scored on (original and output in the public vocabulary,
    the original a candidate: one the attacker can name) and ``coverage``, the candidates'
    share of the in-vocabulary tokens."""
    known = (orig >= 0) & (outp >= 0)
    coverage = float(np.isin(orig[known], cand).mean()) if known.any() else None
    return known & np.isin(orig, cand), coverage


def unigram_rates(guesses: np.ndarray, orig: np.ndarray, outp: np.ndarray, ranked: np.ndarray,
                  doc: np.ndarray, n_docs: int, seed: Any
                  ) -> tuple[dict[str, dict[str, Any]], dict[str, float | None]]:
    """The rates of the MAP guesses (``guesses``: ``(n, ≥ TOP_K)``, most probable first), of
    "the output is the original" and of the prior's best words (``ranked``: candidates most
    probable first), with intervals over documents; and the chance levels."""
    rates = {"map_top1": rate_with_ci(guesses[:, 0] == orig, doc, n_docs, seed),
             f"map_top{TOP_K}": rate_with_ci((guesses[:, :TOP_K] == orig[:, None]).any(axis=1),
                                             doc, n_docs, seed),
             "unchanged": rate_with_ci(outp == orig, doc, n_docs, seed),
             "prior_top1": rate_with_ci(orig == ranked[0], doc, n_docs, seed),
             f"prior_top{TOP_K}": rate_with_ci(np.isin(orig, ranked[:TOP_K]), doc, n_docs,
                                               seed)}
    chance = {"chance_top1": _mean(orig == ranked[0]),
              f"chance_top{TOP_K}": _mean(np.isin(orig, ranked[:TOP_K]))}
    return rates, chance


def compute(ctx: MeasureInput) -> dict[str, Any]:
    """The ``reconstruction`` record of a cell (see the module docstring)."""
    priv, cand, channel, prior = attack_channel(ctx)
    w2i = priv.embedding.word_to_id
    originals, privatized = ctx.test_split()
    lengths = [len(d) for d in originals]
    if lengths != [len(d) for d in privatized]:
        raise ValueError("reconstruction: privatized documents are not word for word")
    orig = np.fromiter((w2i.get(t.lower(), -1) for d in originals for t in d), np.int64)
    outp = np.fromiter((w2i.get(t.lower(), -1) for d in privatized for t in d), np.int64)
    doc = np.repeat(np.arange(len(originals)), lengths)
    keep, coverage = scored(orig, outp, cand)
    orig, outp, doc = orig[keep], outp[keep], doc[keep]
    uniq, inv = np.unique(outp, return_inverse=True)
    guesses = map_guesses(channel, prior, uniq)[inv] if len(uniq) else np.empty((0, TOP_K),
                                                                              np.int64)
    rates, chance = unigram_rates(guesses, orig, outp, cand[np.argsort(-prior, kind="stable")],
                                  doc, len(originals),
                                  measure_seed(ctx.cell.seed, "reconstruction"))
    return {
        "top1": _strongest(rates, 1), f"top{TOP_K}": _strongest(rates, TOP_K),
        **rates, **chance,
        "coverage": coverage, "n_tokens": int(len(orig)), "n_candidates": int(len(cand)),
        "channel": channel.kind}


def _strongest(rates: dict[str, dict[str, Any]], k: int) -> dict[str, Any]:
    """The strongest top-``k`` guess: the MAP guess, "the output is the original" (one guess,
    whatever k) or the prior's own best guesses (ties: in that order)."""
    options = (("map", f"map_top{k}"), ("identity", "unchanged"), ("prior", f"prior_top{k}"))
    name, key = max(options, key=lambda o: (rates[o[1]]["rate"] or 0.0))
    return dict(rates[key], attack=name)


def _mean(x: np.ndarray) -> float | None:
    return float(np.mean(x)) if len(x) else None


# 3: a sampled channel is drawn from a stream seeded by its key, not the cell's (channel format 2)
RECONSTRUCTION = (Measure(
    "reconstruction", "3", "token reconstruction: the maximum-a-posteriori original of each "
    "privatized word under the mechanism's channel and a Zipf prior, top-1 and top-5 rate",
    compute, _skip))
"""The ``reconstruction`` measure."""
