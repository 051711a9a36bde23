"""Rewriters: models that turn privatized word vectors back into text.

A rewriter takes the per-token vectors an additive mechanism outputs (mapping ``none``) and
writes text, which then flows through the rest of a cell exactly like privatized text (utility
model, adversaries, membership inference, rewrite metrics). It is trained on (privatized ->
original) pairs of a *public* corpus, disjoint from the evaluated data: the text it writes for a
private document is then post-processing of that document's privatized vectors, and keeps
their per-token guarantee (Dwork & Roth 2014, Prop. 2.1). A rewriter trained on the evaluated
data (grid setting ``rewriter_fit_on: private``) voids the guarantee, and the cell says so.

Registered (lazily, so importing :mod:`bench.rewriters` does not import torch):

* ``autoencoder`` -- the DP-Rewrite-style autoencoder of Huang et al. (2024, Sec. 6 and App. A;
  Igamberdiev et al. 2022): a one-layer BiLSTM encoder over the privatized embeddings and an
  LSTM decoder over the output vocabulary (:mod:`bench.rewriters.autoencoder`).

Example:
    >>> from bench.rewriters import REWRITERS
    >>> rw = REWRITERS.create("autoencoder", epochs=5, seed=0)
    >>> rw.fit(noisy_public_vectors, public_tokens, embedding)
    >>> rw.rewrite(noisy_private_vectors)          # list of token lists
"""

from __future__ import annotations

from bench.registry import Registry
from bench.rewriters.base import (
    FIT_ON,
    NO_REWRITER,
    PRIVATE_CORPUS,
    PUBLIC_PART,
    Rewriter,
)

REWRITERS: Registry[type[Rewriter]] = Registry("rewriter")
REWRITERS.register_lazy("autoencoder", "bench.rewriters.autoencoder:AutoencoderRewriter")


__all__ = ["FIT_ON", "NO_REWRITER", "PRIVATE_CORPUS", "PUBLIC_PART", "REWRITERS", "Rewriter"]
