"""The notebook API: privatize text, run a grid, load results as a pandas DataFrame, build a
report or a leaderboard -- what the ``bench`` command does, from Python.

In the manner of ``lm_eval.simple_evaluate`` and ``mteb.evaluate``: plain functions with
keyword arguments, no console output (progress goes to the ``logging`` module), errors raised
as exceptions with the message the command line would print. ``docs/api.md`` has a worked
example that the tests execute.

Example:
    >>> import bench.api as api
    >>> api.privatize("The central bank raised rates.", mechanism="tem", epsilon=10, seed=0)
    'the central bank raised rates .'
    >>> run = api.run({"name": "mine", "axes": {...}}, results="results")
    >>> df = api.load("results")            # one row per cell, readable columns
    >>> df.groupby(["mechanism", "epsilon"]).utility_f1.mean()
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from bench.privatize import Privatizer
    from bench.run.runner import RunSummary

logger = logging.getLogger(__name__)

__all__ = ["RunResult", "leaderboard", "load", "privatize", "privatizer", "report", "run"]

_URI_PREFIXES = ("http://", "https://", "sqlite:", "file:")


def privatizer(*, mechanism: str, epsilon: float, **options: Any) -> Privatizer:
    """A fitted :class:`bench.privatize.Privatizer` (build once, privatize many texts).

    ``options``: those of :meth:`Privatizer.build` -- ``sensitivity``, ``mapping`` (default:
    the mechanism's natural one), ``seed``, ``embedding``, ``vocab_size``, ``oov``,
    ``mechanism_params``, ...
    """
    from bench.privatize import Privatizer

    return Privatizer.build(mechanism=mechanism, epsilon=epsilon, **options)


def privatize(texts: str | Sequence[str], *, mechanism: str | None = None,
              epsilon: float | None = None, using: Privatizer | None = None,
              **options: Any) -> str | list[str]:
    """Privatize a text, or a list of texts, word by word; returns the same shape.

    Each text is tokenized as the suite tokenizes corpora (:func:`bench.embeddings.tokenize`),
    every token occurrence gets its own noise, and the output is detokenized. Give either
    ``mechanism`` and ``epsilon`` (plus any option of :func:`privatizer`) or a privatizer
    already built (``using=``).

    Raises:
        TypeError: ``texts`` is neither a string nor a list of strings (token lists go to
            :meth:`Privatizer.privatize`).
        ValueError: no mechanism and ε; a configuration that outputs vectors, not text.
    """
    from bench.embeddings import tokenize

    one = isinstance(texts, str)
    items = [texts] if one else texts
    if isinstance(items, (bytes, Mapping)) or not isinstance(items, Sequence) or not all(
            isinstance(t, str) for t in items):
        raise TypeError("privatize takes a string or a list of strings (texts); for token "
                        "lists use Privatizer.privatize")
    if using is None:
        if mechanism is None or epsilon is None:
            raise ValueError("privatize needs mechanism= and epsilon= (or using=a privatizer)")
        using = privatizer(mechanism=mechanism, epsilon=epsilon, **options)
    elif mechanism is not None or epsilon is not None or options:
        raise ValueError("give either using= or mechanism=/epsilon=/options, not both")
    out = using.privatize([tokenize(t) for t in items]).texts()
    return out[0] if one else out


@dataclass
class RunResult:
    """What :func:`run` returns: every cell of the grid (run now or already done) and the
    run's summary."""

    frame: pd.DataFrame
    """One row per cell of the grid, as :func:`load` gives them, with ``status`` (``done``:
    computed now, ``cached``: already done, ``failed``, ``locked``)."""
    summary: RunSummary
    """Counts, time by stage, warnings, failures and skipped cells
    (:class:`bench.run.runner.RunSummary`; ``summary.text()`` is what ``bench run`` prints)."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """``(cell name, reason)`` of the grid's cells that cannot run."""

    def __repr__(self) -> str:
        return f"RunResult({len(self.frame)} cells: {self.summary.text().splitlines()[0]})"


def run(grid: str | Path | Mapping[str, Any], *, results: str | Path = "results",
        jobs: int = 1, mlflow: bool = False, progress: Callable[[Any], None] | None = None,
        **options: Any) -> RunResult:
    """Run a grid -- a YAML file, a grid's name under ``experiments/``, or the grid itself as
    a dict with the keys of a grid file -- resumably, as ``bench run`` does.

    Cells already in ``results`` are not recomputed; the returned frame holds them too. MLflow
    mirroring is off by default here (``mlflow=True`` turns it on). ``options`` go to
    :func:`bench.run.runner.run_grid` (``executor``, ``scheduler``, ``tracking_uri``,
    ``overwrite``, ``fail_fast``).

    Raises:
        bench.grid.GridError: a malformed grid (the same message as ``bench validate``).
    """
    from bench.grid import load_grid
    from bench.run.runner import run_grid

    with _grid_file(grid) as path:
        g = load_grid(path)
        summary = run_grid(g, results, jobs=jobs, mlflow=mlflow, progress=progress, **options)
    status = {r.hash: r.status for r in summary.results}
    frame = load(results, hashes=set(status))
    if len(frame):
        frame["status"] = [status.get(h, "") for h in frame["hash"]]
    failed = [r for r in summary.results if r.status not in ("done", "cached")]
    if failed:
        import pandas as pd

        extra = pd.DataFrame([{"hash": r.hash, "name": r.name, "status": r.status,
                               "error": r.error} for r in failed])
        frame = pd.concat([frame, extra], ignore_index=True)
    return RunResult(frame, summary, list(summary.skipped))


class _grid_file:
    """A grid given as a dict, written to a temporary YAML file for the grid loader (its
    ``extends`` is relative to the working folder); a path or a name is used as it is."""

    def __init__(self, grid: str | Path | Mapping[str, Any]) -> None:
        self.grid = grid
        self.tmp: tempfile.TemporaryDirectory | None = None

    def __enter__(self) -> Path:
        if isinstance(self.grid, Mapping):
            import yaml

            self.tmp = tempfile.TemporaryDirectory(prefix="bench-grid-")
            data = dict(self.grid)
            if "extends" in data:
                data["extends"] = str(Path(str(data["extends"])).resolve())
            name = str(data.get("name") or "grid")
            path = Path(self.tmp.name) / f"{name}.yaml"
            path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
            return path
        from bench.analysis.results import resolve_grid

        return resolve_grid(self.grid)

    def __exit__(self, *exc: Any) -> None:
        if self.tmp is not None:
            self.tmp.cleanup()


def load(*sources: str | Path, hashes: Iterable[str] | None = None) -> pd.DataFrame:
    """Results as a pandas DataFrame, one row per finished cell.

    ``sources``: results folders (each holding ``cells/``; default ``results``), committed
    references (``results/reference/quickstart``) or MLflow tracking URIs
    (``sqlite:///results/mlflow.db``, ``http://127.0.0.1:5000``), read with the checks of
    ``bench leaderboard`` (damaged or invalid cells are left out, with a logged warning).
    ``hashes``: keep only these cells.

    Columns: ``source``, ``hash``, ``name``, the configuration (``dataset``, ``model``,
    ``mechanism``, ``sensitivity``, ``mapping``, ``rewriter``, ``epsilon``, ``seed``,
    ``baseline``, and each component's parameters as compact JSON: ``dataset_config``,
    ``model_params``, ``mechanism_params``, ...), utility (``utility_task``, ``utility_f1``
    with ``utility_f1_low``/``_high``, its 95% interval, ``utility_at_chance``), per private
    attribute A: ``privacy[A]`` (1 − macro-F1 of the strongest adversary), ``adversary[A]``,
    ``privacy_valid[A]``, ``delta_privacy[A]`` and ``tradeoff[A]`` (the thesis' Δ
    definition), and the scores anchored against the baseline of the same seed
    (:mod:`bench.analysis.anchored`; privatized cells): ``utility_retained``,
    ``privacy_gained[A]``, ``anchored_tradeoff[A]``; ``delta_utility``; ``n_w`` and the
    rewrite metrics (``rouge1``, ``bleu``, ``bertscore``, ...); ``mia_auc``; ``guarantee``
    (text); ``seconds``; ``plugins``.
    """
    import pandas as pd

    keep = set(hashes) if hashes is not None else None
    rows: list[dict[str, Any]] = []
    for src in sources or ("results",):
        cells = _read(src)
        anchored = _anchored(cells)
        for h, spec, metrics in cells:
            if keep is None or h in keep:
                rows.append(_row(str(src), h, spec, metrics) | anchored.get(h, {}))
    frame = pd.DataFrame(rows)
    if len(frame):
        frame = frame.sort_values(["source", "name", "hash"], kind="stable",
                                  ignore_index=True)
    return frame


def _anchored(cells: list[tuple[str, Mapping[str, Any], Mapping[str, Any]]]
              ) -> dict[str, dict[str, Any]]:
    """Per privatized cell, its anchored scores against the baseline of its seed in the same
    source (:mod:`bench.analysis.anchored`): ``utility_retained``, and per attribute A
    ``privacy_gained[A]`` and ``anchored_tradeoff[A]`` (None where undefined)."""
    from bench.analysis.anchored import cell_anchored
    from bench.analysis.privacy import baseline_index, baseline_of
    from bench.analysis.results import CellRecord

    recs = [CellRecord(h, dict(spec), dict(metrics), Path(h)) for h, spec, metrics in cells]
    index = baseline_index(recs)
    out: dict[str, dict[str, Any]] = {}
    for r in recs:
        if r.is_baseline:
            continue
        base = baseline_of(r, index)
        row = {"utility_retained": cell_anchored(r, base, None).retained}
        for attr in sorted(r.sections.attributes):
            a = cell_anchored(r, base, attr)
            row[f"privacy_gained[{attr}]"] = a.gained
            row[f"anchored_tradeoff[{attr}]"] = a.tradeoff
        out[r.hash] = row
    return out


def _read(src: str | Path) -> Iterable[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    if str(src).startswith(_URI_PREFIXES):
        from bench.leaderboard.sources import read_mlflow

        s = read_mlflow(str(src), "s0")
        for p in s.problems:
            logger.warning("%s", p)
        return [(c.hash, c.spec, c.metrics) for c in s.cells]
    from bench.results.record import scan

    folder = Path(src)
    if not folder.is_dir():
        raise FileNotFoundError(f"{src}: no results folder there")
    found = scan(folder)
    for w in found.warnings:
        logger.warning("%s: %s", src, w)
    return [(r.hash, r.spec, r.metrics) for r in found.cells]


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        if v in ("inf", "Infinity"):
            return math.inf
        return None
    return float(v)


def _params(entry: Any, key: str = "params") -> str:
    if not isinstance(entry, Mapping):
        return "{}"
    params = dict(entry.get(key) or {})
    params.pop("path", None)  # a path is the user's machine, not the configuration
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def _row(source: str, h: str, spec: Mapping[str, Any], metrics: Mapping[str, Any]
         ) -> dict[str, Any]:
    from bench.results.sections import interval, upgrade

    m = upgrade(metrics)

    def name(kind: str) -> str:
        e = spec.get(kind)
        return str(e.get("name")) if isinstance(e, Mapping) else str(e or "none")

    eps = _num(spec.get("epsilon"))
    row: dict[str, Any] = {
        "source": source, "hash": h, "name": spec.get("name") or m.cell or h,
        "dataset": name("dataset"), "model": name("model"), "mechanism": name("mechanism"),
        "sensitivity": name("sensitivity"), "mapping": name("mapping"),
        "rewriter": name("rewriter"), "epsilon": eps, "seed": spec.get("seed"),
        "baseline": name("mechanism") == "none",
        "dataset_config": _params(spec.get("dataset"), "config"),
        "model_params": _params(spec.get("model")),
        "mechanism_params": _params(spec.get("mechanism")),
        "sensitivity_params": _params(spec.get("sensitivity")),
        "mapping_params": _params(spec.get("mapping")),
        "utility_task": m.utility.task,
        "utility_f1": _num(m.utility.macro_f1),
    }
    row["utility_f1_low"], row["utility_f1_high"] = (
        interval(m.utility.macro_f1_ci95) or (None, None))
    row["utility_at_chance"] = m.utility.chance_level
    row["delta_utility"] = _num(m.vs_baseline.delta_utility)
    for attr in sorted(m.attributes):
        rec = m.attribute(attr)
        row[f"privacy[{attr}]"] = _num(rec.privacy)
        row[f"adversary[{attr}]"] = rec.adversary
        row[f"privacy_valid[{attr}]"] = rec.privacy_valid
        vs = m.vs_baseline.attribute(attr)
        row[f"delta_privacy[{attr}]"] = _num(vs.delta_privacy)
        row[f"tradeoff[{attr}]"] = _num(vs.tradeoff)
    row["n_w"] = _num(m.n_w)
    for k, v in sorted(m.rewrite.to_dict().items()):
        if k not in ("n_w", "n_docs"):
            row[k] = _num(v)
    row["mia_auc"] = _num(m.mia.mia_auc)
    row["guarantee"] = m.privatization.guarantee_text
    row["seconds"] = _num(m.runtime.total_seconds)
    plugins = m.plugins or {}
    row["plugins"] = ", ".join(f"{k}: {v}" for k, v in sorted(plugins.items())) \
        if isinstance(plugins, Mapping) else ""
    return row


def report(results: str | Path = "results", out: str | Path | None = None, *,
           grid: str | Path | Mapping[str, Any] | None = None, **options: Any) -> Any:
    """Build ``bench report``'s tables, plots and page for a results folder (``out``:
    default ``<results>/report``); ``grid``: only its cells (a file, a name or a dict).
    Returns the report's summary (``str()`` of it is what ``bench report`` prints)."""
    from bench.report.build import build_report

    out = Path(out) if out is not None else Path(results) / "report"
    if grid is None:
        return build_report(results, out, **options)
    with _grid_file(grid) as path:
        return build_report(results, out, grid=str(path), **options)


def leaderboard(*sources: str | Path, out: str | Path | None = None,
                **options: Any) -> dict[str, Any]:
    """Merge and rank results folders and tracking URIs as ``bench leaderboard`` does;
    returns the leaderboard document (``leaderboard.json``'s content) and writes the page
    into ``out`` when given. ``options``: those of
    :func:`bench.leaderboard.build_leaderboard` (``trusted``, ``verify``, ...)."""
    from bench.leaderboard import build_leaderboard

    folders = [s for s in sources if not str(s).startswith(_URI_PREFIXES)]
    uris = [str(s) for s in sources if str(s).startswith(_URI_PREFIXES)]
    return build_leaderboard(folders, uris, out, **options)
