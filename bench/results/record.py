"""The typed cell record every reader uses: a cell's spec, metrics and manifest, read from a
results folder and validated on the way in.

``bench report``, ``bench leaderboard``, the findings, ``bench verify`` and ``bench reference``
read cells only through :func:`scan` / :func:`read_cell`, so every one of them sees the same
checks: the files are regular and bounded (:func:`bench.results.store.read_regular`), a sealed
cell's checksums match (:func:`bench.results.store.check_cell`), and the values fit the schema
(:func:`validate`): known top-level keys, an integer seed, ε positive or ``"inf"``, named
components, every number finite and of sensible size, every rate in [0, 1]. The schema is
versioned by the manifest's ``format`` (:data:`SCHEMA`); a cell of another format is damaged,
not guessed at.

Example:
    >>> found = scan("results/reference/quickstart")
    >>> rec = found.cells[0]; rec.epsilon, rec.sections.utility.macro_f1
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from bench.defaults import MAX_ATTRIBUTE_NAME, MAX_ATTRIBUTES, is_attribute_name
from bench.errors import InputError
from bench.grid.schema import is_baseline
from bench.registry import name_problem
from bench.results import layout
from bench.results.sections import CellMetrics, upgrade
from bench.results.store import (
    MANIFEST_FORMAT,
    METRICS_KEYS,
    SPEC_KEYS,
    check_cell,
    load_object,
    read_provenance,
)
from bench.results.values import to_float

SCHEMA = MANIFEST_FORMAT
"""Version of the cell record's schema (the manifest's ``format``)."""

COMPONENT_KINDS = ("dataset", "model", "mechanism", "sensitivity", "mapping", "rewriter")
"""The spec's components; each one's name must be a name (:func:`bench.registry.name_problem`),
so a look-alike cannot rank beside the component it imitates."""
SPEC_OPTIONAL = ("dataset_hash", "adversaries", "metrics", "measures", "rewriter",
                 "suite_version")
"""Keys a spec may have besides :data:`bench.results.store.SPEC_KEYS`."""
METRICS_OPTIONAL = tuple(k for k in CellMetrics.fields() if k not in METRICS_KEYS)
"""Keys a metrics record may have besides :data:`bench.results.store.METRICS_KEYS`: the
sections of the typed record (:class:`bench.results.sections.CellMetrics`), declared once."""
MAX_MAGNITUDE = 1e12
"""Largest absolute number a cell may hold (a count or a time; 1e308 would overflow the
statistics)."""
_UNIT_KEYS = ("privacy", "n_w", "accuracy")
"""Keys (and any key containing ``macro_f1``) whose numbers are rates in [0, 1]."""


@dataclass(frozen=True)
class CellRecord:
    """One finished cell: its spec, metrics and (for a sealed cell) manifest."""

    hash: str
    """Folder name under ``cells/`` (the cell hash)."""
    spec: Mapping[str, Any]
    """The resolved configuration (:meth:`bench.grid.Cell.spec` plus the runner's keys)."""
    metrics: Mapping[str, Any]
    """The measurements."""
    folder: Path
    """The cell's result folder."""
    manifest: Mapping[str, Any] | None = None
    """The manifest (checksums, provenance), None for an unsealed cell."""

    @property
    def name(self) -> str:
        """Readable cell name (``spec.name``, else the hash)."""
        return str(self.spec.get("name") or self.metrics.get("cell") or self.hash)

    @property
    def seed(self) -> int:
        """The cell's seed."""
        return int(self.spec.get("seed", 0))

    @property
    def epsilon(self) -> float:
        """ε as a float (``math.inf`` for the baseline)."""
        return to_float(self.spec.get("epsilon"), default=math.inf)

    @property
    def is_baseline(self) -> bool:
        """Whether this is the unprivatized baseline (:func:`bench.grid.schema.is_baseline`)."""
        return is_baseline(self.spec)

    @property
    def suite_version(self) -> str:
        """The suite version of a cell written before 0.4.0, whose hash covered it (such cells
        are never pooled with cells of another version); ``""`` for later cells, whose hash
        does not (their release is in the manifest's provenance)."""
        return str(self.spec.get("suite_version") or self.metrics.get("suite_version") or "")

    @property
    def dataset_hash(self) -> str:
        """Dataset content hash the cell was produced on."""
        return str(self.spec.get("dataset_hash") or self.metrics.get("dataset_hash") or "")

    @cached_property
    def sections(self) -> CellMetrics:
        """The metrics as typed sections (:mod:`bench.results.sections`): read values by
        attribute, ``rec.sections.utility.macro_f1``."""
        return upgrade(self.metrics)

    @property
    def plugins(self) -> dict[str, str]:
        """``{"<kind> <name>": "<distribution> <version>"}`` of the plugin components that
        computed the cell (empty: built-ins only, or a cell from before plugins were
        recorded)."""
        p = self.metrics.get("plugins")
        return dict(p) if isinstance(p, Mapping) else {}

    @property
    def provenance(self) -> dict[str, Any] | None:
        """Who computed the cell (:mod:`bench.results.provenance`), None when not recorded."""
        prov = (self.manifest or {}).get("provenance")
        return prov if isinstance(prov, dict) else None


@dataclass(frozen=True)
class FailedCell:
    """A cell whose folder holds only its error record."""

    hash: str
    """Folder name under ``cells/``."""
    name: str
    """Readable cell name from the error record."""
    error: str
    """The error message (first line)."""


@dataclass
class Scan:
    """Everything read from one results folder's ``cells/``."""

    cells: list[CellRecord] = field(default_factory=list)
    """Sound, valid finished cells, sorted by folder name."""
    failed: list[FailedCell] = field(default_factory=list)
    """Failed cells, sorted by folder name."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """``(hash, reason)`` of readable cells whose values break the schema (:func:`validate`)."""
    warnings: list[str] = field(default_factory=list)
    """Cells unreadable, damaged, half-written or symbolic links (one line each)."""
    unsealed: int = 0
    """Cells read without a manifest (no integrity check possible)."""


class RecordError(InputError, ValueError):
    """A cell folder that cannot be read as a cell (the message says why)."""


def _walk(x: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _walk(v, f"{path}.{k}" if path else str(k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _walk(v, f"{path}[{i}]")
    else:
        yield path, x


def _known_epsilon(spec: Mapping[str, Any]) -> float | str | None:
    """The ε a known-answer mechanism's cells store (None: not a known answer)."""
    mech = spec.get("mechanism")
    name = mech.get("name") if isinstance(mech, dict) else None
    if not isinstance(name, str):
        return None
    from bench.mechanisms.known import stored_epsilon

    return stored_epsilon(name)


def _spec_problem(spec: Mapping[str, Any]) -> str | None:
    S = layout.SPEC
    unknown = sorted(set(spec) - set(SPEC_KEYS) - set(SPEC_OPTIONAL))
    if unknown:
        return f"{S}: unknown key {unknown[0]!r} (schema {SCHEMA})"
    seed = spec.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool):
        return f"{S}: seed {seed!r} is not an integer"
    eps = spec.get("epsilon")
    known = _known_epsilon(spec)
    if known is not None:  # a known answer carries its own ε (bench.mechanisms.known)
        if eps != known or isinstance(eps, bool):
            return (f"{S}: epsilon {eps!r} on the known-answer mechanism "
                    f"{spec['mechanism']['name']!r}: its cells carry epsilon {known!r}")
        eps = "known"
    if not (eps in ("inf", "known") or (isinstance(eps, (int, float))
                                        and not isinstance(eps, bool)
                                        and math.isfinite(eps) and eps > 0)):
        return f"{S}: epsilon {eps!r} is not a positive number or 'inf'"
    for kind in ("dataset", "model", "mechanism"):
        comp = spec.get(kind)
        if not isinstance(comp, dict) or not isinstance(comp.get("name"), str):
            return f"{S}: {kind} is not a named component"
    for kind in COMPONENT_KINDS:
        comp = spec.get(kind)
        why = name_problem(comp.get("name")) if isinstance(comp, dict) else None
        if why:
            return f"{S}: the {kind} name {ascii(comp['name'])} {why}"
    if eps == "inf" and not is_baseline(spec):  # a grid's ε is finite (bench.grid.validate)
        return (f"{S}: epsilon 'inf' on the mechanism {spec['mechanism']['name']!r}: only the "
                "unprivatized baseline has epsilon = inf")
    return None


