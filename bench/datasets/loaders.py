"""Loaders for the papers' datasets and for a researcher's own CSV/JSONL file.

Each loader reads the dataset's original distribution format from a user-given path (the
``path`` config key, or an environment variable such as ``BENCH_AGNEWS_PATH``). A missing file
raises :class:`DatasetFileNotFoundError`; a malformed row, a missing column, a file that is not
UTF-8 or an empty result raises :class:`DatasetFormatError`; both say what was expected and where.

* ``agnews`` -- Zhang et al. (2015) AG News CSV (``"class","title","description"``, no header),
  or the thesis' 6-topic variant (a CSV with a header and a ``topic`` column).
* ``trustpilot`` -- Hovy et al. (2015) JSONL, one user per line, UK and US subcorpora.
* ``sst2`` -- GLUE SST-2 TSV; ``imdb`` -- the ``aclImdb`` folder; ``yelp`` -- review JSON lines.
* ``csv`` / ``jsonl`` -- any file; the config names the text, label and private columns.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("agnews", path="ag_news_csv/train.csv")
    >>> ds = load_dataset("csv", path="mine.csv", text="body", label="stance",
    ...                   private=["age_group"], group="author_id")
"""

from __future__ import annotations

import ast
import csv
import html
import json
import logging
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bench.datasets.base import (
    Corpus,
    DatasetCard,
    DatasetConfigError,
    DatasetFileNotFoundError,
    DatasetFormatError,
    Task,
    TaskInfo,
    encode_labels,
    entity_labels,
    kind_for,
    register_dataset,
    require_path,
)
from bench.datasets.embedded import THESIS_ENTITIES

logger = logging.getLogger(__name__)

AG_CLASSES = ("World", "Sports", "Business", "Sci/Tech")  # Zhang et al. 2015, classes.txt
# Riecker 2023, Sec. 4.1: classes 0..5 of the thesis' AG variant
THESIS_AG_TOPICS = (
    "Business",
    "Sci/Tech",
    "Software and Development",
    "Entertainment",
    "Sports",
    "Health",
)
RATINGS = ("1", "2", "3", "4", "5")
TRUSTPILOT_SUBCORPORA = ("united_kingdom", "united_states")

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


@contextmanager
def open_utf8(file: Path, **kwargs: Any) -> Iterator[TextIO]:
    """``file`` opened for reading as UTF-8 text (``kwargs`` go to :meth:`Path.open`).

    Raises:
        DatasetFormatError: a byte that is not UTF-8 was read inside the ``with`` block; the
            message names the file and its first line that is not UTF-8.
    """
    try:
        with file.open(encoding="utf-8", **kwargs) as f:
            yield f
    except UnicodeDecodeError:
        raise DatasetFormatError(
            f"{file}:{_first_non_utf8_line(file)}: not UTF-8 text; expected a UTF-8 file "
            "(convert it, e.g. with iconv -t utf-8)"
        ) from None


def _first_non_utf8_line(file: Path) -> int:
    """The number of the first line of ``file`` that is not valid UTF-8 (0: every line is)."""
    with file.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return lineno
    return 0


def _empty_check(name: str, texts: Sequence[str], where: Path, why: str) -> None:
    if not texts:
        raise DatasetFormatError(f"dataset {name!r}: no usable rows in {where} ({why})")


# --------------------------------------------------------------------------------------------
# agnews
# --------------------------------------------------------------------------------------------

AG_EXPECTED = (
    "the AG News CSV of Zhang et al. 2015 (train.csv/test.csv with rows "
    '"class","title","description", classes 1-4, no header), a folder holding them, or a CSV '
    "with a header row and columns topic,title,description (the thesis' 6-topic variant)"
)


def clean_ag(text: str) -> str:
    """Undo the AG CSV's escapes: a backslash stands for a line break, ``#39;`` for ``'``."""
    text = text.replace("\\", " ")
    text = re.sub(r"#(\d{2,4});", lambda m: chr(int(m.group(1))), text)
    text = html.unescape(text)
    return " ".join(text.split())


