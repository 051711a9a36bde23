"""Shared by the measure tests: run a small grid and read each cell's measures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.run.runner import run_grid


def measures_by_mechanism(tmp_path: Path, grid: str, n_cells: int) -> dict[str, dict[str, Any]]:
    """Run the grid text ``grid`` (which must finish ``n_cells`` cells) and return each cell's
    ``measures`` record by its mechanism's name (``none``: the baseline)."""
    (tmp_path / "g.yaml").write_text(grid)
    assert run_grid(tmp_path / "g.yaml", results=tmp_path / "r",
                    mlflow=False).count("done") == n_cells
    got = {}
    for f in (tmp_path / "r").glob("cells/*/metrics.json"):
        m = json.loads(f.read_text())
        got[m["cell"].split("mech=")[1].split(",")[0]] = m.get("measures", {})
    return got