def _no_guarantee(metrics: Mapping[str, Any]) -> bool:
    """Whether the cell states no guarantee at all (kind ``none``: the ``identity`` known
    answer), whose ε may then be written ``inf``."""
    g = metrics.get("guarantee")
    return isinstance(g, dict) and g.get("kind") == "none"


def _metrics_problem(metrics: Mapping[str, Any]) -> str | None:
    M = layout.METRICS
    unknown = sorted(set(metrics) - set(METRICS_KEYS) - set(METRICS_OPTIONAL))
    if unknown:
        return f"{M}: unknown key {unknown[0]!r} (schema {SCHEMA})"
    try:
        upgrade(metrics)  # every section a mapping where the typed record needs one
    except TypeError as e:
        return f"{M}: {e}"
    privacy = metrics.get("privacy")
    if isinstance(privacy, Mapping):
        if len(privacy) > MAX_ATTRIBUTES:
            return (f"{M}: privacy measures {len(privacy)} private attributes, more than the "
                    f"{MAX_ATTRIBUTES} a cell may")
        if not all(is_attribute_name(name) for name in privacy):
            return (f"{M}: a private attribute's name is not printable text of 1 to "
                    f"{MAX_ATTRIBUTE_NAME} characters")
    plugins = metrics.get("plugins")
    if plugins is not None and not (isinstance(plugins, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in plugins.items())):
        return f"{M}: plugins is not a mapping of component to '<distribution> <version>'"
    for path, v in _walk(dict(metrics), ""):
        last = path.rsplit(".", 1)[-1].split("[")[0]
        rate = "macro_f1" in last or last in _UNIT_KEYS
        if isinstance(v, str):
            if rate:
                return f"{M}: {path} is the text {v[:20]!r}, not a number"
            if v in ("inf", "-inf", "nan") and not path.startswith("privatization.") \
                    and not (path == "guarantee.epsilon" and v == "inf" and _no_guarantee(metrics)):
                return f"{M}: {path} is {v}"
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if not math.isfinite(v) or abs(v) > MAX_MAGNITUDE:
            return f"{M}: {path} = {v!r} is not a finite number of sensible size"
        if rate and not 0.0 <= v <= 1.0:
            return f"{M}: {path} = {v!r} is outside [0, 1]"
    return None


