"""What a *measure* is: a named, versioned measurement a grid adds to its cells on request.

A measure reads what a cell's stages produced (the original and privatized documents, the
cell's privatizer configuration, the membership attacks' scores) and returns a small record
that lands in the cell's metrics as its ``measures`` entry ``<name>`` (``m.measure(name)``).
A grid asks for measures by name (``settings.measures: [reconstruction, linkage, s_w,
mia_low_fpr]``); each
measure's ``name=version`` is part of the hash of every cell that computes it, and a grid that
asks for none leaves every cell's identity unchanged (:data:`bench.grid.OPTIONAL_SETTINGS`).

A measure draws from its own random stream (seeded from the cell's seed and the measure's
name, :func:`measure_seed`), never from the streams the other stages use, so adding one to a
grid changes no other number of a cell.

Plugins: an entry point in the group ``bench.measures`` naming a :class:`Measure`.

Example:
    >>> from bench.measures import MEASURES
    >>> MEASURES.get("reconstruction").version
    '1'
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.registry import Registry

NEEDS = ("mia",)
"""What a measure may need besides the documents and a privatizer of the cell's configuration:
``mia``, the membership attacks' scores (the measure runs only in cells with ``settings.mia``,
after the membership stage)."""


@dataclass(frozen=True)
class Measure:
    """One measurement a grid can add to its cells (see the module docstring)."""

    name: str
    """Its name in ``settings.measures`` and in the cell's ``measures`` (``m.measure(name)``)."""
    version: str
    """Bumped when what it computes changes (part of the hash of every cell computing it)."""
    description: str
    """One line, with the source of the definition."""
    compute: Callable[[Any], dict[str, Any]]
    """``compute(ctx)`` -> its JSON record; ``ctx`` is a :class:`MeasureInput`."""
    skip: Callable[[Any], str | None]
    """``skip(cell)`` -> why it does not apply to a cell (``None``: it applies). A measure that
    does not apply to a cell leaves the cell without its key (and out of its hash)."""
    needs: frozenset[str] = frozenset()
    """What it needs besides the documents, a subset of :data:`NEEDS`."""

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError(f"a measure needs a non-empty name, got {self.name!r}")
        if not set(self.needs) <= set(NEEDS):
            raise ValueError(f"measure {self.name!r}: needs must be a subset of {NEEDS}, got "
                             f"{sorted(self.needs)}")


@dataclass
class MeasureInput:
    """What a measure is computed from (built by the cell's ``measures`` stage)."""

    cell: Any
    """The :class:`bench.grid.Cell`."""
    ds: Any
    """The dataset (splits, tasks)."""
    docs: list[list[str]]
    """Every original document, tokenized."""
    corpus: list
    """Every document as privatized (and rewritten) -- what the models saw."""
    embedding: Any = None
    """The cell's public embedding (vocabulary)."""
    make_privatizer: Callable[[Any], Any] | None = None
    """``make_privatizer(seed)``: a fresh privatizer of the cell's configuration with its own
    stream seeded by ``seed`` (None for the baseline); :meth:`privatizer` builds one."""
    mia: Any = None
    """The membership attacks' result (:class:`bench.attacks.membership.MIAResult`), else None."""
    channel_cache: Any = None
    """The results folder's channel cache (:class:`bench.results.channels.ChannelStore`)."""
    _privatizer: Any = field(default=None, repr=False)

    def privatizer(self) -> Any:
        """The measures' privatizer of the cell's configuration, built once, seeded like the
        informed adversary's (``[cell seed, 1]``, :mod:`bench.run.attacks`: the same fitted
        mechanism, so the adversary's channel is found in the channel cache). A measure that
        draws from it does so inside :meth:`own_stream`."""
        if self._privatizer is None:
            if self.make_privatizer is None:
                raise ValueError(f"{self.cell.name}: no privatizer (the baseline)")
            self._privatizer = self.make_privatizer([int(self.cell.seed), 1])
        return self._privatizer

    @contextmanager
    def own_stream(self, name: str) -> Iterator[Any]:
        """The privatizer with its random streams set to the measure ``name``'s own
        (:func:`measure_seed`) for the duration, then restored: what a measure draws depends on
        neither the other measures nor their order."""
        p = self.privatizer()
        gens = [g for g in {id(g): g for g in (p.rng, getattr(p.mechanism, "rng", None))
                            if g is not None}.values()]
        saved = [g.bit_generator.state for g in gens]
        try:
            for i, g in enumerate(gens):
                g.bit_generator.state = type(g.bit_generator)(
                    measure_seed(self.cell.seed, name) + [i]).state
            yield p
        finally:
            for g, s in zip(gens, saved):
                g.bit_generator.state = s

    def test_split(self) -> tuple[list[list[str]], list]:
        """The test split's original documents and what privatization made of them."""
        idx = self.ds.splits["test"].tolist()
        return [self.docs[i] for i in idx], [self.corpus[i] for i in idx]


