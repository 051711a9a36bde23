"""Linkage: planted similarity finds every original; no information falls to chance."""

from __future__ import annotations

import numpy as np
import pytest

from bench.measures.linkage import linkage_scores, tfidf_similarity


def test_a_planted_diagonal_finds_every_original():
    sim = np.eye(30) + 0.01 * np.random.default_rng(0).random((30, 30))
    rec = linkage_scores(sim)
    assert rec["top1"] == 1.0 and rec["mrr"] == 1.0


def test_constant_similarity_is_exactly_chance():
    n = 25
    rec = linkage_scores(np.zeros((n, n)))
    assert rec["top1"] == pytest.approx(1 / n)
    assert rec["mrr"] == pytest.approx(rec["chance_mrr"])
    assert rec["chance_mrr"] == pytest.approx(sum(1 / k for k in range(1, n + 1)) / n)


def test_random_similarity_is_near_chance():
    n = 400
    rec = linkage_scores(np.random.default_rng(1).random((n, n)), seed=0)
    assert rec["top1_ci"][0] <= 1 / n <= rec["top1_ci"][1] + 0.01
    assert abs(rec["mrr"] - rec["chance_mrr"]) < 0.02


def test_tfidf_links_identical_text_and_not_unrelated_text():
    rng = np.random.default_rng(2)
    words = [f"w{i}" for i in range(500)]
    docs = [" ".join(rng.choice(words, 40)) for _ in range(60)]
    assert linkage_scores(tfidf_similarity(docs, docs))["top1"] == 1.0
    noise = [" ".join(rng.choice(words, 40)) for _ in range(60)]
    rec = linkage_scores(tfidf_similarity(docs, noise))
    assert rec["top1"] < 0.1


def test_a_non_square_matrix_is_refused():
    with pytest.raises(ValueError, match=r"\(n, n\)"):
        linkage_scores(np.zeros((3, 4)))


def test_minilm_links_paraphrase_free_copies_and_is_order_independent():
    from bench.measures.linkage import minilm_embed

    texts = ["the central bank raised interest rates again", "the team won the cup final",
             "new phone models were shown at the fair", "heavy rain flooded the town"]
    emb = minilm_embed(texts)
    assert emb.shape == (4, 384)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0)
    rec = linkage_scores(emb @ emb.T)
    assert rec["top1"] == 1.0
    again = minilm_embed(texts[::-1])[::-1]
    assert np.array_equal(emb, again)  # batches in a fixed order: bit-identical
