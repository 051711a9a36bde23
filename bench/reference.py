"""Committed reference results: cells that rebuild their report and rerun bit for bit.

The reference of a grid lives in the repository, like MTEB's results repository::

    results/reference/<grid>/cells/<hash>/   # committed (bench.results.layout)
    results/reference/<grid>/report/                                  # committed, built from them

It is made with the ordinary commands (``bench run experiments/<grid>.yaml --results
results/reference/<grid>`` then ``bench report --results results/reference/<grid> --grid
<grid>``; the privatized-corpus cache and locks stay out of git). :func:`check_reference`
(``bench reference check``) says whether it can be trusted:

* **report** -- the report rebuilt from the committed cells into a temporary folder equals the
  committed report byte for byte (so the committed report can never be stale);
* **cells** -- the grid expanded with the current code (suite version, component versions,
  dataset content hashes: :func:`bench.run.runner.plan`) has exactly the committed cell hashes: a
  component whose version was bumped gives new hashes, so its old cells show up as *stale* and
  the new ones as *missing* until the reference is regenerated in the same change;
* **rerun** (``--rerun N``) -- the ``N`` cheapest committed cells (by their recorded run time)
  are recomputed in a temporary folder with the current code, and their metrics must equal the
  committed ones exactly, run-time measurements aside (:func:`comparable`). A cell that no
  longer reproduces while its hash (and so every component version) is unchanged means some
  component changed what it computes without a version bump.

Example:
    >>> from bench.reference import check_reference
    >>> print(check_reference("quickstart", rerun=2).text())
"""

from __future__ import annotations

import logging
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import InputError
from bench.results import layout
from bench.results.compare import comparable, differences
from bench.results.record import (
    CellRecord,
    RecordError,
    check_values,
    platforms,
    read_cell,
    read_metrics,
)
from bench.results.sections import upgrade
from bench.results.store import check_cell

logger = logging.getLogger(__name__)

REFERENCE_ROOT = Path("results") / "reference"
"""Where the committed reference results live, one folder per grid."""

class ReferenceError(InputError, ValueError):
    """Bad input: no such reference folder or grid (one line, exit 2 in the CLI)."""


def committed_references(root: str | Path = REFERENCE_ROOT) -> list[str]:
    """The grids with a committed reference under ``root`` (folders holding ``cells/``),
    sorted; none when ``root`` is missing."""
    root = Path(root)
    return sorted(p.name for p in root.iterdir() if layout.cells_dir(p).is_dir()) \
        if root.is_dir() else []


def reference_dir(grid: str, root: str | Path = REFERENCE_ROOT) -> Path:
    """``<root>/<grid>``; raises :class:`ReferenceError` when it holds no ``cells/``."""
    folder = Path(root) / grid
    if not layout.cells_dir(folder).is_dir():
        have = committed_references(root)
        raise ReferenceError(f"no committed reference cells under {folder}/cells (references: "
                             f"{', '.join(have) or 'none'})")
    return folder


def committed_cells(folder: Path, skip: set[str] | frozenset[str] = frozenset()
                    ) -> dict[str, dict]:
    """``hash -> {"spec", "metrics"}`` of the finished cells under ``folder/cells`` (those
    in ``skip`` left out).

    Raises:
        ReferenceError: a cell's file cannot be read or parsed (named in the message).
    """
    out = {}
    for d in layout.cell_folders(folder):
        if d.name in skip or not layout.metrics_file(d).is_file():
            continue
        try:
            rec = read_cell(d)
            why = check_values(rec) if isinstance(rec, CellRecord) else "not a finished cell"
        except RecordError as e:
            why = str(e)
        if why:
            raise ReferenceError(f"{d}: {why}; `bench verify --results {folder}` checks every "
                                 "cell")
        out[d.name] = {"spec": dict(rec.spec), "metrics": dict(rec.metrics)}
    return out


# --------------------------------------------------------------------------------------------
# The three checks
# --------------------------------------------------------------------------------------------

def compare_report(folder: Path, grid: str, work: Path) -> tuple[list[str], float]:
    """Rebuild ``folder/report`` from ``folder/cells`` into ``work`` and compare every file.

    Returns:
        The files that differ, are missing or are extra (empty: byte-identical), and the
        seconds the rebuild took.
    """
    from bench.report import build_report

    committed = folder / "report"
    if not committed.is_dir():
        return [f"{committed} does not exist"], 0.0
    fresh = work / "report"
    t0 = time.perf_counter()
    build_report(folder, fresh, grid=grid)
    seconds = time.perf_counter() - t0
    want = {p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file()}
    got = {p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file()}
    problems = [f"report/{f}: missing from the rebuilt report" for f in sorted(want - got)]
    problems += [f"report/{f}: not in the committed report" for f in sorted(got - want)]
    problems += [f"report/{f}: differs" for f in sorted(want & got)
                 if (committed / f).read_bytes() != (fresh / f).read_bytes()]
    return problems, seconds


