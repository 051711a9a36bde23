"""The papers' own data, by file: the published releases the paper loaders read, and a check
that a user's file is the published one.

The paper loaders (``agnews``, ``imdb``, ``sst2``, ``yelp``, ``trustpilot``) read a user's copy
of a corpus the suite cannot ship. :data:`PUBLISHED` lists, per loader, the files of the
canonical public release -- name, URL, rows, the checksums where a public source publishes them
and where each value is published; the cards show them (``docs/datasets.md``, "Files").

A loader calls :func:`check_published` on each file it reads. A file with a published file's
name and a published SHA-256 is hashed once per process (streamed, memoised by
:func:`~bench.datasets.files.content_digest`, the digest the grid already takes of a data file);
if the content differs, one warning per file and process says which file, both checksums and
what it means: another version, so results on it are not comparable to the paper's. It is never
an error: a user may mean to run on another version. Files of other names are not hashed.

Example:
    >>> from pathlib import Path
    >>> from bench.datasets.published import PUBLISHED, check_published
    >>> [f.name for f in PUBLISHED["agnews"]]
    ['train.csv', 'test.csv']
    >>> check_published("agnews", Path("ag_news_csv/train.csv"))  # warns if not the release
"""

from __future__ import annotations

import logging
from pathlib import Path

from bench.datasets.files import DIGEST_HEX, content_digest
from bench.datasets.records import PublishedFile

logger = logging.getLogger(__name__)

# Sources of the values below (read from the repositories, not computed here):
_TORCHTEXT = "pytorch/text torchtext/datasets/{}.py (MD5, NUM_LINES)"
_HF = "huggingface/datasets datasets/{}/dataset_infos.json (download_checksums, num_examples)"

AG_URL = "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/"
AG_NOTE = (
    "Zhang et al. 2015 ag_news_csv (the copy torchtext and Hugging Face datasets download): no "
    'header, every field quoted, "class","title","description", class 1-4 = World, Sports, '
    "Business, Sci/Tech"
)
SST2_ZIP = "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip"
SST2_ROWS = (
    "rows: pytorch/text torchtext/datasets/sst2.py (NUM_LINES); huggingface/datasets "
    "datasets/glue/dataset_infos.json (config sst2, num_examples)"
)
SST2_NOTE = (
    "in SST-2.zip (SST-2/{}): header sentence<TAB>label, label 0/1, lower-cased and tokenized; "
    "no per-file checksum is published (only the zip's)"
)
TP_URL = (  # the release folder, pinned at a commit of the publisher's repository
    "https://bitbucket.org/lowlands/release/raw/fd60e8b4fbb12f0175e0f26153e289bbe2bfd71c/"
    "WWW2015/data/"
)
TP_NOTE = (
    "extracted from {}.jsonl.zip of the WWW2015 release of Hovy et al. 2015 "
    "(bitbucket.org/lowlands/release, WWW2015/data); one JSON user object per line with "
    "'gender', 'birth_year' and 'reviews': [{{'text', 'rating'}}]; the release publishes no "
    "checksum and no row count"
)

