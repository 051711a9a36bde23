"""DP-Prompt (Utpala, Hooker & Chen 2023, "Locally Differentially Private Document Generation
Using Zero Shot Prompting", Findings of EMNLP 2023): a document-level mechanism.

A local causal language model is prompted zero-shot to paraphrase the private document,

    "Document : {document}\\nParaphrase of the document :"

(an instruct model, as the shipped one, receives it as a user turn through its chat template,
and its end-of-turn token ends the paraphrase), and every generated token is sampled from the
model's next-token logits u, clipped to [b₁, b₂] and divided by a temperature T:

    P(t | prefix, document) = exp(clip(u_t, b₁, b₂)/T) / Σ_s exp(clip(u_s, b₁, b₂)/T).

For any two documents the clipped logits of every token differ by at most b₂ − b₁, so one token
is an exponential-mechanism draw with utility range b₂ − b₁ (McSherry & Talwar 2007): it is
ε-LDP with ε = 2(b₂ − b₁)/T (the paper's Theorem 1); this mechanism takes ε and sets
T = 2(b₂ − b₁)/ε. Generating at most n = ``max_new_tokens`` tokens composes sequentially to
(n·ε)-LDP for the whole paraphrase (the end-of-text token is a draw like any other, so its
length is covered). The record states the per-token ε with the multiplier n
(:meth:`DPPrompt.guarantee`): the document's guarantee is n·ε.

The model is the suite's offline SmolLM2-135M-Instruct by default (:mod:`bench.lm`), or any
local Hugging Face causal LM given by folder (``model``); the paper used far larger models
(FLAN-T5 variants, ChatGPT, open chat models): a 135M model paraphrases far worse
(docs/usage.md, "Guarantees as reported").
The default clipping bounds are SmolLM2's, measured on its greedy paraphrases of 6 BBC and 6
`rt` documents (288 generated positions): the median logit of a position is about 2 (median
over positions), its largest logit 22.5 in the median, 32.9 at the 90th and 39.9 at the 99th
percentile; so b₁ = 2, b₂ = 33 (logits below a typical median are floored together, and the top
token is clipped at about one position in ten; state others with ``clip_min``/``clip_max``,
for another model too). The paper's released code samples without clipping, which voids the
guarantee; this one clips.

Sampling uses the cell's NumPy stream on float64 probabilities (inverse CDF), so a cell is
reproducible in the pinned environment. Documents are generated ``batch_size`` at a time (16 by
default; sorted by prompt length, left-padded, masked, each document at its own positions), one
forward pass per generated token for the whole batch: about twice the throughput of one
document at a time on one CPU core. A document's logits do not depend on its batch companions
(beyond float rounding), so its paraphrase is drawn from the same distribution; which uniform of
the stream it gets does depend on the batch size, so the size is a parameter of the cell.
Output text is tokenized as the datasets are (:func:`bench.embeddings.tokenize`); it is not
word for word, so the per-token measures and the informed adversary do not apply (their records
say why).

Example:
    >>> m = MECHANISMS.create("dp_prompt", epsilon=62.0, rng=0, max_new_tokens=32)
    >>> m.temperature
    1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bench.guarantee import Guarantee
from bench.mechanisms.base import MECHANISMS, Mechanism, check_positive

PROMPT = "Document : {document}\nParaphrase of the document :"
"""The paper's zero-shot prompt (Utpala et al. 2023, Sec. 3)."""


def clipped_distribution(logits: np.ndarray, epsilon: float, clip_min: float,
                         clip_max: float) -> np.ndarray:
    """The exact sampling distribution of one token: softmax(clip(u, b₁, b₂)/T) with
    T = 2(b₂ − b₁)/ε, in float64 (``logits``: ``(..., |V|)``)."""
    t = 2.0 * (clip_max - clip_min) / epsilon
    z = np.clip(np.asarray(logits, dtype=np.float64), clip_min, clip_max) / t
    z -= z.max(axis=-1, keepdims=True)
    w = np.exp(z)
    return w / w.sum(axis=-1, keepdims=True)


