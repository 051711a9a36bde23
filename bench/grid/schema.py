"""What a grid file may contain: the axes, the top-level and ``settings`` keys, their defaults,
and the one error type (:class:`GridError`) every module of :mod:`bench.grid` raises.

The did-you-mean message for an unknown name (:func:`unknown`) lives here too: parsing (unknown
keys) and validation (unknown components) both use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from bench.defaults import DEFAULT_EMBEDDING, DEFAULT_VOCAB_SIZE
from bench.errors import InputError

AXES: tuple[str, ...] = ("dataset", "model", "mechanism", "sensitivity", "mapping", "rewriter",
                         "epsilon", "seed")
"""Axis names, in expansion order (the first varies slowest)."""

REQUIRED_AXES: tuple[str, ...] = ("dataset", "model", "mechanism", "epsilon")
"""Axes a grid must list; the others have defaults (see :data:`AXIS_DEFAULTS`)."""

AXIS_DEFAULTS: dict[str, list[Any]] = {"sensitivity": ["none"], "rewriter": ["none"], "seed": [0]}
"""Values of omitted axes. An omitted ``mapping`` axis means each mechanism's natural
text-output mapping: ``nearest`` for additive mechanisms, ``none`` for selection mechanisms."""

TOP_KEYS: tuple[str, ...] = ("name", "description", "extends", "axes", "exclude", "include",
                             "settings")
"""Keys allowed at the top level of a grid file."""

BASELINE = "none"
"""Mechanism name of the baseline cells (no privatization, ε = ∞)."""


def is_baseline(mechanism: Any) -> bool:
    """The one rule for a baseline: its mechanism's name is :data:`BASELINE`.

    ``mechanism``: a name, a stored spec (``{"mechanism": {"name": ...}, ...}``) or a spec's
    mechanism entry (``{"name": ...}``). Not ε = ∞, not a label: a privatized cell claiming
    ε = ∞ is a privatized cell. :class:`bench.grid.Cell`, the cell record, the report's
    configurations and the leaderboard's rows all ask this function."""
    if isinstance(mechanism, Mapping) and "mechanism" in mechanism:
        mechanism = mechanism["mechanism"]
    if isinstance(mechanism, Mapping):
        mechanism = mechanism.get("name")
    return mechanism == BASELINE

DATA_KEY = "data"
"""Key of a cell's dataset config holding the content digest of the dataset's file
(:func:`bench.datasets.files.content_digest`), set by the validator for every dataset read from
a ``path``: it is hashed (the path is not), so a dataset read from a file is identified by its
content, and checked when the cell loads the file. Not a loader option: a grid cannot set it."""

METRIC_GROUPS: dict[str, str] = {
    "utility": "F1/accuracy of the utility task(s) on the original test split",
    "privacy": "empirical privacy: 1 - F1 of the adversary on the private attribute task(s)",
    "runtime": "wall-clock seconds of privatization and training",
    "guarantee": "the formal per-token guarantee (kind, eps multiplier, delta, proven)",
}
"""Metric groups a grid can ask for in ``settings.metrics`` (membership inference and rewrite
metrics have their own switches, ``settings.mia`` and ``settings.rewrite_metrics``)."""

SETTINGS_DEFAULTS: dict[str, Any] = {
    "embedding": DEFAULT_EMBEDDING,
    "embedding_path": None,
    "vocab_size": DEFAULT_VOCAB_SIZE,
    "oov": "unk",
    "metrics": ["utility", "privacy", "runtime", "guarantee"],
    "mia": False,
    "mia_target": "memorise",
    "mia_query": "original",
    "rewrite_metrics": False,
    "rewrite_max_docs": None,
    "baseline": True,
    "models": {},
    "adversaries": None,
}
"""Every ``settings`` key and its default (documented in ``docs/grids.md``)."""

OPTIONAL_SETTINGS: dict[str, Any] = {
    "rewriter_fit_on": "public",
    "measures": [],
    "decode_vectors": False,
    "static_attackers": False,
    "utility_test": "privatized",
}
"""Settings keys that reach a cell (and its hash) only when a grid writes them, so that adding
them left every earlier cell's identity unchanged; the value here is the default meaning.
``rewriter_fit_on``: ``public`` (a rewriter trains on a public corpus, never on the evaluated
data) or ``private`` (on the evaluated dataset's train split; the guarantee is void).
``measures``: names of the measures (:mod:`bench.measures`: reconstruction, s_w, linkage,
linkage_minilm, mia_low_fpr) added to the cells they apply to. ``decode_vectors``: in cells
whose output is vectors, the adversaries that read only text attack each vector decoded to its
nearest public word (:func:`bench.run.attacks.decode_vectors`), post-processing any attacker
has for free; without it they are left out of such cells. ``static_attackers``: in privatized
cells, each text adversary also runs *static* -- trained on the original text, tested on the
privatized test split (``<name>:static`` in ``by_adversary``) -- beside the default *adaptive*
one trained on privatized text; the headline is the strongest of all. ``utility_test``: what
the utility model is scored on in privatized cells with text output, ``privatized`` (the test
split as privatized: the thesis' protocol, Riecker 2023 Sec. 4.2) or ``original`` (the original
test documents, the model still trained on privatized text: Carvalho et al. 2021, Sec. 5.3)."""

UTILITY_TEST: tuple[str, ...] = ("privatized", "original")
"""Values of the ``utility_test`` setting (:data:`OPTIONAL_SETTINGS`)."""

FALLBACK_MODELS: dict[str, frozenset[str]] = {
    "bow": frozenset({"text", "vectors"}),
    "lstm": frozenset({"text", "vectors"}),
    "transformer": frozenset({"text"}),
}
"""Model name -> accepted inputs, used when ``bench.models`` cannot be imported."""

PROBE_EPSILONS: tuple[float, ...] = (1.0, 0.1, 10.0, 100.0)
"""ε values at which a mechanism's parameters are tried (before the grid's own ε values):
valid parameters must construct at one of them."""


class GridError(InputError, ValueError):
    """A malformed grid file; the message names the file and the key."""


def unknown(kind: str, name: Any, known: Iterable[str]) -> str:
    """``unknown <kind> <name>; did you mean ...? (known: ...)`` for an error message."""
    known = sorted(known)
    close = difflib.get_close_matches(str(name), known, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
    return f"unknown {kind} {name!r}{hint} (known: {', '.join(known)})"

