"""The informed adversary's channel, computed once per key (bench.attacks.informed_channel):
a channel from the results folder's cache is bit for bit the one a recomputation gives --
exact and sampled channels alike across seeds (a sampled one draws from a stream seeded by its
key and leaves the cell's streams alone) -- in this process and in another one; a damaged
entry is recomputed; a channel the cache cannot reproduce is not stored."""

from __future__ import annotations

import inspect
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bench.attacks import informed_channel
from bench.attacks.informed import InformedAdversary
from bench.attacks.informed_channel import (
    channel_payload,
    get_channel,
    sampling_seed,
    stream_states,
)
from bench.embeddings import Embedding
from bench.guarantee import Guarantee
from bench.mapping import MAPPINGS
from bench.mechanisms.base import SelectionMechanism
from bench.mechanisms.channels import Channel, channel_state
from bench.privatize import Privatizer
from bench.results.channels import ChannelStore, entry_key, forget_memory
from bench.results.layout import channels_dir
from bench.sensitivity import SENSITIVITY

N = 300


def toy_embedding() -> Embedding:
    """300 words in 8-D (the same in the subprocess below: its source is sent there)."""
    rng = np.random.default_rng(7)
    return Embedding("toy", [f"w{i}" for i in range(300)], rng.normal(size=(300, 8)))


def toy_privatizer(mechanism: str, seed: int, **params) -> Privatizer:
    """The attack privatizer of a toy cell: ``mechanism`` (ε 5 unless given) with ``seed``."""
    mapping = "nearest" if mechanism in ("mvl", "laplace") else "none"
    return Privatizer.build(mechanism=mechanism, epsilon=params.pop("epsilon", 5.0),
                            mapping=mapping, seed=seed, embedding=toy_embedding(),
                            mechanism_params=params)


EXACT = [("tem", {"epsilon": 20.0}), ("tem", {"epsilon": 1.0}), ("santext", {}),
         ("custext", {"K": 10})]
SAMPLED = [("mvl", {}), ("truncated_gumbel", {"epsilon": 400.0})]
CAND = np.union1d(np.arange(120), [150, 299])


@pytest.fixture(autouse=True)
def _fresh_memory():
    forget_memory()
    informed_channel._CHANNELS.clear()
    yield
    forget_memory()


@pytest.fixture
def store(tmp_path):
    return ChannelStore(channels_dir(tmp_path))


def assert_same_channel(a: Channel, b: Channel) -> None:
    """Bit for bit: the stored arrays, and P(o | w) for every output word."""
    sa, sb = channel_state(a), channel_state(b)
    assert sa[1] == sb[1] and sa[0].keys() == sb[0].keys()
    for k in sa[0]:
        assert np.array_equal(sa[0][k], sb[0][k]) and sa[0][k].dtype == sb[0][k].dtype, k
    outs = np.arange(a.n_vocab)
    assert np.array_equal(a.likelihood(outs), b.likelihood(outs))
    ea, eb = a.excess(outs), b.excess(outs)
    assert ea[0] == eb[0] and all(np.array_equal(x, y) for x, y in zip(ea[1:], eb[1:]))


@pytest.mark.parametrize(("mech", "params"), EXACT, ids=lambda v: str(v))
def test_an_exact_channel_from_the_cache_is_the_computed_one_for_any_seed(store, mech,
                                                                          params):
    computed, how = get_channel(toy_privatizer(mech, 0, **dict(params)), CAND, store=store)
    assert how["cache"] == "computed" and computed.kind == "exact"
    forget_memory()  # as another worker would: from disk
    other_seed = toy_privatizer(mech, 5, **dict(params))
    fresh = stream_states(other_seed)
    cached, how = get_channel(other_seed, CAND, store=store)
    assert how["cache"] == "disk"
    assert stream_states(other_seed) == fresh  # an exact channel draws nothing
    again, how = get_channel(toy_privatizer(mech, 9, **dict(params)), CAND, store=store)
    assert how["cache"] == "memory"
    recomputed, how = get_channel(toy_privatizer(mech, 9, **dict(params)), CAND)  # no store
    assert how["cache"] == "computed"
    for ch in (cached, again):
        assert_same_channel(ch, recomputed)
    assert_same_channel(computed, recomputed)
    if hasattr(cached, "mech"):  # an ExpChannel computes its excess with this cell's mechanism
        assert cached.mech is other_seed.mechanism
    # other candidates, another ε: other keys
    assert get_channel(toy_privatizer(mech, 0, **dict(params)), CAND[:-1],
                       store=store)[1]["cache"] == "computed"


