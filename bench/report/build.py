"""Build the whole report folder from a results folder (what ``bench report`` runs).

Layout of the output folder::

    index.md                 summary: cells, groups, warnings, failed cells, list of files
    metrics.json             headline numbers per configuration (``dvc metrics show``)
    leaderboard.html         the leaderboard of these cells (bench.leaderboard.report_page)
    tables/<name>.{md,tex,csv}   tradeoff_<sensitivity>, rewrite_<dataset>, measures_<dataset>,
                             guarantees
    curves.csv               the plotted points, tidy (``dvc plots show``)
    plots/curves_<dataset>_<model>.png
    sizes.csv, plots/sizes_<dataset>_<model>.png   where the grid varies the training-set
                             size (``train_subsample``): bench.report.sizes

The folder is built under a temporary name next to ``out`` and renamed into place, so a failure
leaves the previous report untouched and a success leaves no stale files. An existing ``out``
holding anything but those entries is never replaced.

Audit status: the ``bench audit`` records under ``<results>/audit`` (or ``audit=DIR``) are
matched to the privatized configurations (:mod:`bench.analysis.audits`) and shown in the
leaderboard's Audit column, a "Privacy audit" table in ``index.md`` and ``metrics.json``.
Without that folder ``index.md`` and ``metrics.json`` have no audit section or fields (and are
unchanged); the leaderboard shows every entry "not audited".

Privacy: by default the headline, ``1 − max adversary macro-F1`` (the strongest attack, named
in the tables' Adversary column and the leaderboard); ``adversary="model"`` (the cell's own
model, the thesis layout) or ``adversary="<name>"`` reads that adversary instead, with the deltas
recomputed against the baseline (:mod:`bench.analysis.privacy`). ``index.md`` states per dataset ×
model × attribute whether privacy is a valid measurement (the adversary beats chance on the
unprivatized baseline) and why not; where it is not, no Δprivacy or trade-off is shown.

Example:
    >>> from bench.report import cli_report
    >>> print(cli_report("results", "results/report", grid="quickstart"))
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.analysis.anchored import group_anchored
from bench.analysis.audits import NOT_AUDITED, AuditSet, audit_counts, load_audits
from bench.analysis.privacy import (
    NO_VALID,
    OWN_MODEL,
    baseline_index,
    describe_choice,
    group_mia,
    group_privacy,
    resolve_adversary,
    select_privacy,
    validity_rows,
)
from bench.analysis.results import (
    Group,
    ReportError,
    ResultSet,
    Stat,
    fmt_eps,
    group_cells,
    load_results,
)
from bench.leaderboard import render_grid_page
from bench.report.guarantees import guarantee_table
from bench.report.measures import measures_tables
from bench.report.plots import write_curves
from bench.report.rewrite import rewrite_tables
from bench.report.sizes import SIZES_CSV, write_size_curves
from bench.report.table import Table, csv_num, interval_note
from bench.report.table import md_text as _md  # names and messages as plain Markdown text
from bench.report.tradeoff import delta_test, tradeoff_tables, utility_ci
from bench.results.layout import REPORT_METRICS

logger = logging.getLogger(__name__)


@dataclass
class ReportSummary:
    """What :func:`build_report` produced."""

    out: Path
    """The report folder."""
    n_cells: int
    """Finished cells reported."""
    n_groups: int
    """Configurations (cells pooled over seeds)."""
    failed: list[str]
    """Names of failed cells."""
    tables: list[str]
    """Table names (each written as .md, .tex, .csv)."""
    plots: list[str]
    """Plot file names."""
    warnings: list[str] = field(default_factory=list)
    """Mixing and reading warnings."""
    grid: str | None = None
    """Grid the cells were filtered to."""
    audit: dict[str, int] | None = None
    """Audit counts (:func:`bench.analysis.audits.audit_counts`); None without an audit folder."""
    adversary: str | None = None
    """The adversary privacy was read from (None: the headline, the strongest)."""
    invalid_privacy: list[str] = field(default_factory=list)
    """``dataset / model / attribute`` where privacy is not a valid measurement."""

    def text(self) -> str:
        """The summary the CLI prints."""
        what = f"grid {self.grid}: " if self.grid else ""
        lines = [(f"report {what}{self.n_cells} cells in {self.n_groups} configurations, "
                  f"{len(self.failed)} failed -> {self.out}: {len(self.tables)} tables "
                  f"(md, tex, csv), {len(self.plots)} plot files, leaderboard.html")]
        if self.audit is not None:
            a = self.audit
            lines.append(f"  audit: {a['records']} record(s); {a['audited']} privatized "
                         f"configuration(s) audited, {a['not_audited']} not audited")
            if a["violations"]:
                lines.append(f"  AUDIT VIOLATION in {a['violations']} configuration(s): the "
                             "claimed guarantee does not hold (see leaderboard.html, index.md)")
        if self.adversary is not None:
            lines.append(f"  privacy: {describe_choice(self.adversary)}")
        if self.invalid_privacy:
            lines.append(f"  privacy: {NO_VALID} for {', '.join(self.invalid_privacy)} (the "
                         "adversary is at chance on the unprivatized baseline; see index.md)")
        lines += [f"  warning: {w}" for w in self.warnings]
        lines += [f"  FAILED {n}" for n in self.failed]
        return "\n".join(lines) + "\n"


def headline_metrics(groups: list[Group], rs: ResultSet, audits: AuditSet | None = None,
                     adversary: str | None = None) -> dict:
    """Numbers for ``dvc metrics``: counts and per configuration utility / privacy / trade-off.

    Per attribute ``privacy_<t>`` (None where it is not a valid measurement),
    ``privacy_valid_<t>`` (true, false, or null: unknown or mixed over seeds), ``adversary_<t>``
    and, where valid, ``tradeoff_<t>``; ``mia_auc`` where an MIA ran (None where not valid). The
    top level ``privacy_adversary`` names the adversary choice (``headline`` by default).

    Each of those numbers (utility as ``utility``) has its 95% interval as ``<name>_ci_lo`` and
    ``<name>_ci_hi`` (None: no interval; the top-level ``intervals`` says what they are), and a
    privatized configuration has ``delta_utility_significant``,
    ``delta_privacy_significant_<t>`` and ``tradeoff_significant_<t>`` (true, false: ``ns``,
    null: not judged; :func:`bench.report.tables.delta_test`).

    With ``audits``, each privatized configuration also gets ``audit`` (``PASS``,
    ``VIOLATION`` or ``not audited``) and ``audit_max_excess``, and the top level ``audit``
    (the counts of :func:`bench.analysis.audits.audit_counts`).
    """
    configs: dict[str, dict] = {}
    base_index = baseline_index(r for g in groups for r in g.records)
    for g in groups:
        c = g.config
        key = (f"{c.dataset} | {c.model} | {c.mechanism} | sens={c.sensitivity} | "
               f"map={c.mapping} | eps={fmt_eps(c.epsilon).replace('∞', 'inf')}")
        if c.suite_version and len({x.config.suite_version for x in groups}) > 1:
            key += f" | suite={c.suite_version}"
        configs[key] = _config_metrics(g, audits, base_index)
    out = {"cells": len(rs.cells), "failed": len(rs.failed), "configurations": len(groups),
           "privacy_adversary": adversary or "headline", "by_configuration": configs,
           "intervals": interval_note()}
    if audits is not None:
        out["audit"] = audit_counts(audits, groups)
    return out


def _config_metrics(g: Group, audits: AuditSet | None, base_index: dict) -> dict:
    """One configuration's entry of :func:`headline_metrics`: audit, utility, then per private
    attribute its privacy numbers, then the MIA."""
    c = g.config
    entry: dict[str, float | int | str | None] = {"n_seeds": len(g.records)}
    if audits is not None and not c.is_baseline:
        rec = audits.match(g)
        entry["audit"] = rec.status if rec else NOT_AUDITED
        entry["audit_max_excess"] = _num(rec.max_excess) if rec else None
    u = g.stat(lambda m: m.utility.macro_f1, utility_ci)
    entry["utility_macro_f1"] = _num(u.mean if u else None)
    _ci(entry, "utility", u)
    if not c.is_baseline:
        entry["delta_utility_significant"] = _sig(g, "delta_utility", None, base_index)
        r = group_anchored(g, None, base_index).retained
        entry["utility_retained"] = _num(r.mean if r else None)
        _ci(entry, "utility_retained", r)
    tasks = sorted({t for r in g.records for t in r.sections.privacy})
    for t in tasks:
        _add_privacy_metrics(entry, g, t, base_index)
    gm = group_mia(g)
    if gm is not None:
        entry["mia_auc"] = _num(gm.stat.mean if gm.stat else None)
        _ci(entry, "mia_auc", gm.stat)
    return entry


def _add_privacy_metrics(entry: dict, g: Group, t: str, base_index: dict) -> None:
    """``privacy_<t>``, its validity and adversary, ``tradeoff_<t>`` where valid, and (a
    privatized configuration) the significance of its Δprivacy and trade-off."""
    gp = group_privacy(g, t)
    p = gp.stat if gp.status != "invalid" else None
    entry[f"privacy_{t}"] = _num(p.mean if p else None)
    _ci(entry, f"privacy_{t}", p)
    entry[f"privacy_valid_{t}"] = gp.valid
    entry[f"adversary_{t}"] = gp.adversary
    to = g.stat(lambda m, t=t: m.vs_baseline.attribute(t).tradeoff)
    if to is not None and gp.status != "invalid":
        entry[f"tradeoff_{t}"] = _num(to.mean)
        _ci(entry, f"tradeoff_{t}", to)
    if not g.config.is_baseline:
        valid = gp.status != "invalid"
        entry[f"delta_privacy_significant_{t}"] = (
            _sig(g, "delta_privacy", t, base_index) if valid else None)
        entry[f"tradeoff_significant_{t}"] = (
            _sig(g, "tradeoff", t, base_index) if valid else None)
        an = group_anchored(g, t, base_index)
        for name, s in (("privacy_gained", an.gained), ("anchored_tradeoff", an.tradeoff)):
            s = s if valid else None
            entry[f"{name}_{t}"] = _num(s.mean if s else None)
            _ci(entry, f"{name}_{t}", s)
        entry[f"favourable_{t}"] = an.favourable if valid else False


def _ci(entry: dict, name: str, s: Stat | None) -> None:
    """``<name>_ci_lo`` / ``<name>_ci_hi``: the 95% interval (None where there is none)."""
    ok = s is not None and s.has_interval
    entry[f"{name}_ci_lo"] = _num(s.lo) if ok else None  # type: ignore[union-attr]
    entry[f"{name}_ci_hi"] = _num(s.hi) if ok else None  # type: ignore[union-attr]


def _sig(g: Group, key: str, task: str | None, base_index: dict) -> bool | None:
    t = delta_test(g, key, task, base_index)
    return t.sig.significant if t.stat is not None else None


def _num(x: float | None) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return float(csv_num(x))


def _code(text: str) -> str:
    """A code span that cannot be closed early or break the table row (no backtick, no line
    break, ``|`` escaped)."""
    one_line = " ".join(str(text).splitlines())  # every line break str.splitlines knows
    return "`" + one_line.replace("`", "'").replace("|", "\\|") + "`"


def _audit_section(groups: list[Group], audits: AuditSet) -> list[str]:
    """``## Privacy audit``: one row per mechanism configuration and ε, with its status."""
    rows: dict[tuple, tuple[str, str, str]] = {}
    for g in groups:
        if g.config.is_baseline:
            continue
        c = g.config
        rec, key = audits.lookup(g)
        if rec is None:
            status, detail = NOT_AUDITED, "—"
        else:
            status = f"**⚠ {rec.status}**" if rec.violation else rec.status
            detail = _md("; ".join(p for p in (rec.excess_text(), rec.size_text(),
                                                  rec.created) if p))
        rows.setdefault((c.sensitivity, c.mechanism, c.epsilon, key), (status, detail, key))
    counts = audit_counts(audits, groups)
    lines = ["## Privacy audit", ""]
    if counts["violations"]:
        lines += [(f"**⚠ VIOLATION: the audit found the claimed guarantee violated for "
                   f"{counts['violations']} configuration(s).** An empirical lower bound on the "
                   "privacy loss exceeds the claim (see the rows below)."), ""]
    lines += [(f"`bench audit` status per mechanism configuration: {counts['records']} audit "
               f"record(s), {counts['audited']} privatized configuration(s) audited, "
               f"{counts['not_audited']} not audited. Matched by key (mechanism, ε, mechanism "
               "parameters with defaults filled in, sensitivity approach); dataset, model and "
               "mapping are not part of it. PASS: no evidence against the claim at the audit's "
               "sample size; max excess = empirical lower bound − claim."), "",
              "| Mechanism | Sensitivity | ε | Audit | Details | Key |",
              "|:---|:---|---:|:---|:---|:---|"]
    for (sens, mech, eps, _key), (status, detail, key) in sorted(rows.items()):
        lines.append(f"| {_md(mech)} | {_md(sens)} | {fmt_eps(eps)} | {status} | {detail} | "
                     f"{_code(key) if key else '—'} |")
    if not rows:
        lines.append("| (no privatized configurations) |  |  |  |  |  |")
    unmatched = audits.unmatched(groups)
    if unmatched:
        lines += ["", f"Audit records that match no configuration of this report "
                  f"({len(unmatched)}): " + ", ".join(
                      f"{_code(r.key)} ({r.status})" for r in unmatched) + "."]
    return lines + [""]


