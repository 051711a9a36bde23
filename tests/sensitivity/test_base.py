"""Sensitivity machinery and cross-approach checks (Riecker 2023, Sec. 4.5, Table 5.2)."""

from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from bench.registry import UnknownNameError
from bench.sensitivity import (
    SENSITIVITY,
    NotFittedError,
    gaussian_width_dim,
    min_pairwise_distance,
)
from bench.sensitivity.base import _brute_force_min_distance

from ._helpers import ALL, ESTIMATED, PROVEN_LIPSCHITZ, _pairs, _ratios

# ------------------------------------------------------------------ registry and construction


def test_all_seven_registered():
    assert ALL == sorted(
        ["none", "unit_norm", "unit_norm_clip", "minmax", "observed_range",
         "clip_observed_range", "jl"]
    )


def test_unknown_name_did_you_mean():
    with pytest.raises(UnknownNameError, match="did you mean 'unit_norm'"):
        SENSITIVITY.create("unit_nrom")
    with pytest.raises(ValueError):  # UnknownNameError is a ValueError too
        SENSITIVITY.create("nope")


@pytest.mark.parametrize(
    "name,params,match",
    [
        ("unit_norm", {"C": 1.0}, "unknown parameter"),
        ("jl", {"betta": 0.5}, "unknown parameter.*betta.*accepted"),
        ("none", {"fit_on": "test"}, "fit_on"),
        ("unit_norm_clip", {"C": 0}, "C must be"),
        ("unit_norm_clip", {"C": -1.0}, "C must be"),
        ("unit_norm_clip", {"C": math.inf}, "C must be"),
        ("unit_norm_clip", {"C": "1"}, "C must be"),
        ("unit_norm_clip", {"C": True}, "C must be"),
        ("jl", {"beta": 0.0}, "beta"),
        ("jl", {"beta": 1.0}, "beta"),
        ("jl", {"delta": 0.0}, "delta"),
        ("jl", {"delta": 1.5}, "delta"),
        ("jl", {"m": 0}, "m must be"),
        ("jl", {"m": 2.5}, "m must be"),
        ("jl", {"seed": -1}, "seed"),
        ("jl", {"seed": 1.0}, "seed"),
        ("jl", {"normalize": "l1"}, "normalize"),
    ],
)
def test_invalid_params_raise(name, params, match):
    with pytest.raises(ValueError, match=match):
        SENSITIVITY.create(name, **params)


def test_not_fitted_raises():
    s = SENSITIVITY.create("unit_norm")
    assert not s.fitted
    with pytest.raises(NotFittedError):
        _ = s.bound
    with pytest.raises(NotFittedError):
        s.transform(np.ones((2, 3)))


def test_fit_input_validation(glove):
    with pytest.raises(ValueError, match="needs fit_vectors"):
        SENSITIVITY.create("minmax", fit_on="train").fit(glove)
    with pytest.raises(ValueError, match="fit_on='vocab'"):
        SENSITIVITY.create("minmax").fit(glove, glove[:10])
    with pytest.raises(ValueError, match="dimension"):
        SENSITIVITY.create("minmax", fit_on="train").fit(glove, glove[:10, :5])
    bad = glove[:10].copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SENSITIVITY.create("minmax").fit(bad)
    with pytest.raises(ValueError, match="2-D"):
        SENSITIVITY.create("minmax").fit(glove[0])


@pytest.mark.parametrize("name", ALL, ids=str)
def test_transform_shapes_and_validation(name, fitted, glove):
    s = fitted[name]
    out = s.transform(glove[:7])
    assert out.shape == (7, s.out_dim) and out.dtype == np.float64
    one = s.transform(glove[3])
    np.testing.assert_allclose(one, out[3], rtol=0, atol=1e-12)
    unk = glove.mean(axis=0)  # the <unk> row
    assert np.all(np.isfinite(s.transform(unk)))
    with pytest.raises(ValueError, match="shape"):
        s.transform(glove[:3, :10])
    bad = glove[:3].copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="non-finite"):
        s.transform(bad)


