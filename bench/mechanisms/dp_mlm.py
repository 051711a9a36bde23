"""DP-MLM (Meisenbacher, Chevli, Vladika & Matthes 2024, "DP-MLM: Differentially Private Text
Rewriting Using Masked Language Models", Findings of ACL 2024): every word rewritten by a masked
language model that reads its context.

For word i of a text S, the masked LM reads the pair (S, S with word i replaced by the mask
token) -- the original text as context, the masked copy as the slot to fill -- and the
replacement is drawn from its logits u at the mask, clipped to [b₁, b₂], at temperature
T = 2(b₂ − b₁)/ε:

    P(t | S, i) = exp(clip(u_t, b₁, b₂)/T) / Σ_s exp(clip(u_s, b₁, b₂)/T),

the exponential mechanism with utility range b₂ − b₁, so one replacement is ε-LDP whatever the
input (the same bound as DP-Prompt's, :func:`bench.mechanisms.dp_prompt.clipped_distribution`);
rewriting the n words of a text composes to (n·ε)-LDP. Special tokens are never drawn (an
input-independent restriction of the output set, which keeps the bound), nor the ids of a padded
output layer that the tokenizer does not name. A drawn word piece is
written without its continuation marker (``##``).

"Bring your own model": ``model`` is the folder of any local Hugging Face masked LM (BERT,
RoBERTa, ...; nothing is downloaded), and ``clip_min``/``clip_max`` must be stated for it (its
logits' range sets the temperature, and the suite ships no masked LM to measure one). Documents
are read in windows of ``window`` words (the text S of each word; the paper reads sentences),
each window one forward pass with a row per word. The mechanism writes word for word but each
word's distribution depends on its context, so there is no per-word channel: the per-token
measures and the informed adversary do not apply (``kind`` ``document``).

Example:
    >>> m = MECHANISMS.create("dp_mlm", epsilon=20.0, model="my-bert", clip_min=-5.0,
    ...                       clip_max=15.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.errors import InputError
from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS, Mechanism, check_positive
from bench.mechanisms.dp_prompt import clipped_distribution, draw_rows


def load_masked_lm(path: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of the local masked LM at ``path`` (eval mode, loaded once per
    process: :func:`bench.lm.load_local_model`).

    Raises:
        InputError: no Hugging Face model folder there.
    """
    from transformers import AutoModelForMaskedLM

    from bench.lm import load_local_model

    return load_local_model(path, AutoModelForMaskedLM, "dp_mlm")


@MECHANISMS.register()
class DPMLM(Mechanism):
    """DP-MLM (Meisenbacher et al. 2024): each word replaced by a draw from a local masked
    LM's clipped logits at temperature 2(b₂ − b₁)/ε, ε-LDP per word (see the module
    docstring)."""

    name = "dp_mlm"
    kind = "document"
    description = ("DP-MLM: each word rewritten by a local masked LM (bring your own, by "
                   "folder) reading its context, logits clipped to [b1, b2], temperature "
                   "2(b2 - b1)/eps (eps-LDP per word, n * eps per n-word document)")
    guarantee_kind = "pure"
    version = "1"
    output_text = "words (masked LM, in context)"
    """What ``bench ls mechanisms`` says it outputs."""
    guarantee_text = "eps-LDP per word"
    """How ``bench ls mechanisms`` states its guarantee."""

    def __init__(self, *, epsilon: float, model: str | None = None,
                 clip_min: float | None = None, clip_max: float | None = None,
                 window: int = 64, rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        if model is not None and not isinstance(model, str):
            raise ValueError(f"dp_mlm: model must be a local masked-LM folder, got {model!r}")
        bounds = []
        for what, v in (("clip_min", clip_min), ("clip_max", clip_max)):
            if v is None:
                bounds.append(None)
                continue
            try:
                bounds.append(float(v))
            except (TypeError, ValueError):
                raise ValueError(f"dp_mlm: {what} must be a number, got {v!r}") from None
            if not np.isfinite(bounds[-1]):
                raise ValueError(f"dp_mlm: {what} must be finite, got {v!r}")
        if None not in bounds and not bounds[0] < bounds[1]:
            raise ValueError(f"dp_mlm: clip_min must be below clip_max, got {clip_min!r}, "
                             f"{clip_max!r}")
        w = check_positive(window, "window", self.name)
        if w != int(w):
            raise ValueError(f"dp_mlm: window must be a whole number, got {window!r}")
        self.model, self.clip_min, self.clip_max, self.window = model, *bounds, int(w)
        self.params = {"model": model, "clip_min": self.clip_min, "clip_max": self.clip_max,
                       "window": self.window}

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε-LDP per rewritten word (a document of n words: n·ε, sequential composition)."""
        return Guarantee("pure", self.epsilon)

    def _check_ready(self) -> None:
        if self.model is None:
            raise InputError("dp_mlm: name your masked LM: model: <folder of a local Hugging "
                             "Face masked LM> (bring your own model; nothing is downloaded)")
        if self.clip_min is None or self.clip_max is None:
            raise InputError("dp_mlm: state clip_min and clip_max for your model (the range "
                             "its logits are clipped to sets the temperature 2(b2 - b1)/eps)")

    def window_distributions(self, words: list[str]) -> np.ndarray:
        """The exact replacement distribution of each word of one window (``(len(words),
        |V|)``, float64; special tokens 0, the rest renormalised over the others when drawn)."""
        from bench.models.base import default_threads
        from bench.numeric import torch_threads

        self._check_ready()
        model, tok = load_masked_lm(self.model)
        special = np.array(sorted(set(tok.all_special_ids)), dtype=np.int64)
        text = " ".join(words)
        masked = [" ".join(words[:i] + [tok.mask_token] + words[i + 1:])
                  for i in range(len(words))]
        with torch_threads(default_threads()) as torch, torch.no_grad():
            enc = tok([text] * len(words), masked, return_tensors="pt", padding=True,
                      truncation=True, max_length=512)
            enc = enc.to(model.device)
            logits = model(**enc).logits
            rows, cols = (enc["input_ids"] == tok.mask_token_id).nonzero(as_tuple=True)
            if len(rows) != len(words) or len(set(rows.tolist())) != len(words):
                raise InputError("dp_mlm: a window is longer than the model reads (512 word "
                                 "pieces for the pair): use a smaller window")
            u = logits[rows, cols].double().cpu().numpy()
        p = clipped_distribution(u, self.epsilon, self.clip_min, self.clip_max)
        p[:, special] = 0.0
        p[:, len(tok):] = 0.0  # rows of a padded output layer that name no token
        return p / p.sum(axis=1, keepdims=True)

    def privatize_documents(self, docs: list[list[str]]) -> list[list[str]]:
        """Each word of each document replaced by its draw (word for word)."""
        self._check_ready()
        _, tok = load_masked_lm(self.model)
        out: list[list[str]] = []
        for doc in docs:
            new: list[str] = []
            for a in range(0, len(doc), self.window):
                words = list(doc[a:a + self.window])
                picks = draw_rows(self.window_distributions(words), self.rng)
                new += [t.removeprefix("##").lower()
                        for t in tok.convert_ids_to_tokens(picks.tolist())]
            out.append(new)
        return out
