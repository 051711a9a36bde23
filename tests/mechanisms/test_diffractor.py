"""1-Diffractor (``diffractor``): the greedy lists, the exact 1-D and mixture distributions vs
the samplers and the authors' per-call algorithm, the metric-DP guarantee over the lists, the
exact channel, <unk>, seeding and bad parameters."""

import math

import numpy as np
import pytest

from bench.attacks import informed_channel
from bench.attacks.informed import InformedAdversary
from bench.audit import pair_claim
from bench.embeddings import Embedding
from bench.grid import GridError, load_grid
from bench.mechanisms import MECHANISMS
from bench.mechanisms import diffractor as D
from bench.mechanisms.channels import as_channel
from bench.neighbors import NeighborIndex
from bench.privatize import Privatizer

from ._stats import P_MIN, chi2_pvalue

N = 30_000


def walk_reference(x, start):
    """The greedy walk, literally: the nearest remaining word (float64), ties to the lower id."""
    n = len(x)
    left = set(range(n)) - {start}
    out = [start]
    while left:
        rest = np.array(sorted(left))
        d = np.linalg.norm(x[rest] - x[out[-1]], axis=1)
        out.append(int(rest[np.argmin(d)]))
        left.remove(out[-1])
    return np.array(out)


def tem_per_call(i, n, eps, gamma, rng):
    """Carvalho et al. 2021, Alg. 2 on positions 0..n-1 with d = |i - j|, once (reference;
    the authors' ``truncated_exponential``)."""
    lo, hi = max(0, i - gamma), min(n, i + gamma + 1)  # L_i = [lo, hi)
    n_out = n - (hi - lo)
    scores = [-abs(j - i) for j in range(lo, hi)]
    if n_out:
        scores.append(-gamma + 2 * math.log(n_out) / eps)
    noisy = np.array(scores, dtype=float) + rng.gumbel(0, 2 / eps, size=len(scores))
    k = int(np.argmax(noisy))
    if k < hi - lo:
        return lo + k
    r = int(rng.integers(n_out))  # uniform over the positions outside L_i
    return r if r < lo else r + (hi - lo)


def per_call(m, w, rng, method):
    """The authors' rewrite of one token: perturb in every list, pick a candidate uniformly."""
    n = m.space.shape[0]
    cands = []
    for lst in range(m.num_lists):
        i = int(m.pos[lst, m.anchor[w]])
        if method == "geometric":
            p = 1 - math.exp(-m.epsilon)
            j = int(np.clip(i + rng.geometric(p) - rng.geometric(p), 0, n - 1))
        else:
            j = tem_per_call(i, n, m.epsilon, m.gamma, rng)
        cands.append(int(m.order[lst, j]))
    return cands[rng.integers(len(cands))]


@pytest.fixture(scope="module")
def small():
    """40 random words in 6 dimensions plus an input-only <unk> row (their mean)."""
    x = np.random.default_rng(5).normal(size=(40, 6))
    return x, np.vstack([x, x.mean(axis=0, keepdims=True)])


def fitted(small, **kw):
    x, inputs = small
    kw.setdefault("rng", 0)
    return MECHANISMS.create("diffractor", **kw).fit(x, inputs)


# -- lists ------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [None, 3])  # the full k-NN table, and one forcing fallback scans
def test_greedy_list_is_the_nearest_remaining_walk(space, k):
    knn = None if k is None else NeighborIndex(space).search(space, k=k)[0]
    for start in (0, 57, 199):
        np.testing.assert_array_equal(D.greedy_list(space, start, knn),
                                      walk_reference(space, start))


def test_greedy_list_breaks_exact_ties_to_the_lower_id(space):
    x = np.vstack([space[:60], space[[7, 7, 30]]])  # ids 60, 61 duplicate 7; 62 duplicates 30
    for k in (None, 2):
        knn = None if k is None else D.knn_table(x, k)
        for start in (0, 61, 30):
            np.testing.assert_array_equal(D.greedy_list(x, start, knn), walk_reference(x, start))