@pytest.mark.parametrize("name", ALL, ids=str)
def test_describe_is_json(name, fitted):
    d = fitted[name].describe()
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["name"] == name
    assert set(back) >= {"name", "params", "bound", "proven", "reason", "delta", "stats"}
    assert back["proven"] is fitted[name].proven


# ------------------------------------------------------------------ bounds and labels


def test_labels(fitted):
    expect = {
        "none": (True, False),
        "unit_norm": (False, False),
        "unit_norm_clip": (True, True),
        "minmax": (False, False),
        "observed_range": (False, False),
        "clip_observed_range": (True, True),
        "jl": (True, False),
    }
    for name, (proven, lip) in expect.items():
        s = fitted[name]
        assert s.proven is proven, name
        assert s.lipschitz is (lip or name == "none"), name
        assert (s.reason != "") is (not proven or name == "clip_observed_range"), name
    assert fitted["none"].bound == math.inf
    assert fitted["unit_norm_clip"].bound == 1.0
    assert fitted["clip_observed_range"].bound == 1.0
    assert fitted["jl"].bound == pytest.approx(1.9)
    assert fitted["jl"].delta == 1e-6
    assert all(fitted[n].delta == 0.0 for n in ALL if n != "jl")


def test_estimated_bound_formulas(fitted, glove):
    md = float(pdist(glove).min())
    d = glove.shape[1]
    vmin, vmax = glove.min(), glove.max()
    assert fitted["unit_norm"].stats["min_distance"] == pytest.approx(md, rel=1e-12)
    assert fitted["unit_norm"].bound == pytest.approx(2 / md, rel=1e-12)  # Eq. 4.2
    assert fitted["minmax"].bound == pytest.approx(2 * math.sqrt(d) / md, rel=1e-12)  # Eq. 4.6
    assert fitted["observed_range"].bound == pytest.approx(
        math.sqrt(d) * (vmax - vmin) / md, rel=1e-12
    )  # Sec. 4.5.3
    assert fitted["observed_range"].stats["v_min"] == vmin
    assert fitted["clip_observed_range"].stats["v_max"] == vmax


def test_thesis_table_5_2_numbers():
    # Table 5.2 / Sec. 4.5: min distance 0.7890, d = 300, range [-3.0639, 2.6668]
    md = 0.7890
    assert 2 / md == pytest.approx(2.5349, abs=1e-4)
    assert 2 * math.sqrt(300) / md == pytest.approx(43.9050, abs=1e-3)
    assert math.sqrt(300) * (2.6668 + 3.0639) / md == pytest.approx(125.8031, abs=2e-3)


@pytest.mark.parametrize("name", ESTIMATED, ids=str)
def test_estimated_bounds_hold_on_fitted_pairs(name, fitted, glove):
    s = fitted[name]
    a, b = _pairs(glove, 30_000, seed=1)
    i, j = s.stats["min_pair"]  # the pair that attains the min distance
    a, b = np.vstack([a, glove[i]]), np.vstack([b, glove[j]])
    r = _ratios(s.transform, a, b)
    assert r.max() <= s.bound
    assert not s.lipschitz


@pytest.mark.parametrize("name", PROVEN_LIPSCHITZ + ["unit_norm"], ids=str)
def test_one_lipschitz_where_claimed(name, fitted):
    s = fitted[name]
    rng = np.random.default_rng(2)
    # random pairs at several scales: inside, around and far outside the fitted range
    ratios = []
    for scale in (0.05, 0.5, 3.0, 30.0):
        a = rng.normal(scale=scale, size=(5_000, 50))
        b = a + rng.normal(scale=scale / 3, size=a.shape)
        ratios.append(_ratios(s.transform, a, b))
    worst = np.concatenate(ratios).max()
    if s.lipschitz:
        assert worst <= 1.0 + 1e-12
    else:  # control: x/‖x‖ expands distances between short vectors
        assert worst > 1.0


