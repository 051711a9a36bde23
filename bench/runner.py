"""Execute the cells of a grid: privatize → train → attack → measure, resumably and in parallel.

Result files are the source of truth: ``results/cells/<hash>/`` holds ``spec.json``,
``metrics.json`` and ``manifest.json`` (their checksums), written atomically (a temporary folder
renamed into place), so a killed run loses at most the cells in flight; a cell counts as done
only when its files check out (:mod:`bench.store`), and a damaged one is moved aside and
recomputed. A failed cell writes ``error.json`` (the traceback) instead and the grid goes on;
the next run retries it.

Privatized corpora are cached under ``results/cache/privatized/<key>/`` and shared between cells
that need the same one (same dataset, embedding, sensitivity, mechanism, mapping, ε and seed):
privatize once, train many. Cells are grouped by that key and a group runs in one worker.

Parallelism: ``workers=1`` runs in-process; ``workers>1`` uses joblib processes; a Dask scheduler
address (``dask="tcp://..."``, or ``dask="local"`` for a local cluster) distributes groups over a
cluster. Only the parent process talks to MLflow (see :mod:`bench.tracking`).

Example:
    >>> from bench.runner import run_grid
    >>> summary = run_grid("experiments/smoke.yaml", results="results", workers=1)
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import tempfile
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.grid import Cell, Grid, canonical_json, cell_hash, load_grid, privatization_hash
from bench.store import (
    cell_done,
    cell_state,
    check_cell,
    file_mismatch,
    manifest_for,
    quarantine,
    read_provenance,
    write_cell,
    write_json,
)
from bench.store import clean as _clean

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------

class CellLock:
    """An exclusive lock file per cell, so two runs on one results folder never collide.

    A lock whose owner process is gone (same host) is stale and taken over.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.held = False

    def acquire(self) -> bool:
        """Take the lock (a stale one is taken over); False when another run holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                if self._stale():
                    self.path.unlink(missing_ok=True)
                    continue
                return False
            with os.fdopen(fd, "w") as f:
                f.write(f"{socket.gethostname()} {os.getpid()}\n")
            self.held = True
            return True
        return False

    def _stale(self) -> bool:
        try:
            host, pid = self.path.read_text().split()
        except (OSError, ValueError):
            return False
        if host != socket.gethostname():
            return False
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def release(self) -> None:
        """Remove the lock file if this instance holds it."""
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False


# --------------------------------------------------------------------------------------------
# One cell
# --------------------------------------------------------------------------------------------

@dataclass
class CellResult:
    """What a worker reports back for one cell (never raw text)."""

    hash: str
    name: str
    status: str  # done | skipped | failed | cached | locked
    metrics: dict = field(default_factory=dict)
    spec: dict = field(default_factory=dict)
    error: str = ""


_DATASETS: dict[str, Any] = {}
_EMBEDDINGS: dict[tuple, Any] = {}


def _dataset(cell: Cell):
    from bench.datasets import load_dataset

    kwargs = cell.dataset_kwargs()
    kwargs.setdefault("seed", cell.seed)
    key = canonical_json([cell.dataset, kwargs])
    if key not in _DATASETS:
        _DATASETS[key] = load_dataset(cell.dataset, **kwargs)
    return _DATASETS[key]


def _embedding(cell: Cell):
    from bench.embeddings import load_embedding

    s = cell.settings
    key = (s.get("embedding"), s.get("embedding_path"), s.get("vocab_size"))
    if key not in _EMBEDDINGS:
        _EMBEDDINGS[key] = load_embedding(s.get("embedding") or "glove-6b-50d",
                                          int(s.get("vocab_size") or 50_000),
                                          path=s.get("embedding_path"))
    return _EMBEDDINGS[key]


def _tokens(ds, max_tokens: int | None) -> list[list[str]]:
    from bench.embeddings import tokenize

    return [tokenize(t)[:max_tokens] if max_tokens else tokenize(t) for t in ds.texts]


_TOKENS: dict[tuple, list[list[str]]] = {}


def _dataset_tokens(cell: Cell, ds) -> list[list[str]]:
    max_tokens = ds.config.get("max_tokens", 500)
    key = (id(ds), max_tokens)
    if key not in _TOKENS:
        _TOKENS[key] = _tokens(ds, max_tokens)
    return _TOKENS[key]


def privatized_corpus(cell: Cell, ds, docs: list[list[str]], cache_dir: Path
                      ) -> tuple[list, dict]:
    """The cell's privatized documents (all of them, every split) and privatization stats.

    Cached on disk by :func:`bench.grid.privatization_hash` (with the dataset content hash) and
    shared by every cell that needs the same corpus. The cache holds privatized output only.
    """
    from bench.privatize import Privatizer

    if cell.is_baseline:
        return docs, {"privatize_seconds": 0.0, "n_tokens": sum(map(len, docs))}
    key = privatization_hash(cell, ds.content_hash)
    folder = cache_dir / key
    if (folder / "stats.json").is_file():
        try:
            stats = json.loads((folder / "stats.json").read_text())
            return _read_corpus(folder, stats["output"]), stats | {"cache_hit": True}
        except (OSError, ValueError, KeyError) as e:  # damaged: it is a cache, so rebuild it
            logger.warning("privatized corpus %s in the cache is damaged (%s): rebuilding it",
                           key, e)
            _discard(folder)
    s = cell.settings
    priv = Privatizer.build(
        mechanism=cell.mechanism, epsilon=cell.epsilon, sensitivity=cell.sensitivity,
        mapping=cell.mapping, seed=cell.seed, embedding=_embedding(cell), oov=s.get("oov", "unk"),
        mechanism_params=dict(cell.mechanism_params),
        sensitivity_params=dict(cell.sensitivity_params),
        mapping_params=dict(cell.mapping_params))
    out = priv.privatize(docs)
    stats = out.stats() | {"output": "text" if out.tokens is not None else "vectors",
                           "guarantee": priv.guarantee().to_dict(),
                           "guarantee_text": priv.guarantee().describe(),
                           "privatizer": priv.describe(), "privatize_seconds": out.seconds}
    _write_corpus(folder, out, stats)
    return (out.tokens if out.tokens is not None else out.vectors), stats | {"cache_hit": False}


def _write_corpus(folder: Path, out, stats: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        if out.tokens is not None:
            pq.write_table(pa.table({"tokens": out.tokens}), tmp / "tokens.parquet")
        else:
            lengths = np.array([len(v) for v in out.vectors], dtype=np.int64)
            flat = np.concatenate(out.vectors) if len(out.vectors) else np.zeros((0, 0))
            np.savez(tmp / "vectors.npz", vectors=flat.astype(np.float32), lengths=lengths)
        write_json(tmp / "stats.json", stats)
        files = {p.name: p.read_bytes() for p in sorted(tmp.iterdir())}
        write_json(tmp / CORPUS_MANIFEST, manifest_for(folder.name, files))
        try:
            os.replace(tmp, folder)
        except OSError:  # another worker finished the same corpus first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


CORPUS_MANIFEST = "manifest.json"
"""Checksums of a cached privatized corpus' files (:func:`bench.store.manifest_for`)."""


