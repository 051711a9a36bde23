"""Speed and agreement against the field (``bench perf --peers``): our mechanisms next to the
equivalent ones of the PyPI packages ``mldp-text`` and ``pypantera``, in one process, on the same
public vocabulary (GloVe 6B 50d, first |W| words) and the same tokens (BBC News).

The peers are optional and never a runtime dependency: they are imported lazily (pass the folder
they were installed into, e.g. ``pip install --target /tmp/peers mldp-text pypantera``, as
``peers_path``); an absent one is reported as not installed. Both are given *our* vectors:
mldp-text as a gensim ``KeyedVectors`` (exact search: ``use_faiss=False``), pypantera through a
GloVe-format text file written once to a temporary folder.

Only in-vocabulary tokens are used (the packages treat OOV words differently from our ``<unk>``
policy). The peers work one token at a time in Python, so they run on the first
``peer_tokens`` tokens; tokens/s is measured on what each one ran, N_w (fraction of tokens left
unchanged; Huang et al. 2024, Sec. 6) is computed for both on the peer's tokens (ours repeats
them to ``n_tokens`` draws), with a 95% Wilson interval, and ``agree`` says
whether the two implementations' N_w differ by less than sampling error (two-proportion z-test
at 99%).

Example:
    >>> print(run_peers(vocab_size=50_000, n_tokens=20_000, peers_path="/tmp/peers"))
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import math
import sys
import tempfile
import time
import unittest.mock
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench.embeddings import Embedding, load_embedding

if TYPE_CHECKING:
    from bench.privatize import Privatizer

logger = logging.getLogger(__name__)

# (our mechanism, our mapping, peer package, peer class, same algorithm?)
PAIRS: list[tuple[str, str, str, str, bool]] = [
    ("mvl", "nearest", "mldp-text", "MultivariateCalibrated", True),
    ("mvl", "nearest", "pypantera", "CMP", True),
    ("tem", "none", "mldp-text", "TEM", True),
    ("tem", "none", "pypantera", "TEM", True),
    ("mahalanobis", "nearest", "mldp-text", "Mahalanobis", True),
    ("mahalanobis", "nearest", "pypantera", "Mahalanobis", False),
    ("santext", "none", "pypantera", "SanText", True),
    ("custext", "none", "pypantera", "CusText", False),
]


def _import_peers(peers_path: str | None) -> dict[str, object]:
    """Import what is installed: {"mldp-text": module, "pypantera": module dict} (lazily)."""
    if peers_path and peers_path not in sys.path:
        sys.path.append(peers_path)  # appended: our own numpy/scipy keep precedence
    found: dict[str, object] = {}
    try:
        # mldp-text calls nltk.download("wordnet") at import when the corpus is absent: no
        # network traffic from a benchmark, so the download is replaced by a no-op
        import nltk

        def _no_download(*args, **kwargs) -> bool:
            logger.info("peer asked nltk to download %s: refused (offline benchmark)", args)
            return False

        with contextlib.redirect_stdout(io.StringIO()), \
                unittest.mock.patch.object(nltk, "download", _no_download):
            found["mldp-text"] = importlib.import_module("mldp_text")
    except Exception as e:  # noqa: BLE001 - any import failure means "not usable"
        logger.info("mldp-text not importable: %s", e)
    try:  # pypantera installs its code as the top-level package "src"
        mods = {}
        for mod, cls in (("EmbeddingPerturbationMechanism.cmp", "CMP"),
                         ("EmbeddingPerturbationMechanism.mahalanobis", "Mahalanobis"),
                         ("SamplingPerturbationMechanism.tem", "TEM"),
                         ("SamplingPerturbationMechanism.santext", "SanText"),
                         ("SamplingPerturbationMechanism.custext", "CusText")):
            mods[cls] = getattr(importlib.import_module(f"src.{mod}"), cls)
        found["pypantera"] = mods
    except Exception as e:  # noqa: BLE001
        logger.info("pypantera not importable: %s", e)
    return found


def _peer_runner(pkg: str, mod: object, cls: str, emb: Embedding, eps: float,
                 glove_txt: Path) -> Callable[[list[str]], list[str]]:
    """A function privatizing a list of tokens with the peer's own per-token code."""
    d = emb.dim
    if pkg == "mldp-text":
        from gensim.models import KeyedVectors

        kv = KeyedVectors(vector_size=d)
        kv.add_vectors(emb.words, emb.vectors.astype(np.float32))
        kw = {"embedding_matrix": kv, "dim": d, "vocab": set(emb.words)}
        if cls != "TEM":
            kw["use_faiss"] = False  # exact search
        with contextlib.redirect_stdout(io.StringIO()):
            m = getattr(mod, cls)(epsilon=eps, **kw)
        return lambda toks: [m.replace_word(t) for t in toks]
    kwargs = {"embPath": str(glove_txt), "epsilon": eps}
    if cls == "Mahalanobis":
        kwargs["lam"] = 0.2
    if cls == "TEM":
        kwargs["beta"] = 0.001
    if cls == "CusText":
        kwargs.update(k=20, distance="euclidean")
    m = mod[cls](kwargs)
    if cls == "CusText":  # its float32 probabilities fail np.random.choice's sum check
        m.vocab.embeddings = {w: v.astype(np.float64) for w, v in m.vocab.embeddings.items()}
        m.embMatrix = m.embMatrix.astype(np.float64)
    if cls in ("CMP", "Mahalanobis"):
        def run(toks: list[str]) -> list[str]:
            out = []
            for i in range(0, len(toks), 8):  # its distance matrix is (n, |W|, d): small chunks
                out += m.processText(m.noisyEmb(toks[i:i + 8])).split(" ")
            return out
        return run
    if cls == "TEM":
        return lambda toks: m.processText(toks).split(" ")
    return lambda toks: [m.processText([t]) for t in toks]  # its cache is keyed by the text


