"""Corpus-level privatization: tokens → (sensitivity → mechanism → mapping) → tokens/vectors.

One :class:`Privatizer` holds a public embedding, a fitted sensitivity approach, a fitted
mechanism and a mapping. ``privatize(docs)`` encodes every token of every document at once,
perturbs them in one vectorised call (independent noise per occurrence), maps them back in
chunked exact nearest-neighbour search, and splits the result per document — no Python loop per
token on the hot path.

Valid combinations:
    - additive mechanism + ``nearest``/``vickrey``: text output;
    - additive mechanism + ``none``: vector output (for models that take vectors);
    - selection mechanism (``tem``, ``truncated_gumbel``) + ``none``: text output (the mapping
      is part of the mechanism); with ``nearest``/``vickrey`` it is refused.

Example:
    >>> p = Privatizer.build(mechanism="mvl", epsilon=10, mapping="nearest", seed=0)
    >>> out = p.privatize([tokenize("the quick brown fox")])
    >>> out.texts()
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.defaults import DEFAULT_EMBEDDING, DEFAULT_VOCAB_SIZE
from bench.embeddings import (
    Embedding,
    check_oov_policy,
    detokenize,
    load_embedding,
    oov_leaks,
)
from bench.errors import InputError
from bench.guarantee import Guarantee
from bench.mapping import MAPPINGS, NATURAL_MAPPING, Mapping
from bench.mechanisms import MECHANISMS, Mechanism
from bench.mechanisms.departures import code_batches
from bench.neighbors import SEARCH_MEMO, NeighborIndex
from bench.sensitivity import SENSITIVITY, SensitivityApproach

logger = logging.getLogger(__name__)


class InvalidCombination(InputError, ValueError):
    """A mechanism × mapping (or model) combination that makes no sense; says why."""


def check_combination(mechanism: Mechanism, mapping: Mapping) -> None:
    """Refuse the combinations listed in the module docstring, with the reason."""
    if mechanism.kind == "document" and mapping.name != "none":
        raise InvalidCombination(
            f"mechanism {mechanism.name!r} writes whole documents (a paraphrase); there are no "
            f"vectors to map: use mapping 'none' (got {mapping.name!r})")
    if mechanism.kind == "selection" and mapping.name != "none":
        raise InvalidCombination(
            f"mechanism {mechanism.name!r} selects output words itself; mapping "
            f"{mapping.name!r} does not apply (use mapping 'none')")


@dataclass
class PrivatizedCorpus:
    """The output of one privatization run.

    Attributes:
        tokens: privatized tokens per document (None for vector output).
        vectors: perturbed vectors per document, ``(n_tokens, d)`` (None for text output).
        n_tokens: number of tokens privatized.
        n_oov: number of out-of-vocabulary tokens (replaced by ``<unk>`` or passed through).
        n_unchanged: tokens whose output word equals the input word (text output only).
        seconds: wall time of the privatization.
    """

    tokens: list[list[str]] | None
    vectors: list[np.ndarray] | None
    n_tokens: int
    n_oov: int
    n_unchanged: int | None
    seconds: float
    guarantee: Guarantee | None = None
    oov_leaks: bool = False
    n_docs: int | None = None
    """Documents rewritten, set by document-level mechanisms only (their cost is per document:
    :meth:`stats` adds ``seconds_per_document``)."""

    @property
    def n_w(self) -> float | None:
        """N_w: the fraction of words left unchanged (Huang et al. 2024, Sec. 6)."""
        if self.n_unchanged is None or self.n_tokens == 0:
            return None
        return self.n_unchanged / self.n_tokens

    def texts(self) -> list[str]:
        """Detokenized privatized texts (text output only)."""
        if self.tokens is None:
            raise ValueError("this corpus has vector output (mapping 'none'); no text")
        return [detokenize(t) for t in self.tokens]

    def stats(self) -> dict[str, Any]:
        """Per-run statistics (no text)."""
        return {"n_tokens": self.n_tokens, "n_oov": self.n_oov, "n_w": self.n_w,
                "seconds": self.seconds,
                "tokens_per_second": self.n_tokens / self.seconds if self.seconds else None,
                "oov_leaks": self.oov_leaks} | (
                    {"seconds_per_document": self.seconds / self.n_docs}
                    if self.n_docs else {})


def check_token_lists(docs: Any) -> None:
    """Refuse what is not a list of token lists (strings above all: iterating a string gives
    its letters, which would be privatized one by one without a word of warning)."""
    hint = ("Privatizer.privatize takes tokenized documents, a list of lists of words: "
            "tokenize first (bench.embeddings.tokenize) or call bench.api.privatize, which "
            "takes text")
    if isinstance(docs, (str, bytes)):
        raise TypeError(f"got one string, not a list of token lists. {hint}")
    try:
        items = list(docs) if not isinstance(docs, list) else docs
    except TypeError:
        raise TypeError(f"got {type(docs).__name__}, not a list of token lists. {hint}") from None
    for i, d in enumerate(items):
        if isinstance(d, (str, bytes)) or not isinstance(d, (list, tuple, np.ndarray)):
            raise TypeError(f"document {i} is a {type(d).__name__}, not a list of tokens. {hint}")
        if len(d) and not isinstance(d[0], str):  # one check per document, not per token
            raise TypeError(f"document {i} holds a token that is not a string. {hint}")


@dataclass
class Privatizer:
    """Embedding + fitted sensitivity approach + fitted mechanism + mapping."""

    embedding: Embedding
    sensitivity: SensitivityApproach
    mechanism: Mechanism
    mapping: Mapping
    oov: str = "unk"
    rng: np.random.Generator = field(default_factory=np.random.default_rng)

    def __post_init__(self) -> None:
        check_oov_policy(self.oov)
        check_combination(self.mechanism, self.mapping)
        if self.mechanism.space is None:
            raise ValueError("Privatizer needs a fitted mechanism (use Privatizer.build)")
        # the mapping searches the space the mechanism was fitted on (the transformed vocabulary)
        self.index = NeighborIndex(self.mechanism.space) if self.mapping.outputs_text and \
            self.mechanism.kind == "additive" else None

    @classmethod
    def build(
        cls,
        *,
        mechanism: str,
        epsilon: float,
        sensitivity: str = "none",
        mapping: str | None = None,
        seed: int | None = 0,
        embedding: Embedding | str = DEFAULT_EMBEDDING,
        embedding_path: str | None = None,
        vocab_size: int = DEFAULT_VOCAB_SIZE,
        oov: str = "unk",
        mechanism_params: dict | None = None,
        sensitivity_params: dict | None = None,
        mapping_params: dict | None = None,
    ) -> Privatizer:
        """Validate everything, then load, fit and assemble (cheap checks first).

        ``embedding`` is a registered name or a loaded :class:`Embedding`; ``embedding_path``,
        a GloVe text or ``.vec`` file, is read instead of the named embedding. ``mapping=None``
        is the mechanism's natural text-output mapping (:data:`bench.mapping.NATURAL_MAPPING`:
        ``nearest`` for an additive mechanism, ``none`` for a selection mechanism), as an
        omitted ``mapping`` axis of a grid.
        """
        check_oov_policy(oov)
        rng = np.random.default_rng(seed)
        mech = MECHANISMS.create(mechanism, epsilon=epsilon, rng=rng, **(mechanism_params or {}))
        if mapping is None:
            mapping = NATURAL_MAPPING.get(mech.kind, "none")
        mapper = MAPPINGS.create(mapping, **(mapping_params or {}))
        check_combination(mech, mapper)
        sens = SENSITIVITY.create(sensitivity, **(sensitivity_params or {}))
        emb = load_embedding(embedding, vocab_size, path=embedding_path) \
            if isinstance(embedding, str) else embedding
        sens.fit(emb.vectors)
        inputs = sens.transform(emb.input_vectors())
        if hasattr(mech, "bind_sensitivity"):
            mech.bind_sensitivity(sens)
        mech.fit(inputs[: emb.size], inputs)
        return cls(emb, sens, mech, mapper, oov, rng)

    @classmethod
    def from_cell(cls, cell: Any, embedding: Embedding, seed: Any) -> Privatizer:
        """The privatizer of a grid cell's configuration (:class:`bench.grid.Cell`: mechanism,
        ε, sensitivity approach, mapping, their parameters and the ``oov`` setting) over a
        loaded embedding, with its own random stream seeded by ``seed``."""
        return cls.build(
            mechanism=cell.mechanism, epsilon=cell.epsilon, sensitivity=cell.sensitivity,
            mapping=cell.mapping, seed=seed, embedding=embedding,
            oov=cell.settings.get("oov", "unk"), mechanism_params=dict(cell.mechanism_params),
            sensitivity_params=dict(cell.sensitivity_params),
            mapping_params=dict(cell.mapping_params))

    def guarantee(self) -> Guarantee:
        """The per-token guarantee of this configuration."""
        return self.mechanism.guarantee(self.sensitivity)

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable configuration (no text)."""
        return {"embedding": self.embedding.name, "vocab_size": self.embedding.size,
                "sensitivity": self.sensitivity.describe(), "mechanism": self.mechanism.describe(),
                "mapping": self.mapping.describe(), "oov": self.oov,
                "oov_leaks": oov_leaks(self.oov), "guarantee": self.guarantee().to_dict()}

    def noise_batches(self, lengths: np.ndarray) -> np.ndarray | None:
        """Per-token batch index of documents of ``lengths`` tokens when the mechanism shares
        one noise vector per batch of sentences (``noise_shared: batch``, the public code's
        departure: :func:`bench.mechanisms.departures.code_batches`); None when it draws
        independent noise per token (the rule)."""
        mech = self.mechanism
        if getattr(mech, "noise_shared", "token") != "batch":
            return None
        lengths = np.asarray(lengths, dtype=np.int64)
        return np.repeat(code_batches(lengths, mech.batch_sentences), lengths)

    def privatize_ids(self, ids: np.ndarray, batches: np.ndarray | None = None
                      ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Privatize input ids (no OOV marker): ``(output ids or None, vectors or None)``.

        ``batches``: per-token batch index, used only by a mechanism with ``noise_shared:
        batch`` (:meth:`noise_batches`; None: each token its own batch)."""
        if self.mechanism.kind == "selection":
            return self.mechanism.sample(ids), None
        noisy = self.mechanism.perturb(ids, batches)
        if not self.mapping.outputs_text:
            return None, noisy
        return self.mapping.map(noisy, self.index, self.rng), None

    def privatize(self, docs: list[list[str]]) -> PrivatizedCorpus:
        """Privatize tokenized documents; every token occurrence gets its own noise (unless
        the mechanism asks for the public code's shared noise, :meth:`noise_batches`).

        Raises:
            TypeError: ``docs`` is a string or holds strings instead of token lists (a string
                would be privatized letter by letter); tokenize first
                (:func:`bench.embeddings.tokenize`) or use :func:`bench.api.privatize`, which
                takes text.
        """
        check_token_lists(docs)
        t0 = time.perf_counter()
        lengths = np.array([len(d) for d in docs], dtype=np.int64)
        flat = [t for d in docs for t in d]
        ids, oov_mask = self.embedding.encode(flat, self.oov)
        if self.mechanism.kind == "document":  # rewrites whole documents (dp_prompt, dp_mlm)
            tokens = self.mechanism.privatize_documents([list(d) for d in docs])
            return PrivatizedCorpus(tokens, None, len(flat), int(oov_mask.sum()), None,
                                    time.perf_counter() - t0, self.guarantee(), False,
                                    n_docs=len(docs))
        if getattr(self.mechanism, "passes_input", False):  # the identity known answer
            return PrivatizedCorpus([list(d) for d in docs], None, len(flat),
                                    int(oov_mask.sum()), len(flat),
                                    time.perf_counter() - t0, self.guarantee(), True)
        keep = ids >= 0  # with oov="keep" the OOV tokens pass through (flagged as leaking)
        batches = self.noise_batches(lengths)
        # the corpus's nearest-word search may answer another mapping's of the same noisy
        # vectors (bench.neighbors.SEARCH_MEMO, bench.run.runner.plan)
        with SEARCH_MEMO.active():
            out_ids, vectors = self.privatize_ids(ids[keep],
                                                  None if batches is None else batches[keep])
        bounds = np.cumsum(lengths)[:-1]
        tokens = vecs = None
        n_unchanged = None
        if out_ids is not None:
            words = np.empty(len(flat), dtype=object)
            words[keep] = self.embedding.decode(out_ids)
            if not keep.all():
                words[~keep] = np.asarray(flat, dtype=object)[~keep]
            same = np.zeros(len(flat), dtype=bool)
            same[keep] = out_ids == ids[keep]
            same[~keep] = True
            n_unchanged = int(same[~oov_mask].sum()) + int((~keep).sum())
            tokens = [list(w) for w in np.split(words, bounds)] if len(docs) else []
        else:
            if not keep.all():
                raise InvalidCombination("oov 'keep' cannot pass words through a vector output")
            vecs = np.split(vectors, bounds) if len(docs) else []
        seconds = time.perf_counter() - t0
        return PrivatizedCorpus(tokens, vecs, len(flat), int(oov_mask.sum()), n_unchanged,
                                seconds, self.guarantee(), oov_leaks(self.oov))