def expected_cells(grid: str | Path) -> tuple[dict[str, tuple], str]:
    """``hash -> (cell, dataset hash, baseline hash)`` of the grid as the current code expands
    it, and the grid's name."""
    from bench.analysis.results import resolve_grid
    from bench.grid import cell_hash, load_grid
    from bench.run.runner import plan

    g = load_grid(resolve_grid(grid))
    out = {}
    for group in plan(g):
        for cell, dh, bh in group:
            out[cell_hash(cell, dh)] = (cell, dh, bh)
    return out, g.name


def rerun_cells(folder: Path, hashes: list[str], expected: dict[str, tuple], work: Path,
                cells: dict[str, dict], given_reference: bool = False) -> list[str]:
    """Recompute ``hashes`` in ``work`` (their baselines copied in from ``folder``) and compare
    with the committed metrics; returns one line per difference.

    ``given_reference``: a cell with a rewriter takes its ε = ∞ rewriter reference
    (``rewrite_reference``: a second rewriter trained on the unperturbed embeddings, shared by
    every cell of a dataset and seed, as long to train as the cell's own) from the committed
    cell instead of recomputing it; everything else of the cell is recomputed and compared.
    """
    from bench.numeric import as_pin
    from bench.results.sections import upgrade
    from bench.run import inputs
    from bench.run.worker import run_cell

    problems = []
    layout.cells_dir(work).mkdir(parents=True, exist_ok=True)
    for h in hashes:
        cell, dh, bh = expected[h]
        if bh and bh != h:
            shutil.copytree(layout.cell_dir(folder, bh), layout.cell_dir(work, bh),
                            dirs_exist_ok=True)
        given = upgrade(cells[h]["metrics"]).rewrite_reference
        if given_reference and cell.has_rewriter and given:
            from bench.rewriters.pipeline import store_reference

            store_reference(cell, inputs.dataset(cell), layout.cache_dir(work), given.to_dict())
        with as_pin(committed_pin(folder, h)):
            res = run_cell(cell, work, dh, bh if bh != h else None, overwrite="always")
        if res.status != "done":
            problems.append(f"{h[:12]} {cell.name}: rerun {res.status}: {res.error}")
            continue
        got = read_metrics(work, h)
        diff = differences(comparable(cells[h]["metrics"]), comparable(got))
        problems += [f"{h[:12]} {cell.name}: {d}" for d in diff]
        if not diff:
            logger.info("rerun %s: identical", cell.name)
    return problems


def committed_pin(folder: Path, h: str) -> int | None:
    """The pin version committed cell ``h`` was computed under (:func:`bench.numeric.pin_of`;
    None where it records no pinned platform the suite knows): it is recomputed under that pin,
    so the cells of an older pin stay checkable after a new one is released."""
    from bench.numeric import pin_of
    from bench.results.store import read_provenance

    rec = (read_provenance(layout.cell_dir(folder, h)) or {}).get("numeric")
    return pin_of(rec.get("id")) if isinstance(rec, dict) else None


TORCH_MODELS = ("lstm", "transformer")
"""Models trained with torch: their cells are the ones whose last bits depend on the CPU's
kernels (oneDNN, MKL, ATen), so a rerun that proves anything about the numeric environment
includes one of them."""


def cheapest(cells: dict[str, dict], expected: dict[str, tuple], n: int) -> list[str]:
    """The ``n`` committed cells to rerun, among those the current grid still has: first the
    cheapest cell of a real mechanism (not a known answer: ``identity``, ``no_information``,
    ``constant``, which the known-answer tests pin already) whose model trains on the privatized
    text with torch, else the cheapest real-mechanism cell, else the cheapest privatized cell --
    the cheapest cells of a grid are often ones that would rerun identically on any CPU, or that
    leave the mechanism's sampling out, which proves little -- then the cells with the smallest
    recorded run time (baselines count their own time only; a privatized cell's rerun also
    needs its committed baseline, which is copied, not rerun)."""
    from bench.mechanisms.known import KNOWN_EPSILON

    def seconds(h: str) -> float:
        return upgrade(cells[h]["metrics"]).runtime.get("total_seconds", math.inf) or math.inf

    def mechanism(h: str) -> str:
        return (cells[h]["spec"].get("mechanism") or {}).get("name", "none")

    def real(h: str) -> bool:
        return mechanism(h) not in ("none", *KNOWN_EPSILON)

    def torch_model(h: str) -> bool:
        return (cells[h]["spec"].get("model") or {}).get("name") in TORCH_MODELS

    order = sorted((h for h in cells if h in expected), key=lambda h: (seconds(h), h))
    first = ([h for h in order if real(h) and torch_model(h)]
             or [h for h in order if real(h)]
             or [h for h in order if mechanism(h) != "none"])[:1]
    return (first + [h for h in order if h not in first])[:n]


