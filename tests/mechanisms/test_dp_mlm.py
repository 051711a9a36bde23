"""DP-MLM (Meisenbacher et al. 2024) on a small randomly initialised BertForMaskedLM built from
a config (no weights to download: the algorithm is checked, not a model): each word's
replacement distribution is the clipped softmax at T = 2(b₂ − b₁)/ε, ε-LDP between any two
texts, special tokens never drawn, draws faithful and seeded; a grid cell runs it by folder."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from bench.errors import InputError
from bench.mechanisms import MECHANISMS
from bench.mechanisms.dp_prompt import draw_rows
from bench.run.runner import run_grid

WORDS = ("the a of to and in is was for on that with as by at from it film story bank rates "
         "team match prices year new good bad time people economy minister").split()


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory):
    """A 2-layer BERT masked LM with random weights and a word-level vocabulary, saved as a
    Hugging Face folder."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-mlm")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "##s"]
    BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(folder)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=256)
    BertForMaskedLM(cfg).eval().save_pretrained(folder)
    return str(folder)


def _mech(folder, eps=4.0, seed=0, **kw):
    return MECHANISMS.create("dp_mlm", epsilon=eps, rng=seed, model=folder, clip_min=-2.0,
                             clip_max=2.0, **kw)


def test_the_distribution_is_the_clipped_softmax_without_special_tokens(tiny_mlm):
    import torch

    from bench.mechanisms.dp_mlm import load_masked_lm

    m = _mech(tiny_mlm, eps=4.0)
    words = "the bank rates was new".split()
    p = m.window_distributions(words)
    model, tok = load_masked_lm(tiny_mlm)
    enc = tok(" ".join(words), " ".join(["the", tok.mask_token, *words[2:]]),
              return_tensors="pt")
    with torch.no_grad():
        u = model(**enc).logits[0, enc["input_ids"][0].tolist().index(tok.mask_token_id)]
    z = np.exp(np.clip(u.double().numpy(), -2.0, 2.0) / (2 * 4.0 / 4.0))
    z[sorted(set(tok.all_special_ids))] = 0.0
    assert np.allclose(p[1], z / z.sum(), rtol=1e-5, atol=0)  # float32 logits, batched
    assert (p[:, sorted(set(tok.all_special_ids))] == 0).all()


@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_one_word_is_eps_ldp_between_any_two_texts(tiny_mlm, eps):
    m = _mech(tiny_mlm, eps=eps)
    rng = np.random.default_rng(0)
    texts = [list(rng.choice(WORDS, 8)) for _ in range(12)]
    with np.errstate(divide="ignore"):
        logp = np.log(np.stack([m.window_distributions(t)[3] for t in texts]))
    ok = np.isfinite(logp).all(axis=0)                       # special tokens: never drawn
    assert (logp[:, ok].max(axis=0) - logp[:, ok].min(axis=0)).max() <= eps + 1e-9


def test_draws_follow_the_distribution_and_are_seeded(tiny_mlm):
    m = _mech(tiny_mlm, eps=4.0)
    p = m.window_distributions("the film was good".split())[2]
    picks = draw_rows(np.tile(p, (30_000, 1)), np.random.default_rng(2))
    keep = p > 0
    counts = np.bincount(picks, minlength=len(p))
    assert counts[~keep].sum() == 0
    assert stats.chisquare(counts[keep], 30_000 * p[keep]).pvalue > 0.001
    docs = [["the", "film", "was", "good"], ["the", "bank", "rates"]]
    a = _mech(tiny_mlm, seed=5).privatize_documents(docs)
    assert a == _mech(tiny_mlm, seed=5).privatize_documents(docs)
    assert [len(d) for d in a] == [4, 3]                    # word for word
    assert a != _mech(tiny_mlm, seed=6).privatize_documents(docs)


def test_without_a_model_or_bounds_it_says_what_to_state(tiny_mlm, tmp_path):
    with pytest.raises(InputError, match="bring your own model"):
        MECHANISMS.create("dp_mlm", epsilon=1.0).privatize_documents([["a"]])
    with pytest.raises(InputError, match="state clip_min and clip_max"):
        MECHANISMS.create("dp_mlm", epsilon=1.0, model=tiny_mlm).privatize_documents([["a"]])
    with pytest.raises(InputError, match="dp_mlm: no Hugging Face model folder"):
        _mech(str(tmp_path)).privatize_documents([["a"]])
    with pytest.raises(ValueError, match="clip_min must be below"):
        MECHANISMS.create("dp_mlm", epsilon=1.0, clip_min=2, clip_max=1)


def test_a_grid_cell_runs_it_by_folder(tiny_mlm, tmp_path):
    (tmp_path / "g.yaml").write_text(f"""
name: dpmlm
axes:
  dataset: [{{name: bbc, subsample: 40, max_tokens: 30}}]
  model: [bow]
  mechanism: [{{name: dp_mlm, model: "{tiny_mlm}", clip_min: -2.0, clip_max: 2.0}}]
  epsilon: [4]
  seed: [0]
settings:
  vocab_size: 3000
  baseline: false
  measures: [reconstruction, linkage]
""")
    assert run_grid(tmp_path / "g.yaml", results=tmp_path / "r",
                    mlflow=False).count("done") == 1
    m = json.loads(next((tmp_path / "r").glob("cells/*/metrics.json")).read_text())
    assert m["guarantee"]["kind"] == "pure" and m["guarantee"]["epsilon"] == 4.0
    assert set(m["measures"]) == {"linkage"}
    assert "not one" in json.dumps(m["privacy"])            # the informed adversary left out
