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

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench.report.results import Group, dig, fmt_eps
from bench.report.table import Table, Value, csv_num, fmt_stat, slug, unique_name

Getter = Callable[[Mapping[str, Any]], Any]

def _at(measure: str, *path: str) -> Getter:
    """The getter of ``metrics["measures"][measure][path...]``."""
    return lambda m: dig(m, "measures", measure, *path)


def _rate(measure: str, key: str) -> tuple[Getter, Getter]:
    """Getters of a ``{"rate", "ci"}`` record's value and interval."""
    return _at(measure, key, "rate"), _at(measure, key, "ci")


def _linkage_chance(m: Mapping[str, Any]) -> Any:
    return (dig(m, "measures", "linkage", "chance_top1") if dig(m, "measures", "linkage")
            else dig(m, "measures", "linkage_minilm", "chance_top1"))


COLUMNS: tuple[tuple[str, str, Getter, Getter | None], ...] = (
    ("recon_top1", "Reconstruction top-1", *_rate("reconstruction", "top1")),
    ("recon_top5", "Reconstruction top-5", *_rate("reconstruction", "top5")),
    ("recon_unchanged", "Unchanged (naive guess)", *_rate("reconstruction", "unchanged")),
    ("recon_chance", "Chance top-1", _at("reconstruction", "chance_top1"), None),
    ("s_w", "S_w (mean)", _at("s_w", "s_w_mean"), None),
    ("link_top1", "Linkage top-1 (tf-idf)", _at("linkage", "top1"), _at("linkage", "top1_ci")),
    ("link_mrr", "Linkage MRR (tf-idf)", _at("linkage", "mrr"), _at("linkage", "mrr_ci")),
    ("link_minilm_top1", "Linkage top-1 (MiniLM)", _at("linkage_minilm", "top1"),
     _at("linkage_minilm", "top1_ci")),
    ("link_chance", "Linkage chance top-1", _linkage_chance, None),
    ("tpr_1pct", "MIA TPR@1% FPR", _at("mia_low_fpr", "tpr_at_fpr_0.01", "tpr"),
     _at("mia_low_fpr", "tpr_at_fpr_0.01", "ci")),
    ("tpr_01pct", "MIA TPR@0.1% FPR", _at("mia_low_fpr", "tpr_at_fpr_0.001", "tpr"),
     _at("mia_low_fpr", "tpr_at_fpr_0.001", "ci")),
    ("rmia_auc", "RMIA AUC", _at("mia_rmia", "auc"), _at("mia_rmia", "auc_ci")),
    ("rmia_tpr_1pct", "RMIA TPR@1% FPR", _at("mia_rmia", "tpr_at_fpr_0.01", "tpr"),
     _at("mia_rmia", "tpr_at_fpr_0.01", "ci")),
)
"""(key, header, value, interval) of every column a measures table may have."""


def point_measures(g: Group) -> dict[str, float] | None:
    """``{column key: mean over seeds}`` of the :data:`COLUMNS` a group's cells hold (None:
    none), for the leaderboard's points."""
    out = {}
    for key, _header, get, _ci in COLUMNS:
        st = g.stat(get)
        if st is not None:
            out[key] = float(st.mean)
    return out or None


MEASURE_LABELS: dict[str, str] = {key: header for key, header, _g, _c in COLUMNS}
"""Column key -> its header (the leaderboard's ``measure_labels``)."""


def measures_tables(groups: Sequence[Group], title_prefix: str = "") -> list[Table]:
    """Tables named ``measures_<dataset>``, for the datasets whose cells hold measures."""
    by_ds: dict[str, list[Group]] = {}
    for g in groups:
        if any(r.metrics.get("measures") for r in g.records):
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
