"""The known-answer mechanisms: exact output distributions, independence of the input, ε ignored,
the privatizer's pass-through for identity, one cell per dataset × model × seed in a grid, and
the results reader's rule for their ε."""

import json
import math

import numpy as np
import pytest

from bench.embeddings import Embedding
from bench.grid import load_grid
from bench.mechanisms import MECHANISMS
from bench.mechanisms.known import KNOWN_EPSILON
from bench.privatize import Privatizer
from bench.results.record import validate

from ._stats import P_MIN, N, chi2_pvalue


def test_no_information_is_uniform_whatever_the_input(space):
    m = MECHANISMS.create("no_information", epsilon=1.0, rng=0).fit(space)
    n = space.shape[0]
    a = m.sample(np.zeros(N, dtype=np.int64))
    b = m.sample(np.full(N, 17, dtype=np.int64))
    exact = m.distribution(np.array([0, 17]))
    np.testing.assert_array_equal(exact, np.full((2, n), 1.0 / n))
    assert chi2_pvalue(a, exact[0]) > P_MIN and chi2_pvalue(b, exact[1]) > P_MIN
    # a mechanism that kept its input would fail: all mass on word 0
    assert chi2_pvalue(np.zeros(N, dtype=np.int64), exact[0]) < P_MIN
    # independent per occurrence: consecutive draws uncorrelated
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 0.05
    ch = m.channel(np.array([0, 5]))
    np.testing.assert_allclose(ch.likelihood(np.array([0, 3, 199])), 1.0 / n)


def test_constant_and_identity_outputs(space):
    c = MECHANISMS.create("constant", epsilon=5.0, rng=0).fit(space)
    assert np.array_equal(c.sample(np.array([4, 9, 9])), [0, 0, 0])
    np.testing.assert_array_equal(c.channel(np.array([4, 9])).likelihood(np.array([0, 1])),
                                  [[1.0, 1.0], [0.0, 0.0]])
    i = MECHANISMS.create("identity", epsilon=5.0, rng=0).fit(space)
    assert np.array_equal(i.sample(np.array([4, 9, 9])), [4, 9, 9])
    np.testing.assert_array_equal(i.channel(np.array([4, 9])).likelihood(np.array([4, 9, 0])),
                                  [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])


@pytest.mark.parametrize("name", ["identity", "no_information", "constant"])
def test_epsilon_is_ignored_and_fixed(name):
    for eps in (0, 0.5, 10.0, math.inf):
        assert MECHANISMS.create(name, epsilon=eps).epsilon == KNOWN_EPSILON[name]
    for bad in (-1.0, math.nan, "1", True):
        with pytest.raises(ValueError, match="epsilon"):
            MECHANISMS.create(name, epsilon=bad)


def test_guarantees():
    assert MECHANISMS.create("identity").guarantee().kind == "none"
    for name in ("no_information", "constant"):
        g = MECHANISMS.create(name).guarantee()
        assert (g.kind, g.epsilon, g.delta) == ("pure", 0.0, 0.0)


def _emb() -> Embedding:
    rng = np.random.default_rng(0)
    words = ["the", "a", "cat", "dog", "sat", "mat"]
    return Embedding("toy", words, rng.normal(size=(len(words), 4)))


def test_identity_passes_every_token_through_out_of_vocabulary_too():
    p = Privatizer.build(embedding=_emb(), mechanism="identity", epsilon=1.0, seed=0)
    docs = [["the", "cat", "zyzzyva"], ["dog", "Sat"]]
    out = p.privatize(docs)
    assert out.tokens == docs and out.tokens is not docs
    assert out.n_w == 1.0 and out.n_oov == 2 and out.oov_leaks
    nothing = Privatizer.build(embedding=_emb(), mechanism="no_information", epsilon=1.0, seed=0)
    got = nothing.privatize([["the"] * 3000])
    assert set(got.tokens[0]) == set(_emb().words)  # every public word, whatever the input
    assert not got.oov_leaks


def test_grid_gives_one_known_answer_cell_per_dataset_model_seed(tmp_path):
    grid = tmp_path / "g.yaml"
    grid.write_text("""
axes:
  dataset: [{name: bbc, subsample: 60}]
  model: [bow]
  mechanism: [tem, identity, no_information]
  sensitivity: [none, unit_norm]
  mapping: [none]
  epsilon: [1, 10]
  seed: [0, 1]
""")
    cells = load_grid(grid).cells
    known = [c for c in cells if c.mechanism in ("identity", "no_information")]
    assert sorted((c.mechanism, c.epsilon, c.sensitivity, c.mapping, c.seed) for c in known) == [
        ("identity", math.inf, "none", "none", 0), ("identity", math.inf, "none", "none", 1),
        ("no_information", 0.0, "none", "none", 0), ("no_information", 0.0, "none", "none", 1)]
    assert sum(c.mechanism == "tem" for c in cells) == 8  # 2 sensitivities × 2 ε × 2 seeds


def _spec(mech: str, eps) -> dict:
    return {"seed": 0, "epsilon": eps, "dataset": {"name": "bbc"}, "model": {"name": "bow"},
            "mechanism": {"name": mech}, "sensitivity": {"name": "none"},
            "mapping": {"name": "none"}}


@pytest.mark.parametrize(("mech", "eps", "ok"), [
    ("identity", "inf", True), ("identity", 1.0, False), ("identity", 0.0, False),
    ("no_information", 0.0, True), ("no_information", 0, True), ("no_information", 1.0, False),
    ("no_information", "inf", False), ("constant", 0.0, True), ("tem", 0.0, False),
    ("tem", "inf", False), ("tem", 1.0, True)])
def test_results_reader_accepts_only_a_known_answers_own_epsilon(mech, eps, ok):
    why = validate(_spec(mech, eps), {})
    assert (why is None or "epsilon" not in why) == ok, why


def test_stored_specs_of_known_answers_pass_only_as_the_expander_writes_them(tmp_path):
    from bench.grid.stored import spec_refusal

    grid = tmp_path / "g.yaml"
    grid.write_text("""
axes:
  dataset: [{name: bbc, subsample: 60}]
  model: [bow]
  mechanism: [identity, no_information]
  epsilon: [1]
  seed: [0]
""")
    cells = {c.mechanism: c for c in load_grid(grid).cells}
    for name in ("identity", "no_information"):
        spec = json.loads(json.dumps(cells[name].spec(), default=str))
        assert spec_refusal(spec) is None, name
        assert "epsilon" in spec_refusal({**spec, "epsilon": 1.0})
        other = {**spec, "sensitivity": {**spec["sensitivity"], "name": "unit_norm"}}
        assert "sensitivity" in spec_refusal(other)