def _wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    c = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    return (mid - c, mid + c)


def _agree(k1: int, n1: int, k2: int, n2: int, z: float = 2.576) -> bool:
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(max(p * (1 - p), 1e-12) * (1 / n1 + 1 / n2))
    return abs(k1 / n1 - k2 / n2) <= z * se


def run_peers(vocab_size: int = 50_000, n_tokens: int = 20_000, eps: tuple = (1, 5, 10), *,
              peer_tokens: int = 200, peers_path: str | None = None,
              mechanisms: list[str] | None = None) -> str:
    """Time ours vs the peers and compare N_w; returns the printed report.

    Args:
        vocab_size: public vocabulary size |W| (first GloVe 6B 50d words).
        n_tokens: BBC News tokens for our mechanisms (in-vocabulary only).
        eps: the ε values of the N_w comparison.
        peer_tokens: tokens each peer runs (the first ones of the same stream).
        peers_path: folder the peers were pip-installed into (``--target``); appended to
            ``sys.path``.
        mechanisms: restrict to these of our mechanism names.
    """
    from bench.privatize import Privatizer
    from bench.tools.perf import corpus_tokens

    emb = load_embedding("glove-6b-50d", vocab_size)
    toks = [t for d in corpus_tokens(3 * n_tokens) for t in d if t in emb.word_to_id][:n_tokens]
    ptoks = toks[:peer_tokens]
    found = _import_peers(peers_path)
    lines = [f"bench perf --peers: glove-6b-50d |W|={vocab_size:,}, {len(toks):,} in-vocabulary "
             f"BBC tokens (peers: the first {len(ptoks):,}); one process; shared machine", ""]
    for pkg in ("mldp-text", "pypantera"):
        if pkg not in found:
            lines.append(f"{pkg}: not installed (or not importable) — skipped")
    tmp = tempfile.TemporaryDirectory()
    glove_txt = Path(tmp.name) / "glove.txt"
    if "pypantera" in found:
        _write_glove_txt(emb, glove_txt)
    rows = [("ours", "peer", "eps", "ours tok/s", "peer tok/s", "ratio", "N_w ours [95%]",
             "N_w peer [95%]", "agree")]
    built: dict[tuple, Privatizer] = {}
    for name, mapping, pkg, cls, same in PAIRS:
        if mechanisms and name not in mechanisms:
            continue
        if pkg not in found:
            continue
        for e in eps:
            key = (name, e)
            if key not in built:
                built[key] = Privatizer.build(mechanism=name, epsilon=float(e), mapping=mapping,
                                              seed=0, embedding=emb)
            rows.append(_compare_pair(built[key], emb, toks, ptoks, name, pkg, found[pkg], cls,
                                      e, same, glove_txt))
    tmp.cleanup()
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def _write_glove_txt(emb: Embedding, path: Path) -> None:
    """Our vectors as a GloVe-format text file (how pypantera reads an embedding)."""
    with path.open("w") as f:
        for w, v in zip(emb.words, emb.vectors):
            f.write(w + " " + " ".join(f"{x:.6f}" for x in v) + "\n")


