"""Expansion: checked axis values -> the list of cells.

The cartesian product of the axes (the first varies slowest), minus ``exclude`` patterns
(partial matches: only the parameters an entry gives are compared), plus ``include`` entries
(each a sub-product, unlisted axes taken from ``axes``), plus one baseline cell (mechanism
``none``, ε = ∞) per dataset x model x seed that occurs; duplicates are dropped by hash, and
cells with a :func:`~bench.grid.validate.skip_reason` land in :attr:`Grid.skipped`.
``extends`` is merged earlier, when the file is read (:func:`bench.grid.parse.read_merged`).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Any

from bench.grid.cell import Cell
from bench.grid.frozen import FrozenDict, freeze
from bench.grid.parse import read_merged
from bench.grid.schema import (
    AXES,
    AXIS_DEFAULTS,
    BASELINE,
    PROBE_EPSILONS,
    REQUIRED_AXES,
    GridError,
)
from bench.grid.validate import Entry, Parser, skip_reason

logger = logging.getLogger(__name__)


@dataclass
class Grid:
    """An expanded grid."""

    name: str
    """The grid's ``name`` (default: the file stem)."""
    path: str
    """The grid file."""
    cells: list[Cell]
    """Valid cells, deterministic order: baselines, then the axes product, then includes."""
    skipped: list[tuple[Cell, str]]
    """Well-formed cells that cannot run, with the reason."""
    settings: dict[str, Any]
    """The merged settings (defaults filled in)."""
    description: str = ""
    """The grid's ``description``."""
    files: list[str] = field(default_factory=list)
    """Files read: the ``extends`` chain, root first."""
    warnings: list[str] = field(default_factory=list)
    """Non-fatal remarks (e.g. an exclude entry that matched nothing)."""

    def __len__(self) -> int:
        return len(self.cells)

    def __iter__(self):
        return iter(self.cells)

    def by_hash(self) -> dict[str, Cell]:
        """Valid cells keyed by :attr:`Cell.hash`."""
        return {c.hash: c for c in self.cells}


@dataclass(frozen=True)
class _Pattern:
    """One exclude entry: axis -> alternatives (entries, floats or ints)."""

    axes: dict[str, list[Any]]
    where: str

    def matches(self, cell: Cell) -> bool:
        for axis, alts in self.axes.items():
            if not any(_matches(axis, alt, cell) for alt in alts):
                return False
        return True


def _matches(axis: str, alt: Any, cell: Cell) -> bool:
    if axis == "epsilon":
        return math.isclose(cell.epsilon, alt, rel_tol=1e-12)
    if axis == "seed":
        return cell.seed == alt
    name = getattr(cell, axis)
    params = getattr(cell, "dataset_config" if axis == "dataset" else f"{axis}_params")
    if name != alt.name:
        return False
    return all(k in params and _same(params[k], v) for k, v in alt.given.items())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-12)
    return freeze(a) == freeze(b)



def with_measures(cell: Cell, names: list[str] | tuple[str, ...] | None) -> Cell:
    """``cell`` with the ``name=version`` of the measures among ``names`` (a grid's
    ``settings.measures``) that apply to it among its versions (hashed; none: the key is absent
    and the identity unchanged)."""
    if not names:
        return cell
    from bench.measures import applicable, measure_versions

    names = applicable(cell, list(names))
    if not names:
        return cell
    return replace(cell, versions=freeze({**cell.versions, "measures": measure_versions(names)}))


def baseline_adversaries(settings: Any, model: str) -> str:
    """``"name=version,..."`` of the adversaries a baseline of ``model`` runs under the cell
    settings ``settings`` (its text is the unprivatized text)."""
    from bench.attacks.adversary import adversary_version, resolve_adversaries

    names, _ = resolve_adversaries(settings.get("adversaries"), model, "text",
                                   bool(settings.get("decode_vectors")))
    return ",".join(f"{n}={adversary_version(n)}" for n in names)


def make_baseline(dataset: str, dataset_config: FrozenDict, dataset_version: Any, model: str,
                  model_params: FrozenDict, model_version: Any, seed: int, settings: FrozenDict,
                  adversaries: str | None = None) -> Cell:
    """The unprivatized cell (mechanism ``none``, ε = ∞) of a dataset x model x seed under the
    cell settings ``settings``: the one construction the grid's expansion and
    :func:`baseline_cell` share."""
    versions = {"dataset": dataset_version, "model": model_version,
                "adversaries": adversaries if adversaries is not None
                else baseline_adversaries(settings, model)}
    cell = Cell(dataset, dataset_config, model, model_params, BASELINE, FrozenDict(),
                "none", FrozenDict(), "none", FrozenDict(), math.inf, seed, settings,
                freeze({k: v for k, v in versions.items() if v is not None}))
    return with_measures(cell, settings.get("measures"))


