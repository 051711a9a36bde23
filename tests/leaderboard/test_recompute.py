"""Verification by recomputation (issue 24, item 2): a forged-and-resealed source is refuted
and taken out of the ranking; an honest one is verified; the choice of cells is seeded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.leaderboard import build, build_leaderboard, read_sources
from bench.results.store import seal_cell
from bench.run.runner import run_grid

GRID = """
name: tinyverify
axes:
  dataset: [{name: bbc, subsample: 150}]
  model: [bow]
  mechanism: [mvl]
  epsilon: [10, 50]
  seed: [0]
settings:
  vocab_size: 2000
"""


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("verify")
    grid = tmp / "g.yaml"
    grid.write_text(GRID)
    summary = run_grid(grid, results=tmp / "honest", jobs=1, mlflow=False)
    assert summary.count("done") == 3
    return tmp / "honest"


def _forge(src: Path, dst: Path) -> Path:
    """A copy whose privatized cells claim a better utility, resealed with their provenance
    kept (so they claim the same numeric platform as the honest cells)."""
    shutil.copytree(src, dst)
    for d in (dst / "cells").iterdir():
        spec = json.loads((d / "spec.json").read_text())
        if spec["mechanism"]["name"] == "none":
            continue
        prov = json.loads((d / "manifest.json").read_text())["provenance"]
        m = json.loads((d / "metrics.json").read_text())
        m["utility"]["macro_f1"] = 0.99
        (d / "metrics.json").write_text(json.dumps(m))
        (d / "manifest.json").unlink()
        seal_cell(d)  # the manifest is a checksum: anyone can recompute it
        manifest = json.loads((d / "manifest.json").read_text())
        (d / "manifest.json").write_text(json.dumps(manifest | {"provenance": prov}))
    return dst


def test_honest_source_is_verified(honest):
    doc = build(read_sources([honest]), verify=1, verify_seed=3)
    (entry,) = doc["entries"]
    assert entry["verification"]["status"] == "verified"
    (checked,) = entry["verification"]["cells"]
    assert checked["status"] == "bit-exact" and entry["rank_flag"] != "refuted"
    assert doc["verify"] == {"cells_per_entry": 1, "seed": 3, "refuted_sources": [],
                             "counts": {"verified": 1, "refuted": 0, "unverified": 0}}
    # the choice is seeded: the same seed checks the same cell
    again = build(read_sources([honest]), verify=1, verify_seed=3)
    assert again["entries"][0]["verification"]["cells"][0]["hash"] == checked["hash"]


def test_forged_and_resealed_source_is_refuted(honest, tmp_path):
    from bench.verify import verify_results

    forged = _forge(honest, tmp_path / "forged")
    assert verify_results(forged).ok  # integrity checks cannot tell
    doc = build_leaderboard([forged], verify=2)
    (entry,) = doc["entries"]
    assert entry["verification"]["status"] == "refuted"
    assert entry["rank"] is None and entry["score"] is None and entry["rank_flag"] == "refuted"
    assert doc["verify"]["refuted_sources"] == ["s0"]
    diffs = [d for c in entry["verification"]["cells"] for d in c["differences"]]
    assert any("/utility/macro_f1: committed 0.99" in d for d in diffs), diffs


def test_verify_must_not_be_negative(honest):
    from bench.leaderboard import LeaderboardError

    with pytest.raises(LeaderboardError, match="--verify must be 0 or more"):
        build_leaderboard([honest], verify=-1)


QUICKSTART = Path(__file__).resolve().parents[2] / "results" / "reference" / "quickstart"


@pytest.mark.parametrize("edit, why", [
    (lambda s: s["model"]["params"].update(epochs=1e9),
     "`bench run` would refuse it: model: model 'lstm' parameter epochs = 1000000000.0 is "
     "above its limit 1,000"),
    (lambda s: s["dataset"].update(config="bbc"), "dataset: not {name: ..., config: {...}}"),
])
def test_a_spec_bench_run_refuses_is_not_recomputed(tmp_path, monkeypatch, edit, why):
    """Issue 24: `--verify` recomputed whatever a submitted spec asked for (epochs: 1e9), and
    a spec of another format (its dataset config a text) raised AttributeError; now either is
    "not checked", with one line saying why."""
    import bench.run.worker
    from bench.grid import Cell, cell_hash
    from bench.leaderboard.merge import MergedCell
    from bench.leaderboard.recompute import Recomputer

    def run_cell(*args, **kwargs):
        raise AssertionError("recomputed a spec that bench run refuses")

    monkeypatch.setattr(bench.run.worker, "run_cell", run_cell)
    spec = json.loads(next(QUICKSTART.glob("cells/*/spec.json")).read_text())
    edit(spec)
    try:  # hashed to its name, as a careful submitter would
        h = cell_hash(Cell.from_spec(spec), spec.get("dataset_hash"))
    except AttributeError:
        h = "0123456789abcdef"
    rc = Recomputer({h: MergedCell(h, spec, {})}, tmp_path / "work")
    rc.platform = {"pinned": True, "id": "here"}  # the spec, not the platform, is the reason
    check = rc.check(h)
    assert check.status == "not checked" and why in check.reason and "\n" not in check.reason


def test_the_draw_is_fresh_per_run_recorded_and_repeatable(honest, monkeypatch):
    """Issue 48, trial 4: with the seed 0 by default a forger computed the draw offline and
    forged only the cells it left out. Now every run draws a fresh seed, records it, and the
    recorded seed repeats the draw (the recomputation itself is stubbed: only the draw is
    tested here)."""
    from bench.leaderboard.recompute import CellCheck, Recomputer

    monkeypatch.setattr(Recomputer, "check", lambda self, h: CellCheck(h, "bit-exact"))
    sources = read_sources([honest])

    def drawn(doc):
        return [[c["hash"] for c in e["verification"]["cells"]] for e in doc["entries"]]

    docs = [build(sources, verify=1) for _ in range(3)]
    seeds = [d["verify"]["seed"] for d in docs]
    assert len(set(seeds)) == 3 and all(isinstance(s, int) and s >= 0 for s in seeds)
    for d, s in zip(docs, seeds):
        assert drawn(build(sources, verify=1, verify_seed=s)) == drawn(d)
