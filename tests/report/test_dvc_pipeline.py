"""``dvc repro`` of the smoke parameters, end to end, in a temporary copy of the repository.

The copy is a fresh git repository (tracked + untracked, not ignored files) with its own
``dvc init``-less ``.dvc/`` from the repository; DVC runs offline (analytics and update checks
off, no remote). Skips only when the ``dvc`` command is missing. Takes a few minutes: the smoke
grid itself (privatization, BERTScore on 20 documents, models) dominates.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DVC = shutil.which("dvc", path=str(BIN)) or shutil.which("dvc")


def _copy_repo(dst: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = REPO / f
        if src.is_file() and not f.startswith(("results/", "tests/fixtures/")) \
                and f != "dvc.lock":  # the committed lock belongs to the quickstart reference
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f)
    # the smoke parameters: same params.yaml, with the grid switched to `smoke`
    params = (dst / "params.yaml").read_text()
    assert "\ngrid: " in "\n" + params
    lines = [("grid: smoke" if line.startswith("grid:") else line)
             for line in params.splitlines()]
    (dst / "params.yaml").write_text("\n".join(lines) + "\n")


@pytest.mark.skipif(DVC is None, reason="dvc is not installed")
def test_dvc_repro_smoke(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _copy_repo(repo)
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=str(repo), DVC_NO_ANALYTICS="1", GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")

    def sh(*cmd: str) -> str:
        res = subprocess.run(list(cmd), cwd=repo, env=env, capture_output=True, text=True,
                             timeout=900, check=False)
        assert res.returncode == 0, f"{cmd}:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
        return res.stdout + res.stderr

    sh("git", "init", "-q")
    sh("git", "add", "-A")
    sh("git", "commit", "-qm", "copy")
    if not (repo / ".dvc" / "config").is_file():
        sh(DVC, "init", "-q")
    assert sh(DVC, "config", "core.analytics").strip() == "false"
    assert sh(DVC, "remote", "list").strip() == ""
    out = sh(DVC, "repro")
    assert "Running stage 'report'" in out
    report = repo / "results" / "reference" / "smoke" / "report"
    for f in ("index.md", "leaderboard.html", "metrics.json", "curves.csv",
              "tables/tradeoff_none.md", "tables/guarantees.tex"):
        assert (report / f).is_file(), f
    assert any((report / "plots").glob("curves_*.png"))
    assert "3 finished cells" in (report / "index.md").read_text()
    metrics = json.loads(sh(DVC, "metrics", "show", "--json"))
    assert json.dumps(metrics).count("utility_macro_f1") == 3
    lock = (repo / "dvc.lock").read_text()
    assert "results/reference/smoke/cells" in lock
    assert "results/reference/smoke/report/metrics.json" in lock
    # up to date now; the persisted cells survive a forced re-run of `run`
    assert "up to date" in sh(DVC, "repro")
    cells = repo / "results" / "reference" / "smoke" / "cells"
    before = sorted(p.name for p in cells.iterdir())
    assert "3 already done" in sh(DVC, "repro", "-f", "-s", "run")
    assert sorted(p.name for p in cells.iterdir()) == before
