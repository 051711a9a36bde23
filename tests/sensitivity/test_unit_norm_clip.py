"""``unit_norm_clip`` (Riecker 2023, Eq. 4.3): clipping to radius C, short rows kept."""

from __future__ import annotations

import numpy as np
import pytest

from bench.sensitivity import (
    SENSITIVITY,
)


def test_unit_norm_clip_radius(glove):
    s = SENSITIVITY.create("unit_norm_clip", C=5.0).fit(glove)
    out = s.transform(glove)
    n_in, n_out = np.linalg.norm(glove, axis=1), np.linalg.norm(out, axis=1)
    assert np.all(n_out <= 5.0 + 1e-12)
    short = n_in <= 5.0
    assert short.any() and (~short).any()
    np.testing.assert_array_equal(out[short], glove[short])
    np.testing.assert_allclose(n_out[~short], 5.0, rtol=1e-12)
    assert s.stats["frac_clipped"] == pytest.approx(np.mean(~short))
    assert s.stats["diameter_bound"] == 10.0



def test_on_the_public_glove_vocabulary_the_clipping_variants_move_nothing_more():
    """What thesis_reference rests on to leave two approaches out (docs/findings.md): on the
    50k GloVe 6B 50d vocabulary, every norm exceeds 1, so unit_norm_clip (C = 1) is unit_norm,
    and clip_observed_range, fitted on the vocabulary, leaves it as it is."""
    from bench.embeddings import load_embedding

    vocab = load_embedding("glove-6b-50d", vocab_size=50_000).vectors
    assert np.linalg.norm(vocab, axis=1).min() > 1.0
    clip = SENSITIVITY.create("unit_norm_clip").fit(vocab)
    unit = SENSITIVITY.create("unit_norm").fit(vocab)
    np.testing.assert_allclose(clip.transform(vocab), unit.transform(vocab), rtol=1e-12)
    rng = SENSITIVITY.create("clip_observed_range").fit(vocab)
    np.testing.assert_array_equal(rng.transform(vocab), vocab)