def validate(spec: Mapping[str, Any], metrics: Mapping[str, Any]) -> str | None:
    """Why a cell's values break the schema, or None.

    The spec: only known keys, an integer seed, ε a positive number or ``"inf"``, each
    component an object with a name. The metrics: only known keys, every number finite and at
    most :data:`MAX_MAGNITUDE` in size (the strings ``inf`` / ``nan`` only where the suite
    writes them, under ``privatization``); every macro-F1, privacy, N_w and accuracy a number
    in [0, 1], never a string. Checked on every committed reference cell: none is refused.
    """
    return _spec_problem(spec) or _metrics_problem(metrics)


def _first_line(text: Any) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


def read_cell(folder: Path) -> CellRecord | FailedCell:
    """The cell in ``folder``: a :class:`CellRecord` (finished, sound and valid) or a
    :class:`FailedCell`.

    A sealed cell (it has a manifest) is integrity-checked; an unsealed one (older runs,
    hand-made or imported results) is read as it is, its spec's hash checked against the
    folder's name.

    Raises:
        RecordError: a symbolic link, no cell files, damaged, unreadable or invalid.
    """
    if folder.is_symlink():
        raise RecordError("a symbolic link (not followed)")
    spec_f, met_f = layout.spec_file(folder), layout.metrics_file(folder)
    try:
        if not (spec_f.is_file() or met_f.is_file()):
            if layout.error_file(folder).is_file():
                err = load_object(layout.error_file(folder))
                return FailedCell(folder.name, str(err.get("name", folder.name)),
                                  _first_line(err.get("error")))
            raise RecordError(f"incomplete (no {layout.SPEC} + {layout.METRICS}, no "
                              f"{layout.ERROR})")
        sealed = layout.manifest_file(folder).is_file()
        problem = check_cell(folder) if sealed else None
        if problem:
            raise RecordError(f"damaged ({problem})")
        spec, metrics = load_object(spec_f), load_object(met_f)
        manifest = load_object(layout.manifest_file(folder)) if sealed else None
    except (OSError, ValueError) as e:
        if isinstance(e, RecordError):
            raise
        raise RecordError(f"unreadable ({e})") from None
    return CellRecord(folder.name, spec, metrics, folder, manifest)


