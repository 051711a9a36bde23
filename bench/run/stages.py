"""One cell's life, top to bottom: the stages that turn a cell of a grid into its metrics.

    load → privatize → rewrite → utility → attacks → membership → rewrite metrics → measures
    → deltas

Each stage is a named function of the cell's :class:`CellRun` (what earlier stages produced)
that adds to it; :data:`STAGES` lists them in order, with when each applies and the
``runtime`` key its wall time is recorded under, and :func:`evaluate_cell` runs them, timing
each in one place. Adding a stage is one function and one line in :data:`STAGES`.

The privatized corpus is cached on disk (:mod:`bench.results.corpus`) by
:func:`bench.grid.privatization_hash` and shared by every cell that needs the same corpus:
privatize once, train many. The cache holds privatized output only, never the private text.

Example:
    >>> metrics = evaluate_cell(cell, Path("results"), baseline=baseline_metrics)
    >>> m = upgrade(metrics)
    >>> m.utility.macro_f1, m.runtime.adversary_seconds
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from bench.grid import Cell, privatization_hash
from bench.grid.components import plugin_origins
from bench.guarantee import Guarantee
from bench.results import corpus as corpus_cache
from bench.results import layout
from bench.results.sections import (
    Membership,
    Privatization,
    RewriteScores,
    Runtime,
    Utility,
    set_sections,
    upgrade,
)
from bench.run import inputs
from bench.run.attacks import attack_privacy, n_classes


@dataclass
class CellRun:
    """What the stages of one cell share: the cell, its inputs and what each stage added."""

    cell: Cell
    """The cell being run."""
    results: Path
    """The results folder (its caches are used)."""
    baseline: Mapping[str, Any] | None = None
    """Metrics of the matching unprivatized baseline cell (None: none, or this is it)."""
    ds: Any = None
    """The dataset (load)."""
    docs: list[list[str]] = field(default_factory=list)
    """Every original document, tokenized (load)."""
    corpus: list = field(default_factory=list)
    """Every document as the models see it: privatized tokens or vectors (privatize), text
    again after a rewriter (rewrite)."""
    pstats: dict[str, Any] = field(default_factory=dict)
    """The privatization's record (privatize)."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """The cell's metrics, filled stage by stage."""
    mia: Any = None
    """The membership attacks' result (membership), for the measures that need its scores."""
    runtime: dict[str, float] = field(default_factory=dict)
    """Run-time measurements a stage adds to the cell's runtime section besides its wall time
    (attacks: the informed adversary's channels computed and reused)."""

    @cached_property
    def X(self) -> tuple[list, list, list]:
        """The corpus' train, dev and test splits (after privatize and rewrite)."""
        split = self.ds.splits
        return tuple(_subset(self.corpus, split[s]) for s in ("train", "dev", "test"))


def _subset(docs: list, idx: np.ndarray) -> list:
    return [docs[i] for i in idx.tolist()]


# --------------------------------------------------------------------------------------------
# The stages, in the order they run
# --------------------------------------------------------------------------------------------

def load(run: CellRun) -> None:
    """The dataset and its tokenized documents (cached per worker: :mod:`bench.run.inputs`)."""
    run.ds = inputs.dataset(run.cell)
    run.docs = inputs.dataset_tokens(run.cell, run.ds)


def privatize(run: CellRun) -> None:
    """Privatize every document (or take the cached corpus); record the privatizer's
    description, guarantee and N_w. The description (fitted noise parameters: TEM's γ,
    truncated Gumbel's b, ...) stays in the cell, so a report needs the committed cells only."""
    run.corpus, run.pstats = privatized_corpus(run.cell, run.ds, run.docs,
                                               layout.privatized_dir(run.results))
    set_sections(run.metrics, cell=run.cell.name, dataset_hash=run.ds.content_hash,
                 privatization=Privatization.make(**run.pstats))
    plugins = plugin_origins(run.cell)
    if plugins:  # which package, at which version, computed this cell (built-ins: no key)
        set_sections(run.metrics, plugins=plugins)
    if not run.cell.is_baseline:
        set_sections(run.metrics, guarantee=run.pstats.get("guarantee"),
                     n_w=run.pstats.get("n_w"))


