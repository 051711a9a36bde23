"""``jl`` (Riecker 2023, Sec. 4.5.5): dimension m, distortion, seeding, union bound."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from bench.sensitivity import (
    SENSITIVITY,
    gaussian_width_dim,
    jl_union_failure_probability,
)

from ._helpers import _pairs, _ratios


def test_gaussian_width_dim_matches_thesis():
    assert gaussian_width_dim(75_000, 1e-6, 0.9) == 89  # Sec. 4.5.5
    assert gaussian_width_dim(75_378, 1e-6, 0.9) == 89  # AG News |X|
    assert gaussian_width_dim(72_600, 1e-6, 0.9) == 89  # Trustpilot |X|
    assert gaussian_width_dim(50_000, 1e-6, 0.9) == 87
    m = gaussian_width_dim(2_000, 1e-3, 0.5)
    assert m == math.ceil((math.sqrt(2 * math.log(2000)) + math.sqrt(math.log(1e3))) ** 2 / 0.25)
    for bad in [(0, 1e-6, 0.9), (10, 0.0, 0.9), (10, 1e-6, 1.0), (2.5, 1e-6, 0.9)]:
        with pytest.raises(ValueError):
            gaussian_width_dim(*bad)


def test_jl_distortion_on_glove(glove):
    s = SENSITIVITY.create("jl", seed=3).fit(glove)
    beta = 0.9
    assert s.out_dim == gaussian_width_dim(2_000) == s.stats["m"]
    unit = glove / np.linalg.norm(glove, axis=1, keepdims=True)
    a, b = _pairs(unit, 50_000, seed=4)
    proj = lambda v: v @ s.matrix  # noqa: E731 - the projection alone, on unit vectors
    r = _ratios(proj, a, b)
    assert r.min() >= 1 - beta and r.max() <= 1 + beta
    # N(0, 1/m) entries: E‖vΦ‖² = ‖v‖² (fails for a wrongly scaled matrix)
    assert np.mean(r**2) == pytest.approx(1.0, abs=0.03)
    # and the full transform normalises first: f(x) = (x/‖x‖) Φ
    np.testing.assert_allclose(s.transform(glove[:20]), unit[:20] @ s.matrix, rtol=1e-12)
    assert s.stats["union_failure_probability_two_sided"] <= 1e-6


def test_jl_seeded_reproducibility(glove):
    a = SENSITIVITY.create("jl", seed=11).fit(glove)
    b = SENSITIVITY.create("jl", seed=11).fit(glove)
    c = SENSITIVITY.create("jl", seed=12).fit(glove)
    assert a.stats["matrix_sha256"] == b.stats["matrix_sha256"] != c.stats["matrix_sha256"]
    np.testing.assert_array_equal(a.transform(glove[:5]), b.transform(glove[:5]))
    assert not np.allclose(a.transform(glove[:5]), c.transform(glove[:5]))
    expect = np.random.default_rng(11).normal(0, 1 / math.sqrt(a.out_dim), size=(50, a.out_dim))
    np.testing.assert_array_equal(a.matrix, expect)
    with pytest.raises(ValueError):
        a.matrix[0, 0] = 1.0  # read-only view


def test_jl_m_override_and_dimension_warning(glove, caplog):
    with caplog.at_level(logging.WARNING, logger="bench.sensitivity"):
        s = SENSITIVITY.create("jl", m=60).fit(glove)
    assert s.out_dim == 60 and s.stats["increases_dimension"]
    assert "increases the dimension" in caplog.text
    small = SENSITIVITY.create("jl", m=20).fit(glove)
    assert not small.stats["increases_dimension"] and small.out_dim == 20
    assert small.stats["m_required"] == gaussian_width_dim(2_000)
    # too small m: the exact union bound exceeds delta, so the bound is not proven
    assert small.stats["union_failure_probability"] > 1e-6
    assert not small.proven and "union bound" in small.reason


def test_jl_union_bound():
    u = jl_union_failure_probability(75_000, 89, 0.9)
    assert 0 < u["expansion"] <= u["two_sided"] < 1e-6
    assert jl_union_failure_probability(75_000, 5, 0.1)["expansion"] == 1.0


def test_jl_short_vectors(glove):
    x = np.vstack([glove[:300], 0.2 * glove[300:320]])  # some norms < 1
    s = SENSITIVITY.create("jl").fit(x)  # x/‖x‖ is not 1-Lipschitz there
    assert not s.proven and s.bound > 1.9 and "normalize='clip'" in s.reason
    c = SENSITIVITY.create("jl", normalize="clip").fit(x)
    assert c.proven and c.bound == pytest.approx(1.9)
    for t in (s, c):
        a, b = _pairs(x, 20_000, seed=5)
        assert _ratios(t.transform, a, b).max() <= t.bound