@dataclass
class ReferenceCheck:
    """Outcome of :func:`check_reference` for one grid."""

    grid: str
    folder: Path
    n_cells: int
    report_problems: list[str] = field(default_factory=list)
    report_seconds: float = 0.0
    missing: list[str] = field(default_factory=list)
    """Cells the current grid expands to that are not committed (``name``)."""
    stale: list[str] = field(default_factory=list)
    """Committed cells the current grid no longer has (``hash name``)."""
    reran: list[str] = field(default_factory=list)
    """Names of the rerun cells."""
    cells_checked: bool = False
    """Whether the committed hashes were compared with the grid's expansion."""
    rerun_problems: list[str] = field(default_factory=list)
    rerun_platform: str = ""
    """The numeric platform the reruns were computed on (:func:`bench.numeric.describe`)."""
    platforms: dict[str, int] = field(default_factory=dict)
    """Committed cells per numeric platform they were computed on (:func:`platforms`)."""
    damaged: list[str] = field(default_factory=list)
    """Committed cells whose files do not check out (``hash: reason``,
    :mod:`bench.results.store`)."""

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not (self.report_problems or self.missing or self.stale or self.rerun_problems
                    or self.damaged)

    def text(self) -> str:
        """What the CLI prints."""
        lines = [f"reference {self.grid} ({self.folder}): {self.n_cells} committed cells"]
        if self.damaged:
            lines.append(f"  integrity: {len(self.damaged)} damaged cell(s) (bench verify "
                         f"--results {self.folder})")
            lines += [f"    damaged {d}" for d in self.damaged[:20]]
        else:
            lines.append("  integrity: every cell's manifest, checksums and hash check out")
        for desc, n in self.platforms.items():
            lines.append(f"  platform: {n} cell(s) on {desc}")
        lines.append(f"  report: {'byte-identical' if not self.report_problems else 'DIFFERS'} "
                     f"(rebuilt in {self.report_seconds:.1f} s)")
        lines += [f"    {p}" for p in self.report_problems]
        if not self.cells_checked:
            lines.append("  cells: not compared with the grid (--no-cells)")
        elif self.missing or self.stale:
            lines.append(f"  cells: {len(self.missing)} missing, {len(self.stale)} stale -- a "
                         "grid or component version changed; regenerate the reference (bench "
                         f"run experiments/{self.grid}.yaml --results {self.folder}, bench "
                         f"reference prune {self.grid}, bench report --results {self.folder} "
                         f"--grid {self.grid})")
            lines += [f"    missing {m}" for m in self.missing[:20]]
            lines += [f"    stale {s}" for s in self.stale[:20]]
        else:
            lines.append("  cells: exactly the grid's current cells")
        if self.reran:
            state = "bit-exact" if not self.rerun_problems else "DIFFER"
            lines.append(f"  rerun: {len(self.reran)} cell(s) {state}, on {self.rerun_platform}")
            lines += [f"    {n}" for n in self.reran]
            lines += [f"    {p}" for p in self.rerun_problems]
        lines.append("  OK" if self.ok else "  FAILED")
        return "\n".join(lines) + "\n"