def rewrite(run: CellRun) -> None:
    """Privatized vectors back to text by the cell's rewriter
    (:func:`bench.rewriters.pipeline.rewrite_cell`); records ``metrics["rewriter"]`` and marks
    the guarantee void when the rewriter was trained on the evaluated data."""
    from bench.rewriters.pipeline import rewrite_cell

    tokens, rstats = rewrite_cell(run.cell, run.ds, run.docs, run.corpus,
                                  layout.cache_dir(run.results), inputs.embedding(run.cell))
    set_sections(run.metrics, rewriter=rstats)
    g = upgrade(run.metrics).guarantee
    if rstats.get("guarantee_void") and g:  # after the mechanism's own reasons, if any
        set_sections(run.metrics,
                     guarantee=Guarantee.from_dict(g).voided(rstats["void_reason"]).to_dict())
    run.corpus = tokens


def utility(run: CellRun) -> None:
    """Fit the cell's utility model on the privatized train split (dev for early stopping)
    and score it on the test split (privatized, or original under ``utility_test: original``)
    against the chance level."""
    from bench.metrics.classification import chance_level, classification_scores, is_chance_level
    from bench.models import MODELS

    cell, task, split = run.cell, run.ds.utility_task, run.ds.splits
    Xtr, Xdev, Xte = run.X
    n_cls = n_classes(task)
    mparams = dict(cell.model_kwargs(), seed=cell.seed)
    if n_cls is not None:
        mparams.setdefault("n_classes", n_cls)
    t0 = time.perf_counter()
    model = MODELS.create(cell.model, **mparams)
    model.fit(Xtr, task.labels[split["train"]], Xdev, task.labels[split["dev"]])
    fit_s = time.perf_counter() - t0
    y_te = task.labels[split["test"]]
    # utility_test: original (the TEM paper's protocol, Carvalho et al. 2021 Sec. 5.3): the
    # model trained on privatized text is scored on the original test documents
    on_original = cell.settings.get("utility_test") == "original" and not cell.is_baseline
    if on_original:
        Xte = _subset(run.docs, split["test"])
    util = classification_scores(y_te, model.predict(Xte), n_cls, seed=cell.seed)
    chance = chance_level(y_te, task.labels[split["train"]], n_classes=n_cls, seed=cell.seed)
    util["chance_threshold"] = chance.threshold if hasattr(chance, "threshold") else None
    util["chance_level"] = bool(is_chance_level(util["macro_f1"], chance))
    util.update({"test_text": "original"} if on_original else {})
    set_sections(run.metrics, utility=Utility.make(task=task.name, **util, fit_seconds=fit_s))


def attacks(run: CellRun) -> None:
    """Every configured adversary on every private attribute
    (:func:`bench.run.attacks.attack_privacy`; channels through the results folder's cache,
    their count and seconds into the cell's runtime record)."""
    train, dev, test = (_subset(run.docs, run.ds.splits[s]) for s in ("train", "dev", "test"))
    set_sections(run.metrics,
                 privacy=attack_privacy(run.cell, run.ds, run.X, run.results, run.runtime,
                                        original=(train, dev, test)))