@pytest.mark.parametrize(("mech", "params"), SAMPLED, ids=lambda v: str(v))
def test_a_sampled_channel_is_shared_by_every_seed_and_draws_from_its_own_stream(store, mech,
                                                                                  params):
    """Two channels in a row (two attributes with other candidates) from one privatizer, as in
    a cell: a cell with another seed gets both from the cache, equal to what it would compute
    itself without a cache (the draws are seeded by the channel's key, not the cell); sampling
    leaves the privatizer's streams where they were; another configuration samples anew."""
    cand2 = np.arange(90)
    first = toy_privatizer(mech, 3, **dict(params))
    fresh = stream_states(first)
    a1, h1 = get_channel(first, CAND, sampled=True, store=store)
    a2, h2 = get_channel(first, cand2, sampled=True, store=store)
    assert (h1["cache"], h2["cache"]) == ("computed", "computed") and a1.kind == "sampled"
    assert stream_states(first) == fresh  # the channel's draws are not the cell's
    forget_memory()
    second = toy_privatizer(mech, 4, **dict(params))
    b1, h1 = get_channel(second, CAND, sampled=True, store=store)
    b2, h2 = get_channel(second, cand2, sampled=True, store=store)
    assert (h1["cache"], h2["cache"]) == ("disk", "disk")
    uncached = toy_privatizer(mech, 9, **dict(params))
    c1, h1 = get_channel(uncached, CAND, sampled=True)
    c2, _ = get_channel(uncached, cand2, sampled=True)
    assert h1["cache"] == "computed"
    for x, y in ((a1, c1), (b1, c1), (a2, c2), (b2, c2)):
        assert_same_channel(x, y)
    # the two attributes' channels are separate draws: rows of shared candidates differ
    shared = np.intersect1d(CAND, cand2)
    rows1 = [int(np.flatnonzero(CAND == w)[0]) for w in shared]
    rows2 = [int(np.flatnonzero(cand2 == w)[0]) for w in shared]
    assert (a1.table[rows1] != a2.table[rows2]).nnz > 0
    # another configuration (more draws per candidate): another key, sampled anew
    more, h = get_channel(toy_privatizer(mech, 3, **dict(params)), CAND, n_samples=33,
                          sampled=True, store=store)
    assert h["cache"] == "computed" and (more.table != c1.table).nnz > 0
    # the same privatizer object again: its own channel, drawing nothing
    assert get_channel(first, CAND, sampled=True, store=store)[1]["cache"] == "privatizer"


