"""AG News: Zhang et al. (2015) AG News CSV (``"class","title","description"``, no header), or
the thesis' 6-topic variant (a CSV with a header and a ``topic`` column).

A 4-class CSV named like a published file (``train.csv``, ``test.csv``) is compared with the
published checksum (:mod:`bench.datasets.published`); a different one logs one warning.

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("agnews", path="ag_news_csv/train.csv")
"""

from __future__ import annotations

import csv
import html
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from bench.datasets.base import Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetFileNotFoundError, DatasetFormatError
from bench.datasets.files import empty_check, open_utf8, require_path
from bench.datasets.labels import THESIS_ENTITIES, encode_labels, entity_labels, kind_for
from bench.datasets.published import PUBLISHED, check_published

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
            "The thesis' 6-topic variant has no published file: the thesis built it from the "
            "full AG corpus (Riecker 2023, Sec. 4.1, footnote 2: "
            "http://groups.di.unipi.it/~gulli/AG_corpus_of_news_articles.html), which "
            "publishes no checksum; only the 4-class CSVs can be checked.",
        ),
        expected_size="127,600 rows (4-class CSVs); thesis' 6-topic variant: 175,637",
        how_to_get=(
            "path=... or BENCH_AGNEWS_PATH: a CSV file or a folder with train.csv/test.csv "
            "(ag_news_csv from Zhang et al. 2015)"
        ),
        used_in=(
            "Riecker 2023 (thesis), Sec. 4.1 and Table 4.1: a 6-topic variant built from the "
            "full AG corpus (Business, Sci/Tech, Software and Development, Entertainment, "
            "Sports, Health), texts mentioning one of five entities, scaled to 70%: 140,510 "
            "train / 17,563 dev / 17,564 test (175,637).",
            "Huang et al. 2024, Sec. 6.1 and Table 4: the 4-class AG News of Zhang et al. 2015 "
            "(the files below), 6,000 articles sampled per topic; Sec. 6.1 says 16,000 train / "
            "4,000 validation / 4,000 test, Table 4 says 20,000 train / 4,000 test.",
        ),
        files=PUBLISHED["agnews"],
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
        topic_file = False
        with open_utf8(file, newline="") as f:
            reader = csv.reader(f)
            first = next(reader, None)
            if first is None:
                continue
            header = [c.strip().lower() for c in first]
            if "topic" in header:
                six_topic = topic_file = True
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
        if not topic_file:
            check_published("agnews", file)  # the 6-topic variant has no published file
    empty_check("agnews", texts, root, "every row had an empty description")
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
        empty_check("agnews", texts, root, "no text mentions any entity (require_entity=True)")
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
