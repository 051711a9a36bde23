"""Yelp reviews: review JSON lines of the Yelp Open Dataset
(``yelp_academic_dataset_review.json``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetFileNotFoundError, DatasetFormatError
from bench.datasets.files import empty_check, iter_json_lines, require_path
from bench.datasets.labels import RATINGS, encode_labels

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
        ),
        expected_size="depends on the release (about 7 million reviews in 2022)",
        how_to_get="path=... or BENCH_YELP_PATH: the review JSON-lines file",
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
    if polarity:
        y = np.array([1 if s in ("4", "5") else 0 for s in stars])
        task = Task("sentiment", y, "binary", "utility", ("negative", "positive"))
    else:
        task = Task("sentiment", encode_labels(stars, RATINGS)[0], "multiclass", "utility", RATINGS)
    groups = np.array(users, dtype=object) if all(users) else None
    return Corpus(texts=texts, tasks=[task], groups=groups, source=str(root))
