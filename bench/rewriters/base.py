"""The rewriter interface and the rules for where a rewriter may be trained.

A :class:`Rewriter` is fitted on pairs of privatized vectors and original tokens, then writes
text for new privatized vectors::

    rw.fit(noisy, tokens, embedding)   # noisy: list of (n_i, d') arrays; tokens: list of lists
    rw.rewrite(noisy_test)             # -> list of token lists, one token per input vector
    rw.loss(noisy_test, tokens_test)   # mean per-token cross-entropy (reconstruction loss)

Where it is trained (the rewriter's ``corpus`` parameter and the grid setting
``rewriter_fit_on``):

* ``corpus: public`` (the default, :data:`PUBLIC_PART`): the evaluated dataset's held-apart
  public part (dataset config ``public: N``), which is in none of its splits;
* ``corpus: <dataset>``: another registered corpus (all its texts), e.g. ``bbc`` for ``rt``;
* ``rewriter_fit_on: private``: the evaluated dataset's own train split. This is refused
  unless the grid says so, and then the cell's guarantee is reported void: the rewriter has
  seen the private text it later rewrites, so its output is no longer post-processing of the
  privatized vectors alone.

A rewriter that reads the original words when it rewrites (:attr:`Rewriter.reads_tokens`, the
autoencoder's ``train_embeddings``, a departure of Huang et al.'s public code) voids the
guarantee the same way, with the reasons of :meth:`Rewriter.void_reasons`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from bench.registry import declared_params

NO_REWRITER = "none"
"""Rewriter name of the cells without one (the default of the ``rewriter`` axis)."""

PUBLIC_PART = "public"
"""``corpus`` value: the evaluated dataset's held-apart public part (dataset config
``public``)."""

PRIVATE_CORPUS = "train"
"""The recorded corpus of a rewriter trained on the evaluated dataset's train split
(``rewriter_fit_on: private``)."""

FIT_ON = ("public", "private")
"""Values of the grid setting ``rewriter_fit_on``."""

VOID_REASON = ("the rewriter was trained on the evaluated dataset's own train split "
               "(rewriter_fit_on: private): its output depends on private text beyond the "
               "privatized vectors, so the per-token guarantee does not carry over to the "
               "rewritten text")
"""Why a cell with ``rewriter_fit_on: private`` has no guarantee."""


class Rewriter:
    """Base class: subclasses set :attr:`name`, :attr:`version`, :attr:`description` and
    implement :meth:`fit`, :meth:`rewrite` and :meth:`loss`.

    Args:
        corpus: the public training corpus, :data:`PUBLIC_PART` or a dataset name (see the
            module docstring); recorded in the cell (its hash includes it), used by the runner.
    """

    name: ClassVar[str] = "rewriter"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    reads_tokens: bool = False
    """Whether :meth:`rewrite` reads the original words of the documents it rewrites (then the
    rewrite is not post-processing of the privatized vectors, and the guarantee is void)."""
    not_params: ClassVar[frozenset[str]] = frozenset({"seed", "num_threads"})
    """Constructor arguments left out of :attr:`params` (the seed comes from the cell)."""
    set_only_params: ClassVar[frozenset[str]] = frozenset()
    """Options recorded in :attr:`params` only when not at their default (added later: the
    records, and the hashes, of the cells that do not set them stay as they were)."""

    def __init__(self, *, corpus: str = PUBLIC_PART) -> None:
        if not isinstance(corpus, str) or not corpus:
            raise ValueError(f"corpus must be {PUBLIC_PART!r} (the dataset's held-apart public "
                             f"part) or a dataset name, got {corpus!r}")
        self.corpus = corpus

    @property
    def params(self) -> dict[str, Any]:
        """The canonical parameters (defaults filled in; JSON-serialisable): the constructor's
        keyword arguments in signature order, as stored, less :attr:`not_params` and the
        :attr:`set_only_params` at their default (:func:`bench.registry.declared_params`)."""
        return declared_params(self, exclude=self.not_params, omit_default=self.set_only_params)

    def fit(self, noisy: Sequence[np.ndarray], tokens: Sequence[Sequence[str]],
            embedding: Any) -> Rewriter:
        """Train on privatized vectors ``noisy`` (``(n_i, d')`` each) and the original
        ``tokens`` (``n_i`` each); ``embedding`` is the public embedding (output words)."""
        raise NotImplementedError

    def rewrite(self, noisy: Sequence[np.ndarray],
                tokens: Sequence[Sequence[str]] | None = None) -> list[list[str]]:
        """One token per input vector, per document. ``tokens`` (the original words) are given
        only to a rewriter that :attr:`reads_tokens`."""
        raise NotImplementedError

    def void_reasons(self) -> list[str]:
        """Why this rewriter's own configuration leaves the cell without a guarantee (empty:
        its output is post-processing of the privatized vectors)."""
        return []

    def loss(self, noisy: Sequence[np.ndarray], tokens: Sequence[Sequence[str]]) -> float:
        """Mean per-token reconstruction cross-entropy (nats) of ``tokens`` given ``noisy``."""
        raise NotImplementedError


def check_pairs(noisy: Sequence[np.ndarray], tokens: Sequence[Sequence[str]] | None = None
                ) -> int:
    """Validate rewriter input; returns the vector dimension.

    Raises:
        ValueError: no documents, a document that is not an ``(n_i, d)`` array, mixed
            dimensions, or token lists whose lengths differ from the vectors'.
    """
    if len(noisy) == 0:
        raise ValueError("a rewriter needs at least one document")
    dims = set()
    for i, x in enumerate(noisy):
        if not isinstance(x, np.ndarray) or x.ndim != 2:
            raise ValueError(f"rewriter input: document {i} must be an (n_i, d) array of "
                             f"privatized vectors (mapping 'none'), got {type(x).__name__}")
        dims.add(x.shape[1])
    if len(dims) != 1:
        raise ValueError(f"rewriter input: documents have different dimensions {sorted(dims)}")
    if tokens is not None:
        if len(tokens) != len(noisy):
            raise ValueError(f"{len(noisy)} vector documents but {len(tokens)} token documents")
        for i, (x, t) in enumerate(zip(noisy, tokens, strict=True)):
            if len(x) != len(t):
                raise ValueError(f"document {i}: {len(x)} vectors but {len(t)} tokens")
    return dims.pop()


INFORMED = "informed"
"""The adversary that reads mechanism outputs through the mechanism's posterior."""


def rewritten_adversaries(names: list[str], left_out: list[tuple[str, str]],
                          whose: str = "a rewriter's"
                          ) -> tuple[list[str], list[tuple[str, str]]]:
    """The adversaries of a rewriter cell (or of a document-level mechanism's, ``whose``
    names it): those that declare they need the privatizer (``informed``:
    :func:`bench.attacks.adversary.adversary_needs`) are left out, since they read each token
    as the mechanism's output, and a rewriter's word is not one (it depends on the whole
    privatized document and on the rewriter's training), nor a paraphrase's."""
    from bench.attacks.adversary import adversary_needs

    needy = [n for n in names if "privatizer" in adversary_needs(n)]
    if not needy:
        return names, left_out
    return ([n for n in names if n not in needy],
            [*left_out, *((n, f"adversary {n!r} reads the mechanism's output words; "
                              f"{whose} text is not one") for n in needy)])