def test_the_key_holds_what_the_channel_depends_on():
    p = toy_privatizer("tem", 0)
    exact = channel_payload(p, CAND, "exact", 32, 1.0)
    assert exact == channel_payload(toy_privatizer("tem", 1), CAND, "exact", 32, 1.0)
    assert {"mechanism", "sensitivity", "embedding", "space_sha256", "candidates",
            "platform", "format", "suite_version"} <= set(exact) and "streams" not in exact
    assert exact["mechanism"]["version"] == "2" and exact["mechanism"]["epsilon"] == 5.0
    for other in (toy_privatizer("tem", 0, epsilon=6.0), toy_privatizer("tem", 0, beta=0.01)):
        assert entry_key(channel_payload(other, CAND, "exact", 32, 1.0)) != entry_key(exact)
    m = toy_privatizer("mvl", 0)
    sampled = channel_payload(m, CAND, "sampled", 32, 1.0)
    assert sampled["mapping"]["name"] == "nearest" and "streams" not in sampled
    # the cell's seed and where its stream stands are not part of it: every seed shares it
    assert channel_payload(toy_privatizer("mvl", 1), CAND, "sampled", 32, 1.0) == sampled
    m.privatize_ids(np.arange(5))
    assert channel_payload(m, CAND, "sampled", 32, 1.0) == sampled
    for changed in (channel_payload(m, CAND, "sampled", 16, 1.0),
                    channel_payload(m, CAND, "sampled", 32, 2.0),
                    channel_payload(m, CAND[:-1], "sampled", 32, 1.0),
                    channel_payload(toy_privatizer("mvl", 0, epsilon=6.0), CAND, "sampled", 32,
                                    1.0)):
        assert entry_key(changed) != entry_key(sampled)
        assert sampling_seed(changed) != sampling_seed(sampled)
    # the draws' seed ignores the platform and the suite version (the cache entry does not)
    elsewhere = dict(sampled, platform={"host": "another CPU"}, suite_version="9.9")
    assert sampling_seed(elsewhere) == sampling_seed(sampled)
    assert entry_key(elsewhere) != entry_key(sampled)


@pytest.mark.parametrize("sensitivity", ["observed_range", "minmax", "unit_norm"])
def test_a_fit_timing_is_not_part_of_the_key(sensitivity):
    """These approaches record how long their minimum distance took; two fits of one
    configuration differ in it alone, and must share their key and their draws' seed (keyed
    with it, thesis_100d's truncated Gumbel cells drew a new channel on every rerun)."""
    def payload(seconds: float):
        p = Privatizer.build(mechanism="mvl", epsilon=5.0, sensitivity=sensitivity,
                             mapping="nearest", seed=0, embedding=toy_embedding())
        stats = p.sensitivity._stats
        assert "min_distance_seconds" in stats  # else this test checks nothing
        stats["min_distance_seconds"] = seconds
        return channel_payload(p, CAND, "sampled", 32, 1.0)

    a, b = payload(0.5), payload(7.25)
    assert a == b and entry_key(a) == entry_key(b) and sampling_seed(a) == sampling_seed(b)
    assert "min_distance" in a["sensitivity"]["stats"]  # the fitted value itself stays


def test_a_damaged_entry_is_recomputed_the_same(store, caplog):
    computed, _ = get_channel(toy_privatizer("tem", 0), CAND, store=store)
    f = next(store.folder.glob("*/arrays.npz"))
    data = bytearray(f.read_bytes())
    data[-30] ^= 0x01
    f.write_bytes(bytes(data))
    forget_memory()
    with caplog.at_level(logging.WARNING):
        again, how = get_channel(toy_privatizer("tem", 1), CAND, store=store)
    assert how["cache"] == "computed" and "is damaged" in caplog.text
    assert_same_channel(again, computed)
    forget_memory()  # and stored again, sound
    assert get_channel(toy_privatizer("tem", 2), CAND, store=store)[1]["cache"] == "disk"


class DrawingChannel(SelectionMechanism):
    """A toy whose ``channel`` draws from the random stream: the cache cannot reproduce its
    stream, so it never stores its channel."""

    name = "toy_drawing"
    guarantee_kind = "pure"

    def distribution(self, ids):
        n = self.space.shape[0]
        out = np.full((len(ids), n), 0.5 / (n - 1))
        out[np.arange(len(ids)), ids] = 0.5
        return out

    def channel(self, words):
        self.rng.random()
        return self.distribution(words)

    def sample(self, ids):
        return np.asarray(ids)

    def guarantee(self, sensitivity=None):
        return Guarantee("pure", self.epsilon)


class OwnChannel(DrawingChannel):
    """A toy returning a Channel class of its own (not one the cache knows how to store)."""

    name = "toy_own"

    def channel(self, words):
        class Mine(Channel):
            kind = "exact"

            def excess(self, outputs):
                return "dense", np.zeros((len(outputs), len(self.cand)))

        ch = Mine(words, self.space.shape[0])
        ch.floor = np.full(len(words), 1.0 / self.space.shape[0])
        return ch