PUBLISHED: dict[str, tuple[PublishedFile, ...]] = {
    "agnews": (
        PublishedFile(
            "train.csv", AG_URL + "train.csv", rows=120_000,
            md5="b1a00f826fdfbd249f79597b59e1dc12",
            sha256="76a0a2d2f92b286371fe4d4044640910a04a803fdd2538e0f3f29a5c6f6b672e",
            size=29_470_338,
            published_in=f"{_TORCHTEXT.format('ag_news')}; {_HF.format('ag_news')}",
            note=AG_NOTE,
        ),
        PublishedFile(
            "test.csv", AG_URL + "test.csv", rows=7_600,
            md5="d52ea96a97a2d943681189a97654912d",
            sha256="521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699",
            size=1_857_427,
            published_in=f"{_TORCHTEXT.format('ag_news')}; {_HF.format('ag_news')}",
            note=AG_NOTE,
        ),
    ),
    "imdb": (
        PublishedFile(
            "aclImdb_v1.tar.gz", "http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
            rows=50_000, unit="labelled reviews",
            md5="7c2ac02c03563afcf9b574c7e56c153a",
            sha256="c40f74a18d3b61f90feba1e17730e0d38e8b97c05fde7008942e91923d1658fe",
            size=84_125_825,
            published_in=f"{_TORCHTEXT.format('imdb')}; {_HF.format('imdb')}",
            note=(
                "Maas et al. 2011: 25,000 train + 25,000 test labelled reviews (and 50,000 "
                "unlabelled in train/unsup, ignored). The loader reads the extracted aclImdb "
                "folder (train/{neg,pos}/*.txt, test/{neg,pos}/*.txt, one review per file), "
                "not the archive, so it cannot check it: compare the archive's md5sum or "
                "sha256sum with these before extracting"
            ),
        ),
    ),
    "sst2": (
        PublishedFile(
            "SST-2.zip", SST2_ZIP,
            md5="9f81648d4199384278b86e315dac217c",
            sha256="d67e16fb55739c1b32cdce9877596db1c127dc322d93c082281f64057c16deaa",
            size=7_439_277,
            published_in=(
                "md5: pytorch/text torchtext/datasets/sst2.py (MD5); sha256 and size: "
                "huggingface/datasets datasets/glue/dataset_infos.json (config sst2, "
                "download_checksums)"
            ),
            note=(
                "GLUE SST-2 (Wang et al. 2019; Socher et al. 2013), holding SST-2/train.tsv "
                "(67,349), dev.tsv (872) and the unlabelled test.tsv (1,821, skipped). The "
                "loader reads the extracted TSVs, not the zip, so it cannot check it: compare "
                "the zip's md5sum or sha256sum with these"
            ),
        ),
        PublishedFile("train.tsv", SST2_ZIP, rows=67_349, published_in=SST2_ROWS,
                      note=SST2_NOTE.format("train.tsv")),
        PublishedFile("dev.tsv", SST2_ZIP, rows=872, published_in=SST2_ROWS,
                      note=SST2_NOTE.format("dev.tsv")),
    ),
    "yelp": (
        PublishedFile(
            "yelp_academic_dataset_review.json", "https://www.yelp.com/dataset",
            note=(
                "the Yelp Open Dataset, the source Huang et al. 2024 name (Sec. 6.1, footnote "
                "https://www.yelp.com/dataset/): JSON lines with 'text', 'stars' 1-5 and "
                "'user_id', downloaded after accepting Yelp's terms. The release changes over "
                "time and Yelp publishes no checksum or row count, so no copy can be checked "
                "against the paper's; Zhang et al.'s yelp_review_polarity_csv / "
                "yelp_review_full_csv are another (CSV) dataset this loader does not read"
            ),
        ),
    ),
    "trustpilot": (
        PublishedFile(
            "united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.tmp",
            TP_URL + "united_kingdom.auto-adjusted_gender.NUTS-regions.jsonl.zip",
            note=TP_NOTE.format("united_kingdom.auto-adjusted_gender.NUTS-regions"),
        ),
        PublishedFile(
            "united_states.auto-adjusted_gender.geocoded.jsonl.tmp",
            TP_URL + "united_states.auto-adjusted_gender.geocoded.jsonl.zip",
            note=TP_NOTE.format("united_states.auto-adjusted_gender.geocoded"),
        ),
    ),
}
"""Loader name -> the published files that reproduce its papers' setting. Checksums, sizes and
row counts are copied from the sources named in each ``published_in``; where no public source
publishes one, the field is empty and the card says so."""

_WARNED: set[tuple[str, str]] = set()
"""(resolved path, content digest) of the files already warned about in this process."""


def check_published(dataset: str, file: str | Path) -> None:
    """Warn once per file and process when ``file`` has a published file's name but not its
    content.

    Only a file named like one of ``PUBLISHED[dataset]`` with a published SHA-256 is hashed
    (:func:`~bench.datasets.files.content_digest`: streamed, memoised per path, size and
    modification time); others return at once. Call it only on a file the loader reads whole.

    Args:
        dataset: Registry name of the loader (a key of :data:`PUBLISHED`).
        file: A data file the loader has read.
    """
    path = Path(file)
    match = next((p for p in PUBLISHED.get(dataset, ()) if p.name == path.name and p.sha256),
                 None)
    if match is None:
        return
    digest = content_digest(path)
    if digest == match.sha256[:DIGEST_HEX].lower():
        return
    key = (str(path.expanduser().resolve()), digest)
    if key in _WARNED:
        return
    _WARNED.add(key)
    logger.warning(
        "dataset %r: %s is named like the published %s but its content differs (sha256 "
        "begins %s; published sha256 %s, per %s): it is another version of the file, so "
        "results on it are not comparable to the paper's; the published file is at %s",
        dataset, path, match.name, digest, match.sha256, match.published_in, match.url,
    )