def check_reference(grid: str, root: str | Path = REFERENCE_ROOT, rerun: int | list[str] = 0,
                    check_cells: bool = True, given_reference: bool = False) -> ReferenceCheck:
    """Run the checks of the module docstring on ``<root>/<grid>``.

    Args:
        grid: grid name (``experiments/<grid>.yaml``; the reference folder's name) or a grid
            file's path (its stem names the reference folder).
        root: the reference root (default ``results/reference``).
        rerun: how many of the cheapest cells to recompute, or a list of cell hashes
            (prefixes allowed).
        check_cells: compare the committed hashes with the grid's current expansion (loads the
            datasets to hash their content).
        given_reference: rerun cells with a rewriter with the committed ε = ∞ rewriter
            reference (see :func:`rerun_cells`).
    """
    name = Path(grid).stem if str(grid).endswith((".yaml", ".yml")) else str(grid)
    folder = reference_dir(name, root)
    damaged = {d.name: r for d in layout.cell_folders(folder) if (r := check_cell(d))}
    cells = committed_cells(folder, skip=set(damaged))
    out = ReferenceCheck(name, folder, len(cells) + len(damaged))
    out.damaged = [f"{h}: {r}" for h, r in damaged.items()]
    out.platforms = platforms(folder, sorted(cells))
    with tempfile.TemporaryDirectory(prefix="bench-reference-") as tmp:
        out.report_problems, out.report_seconds = compare_report(folder, grid, Path(tmp))
        if not (check_cells or rerun):
            return out
        expected, _ = expected_cells(grid)
        if check_cells:
            out.cells_checked = True
            out.missing = sorted(c.name for h, (c, _, _) in expected.items() if h not in cells)
            out.stale = sorted(f"{h[:12]} {cells[h]['spec'].get('name', '')}"
                               for h in cells if h not in expected)
        if isinstance(rerun, int):
            todo = cheapest(cells, expected, rerun)
        else:
            todo = []
            for prefix in rerun:
                match = [h for h in cells if h.startswith(prefix)]
                if len(match) != 1:
                    raise ReferenceError(f"cell {prefix!r} matches {len(match)} committed cells "
                                         f"of {grid}; give a longer hash prefix")
                if match[0] not in expected:
                    raise ReferenceError(f"cell {prefix!r} is stale: the current grid {grid} "
                                         "no longer has it, so it cannot be rerun")
                todo.append(match[0])
        if todo:
            from bench.numeric import as_pin, describe, platform

            out.reran = [expected[h][0].name for h in todo]
            out.rerun_problems = rerun_cells(folder, todo, expected, Path(tmp) / "rerun", cells,
                                             given_reference)
            used = []
            for version in dict.fromkeys(committed_pin(folder, h) for h in todo):
                with as_pin(version):
                    used.append(describe(platform()))
            out.rerun_platform = "; ".join(used)
    return out


def prune_reference(grid: str, root: str | Path = REFERENCE_ROOT) -> list[str]:
    """Remove the stale cells of ``<root>/<grid>``: committed cells the grid, expanded with the
    current code, no longer has (after a version bump or a grid edit). Their history stays in
    git. Unfinished folders (no metrics yet) are left alone.

    Returns:
        ``"<hash12> <cell name>"`` of each removed cell.
    """
    name = Path(grid).stem if str(grid).endswith((".yaml", ".yml")) else str(grid)
    folder = reference_dir(name, root)
    cells = committed_cells(folder)
    expected, _ = expected_cells(grid)
    removed = []
    for h in sorted(h for h in cells if h not in expected):
        shutil.rmtree(layout.cell_dir(folder, h))
        removed.append(f"{h[:12]} {cells[h]['spec'].get('name', '')}".rstrip())
    return removed


# --------------------------------------------------------------------------------------------
# Statistical agreement of another platform's cells (a GPU run, BENCH_NUMERIC=native)
# --------------------------------------------------------------------------------------------

AGREE_METRICS = ("utility", "privacy", "n_w")
"""What :func:`agreement` compares: the utility model's macro-F1, the strongest adversary's
macro-F1 per privacy task, and N_w (the fraction of words unchanged)."""


def _agree_values(metrics: dict) -> dict[str, tuple[float, list | None]]:
    """``name -> (value, the cell's own 95% interval or None)`` of :data:`AGREE_METRICS`."""
    out: dict[str, tuple[float, list | None]] = {}
    m = upgrade(metrics)
    if isinstance(m.utility.macro_f1, (int, float)):
        out["utility"] = (float(m.utility.macro_f1), m.utility.macro_f1_ci95)
    for task in sorted(m.attributes):
        priv = m.attribute(task)
        if isinstance(priv.adversary_macro_f1, (int, float)):
            out[f"privacy[{task}]"] = (float(priv.adversary_macro_f1),
                                       priv.adversary_macro_f1_ci95)
    if isinstance(m.n_w, (int, float)):
        out["n_w"] = (float(m.n_w), None)
    return out