@pytest.mark.parametrize("cls", [DrawingChannel, OwnChannel])
def test_a_channel_the_cache_cannot_reproduce_is_not_stored(store, cls):
    emb = toy_embedding()

    def privatizer():
        mech = cls(epsilon=1.0, rng=0).fit(emb.vectors, emb.input_vectors())
        return Privatizer(emb, SENSITIVITY.create("none").fit(emb.vectors), mech,
                          MAPPINGS.create("none"), rng=np.random.default_rng(0))

    assert get_channel(privatizer(), CAND, store=store)[1]["cache"] == "computed"
    assert get_channel(privatizer(), CAND, store=store)[1]["cache"] == "computed"
    assert not store.folder.exists() or not any(store.folder.iterdir())


CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from bench.attacks.informed_channel import get_channel
    from bench.embeddings import Embedding
    from bench.privatize import Privatizer
    from bench.results.channels import ChannelStore
""") + inspect.getsource(toy_embedding) + inspect.getsource(toy_privatizer) + textwrap.dedent("""
    store = ChannelStore(sys.argv[1])
    cand = np.union1d(np.arange(120), [150, 299])
    for mech, params, sampled in (("tem", {"epsilon": 1.0}, False), ("custext", {}, False),
                                  ("mvl", {}, True)):
        _, how = get_channel(toy_privatizer(mech, 11, **params), cand, sampled=sampled,
                             store=store)
        assert how["cache"] == "computed", how
""")


def test_a_channel_computed_in_another_process_is_the_one_computed_here(store):
    """What a joblib or Dask worker stored is what this process would compute."""
    subprocess.run([sys.executable, "-c", CHILD, str(store.folder)], check=True)
    assert len(list(store.folder.iterdir())) == 3
    for mech, params, sampled in (("tem", {"epsilon": 1.0}, False), ("custext", {}, False),
                                  ("mvl", {}, True)):
        mine = toy_privatizer(mech, 11, **dict(params))
        cached, how = get_channel(mine, CAND, sampled=sampled, store=store)
        assert how["cache"] == "disk", mech
        fresh = toy_privatizer(mech, 11, **dict(params))
        recomputed, _ = get_channel(fresh, CAND, sampled=sampled)
        assert_same_channel(cached, recomputed)
        assert stream_states(mine) == stream_states(fresh)


def _docs(rng, n):
    return [list(rng.choice([f"w{i}" for i in range(60)], size=30)) for _ in range(n)]


@pytest.mark.parametrize(("mech", "params"), [("tem", {"epsilon": 20.0}), ("mvl", {})],
                         ids=["exact", "sampled"])
def test_the_adversary_with_the_cache_predicts_exactly_as_without(store, mech, params):
    rng = np.random.default_rng(0)
    X, X_dev, X_test = _docs(rng, 40), _docs(rng, 20), _docs(rng, 20)
    y, y_dev = rng.integers(0, 2, 40), rng.integers(0, 2, 20)

    def fitted(seed, cache):
        adv = InformedAdversary(privatizer=toy_privatizer(mech, seed, **dict(params)),
                                attribute_words=["w3", "w7"], channel_cache=cache,
                                candidates=200)
        return adv.fit(X, np.stack([y, 1 - y], 1), X_dev, np.stack([y_dev, 1 - y_dev], 1))

    first = fitted(1, store)
    assert first.params()["channel_cache"] == "computed"
    assert set(first.costs_) == {"channels_computed", "channel_seconds"}
    forget_memory()
    second = fitted(1, store)
    assert second.params()["channel_cache"] == "disk"
    assert set(second.costs_) == {"channels_reused", "channel_reuse_seconds"}
    plain = fitted(1, None)
    assert plain.params()["channel_cache"] == "computed"
    for adv in (first, second):
        assert np.array_equal(adv.predict_proba(X_test), plain.predict_proba(X_test))
        assert (adv.C_, adv.penalty_, adv.features_) == (plain.C_, plain.penalty_,
                                                         plain.features_)