def _privacy_section(groups: list[Group], adversary: str | None) -> list[str]:
    """``## Privacy measurement``: the rule, and per dataset × model × attribute its validity."""
    rows = validity_rows(groups)
    if not rows:
        return []
    who = ("the strongest adversary" if adversary is None else
           "the cell's own model" if adversary == OWN_MODEL else f"the adversary {adversary}")
    lines = ["## Privacy measurement", "",
             (f"Privacy = {describe_choice(adversary)}. It is a valid measurement only where "
              f"{who} beats chance on the unprivatized baseline (macro-F1 above the chance "
              "threshold); elsewhere the tables and the leaderboard show "
              f"\"{NO_VALID}\" and no Δprivacy or trade-off, and the plots leave it out."), ""]
    bad = [r for r in rows if r["valid"].startswith("no")]
    if bad:
        lines += [f"**{NO_VALID.capitalize()}** for " + ", ".join(
            f"{_md(r['dataset'])} / {_md(r['attribute'])} ({_md(r['model'])})" for r in bad)
            + ".", ""]
    left: dict[str, set[str]] = {}
    for g in groups:
        for r in g.records:
            for task in r.sections.attributes:
                for item in r.sections.attribute(task).adversaries_left_out or []:
                    if isinstance(item, (list, tuple)) and len(item) == 2:
                        left.setdefault(str(item[0]), set()).add(str(item[1]))
    if left:
        lines += ["Adversaries left out by the runner: " + "; ".join(
            f"{_md(n)} ({_md(', '.join(sorted(left[n])))})" for n in sorted(left)) + ".", ""]
    lines += ["| Dataset | Model | Attribute | Adversary on the baseline | Macro-F1 | "
              "Chance threshold | Valid | Why not |",
              "|:---|:---|:---|:---|---:|---:|:---|:---|"]
    for r in rows:
        valid = f"**{r['valid']}**" if r["valid"].startswith("no") else r["valid"]
        lines.append(f"| {_md(r['dataset'])} | {_md(r['model'])} | {_md(r['attribute'])} | "
                     f"{_md(r['adversary']) or '—'} | {r['macro_f1'] or '—'} | "
                     f"{r['chance_threshold'] or '—'} | {valid} | {_md(r['reason']) or '—'} |")
    return lines + [""]


