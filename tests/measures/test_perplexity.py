"""``perplexity_smollm2`` (fluency under the local causal LM, bench.lm): the text unchanged
reads exactly as fluently as the original (ratio 1), words in an order no writer uses read
less fluently (a planted signal), and in a grid the known answers land where they must; the
shipped SmolLM2 loads offline from the installed wheel and is cached once converted."""

from __future__ import annotations

import numpy as np
import pytest

from bench.measures.perplexity import perplexity_scores, token_nll
from tests.measures.helpers import measures_by_mechanism

SENTENCES = [
    "the prime minister said on tuesday that the economy grew faster than expected last year",
    "the film is a warm and funny story about a family that learns to live together again",
    "shares in the company fell sharply after it warned that profits would be lower this year",
    "the team won the match in the final minute with a goal from their young striker",
]


def test_scores_from_nlls_anchor_the_unchanged_text_at_one():
    rng = np.random.default_rng(0)
    nll, n = rng.uniform(50, 80, size=30), rng.integers(15, 25, size=30)
    same = perplexity_scores(nll, n, nll, n)
    assert same["ratio"] == 1.0 and same["log_ratio"] == 0.0
    assert same["log_ratio_ci"] == [0.0, 0.0]
    assert same["perplexity"] == same["original_perplexity"]
    worse = perplexity_scores(nll * 1.5, n, nll, n)
    assert worse["ratio"] > 1.0 and worse["log_ratio_ci"][0] > 0.0
    with pytest.raises(ValueError, match="two documents"):
        perplexity_scores(nll[:1], n[:1], nll[:1], n[:1])


def test_the_shipped_model_loads_offline_and_is_cached(lm):
    from bench.lm import DEFAULT_NAME, cache_root, load_causal_lm

    assert lm.name == DEFAULT_NAME and lm.model.config.model_type == "llama"
    assert sum(p.numel() for p in lm.model.parameters()) == 134_515_008
    folders = list(cache_root().glob(DEFAULT_NAME + "-*"))
    assert len(folders) == 1 and (folders[0] / "model.safetensors").is_file()
    assert load_causal_lm() is lm  # once per process


def test_the_model_is_placed_on_the_cells_torch_device(lm, monkeypatch):
    """On the CPU in the pinned environment (this test run), and wherever
    bench.numeric.torch_device says (a GPU with BENCH_NUMERIC=native), PyTorch's meta device
    standing in for a GPU here. (The callers put their inputs on the model's device; a forward
    pass cannot run on the meta device, and no GPU is lent to this project's CI.)"""
    from transformers import AutoModelForCausalLM

    import bench.lm
    import bench.numeric
    from bench.lm import cache_root, load_local_model

    assert lm.model.device.type == "cpu" and bench.numeric.torch_device() == "cpu"
    folder = next(cache_root().glob(lm.name + "-*"))
    monkeypatch.setattr(bench.lm, "_MODELS", {})
    monkeypatch.setattr(bench.numeric, "torch_device", lambda: "meta")
    model, _ = load_local_model(folder, AutoModelForCausalLM, "language model")
    assert model.device.type == "meta"


def test_shuffled_words_read_less_fluently_than_prose(lm):
    rng = np.random.default_rng(0)
    shuffled = [" ".join(rng.permutation(s.split())) for s in SENTENCES]
    nll_o, n_o = token_nll(lm, SENTENCES)
    same = perplexity_scores(*token_nll(lm, SENTENCES), nll_o, n_o)
    assert same["ratio"] == 1.0                    # bit for bit: the same batches
    mixed = perplexity_scores(*token_nll(lm, shuffled), nll_o, n_o)
    assert mixed["log_ratio_ci"][0] > 0.3          # the model knows word order
    assert same["original_perplexity"] < 200       # and English


def test_an_unknown_model_folder_is_refused(tmp_path):
    from bench.errors import InputError
    from bench.lm import load_causal_lm

    with pytest.raises(InputError, match="no Hugging Face model folder"):
        load_causal_lm(tmp_path)


GRID = """
name: fluency
axes:
  dataset: [{name: bbc, subsample: 60, max_tokens: 40}]
  model: [bow]
  mechanism: [identity, no_information]
  epsilon: [10]
  seed: [0]
settings:
  vocab_size: 3000
  metrics: [utility]
  measures: [perplexity_smollm2]
"""


def test_in_a_grid_identity_reads_as_the_original_and_no_information_does_not(
        lm, tmp_path):
    got = measures_by_mechanism(tmp_path, GRID, 3)
    assert "perplexity_smollm2" not in got["none"]  # the baseline's text is the original
    same, nothing = got["identity"]["perplexity_smollm2"], got["no_information"][
        "perplexity_smollm2"]
    assert same["ratio"] == 1.0 and same["model"] == "smollm2-135m-instruct-q4_1"
    assert nothing["log_ratio_ci"][0] > 0.0 and nothing["n_docs"] == same["n_docs"] >= 5
