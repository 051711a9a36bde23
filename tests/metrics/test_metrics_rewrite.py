"""Rewrite metrics on hand-made pairs (Huang et al. 2024): N_w, ROUGE-1, BLEU, BERTScore."""

from __future__ import annotations

import pytest

from bench.metrics import bertscore, bleu, n_w, rewrite_scores, rouge1

ORIG = [["the", "cat", "sat", "on", "the", "mat"], ["hello", "world"]]


def test_n_w_by_hand():
    assert n_w(ORIG, ORIG) == 1.0
    priv = [["the", "dog", "sat", "on", "a", "mat"], ["hello", "there"]]
    assert n_w(ORIG, priv) == pytest.approx(5 / 8)  # 4 of 6 + 1 of 2, over 8 tokens
    assert n_w([["a", "b"]], [["b", "a"]]) == 0.0  # position-wise, not a bag of words
    assert n_w([["a", "b"]], [["a", "b", "c"]]) == pytest.approx(2 / 3)


def test_n_w_tokenizes_strings():
    assert n_w(["The cat sat."], ["the cat sat ."]) == 1.0


def test_rouge1_by_hand():
    assert rouge1(ORIG, ORIG) == pytest.approx(1.0)
    assert rouge1([["a", "b", "c", "d"]], [["a", "b", "c", "x"]]) == pytest.approx(0.75)
    assert rouge1([["a", "b"]], [["c", "d"]]) == 0.0
    # recall vs precision: 2 of 4 reference words found, 2 of 2 candidate words correct
    assert rouge1(["a b c d"], ["a b"]) == pytest.approx(0.5)
    assert rouge1(["a b c d"], ["a b"], measure="precision") == pytest.approx(1.0)
    with pytest.raises(ValueError):
        rouge1(["a"], ["a"], measure="f2")


def test_bleu_by_hand():
    text = ["the quick brown fox jumps over the lazy dog"]
    assert bleu(text, text) == pytest.approx(100.0)
    assert bleu(text, ["a b c d e f g h i"]) == pytest.approx(0.0)
    assert 0 < bleu(text, ["the quick brown fox jumps over a lazy dog"]) < 100


def test_length_mismatch():
    with pytest.raises(ValueError, match="privatized"):
        n_w(ORIG, ORIG[:1])
    with pytest.raises(ValueError):
        bleu([], [])


def test_bertscore_identical_and_different():
    same = bertscore(ORIG, ORIG)
    assert same == pytest.approx(1.0, abs=1e-4)
    other = bertscore(ORIG, [["stocks", "fell", "sharply", "in", "tokyo", "today"],
                             ["goodbye", "moon"]])
    assert other < same - 0.1


def test_rewrite_scores_keys():
    s = rewrite_scores(ORIG, ORIG, with_bertscore=False)
    assert s == pytest.approx({"n_w": 1.0, "rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0,
                               "bleu": 100.0})


def test_rouge2_and_rouge_l():
    from bench.metrics.rewrite import rouge

    r = rouge([["a", "b", "c", "d"]], [["a", "b", "x", "d"]])
    assert r["rouge1"] == pytest.approx(0.75)
    assert r["rouge2"] == pytest.approx(1 / 3)  # bigrams ab, bc, cd: only ab survives
    assert r["rougeL"] == pytest.approx(0.75)  # LCS a b d
    assert set(rewrite_scores([["a"]], [["a"]], with_bertscore=False)) == {
        "n_w", "rouge1", "rouge2", "rougeL", "bleu"}


def test_bertscore_matches_bert_score_and_caches_the_references(monkeypatch):
    """Our batching over bert-score's encoder and greedy matching gives bert-score's own
    BERTScore F1 (up to float32 rounding of a different padding), and the cached reference
    embeddings give the same value as a cold cache."""
    from bert_score import BERTScorer

    from bench.metrics import rewrite
    from bench.models.transformer import local_model_path

    refs = ["the cat sat on the mat", "hello world", "stocks fell sharply in tokyo today",
            "a b"]
    hyps = ["the dog sat on a mat", "hello there", "stocks rose in tokyo", "a b"]
    scorer = BERTScorer(model_type=str(local_model_path()), num_layers=6, device="cpu")
    _, _, f = scorer.score(hyps, refs)
    monkeypatch.setattr(rewrite, "_REFERENCES", {})
    cold = bertscore(refs, hyps, batch_size=2)
    assert len(rewrite._REFERENCES) == 1
    assert cold == pytest.approx(float(f.mean()), abs=1e-6)
    calls = []
    real = rewrite._embed
    monkeypatch.setattr(rewrite, "_embed", lambda s, *a: calls.append(list(s)) or real(s, *a))
    assert bertscore(refs, hyps, batch_size=2) == cold  # bit-identical from the cache
    assert calls == [hyps]  # only the candidates were encoded again
    assert bertscore(refs, refs, batch_size=2) == pytest.approx(1.0, abs=1e-6)