def _verify_corpus(folder: Path) -> None:
    """Raise ``ValueError`` unless every file of a cached corpus matches its manifest."""
    try:
        manifest = json.loads((folder / CORPUS_MANIFEST).read_text())
    except FileNotFoundError:
        raise ValueError(f"no {CORPUS_MANIFEST}") from None
    for name, want in manifest["files"].items():
        problem = file_mismatch(name, (folder / name).read_bytes(), want)
        if problem:
            raise ValueError(problem)


def _discard(folder: Path) -> None:
    """Remove a damaged cache entry (renamed first, so no reader sees it half-deleted)."""
    tmp = folder.with_name(f".{folder.name}.damaged-{os.getpid()}")
    try:
        os.replace(folder, tmp)
    except OSError:  # another worker got there first
        return
    shutil.rmtree(tmp, ignore_errors=True)


def _read_corpus(folder: Path, output: str) -> list:
    """A cached privatized corpus, after checking its files against their checksums."""
    _verify_corpus(folder)
    if output == "text":
        import pyarrow.parquet as pq

        return pq.read_table(folder / "tokens.parquet").column("tokens").to_pylist()
    data = np.load(folder / "vectors.npz")
    bounds = np.cumsum(data["lengths"])[:-1]
    return [v.astype(np.float64) for v in np.split(data["vectors"], bounds)]


def _subset(docs: list, idx: np.ndarray) -> list:
    return [docs[i] for i in idx.tolist()]


def _n_classes(task) -> int | None:
    return len(task.classes) if task.kind != "multilabel" else None


def _attack_privatizer(cell: Cell):
    """A freshly fitted privatizer of the cell's configuration for an adversary that declares
    it ``needs`` one (``informed``, which knows the mechanism and its parameters: the DP threat
    model); ``None`` on the baseline. Its random stream is its own (seeded from the cell seed),
    never the one that privatized the corpus."""
    from bench.privatize import Privatizer

    if cell.is_baseline:
        return None
    s = cell.settings
    return Privatizer.build(
        mechanism=cell.mechanism, epsilon=cell.epsilon, sensitivity=cell.sensitivity,
        mapping=cell.mapping, seed=[cell.seed, 1], embedding=_embedding(cell),
        oov=s.get("oov", "unk"), mechanism_params=dict(cell.mechanism_params),
        sensitivity_params=dict(cell.sensitivity_params),
        mapping_params=dict(cell.mapping_params))