def _index(rs: ResultSet, groups: list[Group], warnings: list[str], tables: list[Table],
           plots: list[str], title: str, audits: AuditSet | None = None,
           adversary: str | None = None) -> str:
    lines = [f"# {title}", ""]
    suites = sorted({r.suite_version for r in rs.cells} - {""})
    base = sum(g.config.is_baseline for g in groups)
    legacy = f"; cells of suite version(s) {', '.join(suites)}" if suites else ""
    lines.append(f"{len(rs.cells)} finished cells in {len(groups)} configurations "
                 f"({base} baseline), {len(rs.failed)} failed{legacy}.")
    lines.append("")
    lines += _privacy_section(groups, adversary)
    if audits is not None:
        lines += _audit_section(groups, audits)
    if warnings:
        lines += ["## Warnings", ""] + [f"- {_md(w)}" for w in warnings] + [""]
    if rs.failed:
        lines += ["## Failed cells", "", "| cell | hash | error |", "|:---|:---|:---|"]
        lines += [f"| {_md(f.name)} | {f.hash} | {_md(f.error)} |" for f in rs.failed] + [""]
    lines += ["## Tables", ""]
    lines += [f"- [{_md(t.title)}](tables/{t.name}.md) ([tex](tables/{t.name}.tex), "
              f"[csv](tables/{t.name}.csv))" for t in tables]
    lines += ["", "## Plots", ""] + [f"- [{p}]({p})" for p in plots]
    lines += ["", "## Leaderboard", "", "- [leaderboard.html](leaderboard.html)", ""]
    return "\n".join(lines)