def test_transform_outputs(fitted, glove):
    x = np.vstack([glove[:50], np.zeros(50), np.full(50, 0.3)])
    u = fitted["unit_norm"].transform(x)
    np.testing.assert_allclose(np.linalg.norm(u[:50], axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(u[50], 0.0)  # zero vector stays 0
    m = fitted["minmax"].transform(x)
    np.testing.assert_array_equal(m[:50].min(axis=1), -1.0)
    np.testing.assert_array_equal(m[:50].max(axis=1), 1.0)
    np.testing.assert_array_equal(m[50:], 0.0)  # constant rows -> midpoint
    o = fitted["observed_range"]
    vmin, vmax = o.stats["v_min"], o.stats["v_max"]
    h = o.transform(x)
    np.testing.assert_allclose(h[:50].min(axis=1), vmin, rtol=1e-12)
    np.testing.assert_allclose(h[:50].max(axis=1), vmax, rtol=1e-12)
    np.testing.assert_allclose(h[50:], (vmin + vmax) / 2)
    c = fitted["clip_observed_range"]
    np.testing.assert_array_equal(c.transform(glove), glove)  # identity on the fitted vectors
    far = c.transform(np.full((1, 50), 100.0))
    np.testing.assert_array_equal(far, vmax)
    np.testing.assert_array_equal(fitted["none"].transform(glove), glove)


def test_fit_on_train_is_data_dependent(glove):
    train = np.vstack([glove[100:400], glove[100:200]])  # repeated tokens
    for name in ALL:
        s = SENSITIVITY.create(name, fit_on="train").fit(glove, train)
        if name in ("none", "unit_norm_clip"):  # nothing estimated
            assert s.proven, name
        else:
            assert not s.proven, name
            assert "private training data" in s.reason, name
    s = SENSITIVITY.create("observed_range", fit_on="train").fit(glove, train)
    assert s.stats["v_min"] == glove[100:400].min()
    assert s.stats["n_points"] == 300
    assert s.stats["min_distance"] == pytest.approx(pdist(glove[100:400]).min(), rel=1e-12)
    jl = SENSITIVITY.create("jl", fit_on="train").fit(glove, train)
    assert jl.stats["n_points"] == 300
    assert jl.out_dim == gaussian_width_dim(300)


# ------------------------------------------------------------------ exact minimum distance


@pytest.mark.parametrize("n,d,scale,offset", [(300, 5, 1.0, 0.0), (400, 2, 1.0, 0.0),
                                              (200, 50, 1.0, 0.0), (300, 5, 0.01, 1e3),
                                              # below float32's resolution at that norm: the
                                              # screening keeps every pair, float64 decides
                                              (300, 5, 1e-6, 1e3),
                                              # outside float32's range: screened in float64
                                              (100, 3, 1e20, 0.0), (100, 3, 1e-20, 0.0)])
@pytest.mark.parametrize("blocks", [(37, 53), (512, 8192), (1, 1)])
def test_min_distance_equals_brute_force(n, d, scale, offset, blocks):
    rng = np.random.default_rng(n + d)
    x = offset + scale * rng.normal(size=(n, d))
    r = min_pairwise_distance(x, row_block=blocks[0], col_block=blocks[1])
    ref = _brute_force_min_distance(x)
    assert r["min_distance"] == ref
    i, j = r["pair"]
    assert i < j and np.linalg.norm(x[i] - x[j]) == pytest.approx(ref, rel=1e-14)


def test_min_distance_ties_and_duplicates():
    grid = np.array([[a, b] for a in range(12) for b in range(12)], dtype=float)
    r = min_pairwise_distance(grid, row_block=16, col_block=16)
    assert r["min_distance"] == 1.0 and r["n_candidates"] >= 264  # every lattice edge ties
    dup = np.vstack([grid, grid[5], grid[7]])
    r = min_pairwise_distance(dup)
    assert r["n_duplicate_rows"] == 2 and r["n_points"] == 144 and r["min_distance"] == 1.0
    with pytest.raises(ValueError, match="two distinct"):
        min_pairwise_distance(np.ones((5, 3)))


def test_duplicates_in_fit_are_one_point(glove, caplog):
    x = np.vstack([glove[:200], glove[10]])
    with caplog.at_level(logging.WARNING, logger="bench.sensitivity"):
        s = SENSITIVITY.create("unit_norm").fit(x)
    assert s.stats["n_duplicate_rows"] == 1
    assert math.isfinite(s.bound)
    assert s.stats["min_distance"] == pytest.approx(pdist(glove[:200]).min(), rel=1e-12)
    assert "duplicate" in caplog.text