def attack_privacy(cell: Cell, ds, splits: tuple[list, list, list]) -> dict[str, Any]:
    """Every configured adversary on every private attribute; privacy = the strongest attack.

    For each privacy task, each adversary of the cell (:func:`bench.attacks.adversary.
    resolve_adversaries`: the grid's ``adversaries`` setting, default lexical + the cell's model
    + informed) is trained on the privatized training split (dev split for model selection)
    and scored on the privatized test split (Riecker 2023, Sec. 4.2). The task's headline
    ``privacy`` is ``1 - max`` adversary macro-F1, with the winner in ``adversary`` and every
    adversary's metrics in ``by_adversary`` (:func:`bench.attacks.adversary.headline`). Each
    adversary gets what its class declares in ``needs`` (:data:`bench.attacks.adversary.
    ADVERSARY_NEEDS`); the attack privatizer is built once, when the first one needs it.
    """
    from bench.attacks.adversary import (
        adversary_needs,
        adversary_version,
        attribute_adversary,
        headline,
        make_adversary,
        resolve_adversaries,
    )
    from bench.metrics.classification import chance_level

    Xtr, Xdev, Xte = splits
    split = ds.splits
    names, left_out = resolve_adversaries(cell.settings.get("adversaries"), cell.model,
                                          cell.output)
    if cell.has_rewriter:
        from bench.rewriters.base import rewritten_adversaries

        names, left_out = rewritten_adversaries(names, left_out)
    attack_privatizer: list = []  # built on first need, shared by every task and adversary
    out: dict[str, Any] = {}
    for task_name, ptask in ds.privacy_tasks.items():
        n_cls = _n_classes(ptask)
        y_tr, y_te = ptask.labels[split["train"]], ptask.labels[split["test"]]
        # one chance level per task, shared by its adversaries (labels and seed only; the
        # multilabel simulation costs ~2 s at 2,000 test documents)
        chance = chance_level(y_te, y_tr, n_classes=n_cls, seed=cell.seed)
        by_adv: dict[str, dict] = {}
        for name in names:
            needs = adversary_needs(name)
            if "privatizer" in needs and not attack_privatizer:
                attack_privatizer.append(_attack_privatizer(cell))
            provided = {"privatizer": attack_privatizer[0] if attack_privatizer else None,
                        "attribute_words": (list(ptask.classes)
                                            if ptask.kind == "multilabel" else None)}
            adv = make_adversary(name, seed=cell.seed, n_classes=n_cls,
                                 params=cell.model_kwargs() if name == cell.model else None,
                                 **{k: provided[k] for k in needs})
            res = attribute_adversary(
                adv, Xtr, y_tr, Xte, y_te, X_dev=Xdev, y_dev=ptask.labels[split["dev"]],
                n_classes=n_cls, seed=cell.seed, chance=chance)
            by_adv[name] = res.metrics | {"version": adversary_version(name)}
        out[task_name] = headline(by_adv) | {"adversaries_left_out": [list(x) for x in left_out]}
    return out


def evaluate_cell(cell: Cell, results: Path, dataset_hash: str | None = None) -> dict:
    """Run one cell and return its metrics (the caller writes them)."""
    t_start = time.perf_counter()
    ds = _dataset(cell)
    docs = _dataset_tokens(cell, ds)
    load_s = time.perf_counter() - t_start
    corpus, pstats = privatized_corpus(cell, ds, docs, results / "cache" / "privatized")
    metrics: dict[str, Any] = {"cell": cell.name, "dataset_hash": ds.content_hash}
    # the privatizer description (fitted noise parameters: TEM's γ, truncated Gumbel's b, ...)
    # stays in the cell, so a report needs the committed cells only, never the corpus cache
    metrics["privatization"] = dict(pstats)
    if not cell.is_baseline:
        metrics["guarantee"] = pstats.get("guarantee")
        metrics["n_w"] = pstats.get("n_w")
    t0 = time.perf_counter()
    if cell.has_rewriter:  # privatized vectors -> text (bench.rewriters.pipeline)
        corpus = _rewritten(cell, ds, docs, corpus, results, metrics)
    rewriter_s = time.perf_counter() - t0
    split = ds.splits
    Xtr, Xdev, Xte = (_subset(corpus, split[s]) for s in ("train", "dev", "test"))
    task = ds.utility_task
    params = cell.model_kwargs()
    metrics["utility"] = _utility(cell, task, split, (Xtr, Xdev, Xte), params)
    t0 = time.perf_counter()
    metrics["privacy"] = attack_privacy(cell, ds, (Xtr, Xdev, Xte))
    adv_s = time.perf_counter() - t0
    s = cell.settings
    t0 = time.perf_counter()
    if s.get("mia"):
        metrics["mia"] = _membership(cell, split, task.labels, docs, corpus, params)
    mia_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if s.get("rewrite_metrics") and cell.output == "text" and not cell.is_baseline:
        # the baseline's text is the original: its rewrite scores are the identity, not measured
        metrics["rewrite"] = _rewrite(s, split["test"], docs, corpus)
        if cell.has_rewriter:
            from bench.rewriters.pipeline import reference_scores

            metrics["rewrite"]["loss"] = metrics["rewriter"]["test_loss"]
            metrics["rewrite_reference"] = reference_scores(cell, ds, docs, results / "cache",
                                                            _embedding(cell))
    rewrite_s = time.perf_counter() - t0
    n_tok = pstats.get("n_tokens") or 0
    priv_s = pstats.get("privatize_seconds", 0.0) if not pstats.get("cache_hit") else 0.0
    metrics["runtime"] = {"load_seconds": load_s, "privatize_seconds": priv_s,
                          "privatize_tokens_per_second": (n_tok / priv_s) if priv_s else None,
                          "utility_fit_seconds": metrics["utility"]["fit_seconds"],
                          "adversary_seconds": adv_s, "mia_seconds": mia_s,
                          "rewrite_seconds": rewrite_s,
                          **({"rewriter_seconds": rewriter_s} if cell.has_rewriter else {}),
                          "total_seconds": time.perf_counter() - t_start}
    return metrics


