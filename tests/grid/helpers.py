"""Grid files written for the tests, and small look-ups over expanded grids."""

from __future__ import annotations

import textwrap
from pathlib import Path

from bench.grid import load_grid

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "experiments").glob("*.yaml"))


def write(tmp_path: Path, text: str, name: str = "g.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


BASIC = """
name: basic
axes:
  dataset: [bbc, conventions]
  model: [lstm, bow]
  mechanism: [mvl, {name: trlaplace, C: 1.0}]
  sensitivity: [none, unit_norm]
  mapping: [nearest, vickrey]
  epsilon: [1, 10, 100]
  seed: [0, 1]
"""


def by_name(cells):
    return {c.name: c for c in cells}


def skip_reasons(g):
    return {c.name: r for c, r in g.skipped}


GOOD_AXES = {
    "dataset": "[bbc]", "model": "[lstm]", "mechanism": "[mvl]", "sensitivity": "[none]",
    "mapping": "[nearest]", "epsilon": "[1]", "seed": "[0]",
}


def grid_with(**override) -> str:
    axes = {**GOOD_AXES, **override}
    return "axes:\n" + "".join(f"  {k}: {v}\n" for k, v in axes.items() if v is not None)


def one_cell(tmp_path, name="h.yaml", **override):
    g = load_grid(write(tmp_path, grid_with(**override), name))
    return next(c for c in g.cells if not c.is_baseline)
