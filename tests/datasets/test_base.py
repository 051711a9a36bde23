"""load_dataset: configuration errors, the error classes, stratify validation, content hash."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.datasets import (
    DatasetConfigError,
    DatasetError,
    DatasetFileNotFoundError,
    DatasetFormatError,
    load_dataset,
)


def test_config_errors() -> None:
    with pytest.raises(DatasetConfigError, match="did you mean 'seed'"):
        load_dataset("rt", sed=1)
    with pytest.raises(DatasetConfigError, match="split must be 3"):
        load_dataset("rt", split=(0.5, 0.5, 0.5))
    with pytest.raises(DatasetConfigError, match="mia_split"):
        load_dataset("rt", mia_split=(0.6, 0.6, 0.0))
    with pytest.raises(DatasetConfigError, match="max_tokens"):
        load_dataset("rt", max_tokens=0)
    with pytest.raises(DatasetConfigError, match="subsample"):
        load_dataset("rt", subsample=1.5)
    with pytest.raises(DatasetConfigError, match="no group ids"):
        load_dataset("rt", split_by_group=True)
    with pytest.raises(KeyError, match="did you mean 'agnews'"):
        load_dataset("agnew")


def test_errors_share_one_base_class(tmp_path: Path) -> None:
    for exc in (DatasetFileNotFoundError, DatasetFormatError, DatasetConfigError):
        assert issubclass(exc, DatasetError)
    assert issubclass(DatasetFileNotFoundError, FileNotFoundError)
    assert issubclass(DatasetFormatError, ValueError)
    assert np.array_equal(  # a tiny split still stratifies or falls back, deterministically
        load_dataset("rt", subsample=7).splits["test"],
        load_dataset("rt", subsample=7).splits["test"],
    )


@pytest.mark.parametrize("bad", [3, "", ["topic"], "nope"])
def test_bad_stratify_is_a_config_error(bad) -> None:
    with pytest.raises(DatasetConfigError, match="stratify"):
        load_dataset("rt", stratify=bad)


def test_content_hash_depends_on_content() -> None:
    a = load_dataset("rt", subsample=500)
    b = load_dataset("rt", subsample=500, seed=1)
    assert a.content_hash != b.content_hash  # different texts
    assert len(a.content_hash) == 64
