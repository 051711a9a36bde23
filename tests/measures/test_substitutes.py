"""S_w and per-word N_w: a deterministic privatizer gives S_w = 1, a uniform one the expected
number of distinct draws."""

from __future__ import annotations

import numpy as np
import pytest

from bench.measures.substitutes import substitutes


class _Fake:
    def __init__(self, n_vocab, uniform, seed=0):
        self.n, self.uniform = n_vocab, uniform
        self.rng = np.random.default_rng(seed)

    def privatize_ids(self, ids):
        if self.uniform:
            return self.rng.integers(0, self.n, len(ids)), None
        return ids.copy(), None


def test_identity_keeps_every_word():
    res = substitutes(_Fake(100, uniform=False), np.arange(10), n_draws=20)
    assert (res["s_w"] == 1).all() and (res["n_w"] == 1.0).all()


def test_uniform_noise_gives_the_expected_number_of_distinct_outputs():
    n, k = 50, 40
    res = substitutes(_Fake(n, uniform=True), np.arange(400) % n, n_draws=k)
    expected = n * (1 - (1 - 1 / n) ** k)  # E[distinct values among k uniform draws]
    assert res["s_w"].mean() == pytest.approx(expected, rel=0.03)
    assert res["n_w"].mean() == pytest.approx(1 / n, abs=0.01)


def test_vector_output_is_refused():
    class _Vec:
        def privatize_ids(self, ids):
            return None, np.zeros((len(ids), 2))

    with pytest.raises(ValueError, match="vectors"):
        substitutes(_Vec(), np.arange(3))