def test_lists_are_seeded_public_permutations(space):
    order, pos = D.build_lists(space, 4, 3)
    n = len(space)
    assert order.shape == pos.shape == (4, n)
    for lst in range(4):
        np.testing.assert_array_equal(np.sort(order[lst]), np.arange(n))
        np.testing.assert_array_equal(pos[lst, order[lst]], np.arange(n))
    starts = np.random.default_rng(3).choice(n, size=4, replace=False)
    np.testing.assert_array_equal(order[:, 0], starts)
    assert not np.array_equal(D.build_lists(space, 4, 4)[0], order)
    # the lists never depend on (or draw from) the mechanism's random stream
    g = np.random.default_rng(9)
    before = g.bit_generator.state
    m = MECHANISMS.create("diffractor", epsilon=1.0, num_lists=4, list_seed=3, rng=g).fit(space)
    assert g.bit_generator.state == before
    np.testing.assert_array_equal(m.order, order)


# -- the 1-D mechanisms -----------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.3, 2.0])
def test_geometric_probs_fold_the_two_sided_geometric(eps):
    n, a = 7, math.exp(-eps)
    k = np.arange(-400, 401)
    pmf = (1 - a) / (1 + a) * a ** np.abs(k)
    for i in range(n):
        want = np.bincount(np.clip(i + k, 0, n - 1), weights=pmf, minlength=n)
        np.testing.assert_allclose(D.geometric_probs(np.arange(n), i, n, eps), want,
                                   rtol=1e-12)


@pytest.mark.parametrize("i", [0, 6, 11])
def test_tem_probs_match_algorithm_2(i):
    n, eps, gamma = 12, 1.5, 3
    probs = D.tem_probs(np.arange(n), np.array(i), n, eps, gamma)
    assert probs.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(30 + i)
    ref = np.array([tem_per_call(i, n, eps, gamma, rng) for _ in range(10_000)])
    assert chi2_pvalue(ref, probs) > P_MIN


# -- the mechanism: exact distribution, samplers, the authors' algorithm ----------------------

@pytest.mark.parametrize("method, eps", [("geometric", 0.4), ("geometric", 2.0), ("tem", 0.8)])
def test_sampler_matches_the_exact_distribution(small, method, eps):
    kw = {"gamma": 4} if method == "tem" else {}
    m = fitted(small, epsilon=eps, method=method, num_lists=3, **kw)
    n = len(small[0])
    ends = [int(m.order[0, 0]), int(m.order[1, -1])]  # words at the ends of a list
    words = np.array(ends + [17, n])  # n: <unk>
    exact = m.distribution(words)
    np.testing.assert_allclose(exact.sum(axis=1), 1.0)
    ids = np.repeat(words, N)
    out = m.sample(ids)
    for k, w in enumerate(words):
        assert chi2_pvalue(out[ids == w], exact[k]) > P_MIN
    # the authors' per-call algorithm (every list, then a uniform candidate) has it too
    rng = np.random.default_rng(31)
    ref = np.array([per_call(m, 17, rng, method) for _ in range(5000)])
    assert chi2_pvalue(ref, exact[2]) > P_MIN


def test_tem_sampler_chunks(small, monkeypatch):
    monkeypatch.setattr(D, "TEM_CHUNK", 50)  # chunks of 50 // 7 = 7 tokens
    m = fitted(small, epsilon=1.0, method="tem", num_lists=2, gamma=4)
    out = m.sample(np.full(N, 3))
    assert chi2_pvalue(out, m.distribution(np.array([3]))[0]) > P_MIN


def test_sampler_detects_a_wrong_distribution(small):
    m = fitted(small, epsilon=1.0, num_lists=3)
    draws = m.sample(np.full(N, 17))
    one_list = D.geometric_probs(m.pos[0], m.pos[0, 17], len(small[0]), 1.0)
    assert chi2_pvalue(draws, one_list) < P_MIN  # the mixture is not list 0 alone


# -- the guarantee ----------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["geometric", "tem"])
def test_metric_dp_over_the_lists_exactly(small, method):
    eps = 0.7
    m = fitted(small, epsilon=eps, method=method, num_lists=3)
    n = len(small[0])
    P = m.distribution(np.arange(n))
    d = m.pair_distance(np.repeat(np.arange(n), n), np.tile(np.arange(n), n)).reshape(n, n)
    np.testing.assert_array_equal(d, d.T)
    assert np.all(np.diag(d) == 0) and np.all(d[~np.eye(n, dtype=bool)] >= 1)
    loss = np.log(P[:, None, :] / P[None, :, :]).max(axis=2)  # max_o ln P(o|w)/P(o|w')
    assert np.all(loss <= eps * d * (1 + 1e-9))
    # one list's distance does not bound the mixture: the maximum over the lists is needed
    d0 = np.abs(m.pos[0][:, None] - m.pos[0][None, :])
    assert np.any(loss > eps * d0 * (1 + 1e-6))


