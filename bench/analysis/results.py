"""Read a results folder into aggregated groups: one group per configuration, seeds pooled.

A *configuration* is everything about a cell except its seed: dataset (name, config, loader
version), model, mechanism, sensitivity approach, mapping (each with parameters and version), ε,
the grid settings, and the suite version. Cells that differ only in the seed are pooled into one
:class:`Group`, and every number a report shows is a :class:`Stat` over those seeds: mean,
sample std, n and a 95% interval (Student t over n ≥ 2 seeds; one seed: the cell's bootstrap
interval over the test documents where the metric has one; see :mod:`bench.analysis.stats`).

Mixing rules (never silently):

* cells from different suite versions are different configurations; labels then carry
  ``suite=<version>`` and a warning says so;
* cells of the same dataset, config and seed with *different* dataset content hashes (the data
  changed between runs) are kept apart by their hash (``data=<8 hex>`` in the label, with a
  warning). A dataset whose content depends on the seed (a seeded ``subsample``) has one hash per
  seed; that is expected and pooled.

Labels are readable and minimal: a component shows the parameters (and version) that differ
between configurations of the same name in this result set; a dataset always shows its config.

Example:
    >>> from bench.analysis.results import load_results, group_cells
    >>> rs = load_results("results")
    >>> groups, warnings = group_cells(rs.cells)
    >>> groups[0].stat(lambda m: m.utility.macro_f1).mean
    0.97...
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

from bench.analysis.stats import BOOTSTRAP, T, bootstrap_interval, mean_std, t_interval
from bench.errors import InputError
from bench.grid.schema import DATA_KEY
from bench.results import layout
from bench.results.record import CellRecord, FailedCell, scan, to_float
from bench.results.sections import CellMetrics

logger = logging.getLogger(__name__)

COMPONENTS: tuple[str, ...] = ("dataset", "model", "sensitivity", "mechanism", "mapping")
"""Spec keys of the components that make up a configuration."""

_PRIVATIZATION = ("sensitivity", "mechanism", "mapping")
"""Components a baseline cell does not use (labelled by name only)."""


DASH = "—"
"""What a table shows where there is no value."""


class ReportError(InputError, ValueError):
    """Bad input for the report (missing results folder, unknown grid, unsafe output folder)."""


# --------------------------------------------------------------------------------------------
# Cells
# --------------------------------------------------------------------------------------------


@dataclass
class ResultSet:
    """Everything read from one results folder."""

    cells: list[CellRecord]
    """Finished cells, sorted by folder name."""
    failed: list[FailedCell]
    """Failed cells (``error.json`` only), sorted by folder name."""
    warnings: list[str] = field(default_factory=list)
    """Problems found while reading (unreadable or half-written folders)."""
    grid: str | None = None
    """Name of the grid the cells were filtered to, if any."""


def component(spec: Mapping[str, Any], kind: str) -> tuple[str, dict[str, Any], Any]:
    """``(name, params, version)`` of one component of a spec (dataset: ``config``, no path)."""
    entry = spec.get(kind) or {}
    if isinstance(entry, str):
        return entry, {}, None
    params = dict(entry.get("config" if kind == "dataset" else "params") or {})
    if kind == "dataset":
        params.pop("path", None)
    return str(entry.get("name", "?")), params, entry.get("version")


def resolve_grid(grid: str | Path) -> Path:
    """A grid file from a path or a name (``quickstart`` → ``experiments/quickstart.yaml``)."""
    p = Path(grid)
    candidates = [p, Path("experiments") / f"{grid}.yaml", Path("experiments") / f"{grid}.yml"]
    for c in candidates:
        if c.is_file():
            return c
    raise ReportError(f"grid {str(grid)!r} not found (tried {', '.join(map(str, candidates))})")


def _keep_all(spec: Mapping[str, Any]) -> bool:
    """Spec predicate without ``--grid``: every cell is kept."""
    return True


def _grid_filter(grid: str | Path) -> tuple[str, Callable[[Mapping[str, Any]], bool],
                                            set[str]]:
    """(grid name, spec predicate, names of the grid's cells) for ``--grid``."""
    from bench.grid import Cell, GridError, cell_hash, load_grid

    path = resolve_grid(grid)
    try:
        g = load_grid(path)
    except GridError as e:
        raise ReportError(str(e)) from None
    hashes = {cell_hash(c) for c in g.cells}
    names = {c.name for c in g.cells}

    def keep(spec: Mapping[str, Any]) -> bool:
        try:
            return cell_hash(Cell.from_spec(spec)) in hashes
        except Exception:  # noqa: BLE001 - a spec of another format cannot be in this grid
            return False

    return g.name, keep, names


def load_results(results: str | Path, grid: str | Path | None = None) -> ResultSet:
    """Read ``<results>/cells/*/`` (finished and failed cells), optionally only one grid's.

    Args:
        results: the results folder (the one holding ``cells/``).
        grid: a grid name or file; only cells whose spec is a cell of that grid are kept
            (failed cells: by name). Cells of any suite version and dataset hash match.

    Returns:
        The :class:`ResultSet`.

    Raises:
        ReportError: ``<results>/cells`` does not exist, or the grid is unknown or invalid.
    """
    cells_dir = layout.cells_dir(results)
    if not cells_dir.is_dir():
        raise ReportError(f"no results under {cells_dir} (run `bench run GRID --results "
                          f"{results}` first)")
    keep: Callable[[Mapping[str, Any]], bool] = _keep_all
    grid_name, names = None, None
    if grid is not None:
        grid_name, keep, names = _grid_filter(grid)
    # hand-made and copied cells (tests, imports) are read whatever hash their spec names;
    # the leaderboard, which keys cells by hash, refuses those (bench.leaderboard.sources)
    found = scan(results, keep, None if names is None else names.__contains__,
                 check_hash=False)
    out = ResultSet(found.cells, found.failed, grid=grid_name)
    out.warnings = found.warnings + [f"{layout.CELLS}/{h}: refused ({why}); ignored"
                                     for h, why in found.refused]
    for w in out.warnings:
        logger.warning(w)
    if found.unsealed:  # said on the console only: the report's content does not depend on it
        logger.warning("%d cell(s) without %s (written before manifests existed, by hand or "
                       "elsewhere): read without an integrity check; `bench verify --seal` "
                       "seals the sound ones", found.unsealed, layout.MANIFEST)
    return out


# --------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stat:
    """Mean over seeds, its sample standard deviation and count, and a 95% interval.

    The interval (:mod:`bench.analysis.stats`): with n ≥ 2 seeds the Student-t interval of the
    mean, ``mean ± t_{0.975, n−1} · s / √n`` (Student 1908; ``kind = "t"``); with one seed the
    cell's own percentile-bootstrap interval over the test documents where the metric has one
    (``*_ci95``, Efron & Tibshirani 1993, Ch. 13; ``kind = "bootstrap"``); otherwise none
    (``kind`` None: cells from before suite 0.3.0, metrics without a bootstrap).
    """

    mean: float
    """Arithmetic mean."""
    std: float | None
    """Sample standard deviation (ddof = 1); None when n = 1."""
    n: int
    """Number of values."""
    lo: float | None = None
    """Lower end of the 95% interval (None: no interval)."""
    hi: float | None = None
    """Upper end of the 95% interval (None: no interval)."""
    kind: str | None = None
    """``"t"`` (over seeds), ``"bootstrap"`` (one run, over test documents) or None."""

    @property
    def has_interval(self) -> bool:
        """Whether there is an interval."""
        return self.kind is not None and self.lo is not None and self.hi is not None

    @property
    def half_width(self) -> float | None:
        """Half the width of a t interval (symmetric); None for bootstrap or no interval."""
        if self.kind != T or self.lo is None or self.hi is None:
            return None
        return (self.hi - self.lo) / 2

    @property
    def bounds(self) -> tuple[float, float]:
        """``(lo, hi)``, or ``(mean, mean)`` where there is no interval (for ranking)."""
        if self.has_interval:
            return float(self.lo), float(self.hi)  # type: ignore[arg-type]
        return self.mean, self.mean


def stat(values: Iterable[Any], cis: Iterable[Any] | None = None) -> Stat | None:
    """:class:`Stat` of the finite numbers among ``values`` (None/strings/non-finite skipped).

    Args:
        values: one value per seed.
        cis: optional, aligned with ``values``: each value's stored bootstrap interval
            (``[lo, hi]`` or None). Used only when a single value remains (n = 1); with n ≥ 2
            the interval is the t interval across seeds.
    """
    vals = [to_float(v) for v in values]
    ci_list = list(cis) if cis is not None else [None] * len(vals)
    if len(ci_list) != len(vals):
        raise ValueError(f"{len(ci_list)} intervals for {len(vals)} values")
    pairs = [(v, c) for v, c in zip(vals, ci_list) if math.isfinite(v)]
    if not pairs:
        return None
    kept = [v for v, _c in pairs]
    n = len(kept)
    mean, std = mean_std(kept)
    if n >= 2:
        _m, lo, hi = t_interval(kept)  # type: ignore[misc]
        return Stat(mean, std, n, lo, hi, T)
    ci = bootstrap_interval(pairs[0][1])
    if ci is not None:
        return Stat(mean, std, n, ci[0], ci[1], BOOTSTRAP)
    return Stat(mean, std, n)


def fmt_interval(s: Stat | None, digits: int = 3, signed: bool = False,
                 empty: str = "—") -> str:
    """``mean ± half-width`` (t), ``mean [lo, hi]`` (bootstrap) or ``mean`` (no interval).

    Rounded to ``digits``; ``signed`` puts a sign on the mean (deltas); ``empty`` for None.
    """
    if s is None:
        return empty
    text = round_text(s.mean, digits, signed)
    if s.kind == T and s.half_width is not None:
        text += f" ± {round_text(s.half_width, digits, False)}"
    elif s.kind == BOOTSTRAP and s.has_interval:
        text += (f" [{round_text(float(s.lo), digits, False)}, "  # type: ignore[arg-type]
                 f"{round_text(float(s.hi), digits, False)}]")  # type: ignore[arg-type]
    return text


def round_text(x: float, digits: int, signed: bool) -> str:
    """``x`` rounded to ``digits`` decimals (signed: with ``+``/``-``); never ``-0.000``."""
    text = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    if float(text) == 0.0:  # no "-0.000"
        text = f"{0.0:+.{digits}f}" if signed else f"{0.0:.{digits}f}"
    return text


def dig(obj: Any, *path: str) -> Any:
    """``obj[p0][p1]...`` or None where a key is missing."""
    for p in path:
        if not isinstance(obj, Mapping) or p not in obj:
            return None
        obj = obj[p]
    return obj


# --------------------------------------------------------------------------------------------
# Configurations and labels
# --------------------------------------------------------------------------------------------


def fmt_value(v: Any) -> str:
    """Compact text of a parameter value (floats ``g``, bools lower-case, lists as JSON)."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:g}"
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    if v is None:
        return "null"
    return str(v)


def fmt_eps(eps: float) -> str:
    """ε as text: ``10``, ``0.1``, ``∞``."""
    return "∞" if math.isinf(eps) else f"{eps:g}"


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class Config:
    """A configuration: labels for display, ``ident`` for identity, ``order`` for sorting."""

    dataset: str
    """Dataset label, e.g. ``bbc(subsample=400)``."""
    model: str
    """Model label."""
    sensitivity: str
    """Sensitivity approach label."""
    mechanism: str
    """Mechanism label (``none`` for the baseline)."""
    mapping: str
    """Mapping label."""
    epsilon: float
    """ε (``math.inf`` for the baseline)."""
    ident: str
    """Canonical JSON of everything but the seed (equality of configurations)."""
    suite_version: str = ""
    """Suite version of the configuration's cells."""
    rewriter: str = "none"
    """Rewriter label (``none`` for cells without one; the mapping label then ends in
    ``→ <rewriter>``)."""
    baseline: bool = False
    """Whether its cells are unprivatized baselines (:func:`bench.grid.schema.is_baseline`
    of their specs: a privatized cell claiming ε = ∞ is not one)."""

    @property
    def is_baseline(self) -> bool:
        """Whether this is the unprivatized baseline (:attr:`baseline`)."""
        return self.baseline

    @property
    def order(self) -> tuple:
        """Stable sort key: sensitivity, mapping, mechanism (baseline first), model, dataset, ε."""
        return (self.sensitivity, self.mapping, self.rewriter, not self.baseline,
                self.mechanism, self.model, self.dataset, self.epsilon, self.ident)

    @property
    def mechanism_config(self) -> str:
        """Mechanism with its sensitivity approach and mapping.

        E.g. ``mvl · sens=none · map=nearest``.
        """
        return f"{self.mechanism} · sens={self.sensitivity} · map={self.mapping}"


@dataclass
class Group:
    """The cells of one configuration (one per seed)."""

    config: Config
    """The configuration."""
    records: list[CellRecord]
    """Its cells, sorted by seed then hash."""

    def stat(self, get: Callable[[CellMetrics], Any],
             ci: Callable[[CellMetrics], Any] | None = None) -> Stat | None:
        """:class:`Stat` over seeds of ``get(metrics)`` (values that are None are skipped).

        Args:
            get: the value of one cell's typed metrics (:class:`bench.results.sections.
                CellMetrics`, e.g. ``lambda m: m.utility.macro_f1``; an absent section reads
                as an empty one, its values None).
            ci: optional, that value's stored bootstrap interval (``[lo, hi]``, e.g.
                ``lambda m: m.utility.macro_f1_ci95``); it becomes the interval when only one
                seed has a value (see :class:`Stat`).
        """
        vals = [get(r.sections) for r in self.records]
        cis = [ci(r.sections) for r in self.records] if ci is not None else None
        return stat(vals, cis)

    def count(self, pred: Callable[[CellMetrics], bool]) -> int:
        """Number of cells whose typed metrics satisfy ``pred``."""
        return sum(bool(pred(r.sections)) for r in self.records)

    @property
    def seeds(self) -> list[int]:
        """The seeds pooled in this group."""
        return [r.seed for r in self.records]


def _descriptor(rec: CellRecord, kind: str, data_tag: str) -> dict[str, Any]:
    _name, params, version = component(rec.spec, kind)
    d: dict[str, Any] = {f"p:{k}": v for k, v in params.items()}
    d["v"] = version
    if kind == "dataset":
        d.update({f"s:{k}": v for k, v in (rec.spec.get("settings") or {}).items()})
        d["suite"] = rec.suite_version
        d["data"] = data_tag
    return d


def _label(kind: str, name: str, desc: dict[str, Any], varying: set[str],
           files: Mapping[str, str] | None = None) -> str:
    """``name(key=value, ...)`` with what varies (a dataset: every config key; its file's
    content digest shown as the file's base name, ``files``: digest → name)."""
    parts = []
    for k in sorted(desc):
        always = kind == "dataset" and k.startswith("p:") and k != "p:seed"
        if not (always or k in varying):
            continue
        v = desc[k]
        if k == "v":
            parts.append(f"v{fmt_value(v)}")
        elif k == "suite":
            parts.append(f"suite={v}")
        elif k == "data":
            parts.append(f"data={str(v)[:8]}" if v else "data=?")
        elif kind == "dataset" and k == f"p:{DATA_KEY}":
            parts.append(f"file={(files or {}).get(str(v)) or str(v)[:8]}")
        else:
            parts.append(f"{k[2:]}={fmt_value(v)}")
    return name + (f"({', '.join(parts)})" if parts else "")


def file_names(cells: Iterable[CellRecord]) -> dict[str, str]:
    """The base name of the data file of every dataset read from one (digest → name; the
    folders a path names are never shown). Two names for one content: both, joined by '|'."""
    out: dict[str, set[str]] = {}
    for r in cells:
        cfg = (r.spec.get("dataset") or {}).get("config") or {}
        digest, path = cfg.get(DATA_KEY), cfg.get("path")
        if digest and path:
            out.setdefault(str(digest), set()).add(PurePath(str(path)).name)
    return {k: "|".join(sorted(v)) for k, v in out.items()}


def data_conflicts(cells: Iterable[CellRecord]) -> tuple[set[str], list[str]]:
    """Datasets (identity JSON) with two content hashes for one seed, and warnings about them."""
    seen: dict[tuple[str, str, int], set[str]] = {}
    for r in cells:
        name, params, version = component(r.spec, "dataset")
        key = (r.suite_version, _canon([name, params, version]), r.seed)
        seen.setdefault(key, set()).add(r.dataset_hash)
    bad: set[str] = set()
    warnings = []
    for (suite, ds, seed), hashes in sorted(seen.items()):
        if len(hashes) > 1:
            bad.add(_canon([suite, ds]))
            warnings.append(
                f"dataset {ds} (suite {suite}, seed {seed}) has results on {len(hashes)} "
                f"different data versions ({', '.join(sorted(h[:8] for h in hashes))}): "
                "kept apart, labelled data=<hash>")
    return bad, warnings


def group_cells(cells: Iterable[CellRecord]) -> tuple[list[Group], list[str]]:
    """Pool cells that differ only in the seed; returns (groups in stable order, warnings)."""
    cells = sorted(cells, key=lambda r: (r.seed, r.hash))
    conflicts, warnings = data_conflicts(cells)
    suites = sorted({r.suite_version for r in cells})
    if len(suites) > 1:
        shown = [s or "0.4.0 and later" for s in suites]
        warnings.append(f"results from {len(suites)} suite versions ({', '.join(shown)}) are "
                        "never pooled: their rows are labelled suite=<version>")

    def data_tag(r: CellRecord) -> str:
        name, params, version = component(r.spec, "dataset")
        key = _canon([r.suite_version, _canon([name, params, version])])
        return r.dataset_hash if key in conflicts else ""

    descs: dict[str, dict[str, list[dict[str, Any]]]] = {k: {} for k in (*COMPONENTS,
                                                                          "rewriter")}
    per_cell = []
    for r in cells:
        tag = data_tag(r)
        d = {k: (component(r.spec, k)[0], _descriptor(r, k, tag)) for k in COMPONENTS}
        if r.spec.get("rewriter"):  # only cells with a rewriter have the component
            d["rewriter"] = (component(r.spec, "rewriter")[0], _descriptor(r, "rewriter", tag))
            descs["rewriter"].setdefault(d["rewriter"][0], []).append(d["rewriter"][1])
        per_cell.append((r, d))
        for k, (name, desc) in d.items():
            if not (r.is_baseline and k in _PRIVATIZATION):  # the baseline has no such parts
                descs[k].setdefault(name, []).append(desc)
    varying: dict[str, dict[str, set[str]]] = {k: {} for k in descs}
    for k in descs:
        for name, ds in descs[k].items():
            keys = set().union(*ds)
            varying[k][name] = {key for key in keys
                                if len({_canon(x.get(key, "<missing>")) for x in ds}) > 1}
    files = file_names(cells)
    groups: dict[str, Group] = {}
    for r, d in per_cell:
        labels = {k: _label(k, d[k][0], d[k][1], varying[k].get(d[k][0], set()), files)
                  if not (r.is_baseline and k in _PRIVATIZATION) else d[k][0]
                  for k in COMPONENTS}
        eps = r.epsilon
        rewriter = "none"
        if "rewriter" in d:  # shown with the mapping: "none → autoencoder"
            rewriter = _label("rewriter", *d["rewriter"], varying["rewriter"].get(
                d["rewriter"][0], set()))
            labels["mapping"] = f"{labels['mapping']} → {rewriter}"
        versions = hashed_versions(r.spec)
        ident = _canon({k: [d[k][0], d[k][1]] for k in d} | {"epsilon": fmt_eps(eps)}
                       | ({"versions": versions} if versions else {}))
        cfg = Config(labels["dataset"], labels["model"], labels["sensitivity"],
                     labels["mechanism"], labels["mapping"], eps, ident, r.suite_version,
                     rewriter, r.is_baseline)
        g = groups.setdefault(ident, Group(cfg, []))
        if any(x.seed == r.seed for x in g.records):  # same config + seed twice: never pool
            warnings.append(f"cells {g.records[0].hash} and {r.hash} have the same "
                            f"configuration and seed {r.seed}; only the first is reported")
            continue
        g.records.append(r)
    _tell_apart(groups)
    for w in warnings:
        logger.warning(w)
    return sorted(groups.values(), key=lambda g: g.config.order), warnings


VERSIONED = ("adversaries", "measures", "metrics")
"""The spec's hashed ``name=version`` lists of what a cell computes besides its components."""


def hashed_versions(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec's :data:`VERSIONED` lists that it has: part of a configuration's identity, as
    they are of the cell's hash (issue 48: two cells differing only in them were pooled as one
    configuration and seed, and one silently replaced the other)."""
    return {k: spec[k] for k in VERSIONED if spec.get(k) is not None}


def _tell_apart(groups: dict[str, Group]) -> None:
    """Configurations whose labels are equal although their identities differ in
    :func:`hashed_versions` alone get those versions in their mechanism label, so that no two
    rows look the same."""
    seen: dict[tuple, list[str]] = {}
    for ident, g in groups.items():
        c = g.config
        seen.setdefault((c.dataset, c.model, c.sensitivity, c.mechanism, c.mapping,
                         fmt_eps(c.epsilon), c.suite_version, c.rewriter, c.baseline),
                        []).append(ident)
    for idents in seen.values():
        if len(idents) < 2:
            continue
        for ident in idents:
            g = groups[ident]
            v = hashed_versions(g.records[0].spec)
            tag = "; ".join(f"{k} {v[k]}" for k in VERSIONED if k in v) or "no versions"
            g.config = replace(g.config, mechanism=f"{g.config.mechanism} [{tag}]")