MEASURES: Registry[Measure] = Registry("measure")
"""Every measure a grid can ask for, by name (plugins: entry-point group ``bench.measures``)."""


def register_measure(measure: Measure) -> Measure:
    """Register ``measure`` under its name in :data:`MEASURES` and return it."""
    return MEASURES.register()(measure)


def measure(name: str) -> Measure:
    """The registered measure ``name`` (an unknown name: did-you-mean error)."""
    found = MEASURES.get(name)
    if not isinstance(found, Measure):
        raise TypeError(f"measure {name!r} is registered as a {type(found).__name__}, not as a "
                        f"bench.measures.Measure ({MEASURES.origin(name)})")
    return found


def measure_versions(names: list[str] | tuple[str, ...]) -> str:
    """``"name=version,..."`` of the named measures, sorted (hashed into the cells)."""
    return ",".join(f"{n}={measure(n).version}" for n in sorted(names))


def parse_versions(text: str | None) -> dict[str, str]:
    """The inverse of :func:`measure_versions`."""
    if not text:
        return {}
    return dict(part.split("=", 1) for part in text.split(","))


_LAST: dict[str, tuple[str, Any]] = {}
"""The last value per slot of :func:`last_for_texts` (per process)."""


def last_for_texts(slot: str, texts: list[str], compute: Callable[[list[str]], Any]) -> Any:
    """``compute(texts)``, the last value of each ``slot`` kept for the process: a cell's test
    originals are the same in every cell of a dataset and seed, and two measures may read the
    same privatized documents, so a measure that encodes texts with a model reuses the last
    encoding of the same texts (keyed by their sha256) instead of encoding them again."""
    key = hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()
    kept = _LAST.get(slot)
    if kept is None or kept[0] != key:
        kept = _LAST[slot] = (key, compute(texts))
    return kept[1]


def measure_seed(cell_seed: int, name: str) -> list[int]:
    """The seed of a measure's own random stream: the cell's seed and a number derived from
    the measure's name (so two measures never share a stream, and adding one moves no other)."""
    tag = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "big")
    return [int(cell_seed), 7, tag]


def bootstrap_ci(per_unit: np.ndarray, weights: np.ndarray | None = None, *,
                 n_boot: int = 1000, level: float = 0.95, seed: Any = 0
                 ) -> tuple[float, float]:
    """Percentile-bootstrap interval of a (weighted) mean over independent units.

    Units are documents: tokens of one document are not independent, so the resampling is over
    documents (a cluster bootstrap; Efron & Tibshirani 1993, Ch. 13 percentile interval) and
    the statistic is the ratio ``Σ_b x_b / Σ_b w_b`` over the resampled documents, where
    ``per_unit`` holds each document's sum ``x`` and ``weights`` its size ``w`` (``None``: 1).
    """
    x = np.asarray(per_unit, dtype=np.float64)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=np.float64)
    n = len(x)
    if n == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    num, den = x[idx].sum(axis=1), w[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    alpha = (1.0 - level) / 2
    lo, hi = np.nanquantile(stats, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def rate_with_ci(hits: np.ndarray, doc: np.ndarray, n_docs: int, seed: Any) -> dict[str, Any]:
    """``{"rate", "ci"}`` of 0/1 ``hits`` per token, its interval by documents (``doc``: the
    document index of every token)."""
    hits = np.asarray(hits, dtype=np.float64)
    per_doc = np.bincount(doc, weights=hits, minlength=n_docs)
    sizes = np.bincount(doc, minlength=n_docs).astype(np.float64)
    rate = float(hits.mean()) if len(hits) else float("nan")
    return {"rate": rate, "ci": list(bootstrap_ci(per_doc, sizes, seed=seed))}


def as_record(values: Mapping[str, Any]) -> dict[str, Any]:
    """A measure's record as plain JSON types: numpy scalars converted, and a number that is
    not finite (an undefined rate) as ``None`` (cells hold finite numbers only)."""
    return {str(k): _plain(v) for k, v in values.items()}


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return as_record(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if np.isfinite(v) else None
    return v