def _rewritten(cell: Cell, ds, docs: list[list[str]], vectors: list, results: Path,
               metrics: dict[str, Any]) -> list[list[str]]:
    """The cell's privatized vectors rewritten to text by its rewriter
    (:func:`bench.rewriters.pipeline.rewrite_cell`); records ``metrics["rewriter"]`` and, when
    the rewriter was trained on the evaluated data, marks the guarantee void."""
    from bench.rewriters.pipeline import rewrite_cell

    tokens, rstats = rewrite_cell(cell, ds, docs, vectors, results / "cache", _embedding(cell))
    metrics["rewriter"] = rstats
    if rstats.get("guarantee_void") and metrics.get("guarantee"):
        metrics["guarantee"] = dict(metrics["guarantee"], void=True,
                                    void_reason=rstats["void_reason"])
    return tokens


def _utility(cell: Cell, task, split: dict, X: tuple[list, list, list],
             params: dict[str, Any]) -> dict[str, Any]:
    """Fit the cell's utility model on the privatized train split (dev for early stopping)
    and score it on the test split against the chance level."""
    from bench.metrics.classification import chance_level, classification_scores, is_chance_level
    from bench.models import make_model

    Xtr, Xdev, Xte = X
    n_cls = _n_classes(task)
    mparams = dict(params, seed=cell.seed)
    if n_cls is not None:
        mparams.setdefault("n_classes", n_cls)
    t0 = time.perf_counter()
    model = make_model(cell.model, **mparams)
    model.fit(Xtr, task.labels[split["train"]], Xdev, task.labels[split["dev"]])
    fit_s = time.perf_counter() - t0
    y_te = task.labels[split["test"]]
    pred = model.predict(Xte)
    util = classification_scores(y_te, pred, n_cls, seed=cell.seed)
    chance = chance_level(y_te, task.labels[split["train"]], n_classes=n_cls, seed=cell.seed)
    util["chance_threshold"] = chance.threshold if hasattr(chance, "threshold") else None
    util["chance_level"] = bool(is_chance_level(util["macro_f1"], chance))
    return {"task": task.name, **util, "fit_seconds": fit_s}


def _membership(cell: Cell, split: dict, ylab: np.ndarray, docs: list[list[str]], corpus: list,
                params: dict[str, Any]) -> dict[str, Any]:
    """Membership inference on the dataset's MIA splits (grid settings ``mia_query``,
    ``mia_target``)."""
    from bench.attacks.membership import membership_inference

    s = cell.settings
    parts = ("mia_members", "mia_nonmembers", "mia_shadow")
    # the attacker queries with the records' original text (mia_query: original) unless the
    # cell outputs vectors, which the models cannot be queried with as text
    query_with = s.get("mia_query", "original")
    if cell.output != "text":
        query_with = "privatized"
    query = None
    if query_with == "original" and not cell.is_baseline:
        query = {k: _subset(docs, split[p]) for k, p in
                 zip(("members", "nonmembers", "shadow"), parts)}
    mia = membership_inference(
        cell.model, *(x for p in parts for x in (_subset(corpus, split[p]), ylab[split[p]])),
        model_params=params,
        target_params="memorise" if s.get("mia_target", "memorise") == "memorise" else None,
        seed=cell.seed, query=query)
    return mia.metrics | {"query": query_with}


def _rewrite(s: dict, test: np.ndarray, docs: list[list[str]], corpus: list) -> dict[str, Any]:
    """Rewrite scores of the privatized test documents against the originals (the first
    ``rewrite_max_docs`` of them where the grid sets it)."""
    from bench.metrics.rewrite import rewrite_scores

    limit = s.get("rewrite_max_docs")
    test_idx = test[: int(limit)] if limit else test
    scores = rewrite_scores(_subset(docs, test_idx), _subset(corpus, test_idx))
    scores["n_docs"] = len(test_idx)
    return scores


def mark_mia_validity(metrics: dict, baseline: dict | None) -> dict:
    """Set ``mia_valid`` / ``mia_invalid_reason``: an MIA measures something only if its
    strongest attack on the unprivatized model is clearly above AUC 0.5
    (:func:`bench.attacks.membership.mia_validity`); ``None`` without a baseline MIA."""
    from bench.attacks.membership import mia_validity

    if "mia" not in metrics:
        return metrics
    if baseline is None or "mia" not in baseline:
        ok, reason = None, "no unprivatized baseline with membership inference to check against"
    else:
        ok, reason = mia_validity(baseline["mia"])
    metrics["mia"]["mia_valid"], metrics["mia"]["mia_invalid_reason"] = ok, reason
    return metrics


def mark_privacy_validity(metrics: dict, baseline: dict | None) -> dict:
    """Set ``privacy_valid`` / ``privacy_invalid_reason`` on every privacy task of ``metrics``.

    The rule (:func:`bench.attacks.adversary.privacy_validity`): a privacy measurement exists
    only if the strongest adversary beats chance on the unprivatized baseline. ``baseline`` is
    the baseline cell's metrics (for a baseline cell: its own); ``None`` = no baseline run.
    """
    from bench.attacks.adversary import privacy_validity

    for name, p in metrics.get("privacy", {}).items():
        ok, reason = privacy_validity(_baseline_task(p, baseline, name))
        p["privacy_valid"], p["privacy_invalid_reason"] = ok, reason
    return metrics