def membership(run: CellRun) -> None:
    """Membership inference on the dataset's MIA splits (grid settings ``mia``,
    ``mia_query``, ``mia_target``)."""
    from bench.attacks.membership import membership_inference

    cell, s, split = run.cell, run.cell.settings, run.ds.splits
    if not s.get("mia"):
        return
    ylab = run.ds.utility_task.labels
    parts = ("mia_members", "mia_nonmembers", "mia_shadow")
    # the attacker queries with the records' original text (mia_query: original) unless the
    # cell outputs vectors, which the models cannot be queried with as text
    query_with = s.get("mia_query", "original") if cell.output == "text" else "privatized"
    query = None
    if query_with == "original" and not cell.is_baseline:
        query = {k: _subset(run.docs, split[p]) for k, p in
                 zip(("members", "nonmembers", "shadow"), parts)}
    mia = membership_inference(
        cell.model,
        *(x for p in parts for x in (_subset(run.corpus, split[p]), ylab[split[p]])),
        model_params=cell.model_kwargs(),
        target_params="memorise" if s.get("mia_target", "memorise") == "memorise" else None,
        seed=cell.seed, query=query)
    set_sections(run.metrics, mia=Membership.make(**mia.metrics, query=query_with))
    run.mia = mia


def rewrite_metrics(run: CellRun) -> None:
    """How much text survives: rewrite scores of the privatized test documents against the
    originals (the first ``rewrite_max_docs`` of them where the grid sets it). Not on the
    baseline (its text is the original: the scores are the identity) nor on vector output."""
    from bench.metrics.rewrite import rewrite_scores

    cell, s = run.cell, run.cell.settings
    if not (s.get("rewrite_metrics") and cell.output == "text" and not cell.is_baseline):
        return
    test, limit = run.ds.splits["test"], s.get("rewrite_max_docs")
    test_idx = test[: int(limit)] if limit else test
    scores = rewrite_scores(_subset(run.docs, test_idx), _subset(run.corpus, test_idx))
    scores["n_docs"] = len(test_idx)
    if cell.has_rewriter:
        scores["loss"] = (upgrade(run.metrics).rewriter or {})["test_loss"]
    # from_dict, not make: a plugin rewrite metric adds its own key (kept, in its order)
    set_sections(run.metrics, rewrite=RewriteScores.from_dict(scores))
    if cell.has_rewriter:
        from bench.rewriters.pipeline import reference_scores

        set_sections(run.metrics, rewrite_reference=reference_scores(
            cell, run.ds, run.docs, layout.cache_dir(run.results), inputs.embedding(cell)))


def measures(run: CellRun) -> None:
    """The grid's measures that apply to the cell (:mod:`bench.measures`: reconstruction, S_w,
    linkage, MIA at low FPR, ...), each from its own random stream, into
    the cell's ``measures`` (one record per measure)."""
    from bench.measures import compute_measures, parse_versions

    names = list(parse_versions(run.cell.versions.get("measures")))
    if names:
        set_sections(run.metrics, measures=compute_measures(measure_input(run.cell, run), names))


def measure_input(cell: Cell, run: CellRun) -> Any:
    """What the measures of a cell are computed from (:class:`bench.measures.MeasureInput`)."""
    from bench.measures import MeasureInput
    from bench.results.channels import ChannelStore

    return MeasureInput(
        cell, run.ds, run.docs, run.corpus, embedding=inputs.embedding(cell),
        make_privatizer=None if cell.is_baseline else (
            lambda seed: inputs.privatizer(cell, seed=seed)),
        mia=run.mia, channel_cache=ChannelStore(layout.channels_dir(run.results)))


def deltas(run: CellRun) -> None:
    """Validity of the privacy and membership measurements and the deltas against the
    baseline (:mod:`bench.run.validity`); a baseline cell is checked against itself."""
    from bench.run.validity import add_deltas, mark_mia_validity, mark_privacy_validity

    if run.cell.is_baseline:
        mark_privacy_validity(run.metrics, run.metrics)
        mark_mia_validity(run.metrics, run.metrics)
    else:
        add_deltas(run.metrics, run.baseline)


def _always(cell: Cell) -> bool:
    return True


@dataclass(frozen=True)
class Stage:
    """One step of a cell's life."""

    name: str
    """Its name (``bench run`` prints time by stage)."""
    run: Callable[[CellRun], None]
    """What it does to the :class:`CellRun`."""
    applies: Callable[[Cell], bool] = _always
    """Whether it runs for a cell (a stage that skips itself inside still records its time)."""
    seconds: str | None = None
    """The ``runtime`` key its wall time goes to (None: the stage reports its own time)."""