def _ag_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = [path / f for f in ("train.csv", "test.csv") if (path / f).is_file()]
        if not files:
            raise DatasetFileNotFoundError(
                f"dataset 'agnews': no train.csv or test.csv in {path}; expected {AG_EXPECTED}"
            )
        return files
    return [path]


@register_dataset(
    "agnews",
    card=DatasetCard(
        name="agnews",
        title="AG News",
        source=(
            "Zhang, Zhao & LeCun (2015), 'Character-level convolutional networks for text "
            "classification' (AG News CSV built from the AG corpus of Gulli, 2005); the "
            "thesis (Riecker 2023, Sec. 4.1) used a 6-topic variant built from the full AG "
            "corpus"
        ),
        licence=(
            "not shipped; the AG corpus is provided for non-commercial research use (see its "
            "web page); check the terms of your copy"
        ),
        tasks=(
            TaskInfo(
                "topic",
                "utility",
                "multiclass",
                "World / Sports / Business / Sci/Tech (classes 1-4 of the CSV), or the values of "
                "a `topic` column (the thesis' 6 topics)",
            ),
            TaskInfo(
                "entities",
                "privacy",
                "multilabel",
                "presence of iraq, china, united states, bush, british (the thesis' five) by "
                "whole-word, case-insensitive match in title + description",
            ),
        ),
        caveats=(
            "Text is title and description concatenated with a space, as in the thesis "
            "(following Coavoux et al. 2018); rows with an empty description are dropped.",
            "With clean=True (default) the CSV escapes are undone: backslashes become spaces "
            "and '#39;'-style codes and HTML entities are decoded.",
            "The thesis found entities with NLTK NER; this loader uses whole-word string "
            "matching (no NER model offline), which also matches adjectives and non-person "
            "'Bush'.",
            "The thesis says it kept only texts with at least one of the five entities, yet "
            "its Table 4.2 gives each entity in only ~1.7% of texts; require_entity=True "
            "applies that filter, the default keeps all texts.",
            "A folder path reads train.csv and test.csv together; the original train/test "
            "division is not kept (the thesis re-split 80/10/10 after scaling to 70%, use "
            "subsample=0.7 for that).",
        ),
        expected_size="127,600 rows (4-class CSVs); thesis' 6-topic variant: 175,637",
        how_to_get=(
            "path=... or BENCH_AGNEWS_PATH: a CSV file or a folder with train.csv/test.csv "
            "(ag_news_csv from Zhang et al. 2015)"
        ),
        config=(
            ("path", "CSV file or folder (env BENCH_AGNEWS_PATH)"),
            ("entities", "entity strings for the privacy task"),
            ("require_entity", "keep only texts with at least one entity (thesis text)"),
            ("clean", "undo the CSV escapes (default True)"),
        ),
    ),
    options={"path": None, "entities": THESIS_ENTITIES, "require_entity": False, "clean": True},
    env_var="BENCH_AGNEWS_PATH",
    version="2",  # 2: mention labels on the first max_tokens tokens (Task.mentions)
)
def load_agnews(
    path: str | Path | None = None,
    entities: Sequence[str] = THESIS_ENTITIES,
    require_entity: bool = False,
    clean: bool = True,
) -> Corpus:
    """AG News (4 classes, or the thesis' 6 topics via a ``topic`` column)."""
    root = require_path("agnews", path, "BENCH_AGNEWS_PATH", AG_EXPECTED)
    texts: list[str] = []
    labels: list[str] = []
    six_topic = False
    for file in _ag_files(root):
        with open_utf8(file, newline="") as f:
            reader = csv.reader(f)
            first = next(reader, None)
            if first is None:
                continue
            header = [c.strip().lower() for c in first]
            if "topic" in header:
                six_topic = True
                rows = _ag_topic_rows(file, header, reader)
            else:
                if header[:1] and header[0] in ("class", "class index", "label"):
                    first = None  # a header row added by someone; skip it
                rows = _ag_class_rows(file, first, reader)
            for label, title, desc in rows:
                if not desc.strip():
                    continue
                text = f"{title} {desc}"
                texts.append(clean_ag(text) if clean else text)
                labels.append(label)
    _empty_check("agnews", texts, root, "every row had an empty description")
    if six_topic:
        distinct = set(labels)
        classes = THESIS_AG_TOPICS if distinct <= set(THESIS_AG_TOPICS) else None
        y, classes = encode_labels(labels, classes)
    else:
        y, classes = encode_labels(labels, AG_CLASSES)
    ents = tuple(str(e) for e in entities)
    ent = entity_labels(texts, ents)
    if require_entity:
        keep = np.flatnonzero(ent.any(axis=1))
        texts = [texts[i] for i in keep.tolist()]
        y, ent = y[keep], ent[keep]
        _empty_check("agnews", texts, root, "no text mentions any entity (require_entity=True)")
    return Corpus(
        texts=texts,
        tasks=[
            Task("topic", y, kind_for(classes), "utility", classes),
            Task("entities", ent, "multilabel", "privacy", ents, mentions=True),
        ],
        source=str(root),
    )