def draw(p: np.ndarray, rng: np.random.Generator) -> int:
    """One draw from the probability vector ``p`` (:func:`draw_rows` of one row)."""
    return int(draw_rows(p[None, :], rng)[0])


def prompt_ids(tok: Any, document: str, start: int) -> list[int]:
    """The prompt's token ids: the paper's prompt as a user turn through the tokenizer's chat
    template where it has one (an instruct model, as the shipped SmolLM2), else after the
    start-of-text token."""
    text = PROMPT.format(document=document)
    if getattr(tok, "chat_template", None):
        chat = tok.apply_chat_template([{"role": "user", "content": text}],
                                       add_generation_prompt=True, tokenize=False)
        return tok(chat, add_special_tokens=False)["input_ids"]
    return [start] + tok(text, add_special_tokens=False)["input_ids"]


def draw_rows(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of ``p`` (``(n, |V|)``, rows summing to anything > 0), by inverse CDF
    with one uniform per row from ``rng``: the draws :func:`draw` makes row by row."""
    c = np.cumsum(p, axis=1)
    r = rng.random(len(p)) * c[:, -1]
    return np.minimum((c <= r[:, None]).sum(axis=1), p.shape[1] - 1)


@MECHANISMS.register()
class DPPrompt(Mechanism):
    """DP-Prompt (Utpala et al. 2023): zero-shot paraphrasing by a local causal LM with
    clipped logits and temperature 2(b₂ − b₁)/ε, ε-LDP per generated token (see the module
    docstring)."""

    name = "dp_prompt"
    kind = "document"
    description = ("DP-Prompt: zero-shot paraphrase by a local causal LM, logits clipped to "
                   "[b1, b2], temperature 2(b2 - b1)/eps (eps-LDP per generated token, "
                   "max_new_tokens * eps per document)")
    guarantee_kind = "pure"
    version = "2"
    """Version 2: documents generated in batches (``batch_size``); version 1 one at a time."""
    output_text = "text (a paraphrase)"
    """What ``bench ls mechanisms`` says it outputs."""
    guarantee_text = "eps-LDP per generated token"
    """How ``bench ls mechanisms`` states its guarantee."""

    def __init__(self, *, epsilon: float, model: str | None = None, clip_min: float = 2.0,
                 clip_max: float = 33.0, max_new_tokens: int = 64, batch_size: int = 16,
                 rng: Any = None) -> None:
        super().__init__(epsilon=epsilon, rng=rng)
        try:
            lo, hi = float(clip_min), float(clip_max)
        except (TypeError, ValueError):
            raise ValueError(f"dp_prompt: clip_min and clip_max must be numbers, got "
                             f"{clip_min!r}, {clip_max!r}") from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"dp_prompt: clip_min must be below clip_max (both finite), got "
                             f"{clip_min!r}, {clip_max!r}")
        n = check_positive(max_new_tokens, "max_new_tokens", self.name)
        if n != int(n):
            raise ValueError(f"dp_prompt: max_new_tokens must be a whole number, got "
                             f"{max_new_tokens!r}")
        b = check_positive(batch_size, "batch_size", self.name)
        if b != int(b):
            raise ValueError(f"dp_prompt: batch_size must be a whole number, got {batch_size!r}")
        if model is not None and not isinstance(model, str):
            raise ValueError(f"dp_prompt: model must be a local model folder (a string) or "
                             f"omitted, got {model!r}")
        self.model, self.clip_min, self.clip_max = model, lo, hi
        self.max_new_tokens, self.batch_size = int(n), int(b)
        self.params = {"model": model, "clip_min": lo, "clip_max": hi,
                       "max_new_tokens": self.max_new_tokens, "batch_size": self.batch_size}

    @property
    def temperature(self) -> float:
        """T = 2(b₂ − b₁)/ε."""
        return 2.0 * (self.clip_max - self.clip_min) / self.epsilon

    def guarantee(self, sensitivity=None) -> Guarantee:
        """ε-LDP per generated token; the multiplier is ``max_new_tokens``, so the effective ε
        is the whole paraphrase's (sequential composition)."""
        return Guarantee("pure", self.epsilon, multiplier=float(self.max_new_tokens),
                         metric="", reason="")

    def privatize_documents(self, docs: list[list[str]]) -> list[list[str]]:
        """Token lists in, token lists out: each document detokenized, paraphrased and
        tokenized as the datasets are (:func:`bench.embeddings.tokenize`)."""
        from bench.embeddings import detokenize, tokenize

        return [tokenize(t) for t in self.paraphrase([detokenize(d) for d in docs])]

    def paraphrase(self, documents: list[str]) -> list[str]:
        """The DP paraphrase of each document (text in, text out): ``batch_size`` documents
        at a time, by prompt length, one forward pass per generated token, the prompts' keys
        and values cached."""
        from bench.lm import load_causal_lm
        from bench.models.base import default_threads
        from bench.numeric import torch_threads

        lm = load_causal_lm(self.model)
        tok = lm.tokenizer
        prompts = [prompt_ids(tok, d, lm.start_id) for d in documents]
        order = np.argsort([len(p) for p in prompts], kind="stable")
        out = [""] * len(documents)
        with torch_threads(default_threads()) as torch, torch.no_grad():
            for lo in range(0, len(order), self.batch_size):
                batch = order[lo:lo + self.batch_size]
                for i, gen in zip(batch, self.generate(lm, [prompts[i] for i in batch], torch),
                                  strict=True):
                    out[i] = tok.decode(gen, skip_special_tokens=True)
        return out

    def first_logits(self, lm: Any, prompts: list[list[int]], torch: Any) -> Any:
        """The next-token logits after each prompt of one left-padded batch (``(n, |V|)``),
        with the forward pass's output for :meth:`generate` to continue from: ``(logits,
        result, attention mask, positions)``."""
        pad, width, dev = lm.pad_id, max(len(p) for p in prompts), lm.model.device
        inp = torch.tensor([[pad] * (width - len(p)) + p for p in prompts], device=dev)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=dev)
        pos = (mask.cumsum(1) - 1).clamp(min=0)   # each document at its own positions
        res = lm.model(input_ids=inp, attention_mask=mask, position_ids=pos, use_cache=True)
        return res.logits[:, -1], res, mask, pos

    def generate(self, lm: Any, prompts: list[list[int]], torch: Any) -> list[list[int]]:
        """The generated token ids of one batch of prompts: each step draws one token for
        every document still open (in batch order, from the cell's stream); a document is
        closed by its end-of-text draw or after ``max_new_tokens``."""
        stop = lm.tokenizer.eos_token_id
        u, res, mask, pos = self.first_logits(lm, prompts, torch)
        gen: list[list[int]] = [[] for _ in prompts]
        open_ = np.ones(len(prompts), dtype=bool)
        for step in range(self.max_new_tokens):
            rows = np.flatnonzero(open_)
            t = draw_rows(clipped_distribution(u.double().cpu().numpy()[rows], self.epsilon,
                                               self.clip_min, self.clip_max), self.rng)
            nxt = np.full(len(prompts), lm.pad_id, dtype=np.int64)
            nxt[rows] = t
            for r, tok_id in zip(rows.tolist(), t.tolist(), strict=True):
                if tok_id == stop:
                    open_[r] = False
                else:
                    gen[r].append(tok_id)
            if not open_.any() or step == self.max_new_tokens - 1:
                break
            mask = torch.cat([mask, torch.ones((len(prompts), 1), dtype=mask.dtype,
                                               device=mask.device)], dim=1)
            pos = pos[:, -1:] + 1
            res = lm.model(input_ids=torch.from_numpy(nxt)[:, None].to(mask.device),
                           attention_mask=mask,
                           position_ids=pos, past_key_values=res.past_key_values,
                           use_cache=True)
            u = res.logits[:, -1]
        return gen
