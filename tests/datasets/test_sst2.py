"""The sst2 loader reads GLUE SST-2 TSV files and rejects malformed ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.datasets import DatasetFormatError, load_dataset


def test_sst2_glue_tsv(tmp_path: Path) -> None:
    (tmp_path / "train.tsv").write_text(
        "sentence\tlabel\nhide new secretions from the parental units \t0\n"
        "contains no wit , only labored gags \t0\nthat loves its characters \t1\n"
        'the "best" film\t1\n'
    )
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\nit 's a charming journey . \t1\n")
    (tmp_path / "test.tsv").write_text("index\tsentence\n0\tunlabelled\n")
    ds = load_dataset("sst2", path=tmp_path, split=(0.6, 0.2, 0.2))
    assert len(ds) == 5
    assert ds.texts[3] == 'the "best" film'
    assert ds.utility_task.labels.tolist() == [0, 0, 1, 1, 1]
    assert ds.utility_task.classes == ("negative", "positive")
    (tmp_path / "bad.tsv").write_text("sentence\tlabel\nfine\t2\n")
    with pytest.raises(DatasetFormatError, match=r"bad.tsv:2"):
        load_dataset("sst2", path=tmp_path / "bad.tsv")
    (tmp_path / "nohead.tsv").write_text("fine\t1\n")
    with pytest.raises(DatasetFormatError, match="'sentence' and 'label'"):
        load_dataset("sst2", path=tmp_path / "nohead.tsv")
