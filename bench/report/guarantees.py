"""The guarantee table (Riecker 2023, Table 5.2): per sensitivity approach × mechanism, the
sensitivity bound, the noise parameters actually used, the guarantee and whether it is proven.

Only the cells are read (the privatizer description each recorded), so the table is a function
of the committed cells alone.

Example:
    >>> from bench.analysis.results import load_results, group_cells
    >>> groups, _ = group_cells(load_results("results").cells)
    >>> print(guarantee_table(groups).markdown())
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bench.analysis.guarantees import describe_guarantee, g4, privatizer_of
from bench.analysis.results import CellRecord, Group, dig, fmt_eps, to_float
from bench.report.table import DASH, Table, Value


def _bound_text(sens: Mapping[str, Any] | None) -> str:
    if not sens:
        return DASH
    b = to_float(sens.get("bound"))
    text = "Δ = ∞ (unbounded)" if math.isinf(b) else (f"Δ ≤ {b:.4g}" if math.isfinite(b)
                                                       else DASH)
    d = to_float(sens.get("delta"), 0.0)
    if d > 0:
        text += f" w.p. 1−δ, δ={d:.3g}"
    if sens.get("proven") is False:
        text += " (estimated)"
    return text


def _noise_params(rec: CellRecord, priv: Mapping[str, Any] | None) -> dict[str, str]:
    if priv is not None:
        mech = {k: v for k, v in (priv.get("mechanism") or {}).items()
                if k not in ("name", "version", "epsilon")}
        out = {k: g4(v) for k, v in mech.items()}
        dim = dig(priv, "sensitivity", "out_dim")
        if dim is not None:
            out["d"] = g4(dim)
        return out
    params = (rec.spec.get("mechanism") or {}).get("params") or {}
    return {k: g4(v) + " (spec)" for k, v in params.items()}


def guarantee_table(groups: Sequence[Group], title_prefix: str = "") -> Table:
    """Theoretical guarantees per sensitivity approach × mechanism (Riecker 2023, Table 5.2).

    Noise parameters come from the privatizer description the cell recorded
    (:func:`privatizer_of`), else from the spec (marked ``(spec)``). Parameters that depend on ε
    (or differ between datasets) are listed per ε.

    Args:
        groups: aggregated configurations.
        title_prefix: prepended to the title.

    Returns:
        The table ``guarantees``.
    """
    by_key: dict[tuple[str, str], list[tuple[float, CellRecord]]] = {}
    for g in groups:
        if g.config.is_baseline:
            continue
        for r in g.records:
            by_key.setdefault((g.config.sensitivity, g.config.mechanism), []).append(
                (g.config.epsilon, r))
    rows, records = [], []
    for (sens, mech) in sorted(by_key):
        items = sorted(by_key[(sens, mech)], key=lambda t: (t[0], t[1].seed, t[1].hash))
        row, record = _guarantee_row(sens, mech, items)
        rows.append(row)
        records.append(record)
    notes = [("Guarantee per token, with ε the configured budget (Riecker 2023, Table 5.2; "
             "Eq. 5.1 for the multiplier of a sensitivity bound the noise is not calibrated "
             "to). \"estimated from data\": a bound in the guarantee is estimated, not proven."),
             ("Noise parameters: as used by the runs (the privatizer description in each "
             "cell); d = dimension after the sensitivity transform; \"(spec)\": only the "
             "configured parameters were available.")]
    return Table("guarantees", f"{title_prefix}Theoretical privacy guarantees",
                 ["Sensitivity approach", "Sensitivity bound", "Mechanism", "Noise parameters",
                  "Privacy guarantee", "Proven"], rows, records, notes, align="llllll", merge=2)


def _guarantee_row(sens: str, mech: str, items: list[tuple[float, CellRecord]]
                   ) -> tuple[list[Value], dict[str, str]]:
    """One sensitivity approach × mechanism from its cells ``items`` ((ε, record), sorted):
    the table row and its CSV record."""
    bounds, guars, proven, reasons, sources = [], [], [], [], set()
    noise: dict[str, list[tuple[float, str]]] = {}
    for eps, r in items:
        priv, src = privatizer_of(r)
        sources.add(src or "spec")
        _add(bounds, _bound_text(priv.get("sensitivity") if priv else None))
        g = r.sections.guarantee or r.sections.privatization.guarantee
        _add(guars, describe_guarantee(g))
        if g and g.get("void"):  # a rewriter trained on the evaluated data (bench.rewriters)
            _add(proven, "void")
            _add(reasons, str(g.get("void_reason") or "void"))
        elif g:
            ok = g.get("proven") is not False
            _add(proven, "proven" if ok else "estimated from data")
            if not ok and g.get("reason"):
                _add(reasons, str(g["reason"]))
        for k, v in _noise_params(r, priv).items():
            if (eps, v) not in noise.setdefault(k, []):
                noise[k].append((eps, v))
    bounds = [b for b in bounds if b != DASH] or [DASH]
    guars = [g for g in guars if g != DASH] or [DASH]
    noise_text = _noise_text(noise)
    status = " / ".join(proven) or DASH
    if reasons:
        status += ": " + "; ".join(reasons)
    row = [Value(sens), Value(" / ".join(bounds)), Value(mech), Value(noise_text),
           Value(" / ".join(guars)), Value(status)]
    record = {"sensitivity": sens, "sensitivity_bound": " / ".join(bounds),
              "mechanism": mech, "noise_parameters": noise_text,
              "guarantee": " / ".join(guars), "proven": status,
              "source": "+".join(sorted(sources)), "n_cells": str(len(items))}
    return row, record


def _noise_text(noise: dict[str, list[tuple[float, str]]]) -> str:
    """Noise parameters as text: one value, or the values per ε where they differ."""
    parts = []
    for k in sorted(noise):
        vals = noise[k]
        if len({v for _e, v in vals}) == 1:
            parts.append(f"{k} = {vals[0][1]}")
        else:
            parts.append(f"{k} = " + ", ".join(f"{v} (ε={fmt_eps(e)})" for e, v in vals))
    return "; ".join(parts) or DASH


def _add(lst: list[str], item: str) -> None:
    if item not in lst:
        lst.append(item)