@dataclass
class Agreement:
    """Outcome of :func:`agreement`: how the cells of a results folder computed elsewhere (a GPU,
    ``BENCH_NUMERIC=native``: not bit-exact by design) compare with the committed reference
    cells of the same hash."""

    grid: str
    n_results: int
    common: int
    per_metric: dict[str, dict[str, int]] = field(default_factory=dict)
    """``metric -> {"cells", "identical", "in_cell_ci", "with_ci"}``."""
    configurations: list[str] = field(default_factory=list)
    """One line per configuration (cells equal but for the seed) with two seeds or more."""
    inside: int = 0
    """Configuration x metric pairs whose mean lies in the reference's interval over seeds."""
    pairs: int = 0
    platforms: dict[str, int] = field(default_factory=dict)

    def text(self) -> str:
        """What ``bench reference compare`` prints."""
        lines = [f"compare with reference {self.grid}: {self.common} of {self.n_results} cells "
                 "have a committed cell of the same hash"]
        for desc, n in self.platforms.items():
            lines.append(f"  results platform: {n} cell(s) on {desc}")
        for name, c in self.per_metric.items():
            ci = (f", inside the reference cell's own 95% interval in {c['in_cell_ci']}/"
                  f"{c['with_ci']}") if c["with_ci"] else ""
            lines.append(f"  {name}: identical in {c['identical']}/{c['cells']}{ci}")
        if self.pairs:
            lines.append(f"  configurations (over seeds): the mean lies inside the reference's "
                         f"95% t interval in {self.inside}/{self.pairs} configuration x metric")
            lines += [f"    {c}" for c in self.configurations]
        lines.append("  (about 1 in 20 intervals misses by chance; a cell's interval is its test "
                     "set's bootstrap)")
        return "\n".join(lines) + "\n"


def agreement(results: dict[str, dict], reference: dict[str, dict], grid: str = "") -> Agreement:
    """Compare ``results`` with ``reference`` (both ``hash -> {"spec", "metrics"}``,
    :func:`committed_cells`) on the cells they share: per metric of :data:`AGREE_METRICS`, how
    many are identical and how many lie inside the reference cell's own 95% interval; per
    configuration with two seeds or more, whether the mean over seeds lies inside the
    reference's 95% t interval over the same seeds."""
    from bench.analysis.stats import bootstrap_interval, t_interval

    common = sorted(h for h in results if h in reference)
    out = Agreement(grid, len(results), len(common))
    got = {h: _agree_values(results[h]["metrics"]) for h in common}
    want = {h: _agree_values(reference[h]["metrics"]) for h in common}
    groups: dict[str, list[str]] = {}
    for h in common:
        for name, (value, ci) in want[h].items():
            if name not in got[h]:
                continue
            c = out.per_metric.setdefault(name, {"cells": 0, "identical": 0, "in_cell_ci": 0,
                                                 "with_ci": 0})
            c["cells"] += 1
            c["identical"] += got[h][name][0] == value
            interval = bootstrap_interval(ci)
            if interval is not None:
                c["with_ci"] += 1
                c["in_cell_ci"] += interval[0] <= got[h][name][0] <= interval[1]
        name = str(reference[h]["spec"].get("name", h))
        groups.setdefault(name.rsplit(",seed=", 1)[0], []).append(h)
    for config, hs in sorted(groups.items()):
        if len(hs) < 2:
            continue
        parts = []
        for name in want[hs[0]]:
            if any(name not in got[h] or name not in want[h] for h in hs):
                continue
            _, lo, hi = t_interval([want[h][name][0] for h in hs])
            mean = sum(got[h][name][0] for h in hs) / len(hs)
            ok = lo - 1e-12 <= mean <= hi + 1e-12
            out.pairs += 1
            out.inside += ok
            parts.append(f"{name} {mean:.3f} vs [{lo:.3f}, {hi:.3f}]{'' if ok else ' OUTSIDE'}")
        out.configurations.append(f"{config.split(':', 1)[-1]} (n={len(hs)}): " + "; ".join(parts))
    return out


def compare_results(grid: str, results: str | Path, root: str | Path = REFERENCE_ROOT
                    ) -> Agreement:
    """:func:`agreement` of the finished cells under ``results`` with ``<root>/<grid>``
    (``bench reference compare``).

    Raises:
        ReferenceError: no such reference or results folder, or no cell in common.
    """
    folder = reference_dir(grid, root)
    if not layout.cells_dir(Path(results)).is_dir():
        raise ReferenceError(f"no cells under {Path(results)}/cells (expected the --results "
                             "folder of a `bench run` of the reference's grid)")
    got = committed_cells(Path(results))
    ref = committed_cells(folder)
    out = agreement(got, ref, grid)
    if not out.common:
        raise ReferenceError(f"none of the {len(got)} cells under {results} has a committed "
                             f"cell of the same hash in {folder} (same grid, same code "
                             "versions?)")
    out.platforms = platforms(Path(results), [h for h in got if h in ref])
    return out