REPORT_ENTRIES = frozenset({"index.md", REPORT_METRICS, "leaderboard.html", "curves.csv",
                            SIZES_CSV, "tables", "plots"})
"""Everything a report folder holds (an existing ``out`` holding anything else is kept)."""


def _safe_to_replace(out: Path) -> bool:
    if not out.exists():
        return True
    if not out.is_dir():
        return False
    return all(p.name in REPORT_ENTRIES for p in out.iterdir())


def build_report(results: str | os.PathLike[str], out: str | os.PathLike[str],
                 grid: str | None = None,
                 audit: str | os.PathLike[str] | None = None,
                 adversary: str | None = None) -> ReportSummary:
    """Read ``results``, write every table, plot and the leaderboard into ``out``.

    Args:
        results: results folder (holding ``cells/``).
        out: report folder; replaced as a whole (see the module docstring).
        grid: only the cells of this grid (a name under ``experiments/`` or a path).
        audit: folder of ``bench audit`` status records (default ``<results>/audit``, used
            only if it exists; a folder given here must exist).
        adversary: which adversary privacy is read from: None or ``"headline"`` (default: the
            strongest, ``1 − max adversary macro-F1``), ``"model"`` (each cell's own model, the
            thesis layout) or an adversary's name (``lexical``, ``informed``, ``lstm``, ...);
            deltas and validity are then recomputed against the baseline for that adversary
            (:func:`bench.analysis.privacy.select_privacy`).

    Returns:
        The :class:`ReportSummary`.

    Raises:
        ReportError: missing results, unknown grid, a given ``audit`` folder that does not
            exist, an ``out`` that is not a report folder, or an adversary no cell ran.
    """
    out = Path(out)
    if not _safe_to_replace(out):
        raise ReportError(f"{out} exists and holds files that are not part of a report: not "
                          "replacing it (choose another --out)")
    rs, adversary, audits, groups, warnings = _load_report_inputs(results, grid, audit,
                                                                  adversary)
    prefix = f"{rs.grid}: " if rs.grid else ""
    tables = (tradeoff_tables(groups, prefix, adversary) + rewrite_tables(groups, prefix)
              + measures_tables(groups, prefix))
    tables.append(guarantee_table(groups, prefix))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        plots = _write_report_files(tmp, rs, groups, warnings, tables, audits, adversary)
        os.chmod(tmp, 0o755)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    invalid = [f"{r['dataset']} / {r['model']} / {r['attribute']}"
               for r in validity_rows(groups) if r["valid"].startswith("no")]
    summary = ReportSummary(out, len(rs.cells), len(groups), [f.name for f in rs.failed],
                            [t.name for t in tables], plots, warnings, rs.grid,
                            audit_counts(audits, groups) if audits is not None else None,
                            adversary, invalid)
    logger.info("%s", summary.text().rstrip())
    return summary