def baseline_cell(cell: Cell) -> Cell:
    """The baseline a privatized cell is compared with, exactly as the grid expands it: its
    dataset, model and seed under its settings, with the adversaries and measures (and their
    versions) a baseline runs. Its hash (:func:`~bench.grid.cell.cell_hash` with the cell's
    dataset content hash) names the one baseline cell the runner, ``bench verify --repair``,
    the report and the leaderboard pair the cell with. A baseline is its own."""
    if cell.is_baseline:
        return cell
    return make_baseline(cell.dataset, cell.dataset_config, cell.versions.get("dataset"),
                         cell.model, cell.model_params, cell.versions.get("model"), cell.seed,
                         cell.settings)


class _Expander:
    """Builds cells from checked entries, caching what is shared between cells (per-model
    settings, natural mappings, adversary sets) and remembering each dataset and model entry
    it used (the baselines are built from them)."""

    def __init__(self, parser: Parser, settings: dict[str, Any]) -> None:
        self.p = parser
        self.settings = settings
        self._cell_settings = {k: v for k, v in settings.items() if k != "models"}
        self._settings_for: dict[str, FrozenDict] = {}
        self._mappings: dict[str, Entry] = {}
        self._known_axes: tuple[Entry, Entry] | None = None
        self._adversaries: dict[tuple[str, str, bool], tuple[str, list]] = {}
        self.datasets: dict[tuple[str, FrozenDict], Entry] = {}
        self.models: dict[tuple[str, FrozenDict], Entry] = {}

    def settings_for(self, model: str) -> FrozenDict:
        """The cell settings: ``models`` replaced by this model's own ``model_defaults``."""
        st = self._settings_for.get(model)
        if st is None:
            st = self._settings_for[model] = FrozenDict({
                **freeze(self._cell_settings),
                "model_defaults": freeze(self.settings["models"].get(model, {}))})
        return st

    def natural_mapping(self, mech: Entry) -> Entry:
        """The mapping of a mechanism when the grid has no ``mapping`` axis."""
        from bench.mapping import NATURAL_MAPPING

        name = NATURAL_MAPPING.get(mech.extra.kind, "none")
        if name not in self._mappings:
            self._mappings[name] = self.p.named("mapping", name, "axes.mapping (default)")
        return self._mappings[name]

    def adversaries_for(self, model_name: str, output: str, rewriter: bool = False
                        ) -> tuple[str, list]:
        """``"name=version,..."`` of the cell's adversaries (hashed) and those left out."""
        key = (model_name, output, rewriter)
        if key not in self._adversaries:
            from bench.attacks.adversary import adversary_version, resolve_adversaries
            from bench.rewriters.base import rewritten_adversaries

            names, left = resolve_adversaries(self.settings["adversaries"], model_name, output,
                                              bool(self.settings.get("decode_vectors")))
            if rewriter:
                names, left = rewritten_adversaries(names, left)
            self._adversaries[key] = (
                ",".join(f"{n}={adversary_version(n)}" for n in names), left)
        return self._adversaries[key]

    def baseline(self, ds: Entry, model: Entry, seed: int) -> tuple[Cell, str]:
        """The unprivatized cell of a dataset x model x seed, and its skip reason."""
        cell = make_baseline(ds.name, ds.params, ds.version, model.name, model.params,
                             model.version, seed, self.settings_for(model.name),
                             self.adversaries_for(model.name, "text")[0])
        return cell, ds.extra

    def with_measures(self, cell: Cell) -> Cell:
        """:func:`with_measures` with the grid's measures."""
        return with_measures(cell, self.settings.get("measures"))

    def known_answer(self, mech: Entry) -> tuple[Entry, Entry, float] | None:
        """(sensitivity, mapping, ε) of a known-answer mechanism's cells
        (:mod:`bench.mechanisms.known`): ``none``, ``none`` and its own ε, whatever the axes
        hold, so the grid gets one such cell per dataset × model × seed; None for others."""
        eps = getattr(mech.extra, "cell_epsilon", None)
        if not getattr(mech.extra, "known_answer", "") or eps is None:
            return None
        if self._known_axes is None:
            self._known_axes = (
                self.p.named("sensitivity", "none", "axes.sensitivity (known answer)"),
                self.p.named("mapping", "none", "axes.mapping (known answer)"))
        return (*self._known_axes, float(eps))

    def make(self, ds: Entry, model: Entry, mech: Entry, sens: Entry, mapping: Entry,
             rw: Entry, eps: float, seed: int) -> tuple[Cell, str]:
        """A privatized cell and its skip reason ('' when it can run)."""
        fixed = self.known_answer(mech)
        if fixed is not None:
            sens, mapping, eps = fixed
        out = "vectors" if (mech.extra.kind == "additive" and
                            not mapping.extra.outputs_text) else "text"
        rw_params, rw_skip = FrozenDict(), ""
        if rw.name != "none":
            rw_params, rw_skip = self.p.rewriter_params(rw, ds, out)
            out = "text"  # the rewriter writes text for the model and the adversaries
        advs, adv_left = self.adversaries_for(model.name, out, rw.name != "none")
        versions = {"dataset": ds.version, "model": model.version, "mechanism": mech.version,
                    "sensitivity": sens.version, "mapping": mapping.version,
                    "adversaries": advs}
        if rw.name != "none":
            versions["rewriter"] = rw.version
        if self.settings["rewrite_metrics"] and out == "text":  # the cells that compute them
            from bench.metrics import REWRITE_METRICS, metric_versions

            versions["metrics"] = metric_versions(REWRITE_METRICS)
        cell = Cell(ds.name, ds.params, model.name, model.params, mech.name, mech.params,
                    sens.name, sens.params, mapping.name, mapping.params, eps, seed,
                    self.settings_for(model.name), freeze(versions), rw.name, rw_params)
        skip = skip_reason(self.p, ds, model, mech, mapping, eps, out, adv_left) or rw_skip
        return self.with_measures(cell), skip

    def expand(self, per_axis: dict[str, list[Any] | None]) -> Iterator[tuple[Cell, str]]:
        """Cells of a (sub-)product in AXES order (the first axis varies slowest)."""
        for ds, model, mech, sens in product(per_axis["dataset"], per_axis["model"],
                                             per_axis["mechanism"], per_axis["sensitivity"]):
            maps = per_axis["mapping"] or [self.natural_mapping(mech)]
            for mapping, rw, eps, seed in product(maps, per_axis["rewriter"],
                                                  per_axis["epsilon"], per_axis["seed"]):
                self.datasets.setdefault((ds.name, ds.params), ds)
                self.models.setdefault((model.name, model.params), model)
                yield self.make(ds, model, mech, sens, mapping, rw, eps, seed)

    def baselines(self, cells: list[tuple[Cell, str]]) -> list[tuple[Cell, str]]:
        """One baseline per dataset x model x seed among ``cells``, in first-seen order."""
        seen: dict[tuple[Any, Any, int], None] = {}
        for cell, _ in cells:
            key = ((cell.dataset, cell.dataset_config), (cell.model, cell.model_params),
                   cell.seed)
            seen.setdefault(key, None)
        return [self.baseline(self.datasets[dk], self.models[mk], seed)
                for dk, mk, seed in seen]