def _baseline_task(p: dict, baseline: dict | None, task: str) -> dict | None:
    """The baseline's privacy of ``task`` over the adversaries this cell ran (see
    :func:`bench.attacks.adversary.restrict`)."""
    from bench.attacks.adversary import restrict

    pb = None if baseline is None else baseline.get("privacy", {}).get(task)
    return restrict(pb, list(p.get("by_adversary", {})))


def add_deltas(metrics: dict, baseline: dict | None) -> dict:
    """Δutility, Δprivacy and the trade-off vs the matching baseline (Riecker 2023, Sec. 4.2).

    Δprivacy and the trade-off are computed only where the privacy measurement is valid (the
    strongest adversary beats chance on the baseline); elsewhere they are ``None`` with the
    reason, never a silent zero.
    """
    from bench.metrics.classification import deltas

    mark_privacy_validity(metrics, baseline)
    mark_mia_validity(metrics, baseline)
    if baseline is None or "utility" not in baseline:
        return metrics
    out = {}
    u, ub = metrics["utility"]["macro_f1"], baseline["utility"]["macro_f1"]
    for name, p in metrics.get("privacy", {}).items():
        pb = _baseline_task(p, baseline, name)  # the same adversaries on both sides
        if p.get("privacy_valid") and pb is not None:
            out[name] = deltas(u, ub, p["privacy"], pb["privacy"]) | {
                "privacy_valid": True, "reason": None}
        else:
            out[name] = {"delta_utility": u - ub, "delta_privacy": None, "tradeoff": None,
                         "privacy_valid": p.get("privacy_valid"),
                         "reason": p.get("privacy_invalid_reason")}
    metrics["vs_baseline"] = {"delta_utility": u - ub, "by_privacy_task": out}
    return metrics


OVERWRITE = ("never", "only-missing", "always")

CELL_BLAS_THREADS = 1
"""BLAS threads (NumPy, scikit-learn) while a cell runs: the runner's parallelism is over cells,
and a fixed count is part of what makes a cell's rerun reproduce its metrics bit for bit."""


def run_cell(cell: Cell, results: Path, dataset_hash: str, baseline_hash: str | None,
             overwrite: str = "only-missing") -> CellResult:
    """Run one cell unless its results say otherwise; lock, evaluate, write atomically.

    ``overwrite``: ``only-missing`` (default) runs cells without sound results, failed ones
    included; ``never`` also leaves failed cells alone; ``always`` recomputes everything. A
    damaged cell (:func:`bench.store.check_cell`: unparsable, checksum mismatch, wrong hash,
    no manifest) is moved aside to ``results/damaged/`` with one warning line and recomputed,
    whatever ``overwrite`` says. Never raises: a failure is recorded in ``error.json`` (if the
    disk lets it) and returned.
    """
    h = cell_hash(cell, dataset_hash)
    folder = results / "cells" / h
    if overwrite != "always" and cell_done(folder):
        return CellResult(h, cell.name, "cached")
    if overwrite == "never" and cell_state(folder) == "failed":
        return CellResult(h, cell.name, "failed", error="failed earlier (--overwrite never)")
    lock = CellLock(results / "locks" / f"{h}.lock")
    if not lock.acquire():
        return CellResult(h, cell.name, "locked")
    # the suite version is not part of the cell (nor of its hash): the manifest's provenance
    # records which release computed it, and the numeric platform it ran on
    spec = cell.spec() | {"hash": h, "name": cell.name, "dataset_hash": dataset_hash}
    try:
        state = cell_state(folder)  # again, under the lock: another run may have finished it
        if state == "done" and overwrite != "always":
            return CellResult(h, cell.name, "cached")
        if state == "damaged":
            reason = check_cell(folder) or "damaged"
            dest = quarantine(folder, results, reason)
            logger.warning("cell %s was damaged (%s): moved to %s; recomputing it", cell.name,
                           reason, dest)
        # one BLAS thread per cell (torch models use one thread too, bench.models.base): the
        # runner parallelises over cells, and a fixed thread count keeps reruns bit-exact
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=CELL_BLAS_THREADS):
            metrics = evaluate_cell(cell, results, dataset_hash)
        if cell.is_baseline:
            mark_privacy_validity(metrics, metrics)
            mark_mia_validity(metrics, metrics)
        else:
            base = None
            if baseline_hash and cell_done(results / "cells" / baseline_hash):
                bfile = results / "cells" / baseline_hash / "metrics.json"
                base = json.loads(bfile.read_text())
            metrics = add_deltas(metrics, base)
        write_cell(folder, spec, metrics)
        return CellResult(h, cell.name, "done", _clean(metrics), _clean(spec))
    except Exception as e:  # one failing cell is logged and the grid goes on
        tb = traceback.format_exc()
        logger.error("cell %s failed: %s", cell.name, e)
        try:
            write_json(folder / "error.json", {"name": cell.name, "error": str(e),
                                               "traceback": tb})
        except OSError as e2:  # e.g. the disk is full: the cell stays missing, not half-written
            logger.error("cell %s: could not record the failure either: %s", cell.name, e2)
        return CellResult(h, cell.name, "failed", spec=_clean(spec),
                          error=f"{type(e).__name__}: {e}")
    finally:
        lock.release()