STAGES: tuple[Stage, ...] = (
    Stage("load", load, seconds="load_seconds"),
    Stage("privatize", privatize),  # privatize_seconds: the privatizer's own (0 on a cache hit)
    Stage("rewrite", rewrite, lambda c: c.has_rewriter, "rewriter_seconds"),
    Stage("utility", utility),  # utility_fit_seconds: the model's fit
    Stage("attacks", attacks, seconds="adversary_seconds"),
    Stage("membership", membership, seconds="mia_seconds"),
    Stage("rewrite metrics", rewrite_metrics, seconds="rewrite_seconds"),
    Stage("measures", measures, lambda c: "measures" in c.versions, "measures_seconds"),
    Stage("deltas", deltas),
)
"""A cell's stages, in order."""

SUMMARY_KEYS = ("privatize_seconds", "rewriter_seconds", "utility_fit_seconds",
                "adversary_seconds", "mia_seconds", "rewrite_seconds", "measures_seconds",
                "load_seconds")
"""The ``runtime`` keys ``bench run`` sums into its "time by stage" line, in that order."""


def evaluate_cell(cell: Cell, results: Path, dataset_hash: str | None = None,
                  baseline: Mapping[str, Any] | None = None) -> dict:
    """Run one cell's :data:`STAGES` and return its metrics (the caller writes them).

    ``baseline``: the matching baseline cell's metrics, for the deltas (ignored for a
    baseline cell, which is checked against itself).
    """
    t_start = time.perf_counter()
    run = CellRun(cell, Path(results), baseline)
    timed: dict[str, float] = {}
    for stage in STAGES:
        if not stage.applies(cell):
            continue
        t0 = time.perf_counter()
        stage.run(run)
        if stage.seconds:
            timed[stage.seconds] = time.perf_counter() - t0
    pstats = run.pstats
    n_tok = pstats.get("n_tokens") or 0
    priv_s = pstats.get("privatize_seconds", 0.0) if not pstats.get("cache_hit") else 0.0
    runtime = {**timed, **run.runtime, "privatize_seconds": priv_s,
               "privatize_tokens_per_second": (n_tok / priv_s) if priv_s else None,
               "utility_fit_seconds": upgrade(run.metrics).utility.fit_seconds,
               "total_seconds": time.perf_counter() - t_start}
    set_sections(run.metrics, runtime=Runtime.make(**runtime))
    return run.metrics


# --------------------------------------------------------------------------------------------
# The privatized-corpus cache
# --------------------------------------------------------------------------------------------

def privatized_corpus(cell: Cell, ds: Any, docs: list[list[str]], cache_dir: Path
                      ) -> tuple[list, dict]:
    """The cell's privatized documents (all of them, every split) and privatization stats.

    Cached on disk by :func:`bench.grid.privatization_hash` (with the dataset content hash) and
    shared by every cell that needs the same corpus (:mod:`bench.results.corpus`).
    """
    if cell.is_baseline:
        return docs, {"privatize_seconds": 0.0, "n_tokens": sum(map(len, docs))}
    folder = cache_dir / privatization_hash(cell, ds.content_hash)
    cached = corpus_cache.load(folder, "privatized corpus")
    if cached is not None:
        return cached[0], cached[1] | {"cache_hit": True}
    priv = inputs.privatizer(cell, seed=cell.seed)
    out = priv.privatize(docs)
    stats = out.stats() | {"output": "text" if out.tokens is not None else "vectors",
                           "guarantee": priv.guarantee().to_dict(),
                           "guarantee_text": priv.guarantee().describe(),
                           "privatizer": priv.describe(), "privatize_seconds": out.seconds}
    corpus_cache.write(folder, out, stats)
    return (out.tokens if out.tokens is not None else out.vectors), stats | {"cache_hit": False}