def _load_report_inputs(results: str | os.PathLike[str], grid: str | None,
                        audit: str | os.PathLike[str] | None, adversary: str | None
                        ) -> tuple[ResultSet, str | None, AuditSet | None, list[Group],
                                   list[str]]:
    """The cells (of ``grid``), the resolved adversary, the audit records, the configurations
    with privacy read from that adversary, and every warning."""
    rs = load_results(results, grid)
    adversary = resolve_adversary(adversary, rs.cells)
    audits = load_audits(Path(results) / "audit" if audit is None else audit,
                         required=audit is not None)
    groups, warnings = group_cells(select_privacy(rs.cells, adversary))
    warnings = rs.warnings + warnings + (audits.warnings if audits else [])
    return rs, adversary, audits, groups, warnings


def _write_report_files(tmp: Path, rs: ResultSet, groups: list[Group], warnings: list[str],
                        tables: list[Table], audits: AuditSet | None,
                        adversary: str | None) -> list[str]:
    """Tables, plots, leaderboard.html, metrics.json and index.md into the folder ``tmp``;
    the plots' paths relative to it."""
    for t in tables:
        t.notes.extend(f"Warning: {w}" for w in warnings)
        t.write(tmp / "tables")
    plot_paths = write_curves(groups, tmp / "plots", tmp / "curves.csv", adversary)
    plot_paths += write_size_curves(groups, tmp / "plots", tmp / SIZES_CSV, adversary)
    plots = [p.relative_to(tmp).as_posix() for p in plot_paths]
    title = f"{rs.grid} report" if rs.grid else "bench report"
    (tmp / "leaderboard.html").write_text(
        render_grid_page(rs, adversary=adversary, audits=audits),
        encoding="utf-8", newline="\n")
    (tmp / REPORT_METRICS).write_text(
        json.dumps(headline_metrics(groups, rs, audits, adversary), indent=1,
                   sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8",
        newline="\n")
    (tmp / "index.md").write_text(_index(rs, groups, warnings, tables, plots, title,
                                         audits, adversary), encoding="utf-8",
                                  newline="\n")
    return plots


def cli_report(results: str | os.PathLike[str] = "results",
               out: str | os.PathLike[str] | None = None, grid: str | None = None,
               audit: str | os.PathLike[str] | None = None,
               adversary: str | None = None) -> str:
    """What ``bench report [--results DIR] [--out DIR] [--grid NAME] [--audit DIR]
    [--adversary NAME]`` calls.

    Args:
        results: results folder (default ``results``).
        out: report folder (default ``<results>/report``).
        grid: only the cells of this grid.
        audit: ``bench audit`` records (default ``<results>/audit`` where it exists).
        adversary: None / ``"headline"`` (default: the strongest adversary), ``"model"`` (the
            cell's own model, the thesis layout) or an adversary's name; see
            :func:`build_report`.

    Returns:
        The summary text to print.

    Raises:
        ReportError: bad input (the CLI prints it as one line and exits 2).
    """
    out = Path(results) / "report" if out is None else Path(out)
    return build_report(results, out, grid, audit, adversary).text()
