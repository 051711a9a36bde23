"""``autoencoder``: the DP-Rewrite-style text autoencoder of Huang et al. (2024).

Huang et al. (2024, Sec. 6 and App. A "Implementation Details") rewrite text from privatized
word embeddings with the autoencoder of DP-Rewrite (Igamberdiev et al. 2022): "one-layer BiLSTM
with dropout for the encoder ... dropout rate 0.5, Adam with an initial learning rate of 0.01 and
betas (0.5, 0.999), batch size 1024, and number of training epochs 100", and report its
reconstruction loss, ROUGE-1, BLEU, BERTScore and N_w (Tables 1-3).

Architecture (one module, :func:`_build_net`):

* **encoder**: a one-layer bidirectional LSTM over the privatized vectors ``r_i = CLIPEmb(w_i)
  + eta_i`` (Algorithm 1, step 3) of a document, dropout 0.5 on its outputs. The backward
  direction reads each document reversed within its own length, so padding never reaches a
  real position and a document's encoding does not depend on its batch;
* **decoder**: a one-layer LSTM whose input at position ``t`` is the encoder output at ``t``
  and the public embedding of the previous output word (teacher forcing in training, its own
  greedy choice when rewriting; a zero vector before the first word), followed by a linear
  layer over the **output vocabulary**: ``<unk>`` plus the public-embedding words seen in the
  rewriter's (public) training corpus, the ``max_vocab`` most frequent. Word-level mechanisms
  keep the length of a text, so the rewrite has one word per input vector.

Loss: mean cross-entropy per token (nats) of the original word given the privatized vectors;
an original word outside the output vocabulary is the target ``<unk>``.

Defaults that fit a 2-core machine, with the paper's values where they differ: ``epochs=10``
(paper 100), ``batch_size=64`` (paper 1024, for 8,539+ Yelp sentences; 1024 on a few thousand
short texts gives a handful of steps per epoch), ``hidden_size=128`` (not stated in the paper),
``max_vocab=10000`` (the paper's vocabulary of 10^4 words, Sec. 6.1). Gradients are clipped to
norm 5 (not stated in the paper; Adam at lr 0.01 on an LSTM diverges without it on these
corpora). Training runs with torch on the CPU here and on CUDA when available, like the
models (:mod:`bench.models`).

``train_embeddings: true`` (with ``allow_no_guarantee: true``; off by default) reproduces a
departure of the paper's public code (``model.py``: ``nn.Embedding`` initialised from GloVe,
its weights in the Adam optimiser with the rest, and the noise added to its rows inside the
model): one table of word vectors, initialised from the public embedding, is trained and feeds
both the decoder (previous words) and the encoder, whose input for a token w becomes
``r + (E[w] − E₀[w])`` -- the privatized vector plus the trained table's change since
initialisation, i.e. ``E[w] + η`` for an unclipped r = E₀[w] + η, as in the code. The rewriter
then reads each document's words when it rewrites, and the table can grow until the fixed
noise is negligible: no DP guarantee (:data:`TRAIN_EMBEDDINGS_REASON`).

Example:
    >>> rw = AutoencoderRewriter(epochs=5, seed=0).fit(noisy, tokens, embedding)
    >>> rw.rewrite(noisy_test)[0][:5]
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench import numeric
from bench.embeddings import UNK
from bench.models.base import default_threads, torch_context
from bench.rewriters.base import PUBLIC_PART, Rewriter, check_pairs

logger = logging.getLogger(__name__)

TRAIN_EMBEDDINGS_REASON = (
    "train_embeddings: the rewriter's word-vector table is trained (as the public code's "
    "nn.Embedding, in Adam with the rest) and the rewriter reads each token's original word to "
    "add that word's trained vector to the privatized one, so the rewrite depends on the private "
    "words beyond the privatized vectors, and the table can grow until the noise is negligible")
"""Why ``train_embeddings: true`` leaves the cell without a guarantee."""


def _build_net(d_in: int, d_word: int, hidden: int, n_out: int, dropout: float,
               word_table: np.ndarray, train_embeddings: bool = False):
    import torch
    from torch import nn

    class Autoencoder(nn.Module):
        """BiLSTM encoder over privatized vectors -> LSTM decoder -> linear over the vocabulary."""

        def __init__(self) -> None:
            super().__init__()
            self.fwd = nn.LSTM(d_in, hidden, batch_first=True)
            self.bwd = nn.LSTM(d_in, hidden, batch_first=True)
            self.drop = nn.Dropout(dropout)
            # previous-word vectors: the output vocabulary's public embeddings + a zero "start";
            # trained only under train_embeddings (the public code's departure), which also
            # adds the table's change since initialisation to the encoder input
            table = torch.as_tensor(word_table)
            self.words = nn.Embedding.from_pretrained(table, freeze=not train_embeddings)
            self.train_embeddings = train_embeddings
            if train_embeddings:
                self.register_buffer("words0", table.clone())
            self.dec = nn.LSTM(2 * hidden + d_word, hidden, batch_first=True)
            self.out = nn.Linear(hidden, n_out)

        @staticmethod
        def reverse_index(lengths: torch.Tensor, width: int) -> torch.Tensor:
            """Per row: positions reversed within the row's length (padding left in place)."""
            t = torch.arange(width, device=lengths.device)[None, :]
            rev = lengths[:, None] - 1 - t
            return torch.where(t < lengths[:, None], rev, t)

        def offsets(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            """E[w] − E₀[w] of the trained table at the real positions (0 on padding)."""
            t = torch.arange(ids.shape[1], device=ids.device)[None, :]
            real = (t < lengths[:, None]).to(self.words0.dtype)[:, :, None]
            return (self.words(ids) - self.words0[ids]) * real

        def encode(self, x: torch.Tensor, lengths: torch.Tensor,
                   ids: torch.Tensor | None = None) -> torch.Tensor:
            if self.train_embeddings:
                x = x + self.offsets(ids, lengths)
            idx = self.reverse_index(lengths, x.shape[1])
            xr = x.gather(1, idx[:, :, None].expand_as(x))
            with numeric.lstm_kernels():  # the pin's LSTM kernels (oneDNN under pin v4)
                f, _ = self.fwd(x)
                b, _ = self.bwd(xr)
            b = b.gather(1, idx[:, :, None].expand_as(b))
            return self.drop(torch.cat([f, b], dim=2))

        def forward(self, x: torch.Tensor, lengths: torch.Tensor, prev: torch.Tensor,
                    ids: torch.Tensor | None = None) -> torch.Tensor:
            """Teacher-forced logits ``(B, T, V)``; ``prev`` are the previous words' ids,
            ``ids`` the words' own (read only under ``train_embeddings``)."""
            enc = self.encode(x, lengths, ids)
            dec_in = torch.cat([enc, self.words(prev)], dim=2)
            with numeric.lstm_kernels():
                h, _ = self.dec(dec_in)
            return self.out(h)

        def greedy(self, x: torch.Tensor, lengths: torch.Tensor, start: int,
                   ids: torch.Tensor | None = None) -> torch.Tensor:
            """Greedy decoding: ``(B, T)`` output ids (one step per position, batched)."""
            enc = self.encode(x, lengths, ids)
            prev = torch.full((x.shape[0],), start, dtype=torch.int64, device=x.device)
            state = None
            steps = []
            for t in range(x.shape[1]):
                inp = torch.cat([enc[:, t], self.words(prev)], dim=1)[:, None, :]
                with numeric.lstm_kernels():
                    h, state = self.dec(inp, state)
                prev = self.out(h[:, 0]).argmax(dim=1)
                steps.append(prev)
            return torch.stack(steps, dim=1)

    return Autoencoder()


def _check_train_embeddings(train: Any, allow: Any) -> bool:
    """``train_embeddings`` validated against its acknowledgement ``allow_no_guarantee``."""
    for key, val in (("train_embeddings", train), ("allow_no_guarantee", allow)):
        if not isinstance(val, (bool, np.bool_)):
            raise ValueError(f"autoencoder: {key} must be true or false, got {val!r}")
    if train and not allow:
        raise ValueError("autoencoder: train_embeddings: true trains the word-vector table and "
                         "reads the private words, as the public code of Huang et al. (2024) "
                         "does, and leaves no DP guarantee; add allow_no_guarantee: true to run "
                         "it anyway (reported as 'no DP guarantee')")
    if allow and not train:
        raise ValueError("autoencoder: allow_no_guarantee: true without a departure "
                         "(train_embeddings: true); remove it")
    return bool(train)


class AutoencoderRewriter(Rewriter):
    """BiLSTM encoder over privatized embeddings, LSTM decoder over the output vocabulary.

    Args:
        corpus: the public training corpus (:data:`~bench.rewriters.base.PUBLIC_PART` or a
            dataset name; used by the runner, see :mod:`bench.rewriters.base`).
        hidden_size: LSTM hidden size (encoder, per direction, and decoder).
        dropout: dropout on the encoder outputs (paper: 0.5).
        lr: Adam learning rate (paper: 0.01).
        beta1: Adam's first beta (paper: 0.5; the second is 0.999).
        batch_size: documents per step (paper: 1024).
        epochs: training epochs (paper: 100).
        max_vocab: largest output vocabulary besides ``<unk>`` (paper: 10^4 words).
        max_len: positions per document kept for training (longer ones are cut there; a
            rewrite always covers the whole document).
        grad_clip: gradient-norm clipping (not in the paper; see the module docstring).
        train_embeddings: the public code's trained embedding table (see the module
            docstring); needs ``allow_no_guarantee``, and voids the guarantee.
        allow_no_guarantee: acknowledges ``train_embeddings``.
        seed: seeds initialisation, dropout and batch order.
        num_threads: torch CPU threads (default ``$BENCH_TORCH_THREADS``, else 1).
    """

    name = "autoencoder"
    version = "1"
    description = ("DP-Rewrite autoencoder (Huang et al. 2024, App. A): BiLSTM encoder over the "
                   "privatized embeddings, LSTM decoder over the output vocabulary")
    set_only_params = frozenset({"train_embeddings", "allow_no_guarantee"})

    def __init__(self, *, corpus: str = PUBLIC_PART, hidden_size: int = 128,
                 dropout: float = 0.5, lr: float = 0.01, beta1: float = 0.5,
                 batch_size: int = 64, epochs: int = 10, max_vocab: int = 10_000,
                 max_len: int = 200, grad_clip: float = 5.0, train_embeddings: bool = False,
                 allow_no_guarantee: bool = False, seed: int = 0,
                 num_threads: int | None = None) -> None:
        super().__init__(corpus=corpus)
        self.train_embeddings = _check_train_embeddings(train_embeddings, allow_no_guarantee)
        self.allow_no_guarantee = self.train_embeddings  # checked: the one implies the other
        for key, val in (("hidden_size", hidden_size), ("batch_size", batch_size),
                         ("epochs", epochs), ("max_vocab", max_vocab), ("max_len", max_len)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
                raise ValueError(f"autoencoder: {key} must be an integer >= 1, got {val!r}")
        if not 0 <= dropout < 1:
            raise ValueError(f"autoencoder: dropout must be in [0, 1), got {dropout!r}")
        if not lr > 0:
            raise ValueError(f"autoencoder: lr must be > 0, got {lr!r}")
        if not 0 <= beta1 < 1:
            raise ValueError(f"autoencoder: beta1 must be in [0, 1), got {beta1!r}")
        if not grad_clip > 0:
            raise ValueError(f"autoencoder: grad_clip must be > 0, got {grad_clip!r}")
        self.hidden_size, self.dropout, self.lr = int(hidden_size), float(dropout), float(lr)
        self.beta1, self.batch_size, self.epochs = float(beta1), int(batch_size), int(epochs)
        self.max_vocab, self.max_len = int(max_vocab), int(max_len)
        self.grad_clip, self.seed, self.num_threads = float(grad_clip), int(seed), num_threads

    @property
    def reads_tokens(self) -> bool:
        """True under ``train_embeddings``: a rewrite looks up each original word."""
        return self.train_embeddings

    def void_reasons(self) -> list[str]:
        """:data:`TRAIN_EMBEDDINGS_REASON` under ``train_embeddings``."""
        return [TRAIN_EMBEDDINGS_REASON] if self.train_embeddings else []

    # -- vocabulary --------------------------------------------------------------------------
    def _vocabulary(self, tokens: Sequence[Sequence[str]], embedding: Any) -> None:
        """Output words: ``<unk>`` + the most frequent training words in the public embedding
        (ties in embedding order), at most ``max_vocab`` of them."""
        counts = Counter(t for doc in tokens for t in doc if t in embedding.word_to_id)
        ranked = sorted(counts, key=lambda w: (-counts[w], embedding.word_to_id[w]))
        self.vocab_ = [UNK, *ranked[: self.max_vocab]]
        self.word_id_ = {w: i for i, w in enumerate(self.vocab_)}
        rows = np.array([embedding.word_to_id[w] for w in self.vocab_[1:]], dtype=np.int64)
        table = np.zeros((len(self.vocab_) + 1, embedding.dim), dtype=np.float32)
        table[0] = embedding.input_vectors()[embedding.unk_id]
        table[1:-1] = embedding.vectors[rows]
        self.word_table_ = table  # last row: the zero "start" vector
        self.start_id_ = len(self.vocab_)

    def _words(self, targets: Sequence[np.ndarray]) -> Sequence[np.ndarray] | None:
        """The encoder's word ids (the targets' ids) under ``train_embeddings``, else None."""
        return targets if self.train_embeddings else None

    def _targets(self, tokens: Sequence[Sequence[str]]) -> list[np.ndarray]:
        get = self.word_id_.get
        return [np.fromiter((get(t, 0) for t in doc), np.int64, len(doc)) for doc in tokens]

    # -- batching ----------------------------------------------------------------------------
    def _batches(self, lengths: np.ndarray, rng: np.random.Generator | None) -> list[np.ndarray]:
        """Index batches of similar length (little padding); shuffled when ``rng`` is given."""
        n = len(lengths)
        order = rng.permutation(n) if rng is not None else np.arange(n)
        chunk = self.batch_size * 20
        batches: list[np.ndarray] = []
        for s in range(0, n, chunk):
            part = order[s:s + chunk]
            part = part[np.argsort(-lengths[part], kind="stable")]
            batches += [part[i:i + self.batch_size] for i in range(0, len(part),
                                                                     self.batch_size)]
        if rng is not None:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        return batches

    def _tensors(self, noisy: Sequence[np.ndarray], idx: np.ndarray,
                 targets: Sequence[np.ndarray] | None = None, cut: int | None = None,
                 words: Sequence[np.ndarray] | None = None):
        """``[x, lengths]``, then ``y, prev`` with ``targets``, then the words' ids with
        ``words`` (``train_embeddings`` only; 0 on padding)."""
        import torch

        lens = np.array([min(len(noisy[i]), cut or len(noisy[i])) for i in idx], np.int64)
        width = int(lens.max())
        x = np.zeros((len(idx), width, noisy[idx[0]].shape[1]), np.float32)
        for row, i in enumerate(idx):
            x[row, : lens[row]] = noisy[i][: lens[row]]
        out = [torch.as_tensor(x).to(self.device_), torch.as_tensor(lens).to(self.device_)]
        if targets is not None:
            y = np.full((len(idx), width), -100, np.int64)  # -100: ignored by the loss
            prev = np.full((len(idx), width), self.start_id_, np.int64)
            for row, i in enumerate(idx):
                y[row, : lens[row]] = targets[i][: lens[row]]
                prev[row, 1: lens[row]] = targets[i][: lens[row] - 1]
            out += [torch.as_tensor(y).to(self.device_), torch.as_tensor(prev).to(self.device_)]
        if words is not None:
            ids = np.zeros((len(idx), width), np.int64)
            for row, i in enumerate(idx):
                ids[row, : lens[row]] = words[i][: lens[row]]
            out.append(torch.as_tensor(ids).to(self.device_))
        return out

    # -- training ----------------------------------------------------------------------------
    def fit(self, noisy: Sequence[np.ndarray], tokens: Sequence[Sequence[str]],
            embedding: Any) -> AutoencoderRewriter:
        """Train on (privatized vectors, original tokens) pairs with Adam (see the module
        docstring). Empty documents are left out. Sets ``train_loss_`` (last epoch's mean
        per-token loss), ``epochs_run_``, ``fit_seconds_`` and ``train_tokens_``."""
        import torch

        check_pairs(noisy, tokens)
        keep = [i for i, x in enumerate(noisy) if len(x)]
        if not keep:
            raise ValueError("autoencoder: every training document is empty")
        noisy = [noisy[i] for i in keep]
        tokens = [tokens[i] for i in keep]
        self.dim_ = noisy[0].shape[1]
        if self.train_embeddings and self.dim_ != embedding.dim:
            raise ValueError(f"autoencoder: train_embeddings adds the trained word vectors "
                             f"({embedding.dim}-d) to the privatized ones ({self.dim_}-d); use "
                             f"a sensitivity approach that keeps the dimension")
        self._vocabulary(tokens, embedding)
        targets = self._targets(tokens)
        self.device_ = numeric.torch_device()  # cpu in the pinned environment
        lengths = np.array([min(len(x), self.max_len) for x in noisy], np.int64)
        rng = np.random.default_rng(self.seed)
        t0 = time.perf_counter()
        with torch_context(self.seed, self.num_threads):
            net = _build_net(self.dim_, embedding.dim, self.hidden_size, len(self.vocab_),
                             self.dropout, self.word_table_,
                             self.train_embeddings).to(self.device_)
            self.net_ = net
            opt = torch.optim.Adam([p for p in net.parameters() if p.requires_grad],
                                   lr=self.lr, betas=(self.beta1, 0.999))
            loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100, reduction="sum")
            for epoch in range(1, self.epochs + 1):
                net.train()
                total = 0.0
                for idx in self._batches(lengths, rng):
                    x, lens, y, prev, *ids = self._tensors(noisy, idx, targets, self.max_len,
                                                           self._words(targets))
                    opt.zero_grad()
                    logits = net(x, lens, prev, *ids)
                    loss = loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
                    (loss / lens.sum()).backward()
                    torch.nn.utils.clip_grad_norm_(net.parameters(), self.grad_clip)
                    opt.step()
                    total += float(loss.item())
                self.train_loss_ = total / int(lengths.sum())
                logger.debug("autoencoder epoch %d/%d: train loss %.4f", epoch, self.epochs,
                             self.train_loss_)
        self.epochs_run_ = self.epochs
        self.train_tokens_ = int(lengths.sum())
        self.fit_seconds_ = time.perf_counter() - t0
        logger.info("autoencoder: %d documents, %d tokens, vocabulary %d, %d epochs in %.1f s "
                    "(train loss %.3f)", len(noisy), self.train_tokens_, len(self.vocab_),
                    self.epochs, self.fit_seconds_, self.train_loss_)
        return self

    def _fitted(self) -> None:
        if not hasattr(self, "net_"):
            raise RuntimeError("autoencoder is not fitted; call fit() first")

    def _check_dim(self, noisy: Sequence[np.ndarray]) -> None:
        d = check_pairs(noisy)
        if d != self.dim_:
            raise ValueError(f"autoencoder was fitted on {self.dim_}-d vectors, got {d}-d")

    # -- use ---------------------------------------------------------------------------------
    def rewrite(self, noisy: Sequence[np.ndarray],
                tokens: Sequence[Sequence[str]] | None = None) -> list[list[str]]:
        """Greedy rewrite: one output word per input vector (``<unk>`` where the decoder picks
        the unknown-word class). ``tokens``: the original words, needed (and read) only under
        ``train_embeddings``."""
        import torch

        self._fitted()
        self._check_dim(noisy)
        words = None
        if self.train_embeddings:
            if tokens is None:
                raise ValueError("autoencoder: train_embeddings reads the original words of "
                                 "the documents it rewrites; pass tokens")
            check_pairs(noisy, tokens)
            words = self._targets(tokens)
        out: list[list[str]] = [[] for _ in noisy]
        lengths = np.array([len(x) for x in noisy], np.int64)
        nonempty = np.flatnonzero(lengths)
        vocab = np.asarray(self.vocab_, dtype=object)
        self.net_.eval()
        with numeric.torch_threads(self.num_threads or default_threads()), torch.no_grad():
            for idx in self._batches(lengths[nonempty], None):
                rows = nonempty[idx]
                x, lens, *wids = self._tensors(noisy, rows, words=words)
                ids = self.net_.greedy(x, lens, self.start_id_, *wids).cpu().numpy()
                for r, i in enumerate(rows):
                    out[i] = vocab[ids[r, : lengths[i]]].tolist()
        return out

    def loss(self, noisy: Sequence[np.ndarray], tokens: Sequence[Sequence[str]]) -> float:
        """Mean per-token cross-entropy (nats), teacher-forced, over all positions of the
        non-empty documents (the reconstruction loss of Huang et al. 2024, Tables 1-3)."""
        import torch

        self._fitted()
        check_pairs(noisy, tokens)
        self._check_dim(noisy)
        targets = self._targets(tokens)
        lengths = np.array([len(x) for x in noisy], np.int64)
        nonempty = np.flatnonzero(lengths)
        if not len(nonempty):
            raise ValueError("autoencoder: no tokens to compute a loss on")
        self.net_.eval()
        total = 0.0
        loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100, reduction="sum")
        with numeric.torch_threads(self.num_threads or default_threads()), torch.no_grad():
            for idx in self._batches(lengths[nonempty], None):
                rows = nonempty[idx]
                x, lens, y, prev, *ids = self._tensors(noisy, rows, targets,
                                                       words=self._words(targets))
                logits = self.net_(x, lens, prev, *ids)
                total += float(loss_fn(logits.reshape(-1, logits.shape[-1]),
                                       y.reshape(-1)).item())
        return total / int(lengths.sum())
