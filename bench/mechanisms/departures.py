"""The public code's departures from Huang et al. (2024), as named options, off by default.

The paper's public code (github.com/Skyyyy0920/Trlaplace: ``method.py``, ``model.py``,
``train.py``, ``batchify.py``) privatizes differently from what the paper states. Each departure
that touches the noise is an option of the clipped mechanisms (``laplace``, ``gaussian``,
``trlaplace``; :mod:`bench.mechanisms.clipped`), so its effect can be measured:

- ``noise_shared: batch`` with ``batch_sentences: B`` (the code's 1,024): **one noise vector per
  batch** of sentences. ``method.py``'s ``Laplacian``, ``Gaussian`` and ``TrLaplacian`` each
  draw one vector of shape (d,) that broadcasts over every token of every sentence of the
  batch; the batches are ``batchify.get_batches``'s: sentences sorted by length (stably), cut
  into runs of at most B sentences of *equal* length (:func:`code_batches`). Within a batch the
  differences between word vectors are noise-free.
- ``clip: false``: **no clipping**. C only calibrates the noise (the code's
  ``C = 0.005``, with embeddings of norm a few units, never clipped), so two words differ by
  far more than the sensitivity 2C the noise is calibrated to.

Neither has a DP guarantee: asking for one without ``allow_no_guarantee: true`` is refused with
one error, and with it the mechanism's guarantee is void
(:attr:`bench.guarantee.Guarantee.void`) with the reasons below; ``bench audit`` finds the
violation (tests/test_audit.py). The third, a rewriter whose embedding table is trained, is the
rewriter's ``train_embeddings`` (:mod:`bench.rewriters.autoencoder`); the fourth, a rewriter
trained on the data it rewrites, the grid setting ``rewriter_fit_on: private``.

Example:
    >>> m = MECHANISMS.create("laplace", epsilon=1.0, C=0.005, clip=False,
    ...                    noise_shared="batch", allow_no_guarantee=True)
    >>> m.fit(space).guarantee().describe(symbolic=True)
    'no DP guarantee'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

NOISE_SHARED = ("token", "batch")
"""Values of ``noise_shared``: ``token`` (independent noise per token occurrence, the rule) or
``batch`` (the public code's one vector per batch of sentences)."""

CODE_BATCH_SENTENCES = 1024
"""The public code's batch size (``train.py --batch_size``, ``test.py --batch-size``)."""

ALLOW = "allow_no_guarantee"
"""The parameter that acknowledges a configuration without a DP guarantee."""

REASONS = {
    "clip": ("clip: false: the word vectors are not clipped to norm C (as in the public code, "
             "which adds noise calibrated to C = 0.005 to unclipped embeddings), so two words "
             "differ by more than the sensitivity 2C the noise is calibrated to and no epsilon "
             "bounds the privacy loss"),
    "noise_shared": ("noise_shared: batch: one noise vector for every token of a batch of "
                     "sentences (as in the public code's method.py), so the difference of two "
                     "privatized words of a batch is noise-free and one known word reveals the "
                     "others"),
}
"""Why each departure voids the guarantee (recorded in the cell's guarantee)."""


def check_departures(name: str, *, clip: Any = True, noise_shared: Any = "token",
                     batch_sentences: Any = None, allow_no_guarantee: Any = False
                     ) -> dict[str, Any]:
    """Validate the departure options of mechanism ``name``; the parameters to record.

    Only options that differ from the defaults are returned (so a configuration without a
    departure keeps its parameters, and its cell hash, as before).

    Raises:
        ValueError: a bad value, ``batch_sentences`` without ``noise_shared: batch``, a
            departure without ``allow_no_guarantee: true``, or ``allow_no_guarantee`` without
            a departure.
    """
    for key, val in (("clip", clip), (ALLOW, allow_no_guarantee)):
        if not isinstance(val, (bool, np.bool_)):
            raise ValueError(f"{name}: {key} must be true or false, got {val!r}")
    if noise_shared not in NOISE_SHARED:
        raise ValueError(f"{name}: noise_shared must be 'token' (independent noise per token) "
                         f"or 'batch' (one vector per batch of sentences, as the public code), "
                         f"got {noise_shared!r}")
    out: dict[str, Any] = {}
    if not clip:
        out["clip"] = False
    if noise_shared == "batch":
        b = CODE_BATCH_SENTENCES if batch_sentences is None else batch_sentences
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
            raise ValueError(f"{name}: batch_sentences must be an integer >= 1, got {b!r}")
        out |= {"noise_shared": "batch", "batch_sentences": int(b)}
    elif batch_sentences is not None:
        raise ValueError(f"{name}: batch_sentences applies only with noise_shared: batch")
    asked = [REASONS[k] for k in REASONS if k in out]
    if asked and not allow_no_guarantee:
        keys = ", ".join(f"{k}: {str(out[k]).lower()}" for k in REASONS if k in out)
        raise ValueError(f"{name}: {keys} departs from Huang et al. (2024) as the public code "
                         f"does and leaves no DP guarantee; add {ALLOW}: true to run it anyway "
                         f"(reported as 'no DP guarantee')")
    if allow_no_guarantee and not asked:
        raise ValueError(f"{name}: {ALLOW}: true without a departure (clip: false or "
                         f"noise_shared: batch); remove it")
    if asked:
        out[ALLOW] = True
    return out


def void_reasons(params: dict[str, Any]) -> list[str]:
    """The reasons of the departures recorded in ``params`` (empty: none)."""
    return [REASONS[k] for k in REASONS if k in params]


def code_batches(lengths: np.ndarray, batch_sentences: int) -> np.ndarray:
    """Batch index of each sentence, as the public code's ``batchify.get_batches`` forms them.

    Sentences are sorted by length (a stable sort); consecutive sentences of equal length form
    a batch of at most ``batch_sentences``. Batch numbers follow that order.

    Args:
        lengths: tokens per sentence (document), ``(n,)``.
        batch_sentences: B, the most sentences in one batch.

    Returns:
        ``(n,)`` int64 batch index per sentence, in the input order.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(lengths, kind="stable")
    srt = lengths[order]
    new_run = np.concatenate([[True], srt[1:] != srt[:-1]])
    run_start = np.maximum.accumulate(np.where(new_run, np.arange(n), 0))
    rank = np.arange(n) - run_start  # position inside the run of equal length
    new_batch = new_run | (rank % int(batch_sentences) == 0)
    out = np.empty(n, dtype=np.int64)
    out[order] = np.cumsum(new_batch) - 1
    return out


def shared_noise(noise: Callable[[int], np.ndarray], n: int, batches: np.ndarray | None
                 ) -> np.ndarray:
    """``n`` noise vectors, one draw per batch: token i gets the draw of ``batches[i]``.

    ``batches`` None: every token is its own batch (independent draws, as ``noise(n)``).
    """
    if batches is None:
        return noise(n)
    batches = np.asarray(batches, dtype=np.int64)
    if batches.shape != (n,):
        raise ValueError(f"batches must give one batch index per token ({n}), got shape "
                         f"{batches.shape}")
    uniq, inverse = np.unique(batches, return_inverse=True)
    return noise(len(uniq))[inverse]