def _ag_class_rows(
    file: Path, first: list[str] | None, reader: Iterator[list[str]]
) -> Iterator[tuple[str, str, str]]:
    def rows() -> Iterator[tuple[int, list[str]]]:
        if first is not None:
            yield 1, first
        for row in reader:
            yield reader.line_num, row  # type: ignore[attr-defined]

    for lineno, row in rows():
        if not row:
            continue
        if len(row) != 3:
            raise DatasetFormatError(
                f'{file}:{lineno}: expected 3 columns "class","title","description", got '
                f"{len(row)}: {row[:3]!r}"
            )
        cls = row[0].strip()
        if cls not in ("1", "2", "3", "4"):
            raise DatasetFormatError(
                f"{file}:{lineno}: class must be 1-4 ({', '.join(AG_CLASSES)}), got {cls!r}"
            )
        yield AG_CLASSES[int(cls) - 1], row[1], row[2]


def _ag_topic_rows(
    file: Path, header: list[str], reader: Iterator[list[str]]
) -> Iterator[tuple[str, str, str]]:
    col = {h: i for i, h in enumerate(header)}
    has_text = "text" in col
    if not has_text and not {"title", "description"} <= set(col):
        raise DatasetFormatError(
            f"{file}: a CSV with a 'topic' column needs 'title' and 'description' (or 'text') "
            f"columns; found {', '.join(header)}"
        )
    for row in reader:
        if not row:
            continue
        lineno = reader.line_num  # type: ignore[attr-defined]
        if len(row) != len(header):
            raise DatasetFormatError(
                f"{file}:{lineno}: expected {len(header)} columns ({', '.join(header)}), got "
                f"{len(row)}"
            )
        topic = row[col["topic"]].strip()
        if not topic:
            continue
        if has_text:
            yield topic, "", row[col["text"]]
        else:
            yield topic, row[col["title"]], row[col["description"]]


# --------------------------------------------------------------------------------------------
# JSON lines helper
# --------------------------------------------------------------------------------------------


def iter_json_lines(file: Path, max_rows: int | None = None) -> Iterator[tuple[int, dict]]:
    """(line number, object) for every non-blank line; Python-literal lines are accepted too
    (some Trustpilot copies were written with ``repr``).

    Raises:
        DatasetFormatError: a line that is neither JSON nor a Python dict literal.
    """
    count = 0
    with open_utf8(file) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                try:
                    obj = ast.literal_eval(line.strip())
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    raise DatasetFormatError(
                        f"{file}:{lineno}: not a JSON object ({e.msg}): {line[:80]!r}"
                    ) from None
            if not isinstance(obj, dict):
                raise DatasetFormatError(f"{file}:{lineno}: expected a JSON object per line")
            yield lineno, obj
            count += 1
            if max_rows is not None and count >= max_rows:
                return


# --------------------------------------------------------------------------------------------
# trustpilot
# --------------------------------------------------------------------------------------------

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
    logger.info("trustpilot: %d of %d users have gender and birth year", n_kept_users, n_users)
    _empty_check("trustpilot", texts, root, "no user with gender, birth year and a rated review")
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


# --------------------------------------------------------------------------------------------
# sst2
# --------------------------------------------------------------------------------------------

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
    _empty_check("sst2", texts, root, "no labelled sentence")
    y, _ = encode_labels(labels, ("0", "1"))
    return Corpus(
        texts=texts,
        tasks=[Task("sentiment", y, "binary", "utility", ("negative", "positive"))],
        source=str(root),
    )


