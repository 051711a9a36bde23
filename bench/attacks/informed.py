"""``informed``: the attribute adversary of the DP threat model (knows the mechanism).

The adversary knows the mechanism, its parameters and the public vocabulary -- everything the
differential-privacy guarantee allows an attacker to know -- and reads each privatized token
as *evidence* about the original word: by Bayes' rule with a public prior π over original
words and the mechanism's own channel P(o | w),

    P(w | o) = π(w)·P(o | w) / Σ_{w'} π(w')·P(o | w').

Channels (:func:`channel_kind`):

* ``identity`` (unprivatized baseline, and the known answer ``identity``, which publishes it):
  the posterior is the token itself, for every vocabulary word.
* ``exact`` where the mechanism provides its own output distribution
  (:meth:`bench.mechanisms.base.Mechanism.channel`; built in: ``tem``, ``santext``,
  ``custext``, each citing its paper and equation).
* ``sampled`` for every other text-output configuration (truncated Gumbel, additive mechanisms
  with a ``nearest``/``vickrey`` mapping): P(o|w) is estimated by ``n_samples`` draws per
  candidate original through the privatizer itself, with add-α smoothing.

Every channel is written as P(o|w) = f_w + a_w(o) (:mod:`bench.mechanisms.channels`): a floor
f_w common to every output and an excess a_w(o) that is sparse at large ε (TEM: non-zero only
inside the truncation radius γ; sampled: only for outputs that were drawn). Then the normaliser is
N_o = B + Σ_w π(w)·a_w(o) with B = Σ_w π(w)·f_w, so the posterior is exact over the candidate
originals while the per-output work only touches the excess. The work is done once per
*unique* output word (never per token) and cached, so fit + predict on train/dev/test compute
each output word once. The channel itself is computed once per key -- the same mechanism,
parameters, ε, vocabulary and candidates, and for a sampled one the same random stream -- and
shared through the results folder's channel cache (:mod:`bench.attacks.informed_channel`).

A document's attribute score aggregates its tokens' posteriors: for an attribute word e,
P(some token was e) = 1 − Π_t (1 − P(e | o_t)) and the expected count Σ_t P(e | o_t) (for a
multi-word name, also the phrase: consecutive tokens, P(e₁|o_t)·P(e₂|o_{t+1})). Without
attribute words (speaker, gender) the feature map is the posterior-expected bag of words. A
class-weighted logistic regression on those features is fitted on the training split; the
feature set, penalty and C are picked on dev. See ``docs/informed.md``.

Example:
    >>> from bench.attacks.informed import InformedAdversary
    >>> adv = InformedAdversary(privatizer=p, attribute_words=["iraq", "united states"])
    >>> adv.fit(train_tokens, Y_train, dev_tokens, Y_dev).predict(test_tokens)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import sparse

from bench.attacks.informed_channel import (  # noqa: F401  (build_channel: old import path)
    build_channel,
    channel_costs,
    channel_kind,
    get_channel,
    supports,
)
from bench.attacks.lexical import fit_linear_heads, linear_heads_proba, regularisation_grid
from bench.mechanisms.channels import (  # noqa: F401  (Channel, ExpChannel: old import path)
    TILE,
    Channel,
    ExpChannel,
    TableChannel,
    as_channel,
)
from bench.models.base import Model, as_token_lists

logger = logging.getLogger(__name__)

CHANNEL_KINDS = ("identity", "exact", "sampled")
PRIORS = ("zipf", "uniform")
FEATURE_SETS = ("attribute", "bag", "both")
DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0)
PENALTIES = ("l1", "l2")


def auto_candidates(kind: str) -> int:
    """How many of the most frequent public words are candidate originals by default
    (``candidates="auto"``) for a channel of ``kind`` (``"exact"`` or ``"sampled"``).

    Measured on the quickstart (600 BBC documents, |W| = 50,000, 2 cores): tem ε = 1 with
    20,000 exact candidates 45 s, with 5,000 13 s at the same F1 (chance); mvl ε = 10 sampled,
    5,000 × 64 draws 51 s (F1 0.63), 2,000 × 32 draws 5 s (F1 0.67)."""
    return 5_000 if kind == "exact" else 2_000


# --------------------------------------------------------------------------------------------
# Posteriors, once per unique output word
# --------------------------------------------------------------------------------------------

class PosteriorCache:
    """P(w | o) for output words o, computed once per unique output word and kept.

    For each computed o: ``attr[o]`` the exact posteriors of the attribute words,
    ``top_ids[o]``/``top_p[o]`` the ``top_k`` largest entries of the *excess* part
    π(w)·a_w(o)/N_o (vocabulary ids), and ``floor_mass[o]`` = B/N_o, the posterior mass of the
    floor part, which is the same distribution bg(w) ∝ π(w)·f_w for every o (so a document's
    expected bag of words is Σ_t excess_t + (Σ_t floor_mass_t)·bg exactly, up to the top-k cut
    of the excess).

    Args:
        channel: the channel (``None``: identity).
        prior: π over ``channel.cand`` (normalised), ignored for the identity.
        attr_ids: vocabulary ids of the attribute words (each must be a candidate).
        n_vocab: |W|.
        top_k: entries of the excess kept per output word.
    """

    def __init__(self, channel: Channel | None, prior: np.ndarray | None, attr_ids: np.ndarray,
                 n_vocab: int, top_k: int) -> None:
        self.channel = channel
        self.n_vocab = n_vocab
        self.attr_ids = np.asarray(attr_ids, dtype=np.int64)
        self.top_k = int(top_k) if channel is not None else 1
        self.done = np.zeros(n_vocab, dtype=bool)
        self.attr = np.zeros((n_vocab, len(self.attr_ids)))
        self.top_ids = np.zeros((n_vocab, self.top_k), dtype=np.int64)
        self.top_p = np.zeros((n_vocab, self.top_k))
        self.floor_mass = np.zeros(n_vocab)
        if channel is not None:
            self.prior = np.asarray(prior, dtype=np.float64)
            self.pf = self.prior * channel.floor
            self.B = float(self.pf.sum())
            self.attr_cols = np.searchsorted(channel.cand, self.attr_ids)
            if len(self.attr_ids) and not np.array_equal(channel.cand[self.attr_cols],
                                                         self.attr_ids):
                raise ValueError("informed: every attribute word must be a candidate original")

    def ensure(self, outputs: np.ndarray) -> None:
        """Compute the posteriors of the output ids not computed yet (tiles of unique words)."""
        todo = np.unique(outputs)
        todo = todo[~self.done[todo]]
        if not len(todo):
            return
        if self.channel is None:  # identity: the original word is the token itself
            self.attr[todo] = (todo[:, None] == self.attr_ids[None, :])
            self.top_ids[todo, 0] = todo
            self.top_p[todo, 0] = 1.0
        else:
            for a in range(0, len(todo), TILE):
                self._tile(todo[a:a + TILE])
        self.done[todo] = True

    def _tile(self, o: np.ndarray) -> None:
        ch, t, k = self.channel, len(o), self.top_k
        ex = ch.excess(o)
        if ex[0] == "dense":
            s = ex[1] * self.prior[None, :]  # π(w)·a_w(o), (t, C)
            norm = self.B + s.sum(axis=1)
            a_attr = ex[1][:, self.attr_cols]
            kk = min(k, s.shape[1])
            cols = np.argpartition(-s, kk - 1, axis=1)[:, :kk]
            vals = np.take_along_axis(s, cols, axis=1).ravel()
            rows, rank, cols = np.repeat(np.arange(t), kk), np.tile(np.arange(kk), t), cols.ravel()
        else:
            _, r, c, a = ex
            s = a * self.prior[c]
            norm = self.B + np.bincount(r, weights=s, minlength=t)
            a_attr = np.zeros((t, len(self.attr_ids)))
            for j, col in enumerate(self.attr_cols):  # a handful of attribute words
                hit = c == col
                a_attr[r[hit], j] = a[hit]
            # top-k per row: sort by (row, −value), keep the first k of every row
            order = np.lexsort((-s, r))
            r, c, s = r[order], c[order], s[order]
            rank = np.arange(len(r)) - np.searchsorted(r, np.arange(t))[r]
            keep = rank < k
            rows, rank, cols, vals = r[keep], rank[keep], c[keep], s[keep]
        with np.errstate(invalid="ignore", divide="ignore"):
            inv = np.where(norm > 0, 1.0 / norm, 0.0)  # N_o = 0: no candidate can produce o
        if len(self.attr_ids):
            # P(e | o) = π(e)·(f_e + a_e(o)) / N_o, exact
            pe = self.prior[self.attr_cols] * ch.floor[self.attr_cols]
            pa = self.prior[self.attr_cols]
            self.attr[o] = (pe[None, :] + pa[None, :] * a_attr) * inv[:, None]
        self.floor_mass[o] = self.B * inv
        self.top_ids[o] = 0
        self.top_p[o] = 0.0
        self.top_ids[o[rows], rank] = ch.cand[cols]
        self.top_p[o[rows], rank] = vals * inv[rows]


# --------------------------------------------------------------------------------------------
# The adversary
# --------------------------------------------------------------------------------------------

class InformedAdversary(Model):
    """Bayes-posterior attribute adversary that knows the mechanism (see the module docstring).

    Args:
        privatizer: the fitted :class:`bench.privatize.Privatizer` of the cell (built fresh for
            the adversary; its random stream may be consumed), or ``None`` for the unprivatized
            baseline (identity channel).
        attribute_words: the attribute's words, one entry per label of a multilabel attribute
            (e.g. entity names; multi-word names are split on spaces and also scored as a
            phrase); ``None`` for attributes without words (the bag-of-words feature map).
        n_classes: number of classes of a 1-D attribute when a split misses some.
        seed: solver seed.
        prior: public prior over original words: ``"zipf"`` (π(w) ∝ 1/(rank+1)^``zipf_s``,
            rank = row of the public embedding, which is in corpus-frequency order) or
            ``"uniform"``. Never estimated from the private data.
        zipf_s: the Zipf exponent.
        candidates: the candidate originals are the ``candidates`` most frequent public words
            plus the attribute words (``None``: the whole vocabulary). Default (``"auto"``):
            5,000 for an exact channel (80% of a Zipf prior's mass over 50,000 words), 2,000
            for a sampled one. The posterior is exact over this set, i.e. conditioned on the
            original being one of them.
        n_samples: draws per candidate for a sampled channel (default 32).
        smoothing: total add-α pseudo-count of a sampled channel (α = smoothing/|W|).
        top_k: entries of the posterior kept per output word for the bag of words.
        features: ``"attribute"``, ``"bag"``, ``"both"`` or ``"auto"`` (attribute words given:
            ``attribute`` and ``both`` picked on dev; else ``bag``).
        channel: ``"auto"`` (exact where the mechanism has a closed form, else sampled) or
            ``"sampled"`` (always estimate by sampling; for checks).
        C_grid: inverse regularisation strengths picked on dev.
        penalties: penalties picked on dev (bag features; attribute-only features use L2).
        channel_cache: the results folder's channel cache
            (:class:`bench.results.channels.ChannelStore`, which the runner passes): a channel
            computed for another cell with the same key is read from it, bit for bit the one a
            recomputation gives (:mod:`bench.attacks.informed_channel`). ``None``: the channel
            is cached per privatizer object only.
    """

    name = "informed"
    # 2: a sampled channel is drawn from a stream seeded by its key (the configuration, not the
    #    cell's seed), so one serves every seed and model (informed_channel.CHANNEL_FORMAT 2)
    version = "2"
    accepts = frozenset({"text"})
    # what the runner hands the constructor besides seed and n_classes (bench.attacks.adversary.
    # ADVERSARY_NEEDS): the cell's mechanism, the attribute's words and the channel cache
    needs = frozenset({"privatizer", "attribute_words", "channel_cache"})

    def __init__(self, *, privatizer: Any = None, attribute_words: Sequence[str] | None = None,
                 n_classes: int | None = None, seed: int = 0, prior: str = "zipf",
                 zipf_s: float = 1.0, candidates: int | None | str = "auto",
                 n_samples: int = 32, smoothing: float = 1.0, top_k: int = 8,
                 features: str = "auto", channel: str = "auto",
                 C_grid: Sequence[float] = DEFAULT_C_GRID,
                 penalties: Sequence[str] = PENALTIES, channel_cache: Any = None) -> None:
        if privatizer is not None:
            channel_kind(privatizer)  # vectors output -> ModelInputError with the reason
        if prior not in PRIORS:
            raise ValueError(f"informed: prior must be one of {PRIORS}, got {prior!r}")
        if not float(zipf_s) >= 0:
            raise ValueError(f"informed: zipf_s must be >= 0, got {zipf_s}")
        if candidates != "auto" and candidates is not None and int(candidates) < 1:
            raise ValueError(f"informed: candidates must be >= 1, None or 'auto', got "
                             f"{candidates!r}")
        if int(n_samples) < 1 or int(top_k) < 1:
            raise ValueError("informed: n_samples and top_k must be >= 1")
        if not float(smoothing) > 0:
            raise ValueError(f"informed: smoothing must be > 0, got {smoothing}")
        if channel not in ("auto", "sampled"):
            raise ValueError(f"informed: channel must be 'auto' or 'sampled', got {channel!r}")
        if features not in (*FEATURE_SETS, "auto"):
            raise ValueError(f"informed: features must be one of {FEATURE_SETS} or 'auto', got "
                             f"{features!r}")
        if features in ("attribute", "both") and not attribute_words:
            raise ValueError(f"informed: features {features!r} need attribute words")
        grid = tuple(float(c) for c in C_grid)
        if not grid or any(not c > 0 for c in grid):
            raise ValueError(f"informed: C_grid must be values > 0, got {list(C_grid)}")
        if not penalties or any(p not in PENALTIES for p in penalties):
            raise ValueError(f"informed: penalties must be a subset of {PENALTIES}")
        self.privatizer = privatizer
        self.attribute_words = None if attribute_words is None else [str(w) for w in
                                                                     attribute_words]
        self.n_classes = n_classes
        self.seed = int(seed)
        self.prior = prior
        self.zipf_s = float(zipf_s)
        self.candidates = candidates
        self.n_samples = int(n_samples)
        self.smoothing = float(smoothing)
        self.top_k = int(top_k)
        self.features = features
        self.channel = channel
        self.C_grid = grid
        self.penalties = tuple(penalties)
        self.channel_cache = channel_cache
        self._post: PosteriorCache | None = None

    def params(self) -> dict[str, Any]:
        """The settings and, once fitted, the choices made (``chosen_*``, channel, timing)."""
        kind = getattr(self, "channel_kind_", None) or channel_kind(self.privatizer)
        return {"channel": "sampled" if kind == "exact" and self.channel == "sampled" else kind,
                "prior": self.prior, "zipf_s": self.zipf_s,
                "candidates": self.candidates, "n_candidates": getattr(self, "n_candidates_",
                                                                       None),
                "n_samples": self.n_samples, "smoothing": self.smoothing, "top_k": self.top_k,
                "features": self.features, "C_grid": list(self.C_grid),
                "penalties": list(self.penalties), "seed": self.seed,
                "chosen_features": getattr(self, "features_", None),
                "chosen_C": getattr(self, "C_", None),
                "chosen_penalty": getattr(self, "penalty_", None),
                "channel_seconds": getattr(self, "channel_seconds_", None),
                "channel_cache": getattr(self, "channel_cache_", None)}

    # -- the channel and posteriors ----------------------------------------------------------
    def _embedding(self):
        if channel_kind(self.privatizer) != "identity":
            return self.privatizer.embedding
        from bench.models.base import public_embedding

        return public_embedding()

    def _setup(self) -> None:
        emb = self._embedding()
        self.emb_ = emb
        n = emb.size
        # attribute phrases -> vocabulary ids (words outside the vocabulary cannot be read:
        # privatization replaces them by <unk>, which is never an output)
        self.phrases_: list[list[int]] = []
        for name in self.attribute_words or []:
            ids = [emb.word_to_id.get(w, -1) for w in name.lower().split()]
            if any(i < 0 for i in ids):
                logger.warning("informed: attribute %r has words outside the public vocabulary; "
                               "its score is 0", name)
                ids = []
            self.phrases_.append(ids)
        attr = np.unique(np.array([i for p in self.phrases_ for i in p], dtype=np.int64))
        self.attr_ids_ = attr
        self.col_of_attr_ = {int(w): j for j, w in enumerate(attr)}
        if channel_kind(self.privatizer) == "identity":  # the baseline, or its text published
            self.n_candidates_ = n
            self._post = PosteriorCache(None, None, attr, n, 1)
            self.channel_seconds_ = 0.0
            self.costs_ = {}
            return
        kind = channel_kind(self.privatizer)
        if self.channel == "sampled":
            kind = "sampled"
        size = self.candidates
        if size == "auto":
            size = auto_candidates(kind)
        cand = np.arange(n) if size is None else np.union1d(np.arange(min(int(size), n)), attr)
        self.n_candidates_ = len(cand)
        ch, how = get_channel(self.privatizer, cand, n_samples=self.n_samples,
                              smoothing=self.smoothing, sampled=kind == "sampled",
                              store=self.channel_cache)
        self.channel_seconds_ = how["seconds"]
        self.channel_cache_ = how["cache"]  # "computed", or the cache it came from
        # what the cell's runtime record adds up (bench.run.attacks): channels computed vs reused
        self.costs_ = channel_costs(how)
        self.channel_kind_ = ch.kind  # "sampled" also where a mechanism's channel() gave None
        if self.prior == "zipf":
            prior = 1.0 / (cand + 1.0) ** self.zipf_s  # rank = row (frequency order)
        else:
            prior = np.ones(len(cand))
        self._post = PosteriorCache(ch, prior / prior.sum(), attr, n, self.top_k)

    def posterior(self, outputs: np.ndarray) -> PosteriorCache:
        """The posterior cache, with ``outputs`` (vocabulary ids) computed."""
        if self._post is None:
            self._setup()
        self._post.ensure(np.asarray(outputs, dtype=np.int64))
        return self._post

    # -- features ----------------------------------------------------------------------------
    def _encode(self, X: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, int]:
        """Flat vocabulary ids (−1: out of vocabulary) and document index of every token."""
        self._check_input(X)
        docs = as_token_lists(X)
        if self._post is None:
            self._setup()
        lengths = np.array([len(d) for d in docs], dtype=np.int64)
        flat = [t.lower() for d in docs for t in d]
        w2i = self.emb_.word_to_id
        ids = np.fromiter((w2i.get(t, -1) for t in flat), np.int64, len(flat))
        doc = np.repeat(np.arange(len(docs)), lengths)
        # OOV tokens (only on the baseline: privatized output is in the vocabulary) stay as -1:
        # no evidence, but they keep the token positions (phrases do not jump over them)
        return ids, doc, len(docs)

    def _attribute_features(self, ids: np.ndarray, doc: np.ndarray, n_docs: int) -> np.ndarray:
        """Per attribute phrase: P(it occurs somewhere), log expected count (+ per-word P)."""
        n = len(ids)
        valid = ids >= 0
        P = np.zeros((n, len(self.attr_ids_)))
        if valid.any():
            post = self.posterior(ids[valid])
            P[valid] = post.attr[ids[valid]]  # (tokens, attribute words), 0 for OOV tokens
        same_next = np.zeros(n, dtype=bool)  # token t + 1 is in the same document as t
        same_next[:-1] = doc[1:] == doc[:-1]
        feats = []
        for phrase in self.phrases_:
            if not phrase:
                feats += [np.zeros(n_docs), np.zeros(n_docs)]
                continue
            # P(the phrase starts at token t) = Π_j P(e_j | o_{t+j}): the noise is independent
            # per token occurrence, and so are the posteriors under the per-token prior
            p = P[:, self.col_of_attr_[phrase[0]]].copy()
            for j, w in enumerate(phrase[1:], start=1):
                nxt = np.zeros(n)
                nxt[: n - j] = P[j:, self.col_of_attr_[w]]
                cont = np.zeros(n, dtype=bool)
                cont[: n - j] = same_next[j - 1: n - 1]  # token t + j continues the document
                p *= nxt * cont
            feats += list(self._aggregate(p, doc, n_docs))
            if len(phrase) > 1:
                feats += [self._aggregate(P[:, self.col_of_attr_[w]], doc, n_docs)[0]
                          for w in phrase]
        return np.stack(feats, axis=1)

    @staticmethod
    def _aggregate(p: np.ndarray, doc: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
        """``1 − Π_t (1 − p_t)`` (P(some token was it)) and ``log(Σ_t p_t + 1e−3)`` per doc."""
        log_none = np.bincount(doc, weights=np.log1p(-np.minimum(p, 1.0 - 1e-12)),
                               minlength=n_docs)
        count = np.bincount(doc, weights=p, minlength=n_docs)
        return -np.expm1(log_none), np.log(count + 1e-3)

    def _bag(self, ids: np.ndarray, doc: np.ndarray, n_docs: int) -> sparse.csr_matrix:
        """Posterior-expected bag of words Σ_t P(w | o_t) (top-k per output word) + the floor
        mass Σ_t B/N_{o_t} as one extra column."""
        keep = ids >= 0
        ids, doc = ids[keep], doc[keep]
        post = self.posterior(ids)
        k = post.top_k
        rows = np.repeat(doc, k)
        cols = post.top_ids[ids].ravel()
        vals = post.top_p[ids].ravel()
        nz = vals > 0
        n = self.emb_.size
        bag = sparse.coo_matrix((vals[nz], (rows[nz], cols[nz])), shape=(n_docs, n + 1))
        fm = np.bincount(doc, weights=post.floor_mass[ids], minlength=n_docs)
        extra = sparse.coo_matrix((fm, (np.arange(n_docs), np.full(n_docs, n))),
                                  shape=(n_docs, n + 1))
        return (bag + extra).tocsr()

    def _features(self, X: Sequence[Any], which: str, fit: bool = False):
        ids, doc, n_docs = self._encode(X)
        parts = []
        if which in ("attribute", "both"):
            A = self._attribute_features(ids, doc, n_docs)
            if fit:
                self.mu_, self.sd_ = A.mean(axis=0), A.std(axis=0) + 1e-9
            parts.append(sparse.csr_matrix((A - self.mu_) / self.sd_))
        if which in ("bag", "both"):
            B = self._bag(ids, doc, n_docs)
            B.data = np.log1p(B.data)  # sublinear term frequency
            if fit:
                df = np.asarray((B > 0).sum(axis=0)).ravel()
                self.idf_ = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
            B = B @ sparse.diags(self.idf_)
            norms = np.sqrt(np.asarray(B.multiply(B).sum(axis=1)).ravel())
            B = sparse.diags(1.0 / np.maximum(norms, 1e-12)) @ B
            parts.append(sparse.csr_matrix(B))
        return sparse.hstack(parts).tocsr() if len(parts) > 1 else parts[0]

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, X: Sequence[Any], y: np.ndarray, X_dev: Sequence[Any] | None = None,
            y_dev: np.ndarray | None = None) -> InformedAdversary:
        """Fit the feature map's statistics and the classifier on ``(X, y)``; pick the feature
        set, penalty and ``C`` on ``(X_dev, y_dev)``."""
        from bench.metrics.classification import macro_f1

        y, info = self._check_labels(X, y, self.n_classes)
        self.labels_ = info
        if self.features != "auto":
            sets = [self.features]
        else:
            sets = ["attribute", "both"] if self.attribute_words else ["bag"]
        has_dev = X_dev is not None and y_dev is not None
        if not has_dev:
            sets = sets[:1]
        best = None
        for which in sets:
            Z = self._features(X, which, fit=True)
            stats = (getattr(self, "mu_", None), getattr(self, "sd_", None),
                     getattr(self, "idf_", None))
            Zdev = self._features(X_dev, which) if has_dev else None
            pens = ["l2"] if which == "attribute" else list(self.penalties)
            grid = (regularisation_grid(pens, self.C_grid) if has_dev
                    else [(pens[0], 10.0)])
            for pen, C in grid:
                heads = fit_linear_heads(Z, y, info, C, pen, self.seed)
                if Zdev is None:
                    best = (None, which, pen, C, heads, stats)
                    break
                score = macro_f1(np.asarray(y_dev),
                                 info.decide(linear_heads_proba(heads, Zdev, info)),
                                 None if info.multilabel else info.n_outputs)
                if best is None or score > best[0]:
                    best = (score, which, pen, C, heads, stats)
        (self.dev_macro_f1_, self.features_, self.penalty_, self.C_, self.heads_,
         (self.mu_, self.sd_, self.idf_)) = best
        return self

    def predict_proba(self, X: Sequence[Any]) -> np.ndarray:
        """Attribute probabilities (see :meth:`Model.predict_proba`)."""
        info = self._fitted()
        return linear_heads_proba(self.heads_, self._features(X, self.features_), info)
