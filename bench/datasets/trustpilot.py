"""Trustpilot reviews: Hovy et al. (2015) JSONL, one user per line, UK and US subcorpora.

The release publishes no checksum (:mod:`bench.datasets.published`), so no copy can be checked
against the one the thesis used.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("trustpilot", path="WWW2015/data")
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetConfigError, DatasetFileNotFoundError, DatasetFormatError
from bench.datasets.files import empty_check, iter_json_lines, require_path
from bench.datasets.labels import RATINGS, encode_labels
from bench.datasets.published import PUBLISHED, check_published

logger = logging.getLogger(__name__)

TRUSTPILOT_SUBCORPORA = ("united_kingdom", "united_states")

TP_EXPECTED = (
    "the Trustpilot JSONL of Hovy et al. 2015 (one user per line with 'gender', 'birth_year' "
    "and 'reviews': [{'text': ..., 'rating': 1-5}]), e.g. "
    "united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.tmp, or a folder holding the "
    "united_kingdom* and united_states* files"
)
_GENDERS = {"m": "M", "male": "M", "f": "F", "female": "F"}


def _tp_files(root: Path, subcorpora: Sequence[str]) -> list[Path]:
    if root.is_file():
        return [root]
    files = sorted(
        p for p in root.iterdir() if p.is_file() and any(p.name.startswith(s) for s in subcorpora)
    )
    files = [p for p in files if ".jsonl" in p.name or p.suffix == ".json"]
    if not files:
        raise DatasetFileNotFoundError(
            f"dataset 'trustpilot': no file starting with {' or '.join(subcorpora)} in {root}; "
            f"expected {TP_EXPECTED}"
        )
    return files


def _review_text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value if v is not None)
    return "" if value is None else str(value)


@register_dataset(
    "trustpilot",
    card=DatasetCard(
        name="trustpilot",
        title="Trustpilot reviews (UK + US)",
        source=(
            "Hovy, Johannsen & Søgaard (2015), 'User review sites as a resource for large-scale "
            "sociolinguistic studies', WWW; the UK and US subcorpora as used by Riecker 2023 "
            "(Sec. 4.1, following Coavoux et al. 2018)"
        ),
        licence="not shipped; research data released by the authors, check their terms",
        tasks=(
            TaskInfo("sentiment", "utility", "multiclass", "the review's star rating 1-5"),
            TaskInfo(
                "gender",
                "privacy",
                "binary",
                "the author's self-reported gender on the profile, F / M (thesis: 0 female, "
                "1 male)",
            ),
        ),
        caveats=(
            "One text per review; users are kept only if they state both gender and birth "
            "year (as the thesis and Coavoux et al. 2018 did); reviews with empty text or a "
            "rating outside 1-5 are dropped. A review's text list is joined with spaces.",
            "The thesis also kept only reviews that langid classifies as English; that needs "
            "the 'langid' package (not a bench dependency): english_only=True applies it.",
            "Gender is binary only because the data is (the thesis' own caveat).",
            "Splits are by review, as in the thesis, so one user's reviews can be in train and "
            "test; split_by_group=True splits by user instead.",
            "Ratings are heavily skewed (thesis: 75% five stars).",
        ),
        expected_size="thesis: 130,068 reviews (after filters, scaled to 70%)",
        how_to_get=(
            "path=... or BENCH_TRUSTPILOT_PATH: a JSONL file or a folder with the "
            "united_kingdom*/united_states* files (bitbucket.org/lowlands/release, WWW2015)"
        ),
        used_in=(
            "Riecker 2023 (thesis), Sec. 4.1 and Table 4.1: the UK and US subcorpora, users "
            "with gender and birth year, reviews langid classifies as English, scaled to 70%: "
            "104,055 train / 13,006 dev / 13,007 test (130,068).",
        ),
        files=PUBLISHED["trustpilot"],
        config=(
            ("path", "JSONL file or folder (env BENCH_TRUSTPILOT_PATH)"),
            ("subcorpora", "file-name prefixes read from a folder"),
            ("english_only", "keep only reviews langid labels English (needs langid)"),
        ),
    ),
    options={"path": None, "subcorpora": TRUSTPILOT_SUBCORPORA, "english_only": False},
    env_var="BENCH_TRUSTPILOT_PATH",
)
def load_trustpilot(
    path: str | Path | None = None,
    subcorpora: Sequence[str] = TRUSTPILOT_SUBCORPORA,
    english_only: bool = False,
) -> Corpus:
    """Trustpilot reviews; utility = rating 1-5, privacy = author gender."""
    root = require_path("trustpilot", path, "BENCH_TRUSTPILOT_PATH", TP_EXPECTED)
    classify = _langid() if english_only else None
    texts: list[str] = []
    ratings: list[str] = []
    genders: list[str] = []
    users: list[str] = []
    n_users = n_kept_users = 0
    for file in _tp_files(root, tuple(subcorpora)):
        for lineno, user in iter_json_lines(file):
            n_users += 1
            reviews = user.get("reviews")
            if not isinstance(reviews, list):
                raise DatasetFormatError(
                    f"{file}:{lineno}: expected a 'reviews' list in every user object; "
                    f"found keys {', '.join(sorted(user))}"
                )
            gender = _GENDERS.get(str(user.get("gender") or "").strip().lower())
            if gender is None or not _has_year(user.get("birth_year")):
                continue
            n_kept_users += 1
            uid = str(user.get("user_id") or f"{file.name}:{lineno}")
            for r in reviews:
                if not isinstance(r, dict) or "text" not in r or "rating" not in r:
                    raise DatasetFormatError(
                        f"{file}:{lineno}: every review needs 'text' and 'rating', got "
                        f"{sorted(r) if isinstance(r, dict) else type(r).__name__}"
                    )
                text = " ".join(_review_text(r["text"]).split())
                rating = str(r["rating"]).strip()
                if rating.endswith(".0"):
                    rating = rating[:-2]
                if not text or rating not in RATINGS:
                    continue
                if classify is not None and classify(text)[0] != "en":
                    continue
                texts.append(text)
                ratings.append(rating)
                genders.append(gender)
                users.append(uid)
        check_published("trustpilot", file)
    logger.info("trustpilot: %d of %d users have gender and birth year", n_kept_users, n_users)
    empty_check("trustpilot", texts, root, "no user with gender, birth year and a rated review")
    y, _ = encode_labels(ratings, RATINGS)
    g, _ = encode_labels(genders, ("F", "M"))
    return Corpus(
        texts=texts,
        tasks=[
            Task("sentiment", y, "multiclass", "utility", RATINGS),
            Task("gender", g, "binary", "privacy", ("F", "M")),
        ],
        groups=np.array(users, dtype=object),
        source=str(root),
    )


def _has_year(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return False
    try:
        year = int(float(str(value).strip()))
    except ValueError:
        return False
    return 1800 < year < 2100


def _langid():  # noqa: ANN202 - third-party callable
    try:
        import langid
    except ImportError:
        raise DatasetConfigError(
            "trustpilot english_only=True needs the 'langid' package (pip install langid)"
        ) from None
    return langid.classify