# --------------------------------------------------------------------------------------------
# imdb
# --------------------------------------------------------------------------------------------

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
    _empty_check("imdb", texts, root, "no non-empty .txt review in the pos/neg folders")
    return Corpus(
        texts=texts,
        tasks=[Task("sentiment", np.array(labels), "binary", "utility", ("neg", "pos"))],
        source=str(root),
    )


# --------------------------------------------------------------------------------------------
# yelp
# --------------------------------------------------------------------------------------------

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
    _empty_check("yelp", texts, root, "no review with text")
    if polarity:
        y = np.array([1 if s in ("4", "5") else 0 for s in stars])
        task = Task("sentiment", y, "binary", "utility", ("negative", "positive"))
    else:
        task = Task("sentiment", encode_labels(stars, RATINGS)[0], "multiclass", "utility", RATINGS)
    groups = np.array(users, dtype=object) if all(users) else None
    return Corpus(texts=texts, tasks=[task], groups=groups, source=str(root))


# --------------------------------------------------------------------------------------------
# generic csv / jsonl
# --------------------------------------------------------------------------------------------

GENERIC_CONFIG = (
    ("path", "the file"),
    ("text", "name of the text column (required)"),
    ("label", "name of the utility label column (required)"),
    ("private", "names of private-attribute columns (privacy tasks)"),
    ("group", "name of a group-id column (author, speaker), optional"),
    ("max_rows", "read only the first N rows"),
)


def _generic_card(fmt: str) -> DatasetCard:
    return DatasetCard(
        name=fmt,
        title=f"Your own {fmt.upper()} file",
        source="a file you supply",
        licence="yours to check",
        tasks=(
            TaskInfo("<label>", "utility", "binary/multiclass", "the column named by `label`"),
            TaskInfo(
                "<private...>",
                "privacy",
                "binary/multiclass",
                "one task per column named in `private` (task name = column name)",
            ),
        ),
        caveats=(
            "Rows with an empty text, label, private attribute or group are dropped (logged).",
            "Classes are the distinct values, sorted (numerically if all are integers); two "
            "classes make a binary task.",
        )
        + (
            ("The delimiter is ',' or, for a .tsv file, a tab (config `delimiter`).",)
            if fmt == "csv"
            else ("Values may be strings, numbers or booleans; nested values are rejected.",)
        ),
        expected_size="your file",
        how_to_get=(
            f"bench data prepare {fmt} --path FILE --text COL --label COL [--private COL ...]"
        ),
        config=GENERIC_CONFIG + ((("delimiter", "field delimiter"),) if fmt == "csv" else ()),
    )


def _columns(
    fmt: str, text: Any, label: Any, private: Any, group: Any
) -> tuple[str, str, list[str], str | None]:
    if not text or not label:
        raise DatasetConfigError(
            f"dataset {fmt!r} needs the column names: text=<text column>, label=<utility "
            f"label column> (and optionally private=[...], group=...)"
        )
    priv = [private] if isinstance(private, str) else list(private or ())
    names = [str(label)] + [str(p) for p in priv]
    if len(set(names)) != len(names):
        raise DatasetConfigError(f"dataset {fmt!r}: label and private columns must differ")
    return str(text), str(label), [str(p) for p in priv], (str(group) if group else None)