def hash_problem(rec: CellRecord) -> str | None:
    """Why a cell's spec does not name its own folder (readers that key cells by hash need it;
    a sealed cell's spec was checked already), or None."""
    if rec.spec.get("hash") != rec.hash:
        return f"{layout.SPEC} names cell {rec.spec.get('hash')!r}"
    return None


def check_values(rec: CellRecord, check_hash: bool = True) -> str | None:
    """Why a readable cell is refused (:func:`validate`, and with ``check_hash``
    :func:`hash_problem`), or None."""
    return (check_hash and hash_problem(rec)) or validate(rec.spec, rec.metrics)


def scan(results: str | Path, keep: Callable[[Mapping[str, Any]], bool] | None = None,
         keep_failed: Callable[[str], bool] | None = None, check_hash: bool = True) -> Scan:
    """Read ``<results>/cells/*/``: every finished cell (validated) and failed cell.

    Args:
        results: the results folder (the one holding ``cells/``).
        keep: optional predicate on a finished cell's spec; cells it rejects are skipped.
        keep_failed: optional predicate on a failed cell's name.
        check_hash: refuse an (unsealed) cell whose spec names another cell than its folder
            (:func:`check_values`); the report reads hand-made and copied cells without it.

    Raises:
        FileNotFoundError: ``<results>/cells`` is not a folder.
    """
    layout.check_results(results)  # layout.NoResultsError: a FileNotFoundError, bad input
    out = Scan()
    for folder in layout.cell_folders(results):
        try:
            rec = read_cell(folder)
        except RecordError as e:
            damaged = str(e).startswith("damaged")
            tail = ("; ignored -- `bench run` moves it aside and recomputes it, `bench verify` "
                    "lists every damaged cell") if damaged else "; ignored"
            out.warnings.append(f"{layout.CELLS}/{folder.name}: {e}{tail}")
            continue
        if isinstance(rec, FailedCell):
            if keep_failed is None or keep_failed(rec.name):
                out.failed.append(rec)
            continue
        if keep is not None and not keep(rec.spec):
            continue
        out.unsealed += rec.manifest is None
        why = check_values(rec, check_hash)
        if why:
            out.refused.append((rec.hash, why))
        else:
            out.cells.append(rec)
    return out


def read_metrics(results: str | Path, cell_hash: str) -> dict[str, Any]:
    """The metrics of cell ``cell_hash`` under ``results`` (read safely; no schema check: for
    cells this process has just computed)."""
    return load_object(layout.metrics_file(layout.cell_dir(results, cell_hash)))


def read_spec(results: str | Path, cell_hash: str) -> dict[str, Any]:
    """The spec of cell ``cell_hash`` under ``results`` (read safely, no schema check)."""
    return load_object(layout.spec_file(layout.cell_dir(results, cell_hash)))


def platforms(folder: Path, hashes: list[str]) -> dict[str, int]:
    """How many of the cells were computed on each numeric platform
    (:func:`bench.numeric.describe` of their manifest's ``provenance.numeric``)."""
    from bench.numeric import describe

    out: dict[str, int] = {}
    for h in hashes:
        key = describe((read_provenance(layout.cell_dir(folder, h)) or {}).get("numeric"))
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))