def load_grid(path: str | os.PathLike[str]) -> Grid:
    """Read, validate and expand a grid file.

    Raises:
        GridError: malformed YAML, wrong types, unknown names (with did-you-mean), bad
            parameters, ε ≤ 0, an empty or missing axis, an ``extends`` cycle.
    """
    grid_path = Path(path)
    raw = read_merged(grid_path)
    data = raw.data
    _require_axes(grid_path, data)
    p = Parser(raw, Path(os.path.abspath(grid_path)))
    settings = p.parse_settings()
    p.probe_epsilons = _probe_epsilons(p, data)  # mechanisms are tried at the grid's own ε
    axes = {axis: _axis(p, axis, data["axes"]) for axis in AXES}
    ex = _Expander(p, settings)
    candidates, warnings = _exclude(p, ex.expand(axes), data.get("exclude", []))
    included: list[tuple[Cell, str]] = []
    for i, entry in enumerate(data.get("include", [])):
        included += ex.expand(_include_axes(p, i, entry, axes))
    baselines = ex.baselines([*candidates, *included]) if settings["baseline"] else []
    cells, skipped = _dedupe([*baselines, *candidates, *included])
    name = data.get("name") or grid_path.stem
    logger.info("grid %s: %d cells, %d skipped", name, len(cells), len(skipped))
    return Grid(name=name, path=str(grid_path), cells=cells, skipped=skipped,
                settings=settings, description=data.get("description", ""),
                files=[str(f) for f in raw.files], warnings=warnings)


