"""``reconstructed``: the lexical adversary on the attacker's reconstruction of the original text.

A word-level mechanism publishes, for each original word w, an output word o drawn from its
channel P(o | w). The ``lexical`` adversary reads the outputs as they are; the ``informed`` one
scores the attribute's own words through the channel. Neither reads the *other* words back: an
attribute carried by the vocabulary of a whole document (a party's style, an outlet's topics)
survives in the outputs only as scattered neighbours of its words. This adversary first undoes
what it can of the mechanism, token by token, with the Bayes-optimal guess of the
``reconstruction`` measure (:mod:`bench.measures.reconstruction`):

    ŵ(o) = argmax_w π(w)·P(o | w)          (the MAP original under the Zipf prior π),

and then fits the ``lexical`` adversary (tf-idf word 1-2-grams + class-weighted logistic
regression, penalty and C on dev) on the reconstructed documents -- training, dev and test split
alike, so it is as adaptive as ``lexical``. It is post-processing of the privatized text with
public knowledge (the mechanism and its parameters, the DP threat model, as ``informed``), so
its accuracy is a valid empirical-privacy measurement, and privacy stays the strongest attack:
adding it never makes a cell look more private. The channel and candidates are the informed
adversary's (its ``candidates="auto"``: the most frequent public words plus the attribute's
words; the mechanism's exact channel, else the sampled one) and come from the results folder's
channel cache, so a cell that runs both pays for one channel. Outputs no candidate produces,
and words out of the public vocabulary, are kept as they are. On the unprivatized baseline
(and for a mechanism that passes its input through) the reconstruction is the text itself and
the adversary is ``lexical``.

The issue that asked for it (49, item 1) hands the *language-model* attacker's reconstruction
to the attribute adversaries; its cost -- one LM pass over every document of all three splits,
about 45 word pieces a second per core -- is hours per cell at BBC's size, so the context-free
reconstruction is what a grid can afford, and the LM's is measured on test excerpts by
``reconstruction_lm``.

Example:
    >>> adv = ReconstructedAdversary(privatizer=p, seed=0).fit(train, y, dev, y_dev)
    >>> adv.reconstruct(test)[0][:5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.attacks.informed_channel import channel_costs, channel_kind
from bench.attacks.lexical import DEFAULT_C_GRID, PENALTIES, LexicalAdversary
from bench.models.base import as_token_lists


class ReconstructedAdversary(LexicalAdversary):
    """``lexical`` on the MAP reconstruction of each privatized token (module docstring).

    Args:
        privatizer: a fitted privatizer of the cell's configuration (its stream is never
            drawn from here); ``None`` on the unprivatized baseline.
        attribute_words: the attribute's label names (multilabel attributes), added to the
            candidate originals as the informed adversary adds them.
        channel_cache: the results folder's channel cache (None: computed here).
        C, C_grid, penalties, min_df, max_features, n_classes, seed: as ``lexical``.
    """

    name = "reconstructed"
    version = "1"
    accepts = frozenset({"text"})
    needs = frozenset({"privatizer", "attribute_words", "channel_cache"})

    def __init__(self, *, privatizer: Any = None, attribute_words: Sequence[str] | None = None,
                 channel_cache: Any = None, C: float | None = None,
                 C_grid: Sequence[float] = DEFAULT_C_GRID, penalties: Sequence[str] = PENALTIES,
                 min_df: int = 2, max_features: int | None = 200_000,
                 n_classes: int | None = None, seed: int = 0) -> None:
        super().__init__(C=C, C_grid=C_grid, penalties=penalties, min_df=min_df,
                         max_features=max_features, n_classes=n_classes, seed=seed)
        if privatizer is not None:
            channel_kind(privatizer)  # vectors output -> ModelInputError with the reason
        self.privatizer = privatizer
        self.attribute_words = None if attribute_words is None else [str(w) for w in
                                                                     attribute_words]
        self.channel_cache = channel_cache
        self._map: tuple[Any, np.ndarray] | None = None

    def params(self) -> dict[str, Any]:
        """``lexical``'s settings and choices, the channel's kind and how it was had."""
        own = {k: v for k, v in super().params().items()
               if k not in ("privatizer", "attribute_words", "channel_cache")}  # given, not set
        return {**own,
                "channel": getattr(self, "channel_kind_", None) or channel_kind(self.privatizer),
                "channel_cache": getattr(self, "channel_cache_", None),
                "n_candidates": getattr(self, "n_candidates_", None)}

    # -- the reconstruction --------------------------------------------------------------------
    def _setup(self) -> None:
        from bench.measures.reconstruction import attribute_word_ids, channel_and_prior

        p = self.privatizer
        self.costs_: dict[str, float] = {}
        if channel_kind(p) == "identity":
            self.channel_kind_ = "identity"
            self._map = (None, np.zeros(0))
            return
        attr = attribute_word_ids(self.attribute_words or [], p.embedding.word_to_id)
        cand, ch, prior, how = channel_and_prior(p, attr, self.channel_cache)
        self.channel_kind_, self.channel_cache_ = ch.kind, how["cache"]
        self.n_candidates_ = int(len(cand))
        self.costs_ = channel_costs(how)
        self._map = (ch, prior)  # the Zipf prior of `reconstruction`

    def reconstruct(self, X: Sequence[Any]) -> list[list[str]]:
        """Each document with every in-vocabulary token replaced by its MAP original (one
        guess per distinct output word, vectorised)."""
        from bench.measures.reconstruction import map_guesses

        self._check_input(X)
        docs = as_token_lists(X)
        if self._map is None:
            self._setup()
        ch, prior = self._map
        if ch is None:
            return docs
        emb = self.privatizer.embedding
        flat = [t.lower() for d in docs for t in d]
        ids = np.fromiter((emb.word_to_id.get(t, -1) for t in flat), np.int64, len(flat))
        uniq, inv = np.unique(ids, return_inverse=True)
        known = uniq >= 0
        guess = uniq.copy()
        guess[known] = map_guesses(ch, prior, uniq[known], k=1)[:, 0]
        words = np.asarray(emb.words, dtype=object)
        out = np.where(ids >= 0, words[guess[inv].clip(0)], np.asarray(flat, dtype=object))
        bounds = np.cumsum([0] + [len(d) for d in docs])
        return [list(out[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]

    def _docs(self, X: Sequence[Any]) -> list[list[str]]:
        return self.reconstruct(X)