WORKER_MEMORY_GROWTH = 8 * 2**30
"""Memory growth (bytes) a joblib worker may show before loky replaces it (see
:func:`keep_worker_caches`)."""


def keep_worker_caches() -> None:
    """Let a joblib (loky) worker keep its caches across cells.

    loky replaces a worker whose memory grew by more than 300 MB since its first task, taking
    that for a leak (``process_executor._MAX_MEMORY_LEAK_SIZE``, checked in the worker after
    every task). A cell worker legitimately grows by more: the embedding table, the neighbour
    index and BERTScore's model and reference embeddings are cached per process. With the
    default, ``--jobs 2`` replaced workers every few cells, recomputed those caches each time
    (about 12 s of BERTScore per replacement on ``rt``) and warned "A worker stopped while some
    jobs were given to the executor". The bound is raised, inside the worker, to
    :data:`WORKER_MEMORY_GROWTH`.
    """
    from joblib.externals.loky import process_executor

    if process_executor._MAX_MEMORY_LEAK_SIZE < WORKER_MEMORY_GROWTH:
        process_executor._MAX_MEMORY_LEAK_SIZE = WORKER_MEMORY_GROWTH


def run_group(cells: list[tuple[Cell, str, str | None]], results: str,
              overwrite: str = "only-missing", fail_fast: bool = False) -> list[CellResult]:
    """Run cells sharing one privatized corpus, in order (one worker)."""
    keep_worker_caches()
    out = []
    for c, dh, bh in cells:
        out.append(run_cell(c, Path(results), dh, bh, overwrite))
        if fail_fast and out[-1].status == "failed":
            break
    return out


# --------------------------------------------------------------------------------------------
# The grid
# --------------------------------------------------------------------------------------------

@dataclass
class RunSummary:
    """Counts and per-cell outcomes of one ``bench run``."""

    grid: str
    results: list[CellResult]
    skipped: list[tuple[str, str]]
    seconds: float
    stages: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """Lines about measurements that are not valid (e.g. privacy at chance on the baseline)."""

    def count(self, status: str) -> int:
        """Number of cells with this status."""
        return sum(r.status == status for r in self.results)

    def text(self) -> str:
        """The summary printed after a run: counts, warnings, failures, skipped cells."""
        lines = [f"grid {self.grid}: {len(self.results)} cells — {self.count('done')} run, "
                 f"{self.count('cached')} already done, {self.count('failed')} failed, "
                 f"{self.count('locked')} locked by another run; {len(self.skipped)} skipped "
                 f"({self.seconds:.1f} s)"]
        if self.stages:
            total = max(self.seconds, 1e-9)
            parts = ", ".join(f"{k} {v:.1f} s ({100 * v / total:.0f}%)"
                              for k, v in self.stages.items())
            lines.append(f"  time by stage: {parts}")
        for w in self.warnings:
            lines.append(f"  WARNING {w}")
        for r in self.results:
            if r.status == "failed":
                lines.append(f"  FAILED {r.name}: {r.error}")
        for name, reason in self.skipped:
            lines.append(f"  skipped {name}: {reason}")
        return "\n".join(lines) + "\n"


def _dataset_hashes(grid: Grid) -> dict[str, str]:
    out = {}
    for cell in grid.cells:
        key = canonical_json([cell.dataset, cell.dataset_kwargs(), cell.seed])
        if key not in out:
            out[key] = _dataset(cell).content_hash
    return out


def plan(grid: Grid) -> list[list[tuple[Cell, str, str | None]]]:
    """Groups of (cell, dataset hash, baseline hash), baselines first, by privatized corpus."""
    hashes = _dataset_hashes(grid)
    groups: OrderedDict[str, list] = OrderedDict()
    base_of: dict[tuple, str] = {}
    cells = sorted(grid.cells, key=lambda c: not c.is_baseline)
    for cell in cells:
        dh = hashes[canonical_json([cell.dataset, cell.dataset_kwargs(), cell.seed])]
        ident = (cell.dataset, canonical_json(cell.dataset_kwargs()), cell.model,
                 canonical_json(cell.model_kwargs()), cell.seed)
        if cell.is_baseline:
            base_of[ident] = cell_hash(cell, dh)
        key = "baseline" if cell.is_baseline else privatization_hash(cell, dh)
        groups.setdefault(key, []).append((cell, dh, base_of.get(ident)))
    baseline = groups.pop("baseline", [])
    return ([[b] for b in baseline]) + list(groups.values())


