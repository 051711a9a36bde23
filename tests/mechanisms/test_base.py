"""Shared samplers of bench.mechanisms.base: two-level categorical sampling, unique-word tiles."""

import numpy as np
import pytest

from bench.mechanisms.base import sample_categorical, unique_word_tiles

from ._stats import P_MIN, chi2_pvalue


@pytest.mark.parametrize("m, block", [(50, 8), (37, 8), (7, 16), (1000, 256)])
def test_sample_categorical_matches_each_row(m, block):
    rng = np.random.default_rng(0)
    w = rng.random((3, m)).astype(np.float32) ** 4  # uneven weights
    w[1, : m // 2] = 0.0  # whole zero blocks and a zero prefix
    w[2] = 0.0
    w[2, m - 1] = 1.0  # all mass on the last (tail-block) entry
    rows = np.repeat([0, 1, 2], 30_000)
    rng.shuffle(rows)
    out = sample_categorical(w, rows, rng, block=block)
    assert out.min() >= 0 and out.max() < m
    assert np.all(w[rows, out] > 0)  # never an entry of weight 0
    for r in range(2):
        assert chi2_pvalue(out[rows == r], w[r].astype(np.float64)) > P_MIN
    assert np.all(out[rows == 2] == m - 1)


def test_sample_categorical_detects_a_wrong_distribution():
    rng = np.random.default_rng(1)
    w = np.linspace(1, 2, 40, dtype=np.float32)[None, :]
    out = sample_categorical(w, np.zeros(40_000, dtype=np.int64), rng, block=8)
    assert chi2_pvalue(out, np.ones(40)) < P_MIN  # the uniform is rejected


def test_sample_categorical_chunks_many_draws():
    rng = np.random.default_rng(2)
    w = np.ones((1, 300), dtype=np.float32)
    out = sample_categorical(w, np.zeros(20_000, dtype=np.int64), rng, block=64)  # > DRAW_CHUNK
    assert chi2_pvalue(out, np.ones(300)) > P_MIN


def test_sample_categorical_refuses_a_zero_row():
    with pytest.raises(ValueError, match="sums to 0"):
        sample_categorical(np.zeros((1, 5), np.float32), np.zeros(3, np.int64),
                           np.random.default_rng(0))


def test_unique_word_tiles_cover_every_occurrence_once():
    ids = np.array([5, 3, 5, 9, 3, 3, 7, 1, 9])
    seen = np.zeros(len(ids), dtype=int)
    for words, positions, rows in unique_word_tiles(ids, tile=2):
        assert len(words) <= 2
        np.testing.assert_array_equal(words[rows], ids[positions])
        seen[positions] += 1
    assert np.all(seen == 1)
