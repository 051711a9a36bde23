"""A mechanism's own exact channel (``Mechanism.channel``) and the informed adversary.

Toy selection mechanisms (not registered): ``KeepOrUniform`` provides its exact channel, so
the informed adversary inverts it and never samples; ``NoChannel`` is the same mechanism without
it, so the adversary samples through the privatizer. Also: the channel's return forms (dense,
sparse, ``None``), their validation, and the built-in exact channels.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from bench.attacks import informed_channel
from bench.attacks.informed import InformedAdversary, channel_kind
from bench.embeddings import Embedding
from bench.guarantee import Guarantee
from bench.mapping import MAPPINGS
from bench.mechanisms.base import AdditiveMechanism, Mechanism, SelectionMechanism
from bench.mechanisms.channels import DenseChannel, ExpChannel, TableChannel, as_channel
from bench.privatize import Privatizer
from bench.sensitivity import SENSITIVITY

N = 40


class NoChannel(SelectionMechanism):
    """Keep the word w.p. p = e^ε/(e^ε + |W| − 1), else a uniform other word (|W|-ary
    randomized response, Warner 1965): no ``channel``, so the informed adversary samples."""

    name = "toy_rr"
    guarantee_kind = "pure"

    def _fit(self) -> None:
        n = self.space.shape[0]
        self.p_keep = math.exp(self.epsilon) / (math.exp(self.epsilon) + n - 1)

    def distribution(self, ids: np.ndarray) -> np.ndarray:
        """Exact P(o | w), ``(len(ids), |W|)``."""
        n = self.space.shape[0]
        out = np.full((len(ids), n), (1.0 - self.p_keep) / (n - 1))
        out[np.arange(len(ids)), ids] = self.p_keep
        return out

    def sample(self, ids: np.ndarray) -> np.ndarray:
        """One draw per occurrence."""
        ids = self._lookup(ids)
        n = self.space.shape[0]
        other = (ids + self.rng.integers(1, n, len(ids))) % n  # uniform over the others
        return np.where(self.rng.random(len(ids)) < self.p_keep, ids, other)

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε-DP (randomized response)."""
        return Guarantee("pure", self.epsilon)


class KeepOrUniform(NoChannel):
    """The same mechanism with its exact channel (a dense array: a small vocabulary)."""

    calls = 0

    def channel(self, words: np.ndarray) -> np.ndarray:
        """Exact P(o | w) (see :meth:`Mechanism.channel`)."""
        type(self).calls += 1
        return self.distribution(words)


class SparseChannel(NoChannel):
    """The same channel returned as a sparse matrix."""

    def channel(self, words: np.ndarray):
        """Exact P(o | w) as ``scipy.sparse``."""
        return sparse.csr_matrix(self.distribution(words))


class NoneChannel(NoChannel):
    """Declares a channel but has no closed form for this configuration."""

    def channel(self, words: np.ndarray):
        """No closed form here."""
        return None


@pytest.fixture(scope="module")
def toy() -> Embedding:
    rng = np.random.default_rng(1)
    return Embedding("toy", [f"w{i}" for i in range(N)], rng.normal(size=(N, 3)))


def _privatizer(cls, toy: Embedding, eps: float = 2.0, seed: int = 1) -> Privatizer:
    mech = cls(epsilon=eps, rng=seed).fit(toy.vectors, toy.input_vectors())
    return Privatizer(toy, SENSITIVITY.create("none").fit(toy.vectors), mech,
                      MAPPINGS.create("none"), rng=np.random.default_rng(seed))


def _brute_posterior(dist: np.ndarray, prior: np.ndarray) -> np.ndarray:
    joint = prior[:, None] * dist
    return (joint / joint.sum(axis=0, keepdims=True)).T  # (o, w)


def _zipf(n: int) -> np.ndarray:
    p = 1.0 / (np.arange(n) + 1.0)
    return p / p.sum()


@pytest.fixture
def no_sampling(monkeypatch):
    """Make the sampled estimate fail loudly: an exact channel must not need it."""
    def refuse(*a, **k):
        raise AssertionError("the sampled estimate was used")

    monkeypatch.setattr(informed_channel, "_sampled_channel", refuse)


def test_has_channel_is_declared_by_overriding():
    assert KeepOrUniform.has_channel() and SparseChannel.has_channel()
    assert not NoChannel.has_channel() and not Mechanism.has_channel()

    class Additive(AdditiveMechanism):
        def channel(self, words):
            return None

    assert not Additive.has_channel()  # an additive mechanism's words depend on the mapping


