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
    checked, baseline = entry["verification"]["cells"]  # the chosen cell and its baseline
    assert checked["status"] == baseline["status"] == "bit-exact"
    assert entry["rank_flag"] != "refuted"
    spec = json.loads((honest / "cells" / baseline["hash"] / "spec.json").read_text())
    assert spec["mechanism"]["name"] == "none"
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


def _reseal(d: Path, edit_metrics=None, edit_spec=None) -> Path:
    """Edit a cell folder's metrics or spec and reseal it with its provenance kept; a spec
    edit moves the folder to the new spec's hash (as a careful forger would)."""
    from bench.grid import Cell, cell_hash

    prov = json.loads((d / "manifest.json").read_text())["provenance"]
    if edit_metrics is not None:
        m = json.loads((d / "metrics.json").read_text())
        edit_metrics(m)
        (d / "metrics.json").write_text(json.dumps(m))
    if edit_spec is not None:
        spec = json.loads((d / "spec.json").read_text())
        edit_spec(spec)
        spec["hash"] = cell_hash(Cell.from_spec(spec), spec.get("dataset_hash"))
        (d / "spec.json").write_text(json.dumps(spec))
        d = d.rename(d.parent / spec["hash"])
    (d / "manifest.json").unlink()
    seal_cell(d)
    manifest = json.loads((d / "manifest.json").read_text())
    (d / "manifest.json").write_text(json.dumps(manifest | {"provenance": prov}))
    return d


def _baseline_dir(results: Path) -> Path:
    (d,) = [d for d in (results / "cells").iterdir()
            if json.loads((d / "spec.json").read_text())["mechanism"]["name"] == "none"]
    return d


def test_a_forged_baseline_is_recomputed_and_refuted(honest, tmp_path):
    """Issue 48, trial 3: a forged baseline (the entry's own cells honest) raised a score and
    the entry showed "verified": baselines were never recomputed. Now the chosen cell's
    baseline is recomputed and checked too; the privatized cell, recomputed against the
    suite's own baseline, is still confirmed."""
    forged = tmp_path / "forged"
    shutil.copytree(honest, forged)
    base = _reseal(_baseline_dir(forged),
                   edit_metrics=lambda m: m["utility"].update(macro_f1=0.3))
    doc = build(read_sources([forged]), verify=1, verify_seed=3)
    (entry,) = doc["entries"]
    assert entry["verification"]["status"] == "refuted" and entry["rank_flag"] == "refuted"
    checks = {c["hash"]: c for c in entry["verification"]["cells"]}
    assert checks[base.name]["status"] == "differs"
    assert any("/utility/macro_f1: committed 0.3" in d for d in checks[base.name]["differences"])
    (own,) = [c for h, c in checks.items() if h != base.name]
    assert own["status"] == "bit-exact"
    assert doc["verify"]["refuted_sources"] == ["s0"]


def _respelled_baselines(honest: Path, dst: Path, n: int) -> list[str]:
    """A source of ``n`` copies of the honest baseline, each with another adversary version
    string (so another hash, the same dataset, model, seed and settings) and a forged
    utility, resealed."""
    dst.mkdir()
    (dst / "cells").mkdir()
    out = []
    for i in range(n):
        d = dst / "cells" / f"tmp{i}"
        shutil.copytree(_baseline_dir(honest), d)
        d = _reseal(d, edit_metrics=lambda m: m["utility"].update(macro_f1=0.2),
                    edit_spec=lambda s, i=i: s.update(adversaries=s["adversaries"] + f",x{i}=1"))
        out.append(d.name)
    return out


def test_look_alike_baselines_never_replace_the_exact_one(honest, tmp_path):
    """Issue 48, trials 1 and 2: baselines that differ from the honest one only in their
    adversary versions (another hash, the same pairing key) were paired with the honest cells
    -- the recomputation refuted a --trusted source, and the board's honest scores fell to
    about 0.003. Now a cell's baseline is the one of its exact hash; the look-alikes are
    configurations of their own and the honest entry keeps its score and is verified."""
    from bench.analysis.baseline import expected_baseline_hash

    hostile = tmp_path / "hostile"
    fakes = _respelled_baselines(honest, hostile, 5)
    alone = build(read_sources([honest]), resamples=200, seed=1)
    both = build(read_sources([honest, hostile]), resamples=200, seed=1, trusted=["s0"],
                 verify=1, verify_seed=3)
    (before,) = alone["entries"]
    (after,) = [e for e in both["entries"] if e["mechanism"] == before["mechanism"]]
    assert after["score"] == before["score"] and after["score"] is not None
    assert after["verification"]["status"] == "verified" and after["rank_flag"] != "refuted"
    true_base = _baseline_dir(honest).name
    privatized = [d for d in (honest / "cells").iterdir() if d.name != true_base]
    for d in privatized:
        assert expected_baseline_hash(json.loads((d / "spec.json").read_text())) == true_base
    assert true_base not in fakes and not both["conflicts"]


def test_the_index_pairs_by_exact_hash_and_never_guesses_among_several():
    from bench.analysis.baseline import BaselineIndex, expected_baseline_hash

    spec = json.loads(next((QUICKSTART / "cells").glob("*/spec.json")).read_text())
    while spec["mechanism"]["name"] == "none":  # a privatized cell
        spec = json.loads(next(p for p in (QUICKSTART / "cells").glob("*/spec.json")
                               if json.loads(p.read_text())["mechanism"]["name"] != "none"
                               ).read_text())
    want = expected_baseline_hash(spec)
    base = json.loads((QUICKSTART / "cells" / want / "spec.json").read_text())
    look_alike = dict(base, adversaries=base["adversaries"] + ",x=1", hash="f" * 16)
    for order in ([look_alike, base], [base, look_alike]):
        index: BaselineIndex[str] = BaselineIndex()
        for b in order:
            index.add(b, None, b["hash"])
        assert index.find(spec) == want
    index = BaselineIndex()
    index.add(look_alike, None, "f" * 16)
    index.add(dict(look_alike, hash="e" * 16), None, "e" * 16)
    assert index.find(spec) is None  # two candidates, neither exact: no guess
    index = BaselineIndex()
    index.add(look_alike, None, "f" * 16)
    assert index.find(spec) == "f" * 16  # the one candidate (cells of old releases)


def test_cells_whose_data_differ_from_the_verifiers_are_not_checked(honest, monkeypatch):
    """Issue 48, trial 8: for a dataset a loader reads from the maintainer's own copy (an
    environment variable), `--verify` recomputed on that copy and refuted an honest source
    whose data differed. Now a cell whose dataset hash is not the one of this machine's copy
    (or whose data cannot be loaded here) is "not checked", never refuted."""
    import types

    import bench.run.inputs
    import bench.run.worker

    def run_cell(*args, **kwargs):
        raise AssertionError("recomputed on other data")

    monkeypatch.setattr(bench.run.worker, "run_cell", run_cell)
    monkeypatch.setattr(bench.run.inputs, "dataset",
                        lambda cell: types.SimpleNamespace(content_hash="0" * 64))
    doc = build(read_sources([honest]), verify=1, verify_seed=3)
    (entry,) = doc["entries"]
    assert entry["verification"]["status"] == "unverified" and entry["rank_flag"] != "refuted"
    checks = entry["verification"]["cells"]  # the chosen cell and its baseline
    assert len(checks) == 2 and all(c["status"] == "not checked" for c in checks)
    assert all("its data differ from this machine's copy of dataset bbc" in c["reason"]
               for c in checks)
    assert doc["verify"]["refuted_sources"] == []
