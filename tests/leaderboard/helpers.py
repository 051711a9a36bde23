"""Results folders for the leaderboard tests, copied from the committed quickstart reference."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "results" / "reference" / "quickstart"


def copy_results(dst: Path, hashes: list[str] | None = None) -> Path:
    """``dst/cells`` with the quickstart cells (all, or those in ``hashes``)."""
    cells = sorted(p for p in (QUICKSTART / "cells").iterdir() if p.is_dir())
    for c in cells:
        if hashes is None or c.name in hashes:
            shutil.copytree(c, dst / "cells" / c.name)
    return dst


def all_hashes() -> list[str]:
    return sorted(p.name for p in (QUICKSTART / "cells").iterdir() if p.is_dir())


def rewrite_metrics(folder: Path, edit) -> None:
    """Change a cell's metrics and seal it again (as if another machine had computed it),
    keeping its provenance."""
    from bench.results.store import seal_cell

    prov = json.loads((folder / "manifest.json").read_text()).get("provenance")
    m = json.loads((folder / "metrics.json").read_text())
    edit(m)
    (folder / "metrics.json").write_text(json.dumps(m))
    (folder / "manifest.json").unlink()
    seal_cell(folder)
    if prov is not None:
        set_provenance(folder, prov)


def set_provenance(folder: Path, prov: dict) -> None:
    """Replace a cell's provenance record (the manifest's checksums do not cover it)."""
    mf = folder / "manifest.json"
    manifest = json.loads(mf.read_text())
    manifest["provenance"] = prov
    mf.write_text(json.dumps(manifest))


def set_platform(results: Path, platform_id: str) -> None:
    """Record every cell of a results folder as computed on the numeric platform
    ``platform_id`` (``cpu-pinned-...``, ``cuda-...``)."""
    for cell in (results / "cells").iterdir():
        prov = json.loads((cell / "manifest.json").read_text()).get("provenance") or {}
        prov["numeric"] = {"id": platform_id, "pinned": platform_id.startswith("cpu-pinned-")}
        set_provenance(cell, prov)


def spec_of(folder: Path) -> dict:
    return json.loads((folder / "spec.json").read_text())
