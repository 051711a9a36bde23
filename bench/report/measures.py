"""The measures table (``settings.measures``, :mod:`bench.measures`): one table per dataset,
a row per configuration, a column per measured quantity that any of its cells holds.

Values are means over seeds with their 95% t interval (one seed: the cell's own bootstrap
interval, where the measure has one). Chance levels and the naive guess ("the output is the
original") are shown beside the reconstruction rate, so a reader sees whether a changed word
still gives its original away.

Example:
    >>> for table in measures_tables(groups):
    ...     print(table.markdown())
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.analysis.measures import COLUMNS
from bench.analysis.results import Group, fmt_eps
from bench.report.table import Table, Value, csv_num, fmt_stat, slug, unique_name


def measures_tables(groups: Sequence[Group], title_prefix: str = "") -> list[Table]:
    """Tables named ``measures_<dataset>``, for the datasets whose cells hold measures."""
    by_ds: dict[str, list[Group]] = {}
    for g in groups:
        if any(r.sections.measures for r in g.records):
            by_ds.setdefault(g.config.dataset, []).append(g)
    used: set[str] = set()
    return [_table(ds, sorted(by_ds[ds], key=lambda g: g.config.order), title_prefix, used)
            for ds in sorted(by_ds)]


def _table(ds: str, gs: list[Group], title_prefix: str, used: set[str]) -> Table:
    stats = {g.config.ident: {k: g.stat(get, ci) for k, _, get, ci in COLUMNS} for g in gs}
    shown = [c for c in COLUMNS if any(stats[g.config.ident][c[0]] for g in gs)]
    columns = ["Mechanism", "Sensitivity", "Mapping", "Model", "ε"] + [c[1] for c in shown]
    rows, records = [], []
    for g in gs:
        c, st = g.config, stats[g.config.ident]
        head = [c.mechanism, c.sensitivity, c.mapping, c.model, fmt_eps(c.epsilon)]
        rows.append([Value(t) for t in head] + [Value(fmt_stat(st[k])) for k, *_ in shown])
        rec = dict(zip(("mechanism", "sensitivity", "mapping", "model", "epsilon"), head))
        for k, *_ in shown:
            s = st[k]
            rec[k] = csv_num(s.mean if s else None)
            rec[f"{k}_n"] = str(s.n) if s else "0"
        records.append(rec)
    notes = [
        "Measures (docs/measures.md): reconstruction = rate of test words whose original the "
        "attacker names (the stronger of the MAP guess under the mechanism's channel and the "
        "naive guess that the output is the original; over the words whose original is one of "
        "the attacker's candidates); S_w = distinct outputs of a word over repeated "
        "privatizations (Feyisetan et al. 2020); linkage = rate of privatized test documents "
        "whose original ranks first among all test originals, and mean reciprocal rank; MIA "
        "TPR at a fixed FPR (Carlini et al. 2022); RMIA = membership inference calibrated "
        "per record with reference models (Zarifzadeh et al. 2024).",
        "Values: mean ± half-width of the 95% t interval over seeds; one seed: the cell's "
        "bootstrap interval [lo, hi] where the measure has one."]
    return Table(unique_name(f"measures_{slug(ds)}", used),
                 f"{title_prefix}Measures, dataset: {ds}", columns, rows, records, notes)