def _stage_times(results: Path, outcomes: list[CellResult]) -> dict[str, float]:
    """Sum of the per-cell runtimes of the cells run in this invocation, by stage."""
    keys = ("privatize_seconds", "rewriter_seconds", "utility_fit_seconds", "adversary_seconds",
            "mia_seconds", "rewrite_seconds", "load_seconds")
    out = dict.fromkeys(keys, 0.0)
    for r in outcomes:
        rt = r.metrics.get("runtime", {}) if r.status == "done" else {}
        for k in keys:
            out[k] += float(rt.get(k) or 0.0)
    return {k.removesuffix("_seconds"): v for k, v in out.items() if v}


def run_grid(grid_path: str | Path | Grid, results: str | Path = "results", jobs: int = 1,
             executor: str = "local", scheduler: str | None = None,
             tracking_uri: str | None = None, mlflow: bool = True,
             overwrite: str = "only-missing", fail_fast: bool = False,
             progress: Callable[[CellResult], None] | None = None) -> RunSummary:
    """Run every valid cell of a grid (see the module docstring); returns the summary.

    Args:
        grid_path: the grid YAML (or a :class:`~bench.grid.Grid` already loaded from it).
        results: results folder (``cells/``, ``cache/``, ``mlflow.db``).
        jobs: worker processes for the ``local`` executor (joblib; 1 = in-process).
        executor: ``local`` or ``dask``.
        scheduler: Dask scheduler address (``tcp://host:port``); None starts a LocalCluster on
            127.0.0.1 with ``jobs`` workers.
        tracking_uri: MLflow URI (default: ``MLFLOW_TRACKING_URI`` or SQLite in ``results``).
        mlflow: mirror cells to MLflow.
        overwrite: ``never``, ``only-missing`` or ``always`` (see :func:`run_cell`).
        fail_fast: stop at the first failed cell.
        progress: called with each cell's outcome.
    """
    if overwrite not in OVERWRITE:
        raise ValueError(f"overwrite must be one of {OVERWRITE}, got {overwrite!r}")
    if executor not in ("local", "dask"):
        raise ValueError(f"executor must be 'local' or 'dask', got {executor!r}")
    t0 = time.perf_counter()
    grid = grid_path if isinstance(grid_path, Grid) else load_grid(grid_path)
    grid_path = grid.path if isinstance(grid_path, Grid) else grid_path
    results = Path(results)
    groups = plan(grid)
    tracker = None
    log_s = 0.0
    if mlflow:
        tracker, log_s = _open_tracker(results, grid, grid_path, tracking_uri, overwrite)
    collector = _Collector(tracker, results, progress, fail_fast, log_s)
    # baselines first (their metrics feed the deltas), then the privatized groups
    n_base = sum(1 for g in groups if g[0][0].is_baseline)
    warnings_: list[str] = []
    try:
        for i_phase, phase in enumerate((groups[:n_base], groups[n_base:])):
            if i_phase == 1:
                warnings_ = baseline_warnings(results, groups[:n_base])
                for w in warnings_:
                    logger.warning("%s", w)
            if not phase or collector.stop:
                continue
            _run_phase(phase, collector, results, executor=executor, jobs=jobs,
                       scheduler=scheduler, overwrite=overwrite, fail_fast=fail_fast)
    finally:
        collector.finish(t0)
    skipped = [(c.name, reason) for c, reason in grid.skipped]
    stages = _stage_times(results, collector.outcomes)
    if mlflow:
        stages["mlflow"] = collector.log_s
    return RunSummary(grid.name, collector.outcomes, skipped, time.perf_counter() - t0, stages,
                      warnings_)


def _open_tracker(results: Path, grid: Grid, grid_path: str | Path, tracking_uri: str | None,
                  overwrite: str) -> tuple[Any, float]:
    """This run's MLflow tracker (None when the store cannot be used: the run goes on without
    it) and the seconds opening it took."""
    from bench.tracking import Tracker, default_uri

    tracker = None
    t = time.perf_counter()
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or default_uri(results)
    # one runner at a time opens the store: two creating the same SQLite file at once run
    # its schema migration twice, and the second fails ("duplicate column name")
    store_lock = CellLock(results / "locks" / "mlflow-store.lock")
    for _ in range(1200):  # 60 s; then go ahead unlocked
        if store_lock.acquire():
            break
        time.sleep(0.05)
    try:
        tracker = Tracker(uri, grid.name, results,
                          params={"grid_path": str(grid_path), "n_cells": len(grid.cells),
                                  "n_skipped": len(grid.skipped), "overwrite": overwrite})
    except Exception as e:  # e.g. a store a killed run left half-created: run without it
        logger.warning("MLflow store %s cannot be used (%s: %s); the run goes on without "
                       "it: the files under %s/cells are the results (`bench verify "
                       "--results %s --repair` rebuilds a broken results/mlflow.db)", uri,
                       type(e).__name__, str(e).splitlines()[0] if str(e) else "",
                       results, results)
    finally:
        store_lock.release()
    return tracker, time.perf_counter() - t


