"""The public code's departures from Huang et al. (2024) as named options of ``laplace``,
``gaussian`` and ``trlaplace``: refused by default, void when acknowledged, the shared noise
batched as the code batches, and ``trlaplace``'s ``code_dimension``."""

import math

import numpy as np
import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS
from bench.mechanisms.departures import CODE_BATCH_SENTENCES, REASONS, code_batches

from ._stats import P_MIN, N

CLIPPED = ["laplace", "gaussian", "trlaplace"]
ALLOW = {"allow_no_guarantee": True}


@pytest.mark.parametrize("name", CLIPPED)
@pytest.mark.parametrize("departure", [{"clip": False}, {"noise_shared": "batch"}],
                         ids=["clip", "noise_shared"])
def test_refused_without_acknowledgement_void_with_it(space, name, departure):
    with pytest.raises(ValueError, match="allow_no_guarantee: true") as err:
        MECHANISMS.create(name, epsilon=0.5, **departure)
    assert "no DP guarantee" in str(err.value)
    m = MECHANISMS.create(name, epsilon=0.5, **departure, **ALLOW).fit(space)
    g = m.guarantee()
    key = next(iter(departure))
    assert g.void and REASONS[key] in g.void_reason
    assert g.describe(symbolic=True) == "no DP guarantee"
    assert m.params[key] == departure[key] and m.params["allow_no_guarantee"] is True


@pytest.mark.parametrize("name", CLIPPED)
def test_defaults_record_no_departure(space, name):
    m = MECHANISMS.create(name, epsilon=0.5).fit(space)
    assert not set(m.params) & {"clip", "noise_shared", "batch_sentences",
                                "allow_no_guarantee", "code_dimension"}
    assert not m.guarantee().void and "void" not in m.guarantee().to_dict()
    assert m.clip and m.noise_shared == "token"


@pytest.mark.parametrize("params,match", [
    ({"allow_no_guarantee": True}, "without a departure"),
    ({"batch_sentences": 8}, "only with noise_shared: batch"),
    ({"noise_shared": "sentence"}, "noise_shared must be"),
    ({"clip": "no", **ALLOW}, "clip must be true or false"),
    ({"noise_shared": "batch", "batch_sentences": 0, **ALLOW}, "batch_sentences"),
    ({"noise_shared": "batch", "batch_sentences": 2.5, **ALLOW}, "batch_sentences"),
])
def test_bad_departure_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        MECHANISMS.create("laplace", epsilon=1.0, **params)


@pytest.mark.parametrize("name", CLIPPED)
def test_clip_false_adds_the_same_noise_to_unclipped_vectors(space, name):
    clipped = MECHANISMS.create(name, epsilon=0.5, C=0.005, rng=4).fit(space)
    raw = MECHANISMS.create(name, epsilon=0.5, C=0.005, clip=False, rng=4, **ALLOW).fit(space)
    ids = np.arange(50)
    np.testing.assert_array_equal(raw.prepare(space[ids]), space[ids])
    assert np.all(np.linalg.norm(clipped.prepare(space[ids]), axis=1) <= 0.005 + 1e-15)
    # the noise is calibrated to C either way: only the clipping differs
    np.testing.assert_allclose(raw.perturb(ids) - space[ids],
                               clipped.perturb(ids) - clipped.prepare(space[ids]), atol=1e-12)


def reference_batches(lengths, b):
    """The public code's batchify.get_batches, written out: sort by length, cut runs of equal
    length into batches of at most b sentences."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out, i, k = [0] * len(lengths), 0, 0
    while i < len(order):
        j = i
        while j < min(len(order), i + b) and lengths[order[j]] == lengths[order[i]]:
            j += 1
        for t in order[i:j]:
            out[t] = k
        i, k = j, k + 1
    return out


@pytest.mark.parametrize("b", [1, 3, 1024])
def test_code_batches_match_the_public_code(b):
    lengths = np.random.default_rng(b).integers(0, 6, size=500)
    assert code_batches(lengths, b).tolist() == reference_batches(lengths.tolist(), b)
    assert code_batches(np.array([], dtype=np.int64), b).tolist() == []
    assert CODE_BATCH_SENTENCES == 1024


def test_shared_noise_one_draw_per_batch_with_the_exact_distribution(space):
    m = MECHANISMS.create("laplace", epsilon=1.5, C=0.7, noise_shared="batch", rng=3,
                       **ALLOW).fit(space)
    ids = np.array([0, 1, 2, 3, 4, 5])
    z = m.perturb(ids, np.array([0, 0, 0, 1, 1, 2])) - m.prepare(space[ids])
    np.testing.assert_allclose(z[0], z[1], atol=1e-12)  # one vector per batch ...
    np.testing.assert_allclose(z[3], z[4], atol=1e-12)
    assert not np.allclose(z[0], z[3]) and not np.allclose(z[3], z[5])  # ... fresh per batch
    # within a batch the difference of two outputs is the difference of the inputs
    out = m.perturb(np.array([7, 9]), np.array([4, 4]))
    np.testing.assert_allclose(out[1] - out[0], m.prepare(space[[9]])[0]
                               - m.prepare(space[[7]])[0], atol=1e-12)
    # each batch's vector is one exact Lap(2C√d/ε) draw per coordinate
    n = N // space.shape[1] + 1
    batches = np.repeat(np.arange(n), 3)
    draws = m.perturb(np.zeros(3 * n, dtype=np.int64), batches)[::3] - m.prepare(space[[0]])
    scale = 2 * math.sqrt(space.shape[1]) * 0.7 / 1.5
    assert stats.kstest(draws.ravel()[:N], stats.laplace(scale=scale).cdf).pvalue > P_MIN
    # no batches given: every token its own batch (independent draws)
    free = m.perturb(np.zeros(100, dtype=np.int64))
    assert len(np.unique(free[:, 0])) == 100
    with pytest.raises(ValueError, match="one batch index per token"):
        m.perturb(ids, np.array([0, 1]))


def test_trlaplace_code_dimension(space):
    """Sec. 6.1 and method.py: d′ = 500 at ε = 10 and 1,700 at ε = 20; A = −b·ln(1 − 2ε/√d′)
    with b = 2C√d′/ε (the code's formula, δ = 4^−d′)."""
    assert MECHANISMS.create("trlaplace", epsilon=1.0, code_dimension=True).fit(space).d_eff == 8
    for eps, d_code, d_min in ((10.0, 500, 401), (20.0, 1700, 1601)):
        default = MECHANISMS.create("trlaplace", epsilon=eps, C=0.005).fit(space)
        m = MECHANISMS.create("trlaplace", epsilon=eps, C=0.005, code_dimension=True).fit(space)
        assert (default.d_eff, m.d_eff) == (d_min, d_code)
        b = 2 * 0.005 * math.sqrt(d_code) / eps
        assert m.A == pytest.approx(-b * math.log(1 - 2 * eps / math.sqrt(d_code)))
        assert m.params["code_dimension"] is True and not m.guarantee().void
        assert m.log10_delta == pytest.approx(-d_code * math.log10(4))
    with pytest.raises(ValueError, match="fails"):
        MECHANISMS.create("trlaplace", epsilon=30.0, code_dimension=True).fit(space)
    with pytest.raises(ValueError, match="needs dummy_dims"):
        MECHANISMS.create("trlaplace", epsilon=1.0, code_dimension=True, dummy_dims=False)
    with pytest.raises(ValueError, match="below"):
        MECHANISMS.create("trlaplace", epsilon=10.0, code_dimension=True).fit(
            np.random.default_rng(0).normal(size=(5, 600)))
