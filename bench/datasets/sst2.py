"""SST-2: the GLUE SST-2 TSV (Socher et al. 2013, binary version from GLUE).

The published file is ``SST-2.zip`` (:mod:`bench.datasets.published`); no checksum is published
for the TSVs inside it, so the loader can check none of the files it reads.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("sst2", path="SST-2")
"""

from __future__ import annotations

import csv
from pathlib import Path

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetFileNotFoundError, DatasetFormatError
from bench.datasets.files import empty_check, open_utf8, require_path
from bench.datasets.labels import encode_labels
from bench.datasets.published import PUBLISHED, check_published

SST2_EXPECTED = (
    "GLUE SST-2 TSV files (header 'sentence<TAB>label', labels 0/1): train.tsv/dev.tsv or a "
    "folder holding them (test.tsv has no labels and is skipped)"
)


@register_dataset(
    "sst2",
    card=DatasetCard(
        name="sst2",
        title="SST-2 (GLUE)",
        source=(
            "Socher et al. (2013), Stanford Sentiment Treebank, binary version from GLUE "
            "(Wang et al. 2019)"
        ),
        licence="not shipped; check the GLUE / SST terms of your copy",
        tasks=(TaskInfo("sentiment", "utility", "binary", "negative (0) / positive (1)"),),
        caveats=(
            "No private attribute: use membership inference and rewrite metrics.",
            "A folder path reads train.tsv and dev.tsv; GLUE's unlabelled test.tsv is skipped. "
            "Train sentences include phrases of the treebank, so many are very short.",
            "Sentences are lower-cased and tokenized in the source already.",
        ),
        expected_size="67,349 train + 872 dev sentences",
        how_to_get="path=... or BENCH_SST2_PATH: the GLUE SST-2 folder or one TSV",
        used_in=(
            "Huang et al. 2024, Sec. 6.1 and Table 4: 68,221 sentences (= GLUE train 67,349 + "
            "dev 872) split 80:20: 54,576 train (24,214 negative / 30,362 positive) / 13,645 "
            "test (5,994 / 7,651); average length 10 tokens.",
        ),
        files=PUBLISHED["sst2"],
        config=(("path", "TSV file or folder (env BENCH_SST2_PATH)"),),
    ),
    options={"path": None},
    env_var="BENCH_SST2_PATH",
)
def load_sst2(path: str | Path | None = None) -> Corpus:
    """GLUE SST-2: binary sentiment."""
    root = require_path("sst2", path, "BENCH_SST2_PATH", SST2_EXPECTED)
    files = (
        [root / f for f in ("train.tsv", "dev.tsv") if (root / f).is_file()]
        if root.is_dir()
        else [root]
    )
    if not files:
        raise DatasetFileNotFoundError(
            f"dataset 'sst2': no train.tsv or dev.tsv in {root}; expected {SST2_EXPECTED}"
        )
    texts: list[str] = []
    labels: list[str] = []
    for file in files:
        with open_utf8(file, newline="") as f:
            reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            header = next(reader, None) or []
            if "sentence" not in header or "label" not in header:
                raise DatasetFormatError(
                    f"{file}:1: expected a header with 'sentence' and 'label' columns, got "
                    f"{header!r}; expected {SST2_EXPECTED}"
                )
            si, li = header.index("sentence"), header.index("label")
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header) or row[li].strip() not in ("0", "1"):
                    raise DatasetFormatError(
                        f"{file}:{reader.line_num}: expected {len(header)} tab-separated "
                        f"columns with label 0 or 1, got {row!r}"
                    )
                if row[si].strip():
                    texts.append(row[si].strip())
                    labels.append(row[li].strip())
        check_published("sst2", file)
    empty_check("sst2", texts, root, "no labelled sentence")
    y, _ = encode_labels(labels, ("0", "1"))
    return Corpus(
        texts=texts,
        tasks=[Task("sentiment", y, "binary", "utility", ("negative", "positive"))],
        source=str(root),
    )