class _Collector:
    """Takes the cells' outcomes batch by batch: mirrors each to MLflow (and drops the tracker
    once MLflow fails), reports progress, and sets ``stop`` at a failure under ``fail_fast``."""

    def __init__(self, tracker: Any, results: Path,
                 progress: Callable[[CellResult], None] | None, fail_fast: bool,
                 log_s: float) -> None:
        self.tracker = tracker
        self.results = results
        self.progress = progress
        self.fail_fast = fail_fast
        self.log_s = log_s  # seconds spent on MLflow
        self.outcomes: list[CellResult] = []
        self.stop = False

    def collect(self, batch: list[CellResult]) -> None:
        for r in batch:
            self.outcomes.append(r)
            if self.tracker is not None and r.status in ("done", "cached"):
                t = time.perf_counter()
                try:
                    mirror(self.tracker, self.results, r)
                except Exception as e:  # MLflow is a mirror: losing it never loses a cell
                    _lost_mlflow(e, self.results, self.tracker)
                    self.tracker = None
                self.log_s += time.perf_counter() - t
            if self.progress:
                self.progress(r)
            if self.fail_fast and r.status == "failed":
                self.stop = True

    def finish(self, t0: float) -> None:
        """Close the MLflow parent run with the counts by status (``t0``: when the run
        began)."""
        counts: dict[str, int] = {}
        for r in self.outcomes:
            counts[r.status] = counts.get(r.status, 0) + 1
        if self.tracker is not None:
            t = time.perf_counter()
            try:
                self.tracker.finish(counts, time.perf_counter() - t0)
            except Exception as e:
                _lost_mlflow(e, self.results, self.tracker)
            self.log_s += time.perf_counter() - t


def _run_phase(phase: list, collector: _Collector, results: Path, *, executor: str, jobs: int,
               scheduler: str | None, overwrite: str, fail_fast: bool) -> None:
    """Run one phase's groups on the executor, handing each batch of outcomes to
    ``collector`` (Dask and in-process runs stop early once it says stop)."""
    if executor == "dask":
        for batch in _run_dask(phase, str(results), overwrite, fail_fast, scheduler,
                               max(jobs, 1)):
            collector.collect(batch)
            if collector.stop:
                break
    elif jobs > 1:
        from joblib import Parallel, delayed

        for batch in Parallel(n_jobs=jobs, return_as="generator_unordered")(
                delayed(run_group)(g, str(results), overwrite, fail_fast)
                for g in phase):
            collector.collect(batch)
    else:
        for g in phase:
            collector.collect(run_group(g, str(results), overwrite, fail_fast))
            if collector.stop:
                break


def mirror(tracker: Any, results: Path, r: CellResult) -> None:
    """Log one finished (or already finished) cell to MLflow, once.

    Under a per-cell lock and asking MLflow again: another runner on the same results folder
    may be logging the same cell (it computed it; here it is cached)."""
    folder = results / "cells" / r.hash
    lock = CellLock(results / "locks" / f"{r.hash}.mlflow.lock")
    for _ in range(600):  # 30 s; a lock held that long belongs to a stuck runner: go on
        if lock.acquire():
            break
        time.sleep(0.05)
    try:
        # the cell's own provenance (written by the worker that computed it, with the numeric
        # platform it ran on), not this process's
        prov = read_provenance(folder)
        if r.status == "cached":  # back-fill only if it never reached MLflow
            if not tracker.is_logged(r.hash):
                tracker.log_cell(r.hash, json.loads((folder / "spec.json").read_text()),
                                 json.loads((folder / "metrics.json").read_text()),
                                 provenance=prov)
        else:
            tracker.log_cell(r.hash, r.spec, r.metrics, recheck=True, provenance=prov)
    finally:
        lock.release()


def _lost_mlflow(e: Exception, results: Path, tracker: Any) -> None:
    """Say once that MLflow is gone and close this process' parent run as far as it can."""
    logger.warning("MLflow stopped answering (%s: %s); the run goes on without it: the files "
                   "under %s/cells are the results, and `bench mlflow-sync --results %s` "
                   "mirrors them later, each cell once", type(e).__name__,
                   str(e).splitlines()[0] if str(e) else "", results, results)
    try:
        tracker.mlflow.end_run(status="FAILED")
    except Exception:  # the server is gone; the parent run stays open there
        logger.debug("could not close the MLflow parent run", exc_info=True)


def baseline_warnings(results: Path, baseline_groups: list) -> list[str]:
    """One line per dataset × privacy task whose baseline attack is at chance (no valid
    privacy measurement; the cells keep their numbers and say so)."""
    seen: dict[tuple[str, str], str] = {}
    for group in baseline_groups:
        cell, dh, _ = group[0]
        f = results / "cells" / cell_hash(cell, dh) / "metrics.json"
        try:
            m = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        ds = cell.name.split(":", 1)[0]
        for task, p in m.get("privacy", {}).items():
            if p.get("privacy_valid") is False and (ds, task) not in seen:
                seen[(ds, task)] = (f"no valid privacy measurement for {ds} / {task} (model "
                                    f"{cell.model}): {p.get('privacy_invalid_reason')}")
    return list(seen.values())


def _run_dask(groups: list, results: str, overwrite: str, fail_fast: bool,
              address: str | None, n_workers: int):
    """Submit groups to a Dask cluster (a LocalCluster on 127.0.0.1 when no address)."""
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if address is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, host="127.0.0.1",
                               dashboard_address="127.0.0.1:0", processes=True)
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        futures = [client.submit(run_group, g, results, overwrite, fail_fast, pure=False)
                   for g in groups]
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