def test_informed_uses_the_mechanism_channel_and_never_samples(toy, no_sampling):
    p = _privatizer(KeepOrUniform, toy)
    assert channel_kind(p) == "exact"
    before = KeepOrUniform.calls
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], candidates=None, top_k=N)
    post = adv.posterior(np.arange(N))
    assert KeepOrUniform.calls == before + 1
    assert isinstance(post.channel, DenseChannel) and adv.params()["channel"] == "exact"
    truth = _brute_posterior(p.mechanism.distribution(np.arange(N)), _zipf(N))
    np.testing.assert_allclose(post.attr[:, 0], truth[:, 3], atol=1e-12, rtol=0)
    top = np.zeros((N, N))
    np.put_along_axis(top, post.top_ids, post.top_p, axis=1)
    np.testing.assert_allclose(top[np.arange(N), post.top_ids[:, 0]],
                               truth[np.arange(N), post.top_ids[:, 0]], atol=1e-12, rtol=0)


def test_a_sparse_channel_is_exact_too(toy, no_sampling):
    p = _privatizer(SparseChannel, toy)
    adv = InformedAdversary(privatizer=p, attribute_words=["w5"], candidates=None, top_k=N)
    post = adv.posterior(np.arange(N))
    assert isinstance(post.channel, TableChannel) and post.channel.kind == "exact"
    truth = _brute_posterior(p.mechanism.distribution(np.arange(N)), _zipf(N))
    np.testing.assert_allclose(post.attr[:, 0], truth[:, 5], atol=1e-12, rtol=0)


@pytest.mark.parametrize("cls", [NoChannel, NoneChannel])
def test_without_a_channel_informed_samples(toy, cls, monkeypatch):
    used = []
    real = informed_channel._sampled_channel
    monkeypatch.setattr(informed_channel, "_sampled_channel",
                        lambda *a, **k: used.append(1) or real(*a, **k))
    p = _privatizer(cls, toy)
    assert channel_kind(p) == ("exact" if cls is NoneChannel else "sampled")
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], candidates=None, top_k=N,
                            n_samples=400)
    post = adv.posterior(np.arange(N))
    assert used == [1] and post.channel.kind == "sampled"
    assert adv.params()["channel"] == "sampled"
    truth = _brute_posterior(p.mechanism.distribution(np.arange(N)), _zipf(N))
    err = np.abs(post.attr[:, 0] - truth[:, 3]).max()
    assert 1e-6 < err < 0.1  # an estimate, close to the exact posterior


def test_channel_sampled_setting_samples_even_with_a_channel(toy):
    p = _privatizer(KeepOrUniform, toy)
    before = KeepOrUniform.calls
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], channel="sampled")
    adv.posterior(np.arange(N))
    assert KeepOrUniform.calls == before and adv.params()["channel"] == "sampled"


@pytest.mark.parametrize(("value", "match"), [
    (np.ones((3, N)) / N * 2, "sum to 1"),
    (-np.ones((3, N)) / N, "negative"),
    (np.ones((2, N)) / N, "shape"),
    (np.full((3, N), np.nan), "non-finite"),
])
def test_a_wrong_channel_is_refused(value, match):
    with pytest.raises(ValueError, match=match):
        as_channel(value, np.arange(3), N, "mechanism 'toy'")


def test_as_channel_passes_channels_and_none_through():
    assert as_channel(None, np.arange(3), N) is None
    assert as_channel(NotImplemented, np.arange(3), N) is None
    ch = TableChannel(np.arange(3), N, sparse.eye(3, N), 0.0, "exact")
    assert as_channel(ch, np.arange(3), N) is ch
    with pytest.raises(ValueError, match="other words"):
        as_channel(ch, np.arange(4), N)


@pytest.mark.parametrize(("mech", "params", "cls"), [("tem", {}, ExpChannel),
                                                     ("santext", {}, ExpChannel),
                                                     ("custext", {"K": 5}, TableChannel)])
def test_builtin_channels_equal_their_distribution(toy, mech, params, cls):
    p = Privatizer.build(mechanism=mech, epsilon=3.0, mapping="none", seed=0, embedding=toy,
                         mechanism_params=params)
    words = np.array([0, 4, 17, 39])
    ch = p.mechanism.channel(words)
    assert isinstance(ch, cls) and type(p.mechanism).has_channel()
    np.testing.assert_allclose(ch.likelihood(np.arange(N)).T,
                               p.mechanism.distribution(words), atol=1e-12, rtol=0)
