"""IMDB movie reviews: the ``aclImdb`` folder of Maas et al. (2011).

The published file is the archive ``aclImdb_v1.tar.gz`` (:mod:`bench.datasets.published`); the
loader reads the extracted review files, so it does not check the archive's checksum.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("imdb", path="aclImdb")
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetFileNotFoundError
from bench.datasets.files import empty_check, open_utf8, require_path
from bench.datasets.published import PUBLISHED

IMDB_EXPECTED = "the aclImdb folder of Maas et al. 2011 with train/{pos,neg}/*.txt and test/..."


@register_dataset(
    "imdb",
    card=DatasetCard(
        name="imdb",
        title="IMDB movie reviews",
        source=(
            "Maas et al. (2011), 'Learning word vectors for sentiment analysis', ACL "
            "(aclImdb_v1); the dataset of the TEM paper (Carvalho et al. 2021)"
        ),
        licence="not shipped; check the terms on the dataset's page",
        tasks=(TaskInfo("sentiment", "utility", "binary", "neg / pos folder of the review"),),
        caveats=(
            "No private attribute: privacy is measured by membership inference (TEM's "
            "protocol: 25% members, 25% non-members, 50% shadow data).",
            "train and test folders are pooled and re-split; the unlabelled 'unsup' folder is "
            "ignored. '<br />' tags are replaced by spaces.",
            "Reviews are long (mean ~230 words): max_tokens truncation matters.",
        ),
        expected_size="50,000 reviews (25,000 train + 25,000 test)",
        how_to_get="path=... or BENCH_IMDB_PATH: the extracted aclImdb folder",
        used_in=(
            "Carvalho et al. 2021 (TEM), Sec. 5.3: aclImdb's 25,000 train + 25,000 test "
            "reviews; the target model trains on 50% of train (TR1) and is tested on 50% of "
            "test (TE1); the other train half (TR2) is the non-members, the other test half "
            "(TE2) trains the shadow model (with TE1 as its 'out'): four quarters of 12,500.",
        ),
        files=PUBLISHED["imdb"],
        config=(("path", "aclImdb folder (env BENCH_IMDB_PATH)"),),
    ),
    options={"path": None},
    env_var="BENCH_IMDB_PATH",
)
def load_imdb(path: str | Path | None = None) -> Corpus:
    """IMDB reviews from the ``aclImdb/{train,test}/{pos,neg}`` folders."""
    root = require_path("imdb", path, "BENCH_IMDB_PATH", IMDB_EXPECTED)
    if root.is_dir() and not (root / "train").is_dir() and (root / "aclImdb").is_dir():
        root = root / "aclImdb"
    folders = [root / s / c for s in ("train", "test") for c in ("neg", "pos")]
    present = [d for d in folders if d.is_dir()]
    if not root.is_dir() or not present:
        raise DatasetFileNotFoundError(
            f"dataset 'imdb': no train/pos, train/neg, test/pos or test/neg folder in {root}; "
            f"expected {IMDB_EXPECTED}"
        )
    texts: list[str] = []
    labels: list[int] = []
    for d in present:
        for f in sorted(d.glob("*.txt")):
            with open_utf8(f) as review:
                text = " ".join(review.read().replace("<br />", " ").split())
            if text:
                texts.append(text)
                labels.append(1 if d.name == "pos" else 0)
    empty_check("imdb", texts, root, "no non-empty .txt review in the pos/neg folders")
    return Corpus(
        texts=texts,
        tasks=[Task("sentiment", np.array(labels), "binary", "utility", ("neg", "pos"))],
        source=str(root),
    )