def _require_axes(grid_path: Path, data: dict[str, Any]) -> None:
    if "axes" not in data:
        raise GridError(f"{grid_path}: axes: missing required key 'axes' (the values per axis: "
                        f"{', '.join(AXES)})")
    for axis in REQUIRED_AXES:
        if axis not in data["axes"]:
            raise GridError(f"{grid_path}: axes.{axis}: missing required axis {axis!r}")


def _probe_epsilons(p: Parser, data: dict[str, Any]) -> tuple[float, ...]:
    """:data:`PROBE_EPSILONS` followed by every ε of the grid (axes and includes), checked."""
    eps_values: list[float] = [p.epsilon(v, f"axes.epsilon[{i}]")
                               for i, v in enumerate(data["axes"]["epsilon"])]
    for i, entry in enumerate(data.get("include", [])):
        if "epsilon" in entry:
            vals = entry["epsilon"] if isinstance(entry["epsilon"], list) else [entry["epsilon"]]
            eps_values += [p.epsilon(v, f"include[{i}].epsilon") for v in vals]
    return tuple(dict.fromkeys([*PROBE_EPSILONS, *eps_values]))


def _axis(p: Parser, axis: str, axes_raw: dict[str, Any]) -> list[Any] | None:
    """An axis' checked values; its default when omitted (None: the natural mapping)."""
    if axis in axes_raw:
        return p.values(axis, axes_raw[axis], f"axes.{axis}")
    if axis in AXIS_DEFAULTS:
        return p.values(axis, AXIS_DEFAULTS[axis], f"axes.{axis}")
    return None


def _exclude(p: Parser, cells: Iterator[tuple[Cell, str]],
             entries: list[dict[str, Any]]) -> tuple[list[tuple[Cell, str]], list[str]]:
    """The cells no ``exclude`` entry matches, and a warning per entry that matched none."""
    patterns = []
    for i, entry in enumerate(entries):
        pat = {}
        for axis, v in entry.items():
            vals = v if isinstance(v, list) else [v]
            if not vals:
                raise p.fail(f"exclude[{i}].{axis}", "empty list of alternatives")
            pat[axis] = p.values(axis, vals, f"exclude[{i}].{axis}", partial=True)
        patterns.append(_Pattern(pat, f"exclude[{i}]"))
    kept: list[tuple[Cell, str]] = []
    excluded_by: list[int] = [0] * len(patterns)
    for cell, reason in cells:
        hit = [i for i, pat in enumerate(patterns) if pat.matches(cell)]
        for i in hit:
            excluded_by[i] += 1
        if not hit:
            kept.append((cell, reason))
    warnings = [f"{p.file_of('exclude')}: exclude[{i}] matched no cell"
                for i, n in enumerate(excluded_by) if n == 0]
    for w in warnings:
        logger.warning(w)
    return kept, warnings


def _include_axes(p: Parser, i: int, entry: dict[str, Any],
                  axes: dict[str, list[Any] | None]) -> dict[str, list[Any] | None]:
    """The sub-product of ``include[i]``: its own values, the grid's axes elsewhere."""
    per_axis: dict[str, list[Any] | None] = {}
    for axis in AXES:
        if axis in entry:
            vals = entry[axis] if isinstance(entry[axis], list) else [entry[axis]]
            if not vals:
                raise p.fail(f"include[{i}].{axis}", "empty list of values")
            per_axis[axis] = p.values(axis, vals, f"include[{i}].{axis}")
        else:
            per_axis[axis] = axes[axis]
    return per_axis


def _dedupe(pairs: list[tuple[Cell, str]]) -> tuple[list[Cell], list[tuple[Cell, str]]]:
    """(runnable cells, skipped cells with reasons), each cell once (first occurrence)."""
    cells: list[Cell] = []
    skipped: list[tuple[Cell, str]] = []
    seen: set[str] = set()
    for cell, reason in pairs:
        h = cell.hash
        if h in seen:
            continue
        seen.add(h)
        if reason:
            skipped.append((cell, reason))
        else:
            cells.append(cell)
    return cells, skipped
