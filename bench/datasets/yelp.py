"""Yelp reviews: review JSON lines of the Yelp Open Dataset
(``yelp_academic_dataset_review.json``).

Yelp publishes no checksum for the file (:mod:`bench.datasets.published`), so no copy can be
checked against the one Huang et al. (2024) used.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("yelp", path="yelp_academic_dataset_review.json", max_rows=10000)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetFileNotFoundError, DatasetFormatError
from bench.datasets.files import empty_check, iter_json_lines, require_path
from bench.datasets.labels import RATINGS, encode_labels
from bench.datasets.published import PUBLISHED, check_published

YELP_EXPECTED = "Yelp review JSON lines (one object per line with 'text' and 'stars' 1-5)"


@register_dataset(
    "yelp",
    card=DatasetCard(
        name="yelp",
        title="Yelp reviews",
        source="Yelp Open Dataset (yelp_academic_dataset_review.json)",
        licence="not shipped; the Yelp Dataset terms of use (non-commercial, academic)",
        tasks=(
            TaskInfo(
                "sentiment",
                "utility",
                "multiclass",
                "stars 1-5; with polarity=True binary: 1-2 negative, 4-5 positive, 3 dropped",
            ),
        ),
        caveats=(
            "No private attribute by default; user_id becomes the group id when present.",
            "The full file has millions of reviews: use max_rows (reads the first N lines) "
            "or subsample.",
            "Huang et al. 2024 segment the reviews into sentences (Sec. 6.1; average 19 tokens, "
            "Table 4); this loader keeps whole reviews.",
        ),
        expected_size="depends on the release (about 7 million reviews in 2022)",
        how_to_get="path=... or BENCH_YELP_PATH: the review JSON-lines file",
        used_in=(
            "Huang et al. 2024, Sec. 6.1 (text rewriting): a subset of the Yelp Open Dataset "
            "(yelp.com/dataset), split into train/validation/test and segmented by sentences. "
            "The text says 8,539 train / 2,174 test; Table 4 says 6,920 train (3,610 negative "
            "/ 3,310 positive) / 1,821 test (909 / 912). The two disagree (the text's numbers "
            "are Table 4's Yahoo negatives), and the paper names neither the release nor how "
            "the subset was drawn.",
        ),
        files=PUBLISHED["yelp"],
        config=(
            ("path", "JSON-lines file (env BENCH_YELP_PATH)"),
            ("polarity", "binary 1-2 vs 4-5 stars, 3 dropped"),
            ("max_rows", "read only the first N reviews"),
        ),
    ),
    options={"path": None, "polarity": False, "max_rows": None},
    env_var="BENCH_YELP_PATH",
)
def load_yelp(
    path: str | Path | None = None, polarity: bool = False, max_rows: int | None = None
) -> Corpus:
    """Yelp reviews: stars 1-5 (or binary polarity)."""
    root = require_path("yelp", path, "BENCH_YELP_PATH", YELP_EXPECTED)
    if root.is_dir():
        raise DatasetFileNotFoundError(
            f"dataset 'yelp': {root} is a folder; expected {YELP_EXPECTED}"
        )
    texts: list[str] = []
    stars: list[str] = []
    users: list[str] = []
    for lineno, obj in iter_json_lines(root, max_rows):
        if "text" not in obj or "stars" not in obj:
            raise DatasetFormatError(
                f"{root}:{lineno}: expected 'text' and 'stars' fields, found "
                f"{', '.join(sorted(obj))}"
            )
        s = str(obj["stars"]).strip().removesuffix(".0")
        if s not in RATINGS:
            raise DatasetFormatError(f"{root}:{lineno}: stars must be 1-5, got {obj['stars']!r}")
        text = " ".join(str(obj["text"] or "").split())
        if not text or (polarity and s == "3"):
            continue
        texts.append(text)
        stars.append(s)
        users.append(str(obj.get("user_id", "")))
    empty_check("yelp", texts, root, "no review with text")
    if max_rows is None:  # hash only a file read whole
        check_published("yelp", root)
    if polarity:
        y = np.array([1 if s in ("4", "5") else 0 for s in stars])
        task = Task("sentiment", y, "binary", "utility", ("negative", "positive"))
    else:
        task = Task("sentiment", encode_labels(stars, RATINGS)[0], "multiclass", "utility", RATINGS)
    groups = np.array(users, dtype=object) if all(users) else None
    return Corpus(texts=texts, tasks=[task], groups=groups, source=str(root))
