"""Every registered model: the common interface on tiny inputs, registry errors."""

from __future__ import annotations

import numpy as np
import pytest

from bench.models import (
    INPUT_KINDS,
    MODELS,
    ModelInputError,
    check_model_input,
    input_kind,
)
from bench.registry import UnknownNameError

TINY = {"bow": {}, "majority": {}, "lstm": {"epochs": 1, "hidden_size": 8},
        "transformer": {"epochs": 1, "batch_size": 8, "max_length": 16}}

TEXTS = [["good", "film", "great"], ["bad", "film"], ["great", "acting"], ["awful", "plot"]] * 4
LABELS = np.array([1, 0, 1, 0] * 4)


def test_all_models_have_tiny_params():
    assert set(MODELS.names()) == set(TINY)


@pytest.mark.parametrize("name", MODELS.names(), ids=str)
def test_interface_on_text(name):
    model = MODELS.create(name, seed=0, **TINY[name])
    assert model.accepts <= set(INPUT_KINDS) and "text" in model.accepts
    assert model.fit(TEXTS, LABELS) is model
    proba = model.predict_proba(TEXTS[:5])
    assert proba.shape == (5, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    pred = model.predict(TEXTS[:5])
    assert pred.shape == (5,) and set(pred.tolist()) <= {0, 1}
    np.testing.assert_array_equal(pred, proba.argmax(axis=1))
    assert isinstance(model.params(), dict)


@pytest.mark.parametrize("name", MODELS.names(), ids=str)
def test_vector_input_accepted_or_refused(name):
    X = [np.ones((3, 4)), np.zeros((2, 4))] * 4
    y = np.array([1, 0] * 4)
    model = MODELS.create(name, seed=0, **TINY[name])
    if "vectors" in model.accepts:
        assert check_model_input(name, "vectors") is None
        assert model.fit(X, y).predict(X).shape == (8,)
    else:
        reason = check_model_input(name, "vectors")
        assert reason is not None and "text" in reason
        with pytest.raises(ModelInputError, match="text"):
            model.fit(X, y)


def test_unknown_model_suggests():
    with pytest.raises(UnknownNameError, match="did you mean 'lstm'"):
        MODELS.create("lstn")


def test_unknown_param_names_model():
    with pytest.raises(TypeError, match="model 'bow'"):
        MODELS.create("bow", hidden_size=3)


def test_input_kind():
    assert input_kind([["a"], []]) == "text"
    assert input_kind(["a b"]) == "text"
    assert input_kind([np.zeros((2, 3))]) == "vectors"
    with pytest.raises(ModelInputError):
        input_kind([])
    with pytest.raises(ModelInputError, match="different dimensions"):
        input_kind([np.zeros((2, 3)), np.zeros((2, 4))])
    with pytest.raises(ModelInputError):
        input_kind([1, 2])


def test_predict_before_fit():
    with pytest.raises(RuntimeError, match="not fitted"):
        MODELS.create("bow").predict(TEXTS)


def test_label_count_mismatch():
    with pytest.raises(ModelInputError, match="labels"):
        MODELS.create("bow").fit(TEXTS, LABELS[:3])


def test_n_classes_adds_columns():
    proba = MODELS.create("bow", n_classes=4).fit(TEXTS, LABELS).predict_proba(TEXTS)
    assert proba.shape == (len(TEXTS), 4)
    assert np.all(proba[:, 2:] == 0)


def test_majority_predicts_prior():
    y = np.array([2, 2, 1, 2])
    m = MODELS.create("majority").fit(TEXTS[:4], y)
    np.testing.assert_allclose(m.predict_proba(TEXTS[:2]), [[0, 0.25, 0.75]] * 2)
    assert m.predict(TEXTS[:1]).tolist() == [2]