def _generic_build(
    fmt: str,
    path: Path,
    rows: Iterator[tuple[int, dict[str, Any]]],
    available: Any,
    text: str,
    label: str,
    private: list[str],
    group: str | None,
) -> Corpus:
    needed = [text, label, *private] + ([group] if group else [])
    cols = available()
    if cols == []:
        raise DatasetFormatError(
            f"{path}:1: no header row (the file is empty or its first line is blank); expected "
            f"a header naming the columns {', '.join(map(repr, needed))}"
        )
    if cols is not None:
        missing = [c for c in needed if c not in cols]
        if missing:
            raise DatasetFormatError(
                f"{path}: column(s) {', '.join(map(repr, missing))} not found; the file has "
                f"{', '.join(map(repr, cols))}"
            )
    texts: list[str] = []
    values: dict[str, list[str]] = {c: [] for c in [label, *private]}
    groups: list[str] = []
    dropped = 0
    for lineno, row in rows:
        missing = [c for c in needed if c not in row]
        if missing:
            raise DatasetFormatError(
                f"{path}:{lineno}: field(s) {', '.join(map(repr, missing))} missing; found "
                f"{', '.join(map(repr, sorted(row)))}"
            )
        vals = {c: _scalar(path, lineno, c, row[c]) for c in needed}
        if any(v == "" for v in vals.values()):
            dropped += 1
            continue
        texts.append(vals[text])
        for c in values:
            values[c].append(vals[c])
        if group:
            groups.append(vals[group])
    if dropped:
        logger.info("%s: dropped %d rows with an empty text, label or attribute", path, dropped)
    _empty_check(fmt, texts, path, "every row had an empty text, label or attribute" if dropped
                 else "the file has no rows")
    tasks = []
    for c in [label, *private]:
        y, classes = encode_labels(values[c])
        if len(classes) < 2:
            raise DatasetFormatError(
                f"{path}: column {c!r} has a single value {classes[0]!r}; a task needs >= 2"
            )
        role = "utility" if c == label else "privacy"
        tasks.append(Task(c, y, kind_for(classes), role, classes))
    return Corpus(
        texts=texts,
        tasks=tasks,
        groups=np.array(groups, dtype=object) if group else None,
        source=str(path),
    )


def _scalar(path: Path, lineno: int, col: str, v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        raise DatasetFormatError(f"{path}:{lineno}: field {col!r} must be a scalar, got {v!r:.60}")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


@register_dataset(
    "csv",
    card=_generic_card("csv"),
    options={
        "path": None,
        "text": None,
        "label": None,
        "private": (),
        "group": None,
        "max_rows": None,
        "delimiter": None,
    },
)
def load_csv(
    path: str | Path | None = None,
    text: str | None = None,
    label: str | None = None,
    private: Sequence[str] = (),
    group: str | None = None,
    max_rows: int | None = None,
    delimiter: str | None = None,
) -> Corpus:
    """A CSV/TSV with a header row; the config names the columns."""
    t, lab, priv, grp = _columns("csv", text, label, private, group)
    p = require_path("csv", path, None, "a CSV file with a header row")
    if p.is_dir():
        raise DatasetFileNotFoundError(f"dataset 'csv': {p} is a folder; expected a CSV file")
    delim = delimiter or ("\t" if p.suffix.lower() == ".tsv" else ",")
    with open_utf8(p, newline="") as f:
        reader = csv.DictReader(f, delimiter=delim)

        def rows() -> Iterator[tuple[int, dict[str, Any]]]:
            for i, row in enumerate(reader):
                if max_rows is not None and i >= max_rows:
                    return
                if None in row:  # more fields than the header
                    raise DatasetFormatError(
                        f"{p}:{reader.line_num}: more fields than the header's "
                        f"{len(reader.fieldnames or [])}"
                    )
                yield reader.line_num, row

        return _generic_build(
            "csv", p, rows(), lambda: list(reader.fieldnames or []), t, lab, priv, grp
        )


@register_dataset(
    "jsonl",
    card=_generic_card("jsonl"),
    options={
        "path": None,
        "text": None,
        "label": None,
        "private": (),
        "group": None,
        "max_rows": None,
    },
)
def load_jsonl(
    path: str | Path | None = None,
    text: str | None = None,
    label: str | None = None,
    private: Sequence[str] = (),
    group: str | None = None,
    max_rows: int | None = None,
) -> Corpus:
    """A JSON-lines file (one object per line); the config names the fields."""
    t, lab, priv, grp = _columns("jsonl", text, label, private, group)
    p = require_path("jsonl", path, None, "a JSON-lines file, one object per line")
    if p.is_dir():
        raise DatasetFileNotFoundError(f"dataset 'jsonl': {p} is a folder; expected a file")
    return _generic_build("jsonl", p, iter_json_lines(p, max_rows), lambda: None, t, lab, priv, grp)
