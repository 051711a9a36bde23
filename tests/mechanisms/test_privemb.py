"""PrivEmb (``privemb``): needs the ``jl`` approach, calibrates mvl noise to its bound."""

import numpy as np
import pytest
from scipy import stats

from bench.mechanisms import MECHANISMS

from ._stats import P_MIN


def test_privemb_requires_jl_and_calibrates():
    from bench.embeddings import Embedding
    from bench.privatize import Privatizer

    rng = np.random.default_rng(15)
    emb = Embedding("toy", [f"w{i}" for i in range(400)], rng.normal(size=(400, 8)) * 2)
    with pytest.raises(ValueError, match="jl"):
        Privatizer.build(mechanism="privemb", epsilon=1.0, embedding=emb)
    with pytest.raises(ValueError, match="bind_sensitivity"):
        MECHANISMS.create("privemb", epsilon=1.0).fit(emb.vectors)
    p = Privatizer.build(mechanism="privemb", epsilon=2.0, sensitivity="jl",
                         sensitivity_params={"normalize": "clip"}, embedding=emb, seed=1)
    m = p.mechanism
    bound = p.sensitivity.bound
    assert m.calibrate and m.scale == pytest.approx(bound / 2.0)
    r = np.linalg.norm(m.noise(20_000), axis=1)
    dim = m.space.shape[1]
    assert stats.kstest(r, stats.gamma(a=dim, scale=bound / 2.0).cdf).pvalue > P_MIN
    assert stats.kstest(r, stats.gamma(a=dim, scale=1 / 2.0).cdf).pvalue < P_MIN
    g = p.guarantee()
    assert g.kind == "metric" and g.multiplier == 1.0 and g.delta == p.sensitivity.delta

