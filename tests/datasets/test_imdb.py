"""The imdb loader reads the aclImdb folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.datasets import DatasetFileNotFoundError, load_dataset


def test_imdb_folder(tmp_path: Path) -> None:
    root = tmp_path / "aclImdb"
    for split in ("train", "test"):
        for cls, rating in (("pos", 9), ("neg", 2)):
            d = root / split / cls
            d.mkdir(parents=True)
            for i in range(3):
                (d / f"{i}_{rating}.txt").write_text(f"{cls} review {i}<br /><br />more")
    (root / "train" / "unsup").mkdir()
    (root / "train" / "unsup" / "0_0.txt").write_text("unlabelled")
    ds = load_dataset("imdb", path=tmp_path, split=(0.5, 0.25, 0.25))  # parent folder works
    assert len(ds) == 12
    assert ds.utility_task.counts() == {"neg": 6, "pos": 6}
    assert "<br />" not in ds.texts[0] and ds.texts[0].endswith("review 0 more")
    with pytest.raises(DatasetFileNotFoundError, match="train/pos"):
        load_dataset("imdb", path=root / "train" / "unsup")