def _compare_pair(p: Privatizer, emb: Embedding, toks: list[str], ptoks: list[str], name: str,
                  pkg: str, mod: object, cls: str, e: float, same: bool,
                  glove_txt: Path) -> tuple[str, ...]:
    """One table row: our privatizer ``p`` against the peer ``pkg:cls`` at ε = ``e`` (tokens/s
    on what each ran, N_w with its Wilson interval, agreement)."""
    ids = np.array([emb.word_to_id[t] for t in toks])
    p.privatize_ids(ids[:50])  # warm-up
    t0 = time.perf_counter()
    out, _ = p.privatize_ids(ids)
    ours_s = time.perf_counter() - t0
    # N_w on the peer's tokens (N_w depends on the words), each repeated many times
    pids = np.tile(ids[: len(ptoks)], max(1, len(ids) // max(len(ptoks), 1)))
    pout_ours, _ = p.privatize_ids(pids)
    k1, n1 = int((pout_ours == pids).sum()), len(pids)
    peer_tps, peer_nw, agree = _run_peer(pkg, mod, cls, emb, e, glove_txt, ptoks, k1, n1, same)
    ours_tps = len(ids) / ours_s
    lo1, hi1 = _wilson(k1, n1)
    return (name, f"{pkg}:{cls}", f"{e:g}", f"{ours_tps:,.0f}",
            f"{peer_tps:,.1f}", f"{ours_tps / peer_tps:,.0f}x"
            if peer_tps == peer_tps else "", f"{k1 / n1:.3f} "
            f"[{lo1:.3f},{hi1:.3f}]", peer_nw, agree)


def _run_peer(pkg: str, mod: object, cls: str, emb: Embedding, e: float, glove_txt: Path,
              ptoks: list[str], k1: int, n1: int, same: bool) -> tuple[float, str, str]:
    """The peer's tokens/s, its N_w (with interval) as text and whether it agrees with ours
    (``k1`` of ``n1`` unchanged); a peer that fails is reported, not raised."""
    try:
        np.random.seed(0)
        run = _peer_runner(pkg, mod, cls, emb, float(e), glove_txt)
        run(ptoks[:2])
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            pout = run(ptoks)
        peer_s = time.perf_counter() - t0
        k2 = sum(a == b for a, b in zip(pout, ptoks))
        n2 = len(ptoks)
        peer_tps = n2 / peer_s
        lo2, hi2 = _wilson(k2, n2)
        peer_nw = f"{k2 / n2:.3f} [{lo2:.3f},{hi2:.3f}]"
        agree = ("yes" if _agree(k1, n1, k2, n2) else "NO") + (
            "" if same else " (differs by design)")
    except Exception as ex:  # noqa: BLE001 - report the peer's failure, go on
        logger.warning("%s %s failed: %s", pkg, cls, ex)
        peer_tps, peer_nw, agree = math.nan, f"failed: {type(ex).__name__}", ""
    return peer_tps, peer_nw, agree
