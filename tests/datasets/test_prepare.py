"""`bench data prepare`: tokenized Parquet splits, cache keyed by content and config."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench.datasets import (
    DatasetConfigError,
    cache_key,
    cli_prepare,
    load_dataset,
    prepare,
    read_prepared,
)


def test_prepare_writes_splits_and_reuses_cache(tmp_path: Path) -> None:
    folder = cli_prepare("rt", tmp_path, subsample=400, max_tokens=8)
    ds = load_dataset("rt", subsample=400, max_tokens=8)
    assert folder.name == f"rt-{cache_key(ds)[:16]}"
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["content_hash"] == ds.content_hash
    assert meta["splits"] == {k: len(v) for k, v in ds.splits.items()}
    tables = read_prepared(folder)
    assert set(tables) == set(ds.splits)
    train = tables["train"]
    assert train.column("index").to_pylist() == ds.splits["train"].tolist()
    assert train.column("label_sentiment").to_pylist() == ds.split_labels("train").tolist()
    toks = train.column("tokens").to_pylist()
    assert max(map(len, toks)) == 8
    n_tok = np.array(train.column("n_tokens").to_pylist())
    assert np.array_equal(np.minimum(n_tok, 8), [len(t) for t in toks])
    assert meta["n_truncated"] > 0
    assert all(t == t.lower() for row in toks for t in row)

    mtime = (folder / "meta.json").stat().st_mtime_ns
    again = cli_prepare("rt", tmp_path, subsample=400, max_tokens=8)
    assert again == folder and (folder / "meta.json").stat().st_mtime_ns == mtime
    other = cli_prepare("rt", tmp_path, subsample=400, max_tokens=9)
    assert other != folder
    assert cli_prepare("rt", tmp_path, subsample=400, max_tokens=8, seed=1) not in (folder, other)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


def test_prepare_multilabel_and_groups(tmp_path: Path) -> None:
    folder = prepare("conventions", tmp_path, subsample=300)
    t = read_prepared(folder)["test"]
    assert {"group", "label_party", "label_gender"} <= set(t.column_names)
    ds = load_dataset("bbc", subsample=60)
    bbc = read_prepared(prepare(ds, tmp_path))["dev"]
    ent = np.array(bbc.column("label_entities").to_pylist())
    assert ent.shape == (len(ds.splits["dev"]), 5)
    assert np.array_equal(ent, ds.tasks["entities"].labels[ds.splits["dev"]])
    assert max(map(len, bbc.column("tokens").to_pylist())) <= 500


def test_content_change_changes_key(tmp_path: Path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("t,y\n" + "".join(f"doc {i},{i % 2}\n" for i in range(20)))
    a = cli_prepare("csv", tmp_path / "c", path=f, text="t", label="y")
    f.write_text("t,y\n" + "".join(f"doc {i}!,{i % 2}\n" for i in range(20)))
    b = cli_prepare("csv", tmp_path / "c", path=f, text="t", label="y")
    assert a != b and a.exists() and b.exists()


def test_failed_prepare_leaves_nothing(tmp_path: Path, monkeypatch) -> None:
    import bench.datasets.cache as prep

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(prep, "_write", boom)
    with pytest.raises(RuntimeError):
        prepare("rt", tmp_path, subsample=50)
    assert list(tmp_path.iterdir()) == []


def test_cli_prepare_rejects_bad_key_before_reading(tmp_path: Path) -> None:
    with pytest.raises(DatasetConfigError, match="did you mean 'max_tokens'"):
        cli_prepare("rt", tmp_path, max_token=5)
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
