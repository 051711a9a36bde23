"""Resource limits: upper bounds on the parameters that drive a cell's run time or memory.

``bench run`` applies them when it validates a grid (:class:`~bench.grid.validate.Parser`),
and ``bench verify --repair`` / ``bench leaderboard --verify`` apply the same checks to a
stored spec before recomputing it (:func:`bench.grid.stored.spec_refusal`), so that a hostile
results folder cannot make them train a model for ``epochs: 1e9``.

Each bound is per parameter and generous: every grid under ``experiments/`` and every committed
reference cell lies far below it; it keeps the cost of a cell finite, not small. A limited
value must be an integer from the limit's lower end to its bound (``None`` only where the
component gives it a meaning, e.g. ``max_len: null`` = no truncation; a float only where it is
a fraction, e.g. ``subsample: 0.5``). Where a count is derived rather than given (the
``jl`` sensitivity's target dimension from β and δ), the derived value is checked too.

The table is documented in ``docs/grids.md`` ("Resource limits").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limit:
    """The allowed range of one count-like parameter."""

    high: int
    """Upper bound (inclusive)."""
    reason: str
    """Why it drives cost, in one line (shown in the error)."""
    low: int = 0
    """Lower bound (inclusive); the component may refuse more (its own message)."""
    optional: bool = False
    """``None`` is allowed (the component gives it a meaning)."""
    fraction: bool = False
    """A float is a fraction (its range is the component's to check), not a count."""


EPOCHS = Limit(1_000, "passes over the training data; the shipped grids use at most 20", 1)
BATCH = Limit(8_192, "examples per step; memory grows with it", 1)
HIDDEN = Limit(4_096, "units per layer; weights grow with its square", 1)
TOKENS = Limit(100_000, "tokens per text fed to the network; memory grows with it", 1,
               optional=True)
PATIENCE = Limit(1_000, "epochs without improvement before stopping; at most the epochs "
                        "matter", 1)
RESTARTS = Limit(100, "independent training runs per fit; each costs a whole training", 1)
THREADS = Limit(256, "CPU threads; more than any machine's cores only adds contention", 1,
                optional=True)
VOCAB = Limit(2_000_000, "vocabulary words held as vectors and searched per token; GloVe 6B has "
                         "400,000, fastText's largest 2,000,000", 2)
DOCUMENTS = Limit(100_000_000, "documents kept; far above the largest corpus a loader reads",
                  1, optional=True, fraction=True)
ROWS = Limit(DOCUMENTS.high, "rows read from the data file; far above the largest corpus", 1,
             optional=True)
NEIGHBOURS = Limit(4_096, "nearest words kept per vocabulary word, a vocabulary x k table", 1)
JL_DIM = Limit(4_096, "target dimension of the projection; the projected vocabulary is "
                      "vocab_size x m floats", 1, optional=True)

LIMITS: dict[tuple[str, str], dict[str, Limit]] = {
    ("model", "lstm"): {"epochs": EPOCHS, "batch_size": BATCH, "hidden_size": HIDDEN,
                        "max_len": TOKENS, "patience": PATIENCE, "restarts": RESTARTS,
                        "num_threads": THREADS, "vocab_size": VOCAB},
    ("model", "transformer"): {
        "epochs": EPOCHS, "batch_size": BATCH, "patience": PATIENCE, "num_threads": THREADS,
        "max_length": Limit(512, "tokens per text; BERT's position embeddings stop at 512", 8)},
    ("model", "bow"): {"max_iter": Limit(100_000, "solver iterations of the logistic "
                                                  "regression; default 1,000", 1),
                       "vocab_size": VOCAB},
    ("rewriter", "autoencoder"): {
        "epochs": EPOCHS, "batch_size": BATCH, "hidden_size": HIDDEN, "num_threads": THREADS,
        "max_len": Limit(TOKENS.high, TOKENS.reason, 1),
        "max_vocab": Limit(VOCAB.high, "output words: the decoder's softmax has one per word",
                           1)},
    ("mechanism", "custext"): {"K": NEIGHBOURS},
    ("mechanism", "truncated_gumbel"): {"k_cache": NEIGHBOURS},
    ("mechanism", "diffractor"): {
        "num_lists": Limit(64, "1-D word lists, one greedy walk over the vocabulary each at fit "
                              "time", 1),
        "gamma": Limit(4_096, "TEM window in list positions; sampling holds tokens x "
                              "(2 gamma - 1) weights", 1)},
    ("sensitivity", "jl"): {"m": JL_DIM},
    ("dataset", "*"): {"subsample": DOCUMENTS, "public": DOCUMENTS, "max_rows": ROWS,
                       "max_tokens": Limit(10_000_000, "tokens kept per text", 1,
                                           optional=True)},
    ("settings", "*"): {"vocab_size": VOCAB, "rewrite_max_docs": Limit(
        DOCUMENTS.high, "test documents the rewrite metrics read; null = all", 1,
        optional=True)},
}
"""``(kind, name)`` -> parameter -> :class:`Limit`; name ``*``: every component of the kind.
Kinds: ``model``, ``rewriter``, ``mechanism``, ``sensitivity``, ``dataset`` (its config) and
``settings`` (the grid's settings)."""


def limits_of(kind: str, name: str) -> dict[str, Limit]:
    """The limits of a component (those of every component of its kind included)."""
    return {**LIMITS.get((kind, "*"), {}), **LIMITS.get((kind, name), {})}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_value(param: str, value: Any, limit: Limit) -> str | None:
    """Why ``value`` breaks ``limit`` (naming the parameter, the value and the bound), or None."""
    if value is None and limit.optional:
        return None
    if _number(value) and value > limit.high:
        return f"{param} = {value!r} is above its limit {limit.high:,} ({limit.reason})"
    if isinstance(value, float) and limit.fraction and 0 < value <= 1:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < limit.low:
        return f"{param} must be {allowed(limit)}, got {value!r} ({limit.reason})"
    return None


def allowed(limit: Limit) -> str:
    """What ``limit`` allows, in words: ``an integer from 1 to 1,000 or null``."""
    return " or ".join([f"an integer from {limit.low} to {limit.high:,}",
                        *(["a fraction in (0, 1]"] if limit.fraction else []),
                        *(["null"] if limit.optional else [])])


def limit_error(kind: str, name: str, params: Mapping[str, Any]) -> str | None:
    """Why ``params`` (as given) of component ``kind``/``name`` break a limit, or None."""
    for param, limit in limits_of(kind, name).items():
        if param in params:
            why = check_value(param, params[param], limit)
            if why:
                return why
    return None


def derived_error(kind: str, name: str, params: Mapping[str, Any],
                  vocab_size: Any = None) -> str | None:
    """Why a count derived from a built component's canonical ``params`` breaks a limit, or
    None: the ``jl`` target dimension from β and δ at the grid's ``vocab_size`` (+1 for the
    ``<unk>`` row; the :data:`VOCAB` bound when not an integer)."""
    if (kind, name) != ("sensitivity", "jl") or params.get("m") is not None:
        return None
    from bench.sensitivity.jl import gaussian_width_dim

    n = (vocab_size if isinstance(vocab_size, int) and not isinstance(vocab_size, bool)
         and vocab_size >= 1 else VOCAB.high) + 1
    try:
        m = gaussian_width_dim(n, params.get("delta"), params.get("beta"))
    except (ValueError, TypeError):
        return None  # invalid beta / delta: the sensitivity's own message says so
    if m > JL_DIM.high:
        return (f"m = {m:,} (from beta and delta at a vocabulary of {n:,} words) is above its "
                f"limit {JL_DIM.high:,} ({JL_DIM.reason}); use a larger beta or delta")
    return None


def limits_table() -> list[tuple[str, str, str, str]]:
    """``(component, parameter, allowed, reason)`` rows, as ``docs/grids.md`` lists them."""
    rows = []
    for (kind, name), params in LIMITS.items():
        comp = kind if kind == "settings" else f"every {kind}" if name == "*" else \
            f"{kind} {name}"
        for param, lim in params.items():
            rows.append((comp, param, allowed(lim).removeprefix("an "), lim.reason))
    return rows
