"""The informed adversary's channel P(o | w): built once per key, shared by the cells that ask.

:func:`get_channel` returns the channel of a privatizer over candidate originals (the
mechanism's own exact channel, else a sampled estimate; see :mod:`bench.attacks.informed`) and
how it was obtained. Three caches, checked in order:

1. **per privatizer object** (in memory, as before): the runner builds one attack privatizer
   per cell and a new adversary per private attribute; attributes with the same candidates
   share the channel object.
2. **the results folder's channel cache** (:class:`bench.results.channels.ChannelStore`, in
   memory per process and on disk, checksummed), when the runner passes one: an entry is keyed
   by a hash of everything the channel is computed from (:func:`channel_payload`), so a cached
   channel is bit for bit the one a recomputation gives (tests check it, across processes too).
3. otherwise it is computed, and stored in 2.

What the key holds, and why that is enough:

* **exact channels** (a mechanism's own :meth:`~bench.mechanisms.base.Mechanism.channel`:
  ``tem``, ``santext``, ``custext``) are deterministic functions of the fitted mechanism
  (class, name, version, ε, parameters and fitted values as :meth:`describe` gives them), the
  sensitivity approach (:meth:`describe`), the vocabulary in the mechanism's space (sha256 of
  the space and of the vocabulary's input vectors: embedding and transform, whatever their
  names) and the candidate ids (timings left out: :func:`untimed`); plus the numeric
  platform (NumPy/SciPy versions, OpenBLAS kernels, the host's vector extension) and
  :data:`CHANNEL_FORMAT` / the suite version. They draw nothing: computing one leaves the
  random stream where it was (checked: a channel whose computation moved it is not stored).
  So one exact channel serves every seed and model.
* **sampled channels** (format 2) draw ``n_samples`` outputs per candidate through the
  privatizer, from a random stream seeded by the key itself (:func:`sampling_seed`: the
  configuration, mapping included, the vocabulary, the candidates, ``n_samples`` and
  ``smoothing``; not the cell's seed, the host or the suite version). The privatizer's own
  streams are set to that seed for the sampling and restored afterwards, so sampling leaves
  them where they were, and a cache hit is exactly a recomputation. One sampled channel
  therefore serves every seed and model of a configuration, like an exact one, and the same on
  every machine. (Format 1 drew from the cell's attack stream, so each seed computed its own.)

Example:
    >>> ch, info = get_channel(privatizer, cand, store=ChannelStore(layout.channels_dir(r)))
    >>> info["cache"], info["seconds"]
    ('disk', 0.02)
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import weakref
from typing import Any

import numpy as np
from scipy import sparse

from bench.mechanisms.channels import (
    Channel,
    TableChannel,
    as_channel,
    channel_state,
    restore_channel,
)
from bench.models.base import ModelInputError

logger = logging.getLogger(__name__)

CHANNEL_FORMAT = 2
"""Version of how a channel is computed and stored: bump it when the computation of an exact
or sampled channel changes (:class:`~bench.mechanisms.channels.ExpChannel`,
:func:`_sampled_channel`) without a mechanism's version changing, so cached channels are not
taken for the new ones. 2: sampled channels draw from a stream seeded by their key."""

SAMPLE_CHUNK = 65_536
"""Draws per call of a sampled channel (part of its key: the stream is consumed per call)."""

CACHES = ("computed", "privatizer", "memory", "disk")
"""How :func:`get_channel` obtained a channel: computed, or reused from one of its caches."""


def outputs_text(privatizer: Any) -> bool:
    """Whether ``privatizer`` outputs words (a selection mechanism, or a word mapping)."""
    return privatizer.mechanism.kind in ("selection", "document") or \
        privatizer.mapping.outputs_text


# --------------------------------------------------------------------------------------------
# What the adversary can attack
# --------------------------------------------------------------------------------------------

def channel_kind(privatizer: Any) -> str:
    """How the informed adversary obtains P(output | original) for ``privatizer``.

    Returns:
        ``"identity"`` (``None``: the unprivatized baseline, and a mechanism that passes its
        input through, the known answer ``identity``), ``"exact"`` (the mechanism
        provides its closed-form output distribution, :meth:`bench.mechanisms.base.Mechanism.
        has_channel`) or ``"sampled"`` (any other text-output configuration: estimated by
        sampling).

    Raises:
        ModelInputError: the privatizer outputs vectors (no words to read).
    """
    if privatizer is None or getattr(privatizer.mechanism, "passes_input", False):
        return "identity"  # a mechanism that publishes its input is read as the baseline
    reason = supports(privatizer.mechanism.kind, "text" if outputs_text(privatizer)
                      else "vectors")
    if reason:
        raise ModelInputError(reason)
    return "exact" if privatizer.mechanism.has_channel() else "sampled"


def supports(mechanism_kind: str | None, output: str) -> str | None:
    """Whether the informed adversary can attack a configuration, without fitting anything.

    Args:
        mechanism_kind: ``"selection"``, ``"additive"``, ``"identity"``/``"none"``/``None``
            (the baseline), or a registered mechanism name.
        output: what privatization hands the adversaries, ``"text"`` or ``"vectors"``.

    Returns:
        ``None`` when supported, else the reason.
    """
    if output != "text":
        return (f"the informed adversary reads privatized words; this configuration's output is "
                f"{output} (no words to read: use mapping 'nearest' or 'vickrey')")
    if mechanism_kind in (None, "identity", "none", "baseline", "selection", "additive"):
        return None
    if mechanism_kind == "document":
        return ("the informed adversary inverts a per-token channel; a document-level "
                "mechanism (a paraphrase, or words drawn in context) has none")
    from bench.mechanisms import MECHANISMS

    try:
        kind = MECHANISMS.get(mechanism_kind).kind
    except Exception as e:  # unknown name: say so
        return f"the informed adversary: unknown mechanism {mechanism_kind!r} ({e})"
    if kind == "document":
        return supports("document", output)
    return None if kind in ("selection", "additive") else (
        f"the informed adversary: mechanism {mechanism_kind!r} of unknown kind {kind!r}")


def sampling_seed(payload: dict[str, Any]) -> int:
    """The seed of a sampled channel's draws: sha256 of its key without the parts that must not
    change the draws (the platform, on which only the cache entry depends, and the suite
    version: cells of different releases with the same hash are the same cells)."""
    core = {k: v for k, v in payload.items() if k not in ("platform", "suite_version")}
    return int(hashlib.sha256(json.dumps(core, sort_keys=True, default=str).encode("utf-8"))
               .hexdigest(), 16)


def _sampled_channel(privatizer: Any, cand: np.ndarray, n_samples: int, smoothing: float,
                     seed: int, chunk: int = SAMPLE_CHUNK) -> TableChannel:
    """P(o|w) estimated by ``n_samples`` draws per candidate through the privatizer itself,
    with add-α smoothing (:class:`bench.mechanisms.channels.TableChannel`). The draws come from
    the privatizer's streams set to ``seed`` (:func:`sampling_seed`; stream ``i`` from
    ``SeedSequence([seed, i])``); their states are restored afterwards."""
    n_vocab = privatizer.embedding.size
    rows = np.repeat(np.arange(len(cand)), n_samples)
    src = cand[rows]
    outs = np.empty(len(src), dtype=np.int64)
    gens = streams(privatizer)
    before = stream_states(privatizer)
    try:
        for i, g in enumerate(gens):
            g.bit_generator.state = type(g.bit_generator)(
                np.random.SeedSequence([seed, i])).state
        for a in range(0, len(src), chunk):  # vectorised: every candidate in one call per chunk
            o, _ = privatizer.privatize_ids(src[a:a + chunk])
            outs[a:a + chunk] = o
    finally:
        for g, st in zip(gens, before):
            g.bit_generator.state = st
    counts = sparse.coo_matrix((np.ones(len(src)), (rows, outs)),
                               shape=(len(cand), n_vocab)).tocsr()
    counts.sum_duplicates()
    alpha = smoothing / n_vocab
    denom = n_samples + alpha * n_vocab
    return TableChannel(cand, n_vocab, counts / denom, alpha / denom, "sampled")


# --------------------------------------------------------------------------------------------
# The key: what a channel is computed from
# --------------------------------------------------------------------------------------------

_SPACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # mechanism -> its digest
_PLATFORM: dict[str, Any] = {}


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.data)
    return h.hexdigest()


def _space_digest(mech: Any) -> str:
    """sha256 of the mechanism's vocabulary space and of the vocabulary's input vectors (once
    per mechanism object: they do not change after fitting)."""
    try:
        return _SPACES[mech]
    except (KeyError, TypeError):
        pass
    n = mech.space.shape[0]
    out = _digest(mech.space, mech.inputs[:n])
    try:
        _SPACES[mech] = out
    except TypeError:  # an unhashable plugin mechanism: computed each time
        pass
    return out


def _platform() -> dict[str, Any]:
    """What the channel's last bits depend on besides its inputs: NumPy and SciPy versions,
    the loaded OpenBLAS kernels and the host's vector extension (NumPy's own SIMD loops)."""
    if not _PLATFORM:
        from bench import numeric

        rec = numeric.platform()
        versions = rec.get("versions") or {}
        _PLATFORM.update({"numpy": versions.get("numpy"), "scipy": versions.get("scipy"),
                          "openblas": rec.get("openblas"), "host": rec.get("host")})
    return dict(_PLATFORM)


def streams(privatizer: Any) -> list[np.random.Generator]:
    """The random streams the privatizer draws from (its own and its mechanism's, once each)."""
    out: list[np.random.Generator] = []
    for g in (getattr(privatizer, "rng", None), getattr(privatizer.mechanism, "rng", None)):
        if g is not None and all(g is not h for h in out):
            out.append(g)
    return out


def stream_states(privatizer: Any) -> list[dict]:
    """The exact states of :func:`streams` (``bit_generator.state``)."""
    return [g.bit_generator.state for g in streams(privatizer)]


def untimed(value: Any) -> Any:
    """``value`` without the timings a ``describe()`` may carry (keys ending in ``_seconds``,
    at any depth, e.g. a sensitivity approach's ``min_distance_seconds``): how long a fit took
    is not what a channel is computed from. Keyed with them, a sampled channel drew from a
    stream seeded by a wall-clock time and no rerun reproduced it."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items()
                if not (isinstance(k, str) and k.endswith("_seconds"))}
    if isinstance(value, (list, tuple)):
        return [untimed(v) for v in value]
    return value


def _describe(obj: Any) -> dict[str, Any]:
    return untimed({"class": f"{type(obj).__module__}.{type(obj).__qualname__}",
                    "version": getattr(obj, "version", None), **obj.describe()})


def channel_payload(privatizer: Any, cand: np.ndarray, kind: str, n_samples: int,
                    smoothing: float) -> dict[str, Any]:
    """Everything the channel of ``privatizer`` over ``cand`` is computed from (see the module
    docstring); its hash is the cache key (:func:`bench.results.channels.entry_key`)."""
    import bench

    mech = privatizer.mechanism
    payload: dict[str, Any] = {
        "format": CHANNEL_FORMAT, "suite_version": bench.__version__, "kind": kind,
        "mechanism": _describe(mech), "sensitivity": _describe(privatizer.sensitivity),
        "embedding": {"name": privatizer.embedding.name, "size": int(privatizer.embedding.size)},
        "space_sha256": _space_digest(mech),
        "candidates": {"n": int(len(cand)), "sha256": _digest(np.asarray(cand, np.int64))},
        "platform": _platform(),
    }
    if kind == "sampled":
        payload |= {"mapping": _describe(privatizer.mapping), "n_samples": int(n_samples),
                    "smoothing": float(smoothing), "chunk": SAMPLE_CHUNK,
                    "stream_kinds": [type(g.bit_generator).__name__
                                     for g in streams(privatizer)]}
    return payload


# --------------------------------------------------------------------------------------------
# Getting a channel
# --------------------------------------------------------------------------------------------

# one channel per privatizer object: the runner makes a new adversary per private attribute
# with the same privatizer; the channel (Z_w, sampled tables) does not depend on the attribute
_CHANNELS: dict[tuple, tuple[weakref.ref, Channel]] = {}


def _from_store(store: Any, payload: dict[str, Any], privatizer: Any, cand: np.ndarray
                ) -> tuple[Channel, str] | None:
    from bench.results.channels import entry_key

    got = store.get(entry_key(payload), payload)
    if got is None:
        return None
    arrays, meta, where = got
    try:
        ch = restore_channel(arrays, meta["channel"], privatizer.mechanism,
                             privatizer.embedding.size)
        if not np.array_equal(ch.cand, cand):
            raise ValueError("other candidates")
    except (KeyError, ValueError) as e:  # cannot be: the payload matched; recompute
        logger.warning("informed: cached channel unusable (%s): computing it", e)
        return None
    return ch, where


def _to_store(store: Any, payload: dict[str, Any], ch: Channel) -> None:
    from bench.results.channels import entry_key

    state = channel_state(ch)
    if state is None:
        logger.debug("informed: a %s is not cached", type(ch).__name__)
        return
    arrays, record = state
    store.put(entry_key(payload), payload, arrays,
              {"channel": record, "seconds": ch.seconds})


def get_channel(privatizer: Any, cand: np.ndarray, *, n_samples: int = 32,
                smoothing: float = 1.0, sampled: bool = False, store: Any = None
                ) -> tuple[Channel, dict[str, Any]]:
    """The channel of ``privatizer`` over candidate originals ``cand``, and how it was had.

    The mechanism's own exact channel (:meth:`bench.mechanisms.base.Mechanism.channel`) where
    it provides one, else the sampled estimate; ``sampled=True`` samples even where the exact
    one is known (tests). ``store``: the results folder's channel cache
    (:class:`bench.results.channels.ChannelStore`; None: only the per-privatizer cache).

    Returns:
        ``(channel, {"cache": how, "seconds": s})``: ``how`` one of :data:`CACHES`, ``s`` the
        seconds it took here (computing, or reading the cache).

    Raises:
        ModelInputError: the privatizer outputs vectors.
    """
    t0 = time.perf_counter()
    mine = (id(privatizer), cand.tobytes(), n_samples, smoothing, sampled)
    hit = _CHANNELS.get(mine)
    if hit is not None and hit[0]() is privatizer:
        return hit[1], {"cache": "privatizer", "seconds": time.perf_counter() - t0}
    mech, n_vocab = privatizer.mechanism, privatizer.embedding.size
    ch: Channel | None = None
    how = "computed"

    def stored(kind: str) -> tuple[dict[str, Any] | None, tuple[Channel, str] | None]:
        """The cache key payload of a ``kind`` channel and what the store holds for it (a
        sampled channel's payload is needed for its seed, with or without a store)."""
        payload = channel_payload(privatizer, cand, kind, n_samples, smoothing) \
            if store is not None or kind == "sampled" else None
        return payload, (_from_store(store, payload, privatizer, cand)
                         if payload and store is not None else None)

    if channel_kind(privatizer) == "exact" and not sampled:
        payload, got = stored("exact")
        if got is not None:
            ch, how = got
        else:
            before = stream_states(privatizer)
            ch = as_channel(mech.channel(cand), cand, n_vocab, f"mechanism {mech.name!r}")
            if ch is None:
                logger.info("informed: %s has no closed-form channel here; sampling", mech.name)
            else:
                ch.seconds = time.perf_counter() - t0
                if payload and stream_states(privatizer) == before:
                    _to_store(store, payload, ch)
    if ch is None:
        payload, got = stored("sampled")
        if got is not None:
            ch, how = got
        else:
            t1 = time.perf_counter()
            ch = _sampled_channel(privatizer, cand, n_samples, smoothing,
                                  sampling_seed(payload))
            ch.seconds = time.perf_counter() - t1
            if store is not None:
                _to_store(store, payload, ch)
    seconds = time.perf_counter() - t0
    if how == "computed":
        ch.seconds = seconds
    logger.info("informed: %s channel of %s over %d candidates %s in %.2f s", ch.kind,
                mech.name, len(cand), "computed" if how == "computed" else f"from the {how} "
                "cache", seconds)
    for k in [k for k, (ref, _) in _CHANNELS.items() if ref() is None]:
        del _CHANNELS[k]
    _CHANNELS[mine] = (weakref.ref(privatizer), ch)
    return ch, {"cache": how, "seconds": seconds}


def channel_costs(how: dict[str, Any]) -> dict[str, float]:
    """What an adversary adds to its cell's runtime record (``costs_``) for a channel
    :func:`get_channel` obtained as ``how``: computed, or reused from a cache."""
    if how["cache"] == "computed":
        return {"channels_computed": 1, "channel_seconds": how["seconds"]}
    return {"channels_reused": 1, "channel_reuse_seconds": how["seconds"]}


def build_channel(privatizer: Any, cand: np.ndarray, *, n_samples: int = 32,
                  smoothing: float = 1.0, sampled: bool = False, store: Any = None) -> Channel:
    """The channel alone (:func:`get_channel`)."""
    return get_channel(privatizer, cand, n_samples=n_samples, smoothing=smoothing,
                       sampled=sampled, store=store)[0]
