"""The reference classifier's utility: high where the label is written in the text, at chance
where the text carries nothing, and TEM's protocol (original test text) beside it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from bench.measures import measure
from bench.measures.base import MeasureInput

N, K = 300, 3
WORDS = [f"w{i}" for i in range(200)]


def _ctx(signal: bool, seed: int = 0) -> MeasureInput:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=N)
    docs = [list(rng.choice(WORDS, size=30)) + [f"label{y[i]}"] for i in range(N)]
    corpus = docs if signal else [list(rng.choice(WORDS, size=31)) for _ in range(N)]
    idx = rng.permutation(N)
    splits = {"train": idx[:180], "dev": idx[180:240], "test": idx[240:]}
    task = SimpleNamespace(name="topic", kind="multiclass", classes=list(range(K)), labels=y)
    ds = SimpleNamespace(utility_task=task, splits=splits)
    cell = SimpleNamespace(seed=seed, is_baseline=False, output="text")
    return MeasureInput(cell, ds, docs, corpus)


def test_planted_signal_is_read():
    rec = measure("reference_utility").compute(_ctx(signal=True))
    assert rec["macro_f1"] > 0.95 and not rec["chance_level"]
    assert rec["original_test_macro_f1"] == rec["macro_f1"]  # the corpus is the original
    assert rec["penalty"] in ("l1", "l2") and rec["C"] > 0 and rec["n"] == 60


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_noise_falls_to_chance(seed):
    rec = measure("reference_utility").compute(_ctx(signal=False, seed=seed))
    assert rec["chance_level"] and rec["macro_f1"] <= rec["chance_threshold"]
    # trained on noise, it reads nothing in the original test text either
    assert rec["original_test_macro_f1"] < 0.6


def test_applies_to_text_cells_only():
    m = measure("reference_utility")
    assert m.skip(SimpleNamespace(is_baseline=True, output="text")) is None
    assert m.skip(SimpleNamespace(is_baseline=False, output="text")) is None
    assert "vectors" in m.skip(SimpleNamespace(is_baseline=False, output="vectors"))