def test_one_geometric_list_is_tight(small):
    eps = 0.9
    m = fitted(small, epsilon=eps, num_lists=1)
    a, b = int(m.order[0, 10]), int(m.order[0, 11])  # neighbours in the list: d = 1
    P = m.distribution(np.array([a, b]))
    assert m.pair_distance(np.array([a]), np.array([b]))[0] == 1
    assert np.log(P[0] / P[1]).max() == pytest.approx(eps)


def test_guarantee_record_and_audit_claim(small):
    m = fitted(small, epsilon=2.0)
    g = m.guarantee()
    assert (g.kind, g.multiplier, g.delta, g.proven) == ("metric", 1.0, 0.0, True)
    assert "max over the lists" in g.metric and "max over the lists" in g.describe()

    class TrainFitted:
        name, params = "mahalanobis_fit", {"fit_on": "train"}

    g2 = m.guarantee(TrainFitted())
    assert not g2.proven and "private training data" in g2.reason
    words = [f"w{i}" for i in range(40)]
    p = Privatizer.build(mechanism="diffractor", epsilon=2.0, mapping="none", seed=0,
                         embedding=Embedding("small", words, small[0]))
    for a, b in ((0, 1), (3, 29), (p.embedding.unk_id, 5)):
        want = 2.0 * p.mechanism.pair_distance(np.array([a]), np.array([b]))[0]
        assert pair_claim(p, a, b) == (want, 0.0)


# -- channel, <unk>, privatizer ---------------------------------------------------------------

@pytest.mark.parametrize("method", ["geometric", "tem"])
def test_channel_is_the_exact_distribution(small, method):
    m = fitted(small, epsilon=1.2, method=method, num_lists=3)
    assert m.has_channel()
    words = np.array([0, 4, 17, 39])
    n = len(small[0])
    ch = as_channel(m.channel(words), words, n)
    np.testing.assert_allclose(ch.likelihood(np.arange(n)), m.distribution(words).T,
                               rtol=1e-12, atol=1e-15)
    if method == "tem":
        assert np.all(ch.floor > 0)


@pytest.mark.parametrize("method", ["geometric", "tem"])
def test_informed_adversary_inverts_the_exact_channel(small, method, monkeypatch):
    monkeypatch.setattr(informed_channel, "_sampled_channel",
                        lambda *a, **k: pytest.fail("the sampled estimate was used"))
    words = [f"w{i}" for i in range(40)]
    p = Privatizer.build(mechanism="diffractor", epsilon=1.5, mapping="none", seed=0,
                         embedding=Embedding("small", words, small[0]),
                         mechanism_params={"method": method, "num_lists": 3})
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], candidates=None, top_k=40)
    post = adv.posterior(np.arange(40))
    assert adv.params()["channel"] == "exact"
    prior = 1.0 / np.arange(1, 41)  # the adversary's Zipf prior over the 40 words
    joint = (prior / prior.sum())[:, None] * p.mechanism.distribution(np.arange(40))
    truth = (joint / joint.sum(axis=0, keepdims=True)).T  # P(w | o), (o, w)
    np.testing.assert_allclose(post.attr[:, 0], truth[:, 3], atol=1e-12, rtol=0)


@pytest.mark.parametrize("method", ["geometric", "tem"])
def test_no_subnormal_likelihood_reaches_the_adversary(small, method):
    """An output whose likelihood under every candidate is subnormal (~1e−315) made the
    informed adversary's 1/N_o overflow (0·∞ = NaN posteriors): the channel sets entries below
    1e−200 to 0 (no evidence) and the posteriors stay finite."""
    words = [f"w{i}" for i in range(40)]
    emb = Embedding("small", words, small[0])
    cand = np.arange(4)  # the adversary's candidates: the 4 most frequent words (w3 among them)
    pos = fitted(small, epsilon=1.0, num_lists=1).pos[0]  # the list does not depend on ε
    kmin = np.abs(pos[:, None] - pos[cand][None, :]).min(axis=1)
    far = int(np.argmax(kmin))
    # ε·|Δ| (geometric) or (ε/2)·|Δ| (tem) = 726 at the nearest candidate: e^−726 ≈ 1e−315
    eps = 726.0 / kmin[far] * (2 if method == "tem" else 1)
    params = {"method": method, "num_lists": 1} | ({"gamma": 39} if method == "tem" else {})
    p = Privatizer.build(mechanism="diffractor", epsilon=eps, mapping="none", seed=0,
                         embedding=emb, mechanism_params=params)
    exact = p.mechanism.distribution(cand)[:, far]
    assert np.all(exact < 1e-300) and np.any(exact > 0)  # subnormal for every candidate
    lik = p.mechanism.channel(np.arange(40)).likelihood(np.arange(40))
    assert np.all((lik == 0) | (lik >= D.CHANNEL_TINY))
    np.testing.assert_allclose(lik, p.mechanism.distribution(np.arange(40)).T, rtol=1e-12,
                               atol=1e-199)
    adv = InformedAdversary(privatizer=p, attribute_words=["w3"], candidates=4, top_k=4)
    post = adv.posterior(np.array([far]))
    assert np.all(np.isfinite(post.attr[far])) and np.all(np.isfinite(post.top_p[far]))


def test_unk_takes_its_nearest_word(small):
    x, inputs = small
    m = fitted(small, epsilon=1.0, method="tem", num_lists=3)
    near = int(np.argmin(np.linalg.norm(x - inputs[-1], axis=1)))
    P = m.distribution(np.array([len(x), near]))
    np.testing.assert_array_equal(P[0], P[1])
    assert m.pair_distance(np.array([len(x)]), np.array([near]))[0] == 0


def test_privatizer_end_to_end_no_pass_through(small):
    words = [f"w{i}" for i in range(40)]
    p = Privatizer.build(mechanism="diffractor", epsilon=1.0, mapping="none", seed=3,
                         embedding=Embedding("small", words, small[0]))
    out = p.privatize([["w1", "w2", "zzqx-oov", "w3"] * 50])
    assert out.n_oov == 50 and "zzqx-oov" not in out.tokens[0]
    assert set(out.tokens[0]) <= set(words)
    with pytest.raises(ValueError, match="selects output words itself"):
        Privatizer.build(mechanism="diffractor", epsilon=1.0, mapping="nearest",
                         embedding=Embedding("small", words, small[0]))


def test_seeded_and_independent_per_occurrence(small):
    a = fitted(small, epsilon=1.0, rng=7).sample(np.arange(40).repeat(20))
    b = fitted(small, epsilon=1.0, rng=7).sample(np.arange(40).repeat(20))
    c = fitted(small, epsilon=1.0, rng=8).sample(np.arange(40).repeat(20))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(fitted(small, epsilon=0.5).sample(np.zeros(500, np.int64)))) > 1


def test_describe_names_the_parameters(small):
    d = fitted(small, epsilon=1.0, method="tem", num_lists=2).describe()
    assert d == {"name": "diffractor", "version": "1", "epsilon": 1.0, "method": "tem",
                 "num_lists": 2, "list_seed": 0, "gamma": 5}


@pytest.mark.parametrize("kw, match", [
    ({"method": "laplace"}, "method"), ({"num_lists": 0}, "num_lists"),
    ({"num_lists": 1.5}, "num_lists"), ({"num_lists": True}, "num_lists"),
    ({"gamma": 3}, "method='tem' only"), ({"method": "tem", "gamma": 0}, "gamma"),
    ({"method": "tem", "gamma": 2.5}, "gamma"), ({"list_seed": -1}, "list_seed"),
    ({"epsilon": 0}, "epsilon")])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        MECHANISMS.create("diffractor", **({"epsilon": 1.0} | kw))


@pytest.mark.parametrize("param, value, shown", [("num_lists", 100, "above its limit 64"),
                                                 ("gamma", 10_000, "above its limit 4,096")])
def test_grid_limits(tmp_path, param, value, shown):
    path = tmp_path / "g.yaml"
    path.write_text("axes:\n  dataset: [bbc]\n  model: [bow]\n  mechanism: [{name: "
                    f"diffractor, method: tem, {param}: {value}}}]\n  sensitivity: [none]\n"
                    "  mapping: [none]\n  epsilon: [1]\n  seed: [0]\n")
    with pytest.raises(GridError, match=f"parameter {param} = {value} is {shown}"):
        load_grid(path)
    path.write_text(path.read_text().replace(str(value), "3"))
    assert [c.mechanism_params for c in load_grid(path).cells if not c.is_baseline]
