"""Adding a rewrite metric is one new file: the toy metric ``chars_kept``
(tests/fixtures/plugins/bench_chars_kept.py) -- its computation, label, decimals and direction
in one :class:`bench.metrics.Metric` -- once registered is computed by ``rewrite_scores``, is
part of the cell hash and shows up in the report's rewrite tables, with no other edit. First in
this process (``register_metric``), then end to end as an installed plugin (an entry point in
the ``bench.metrics`` group): ``bench run`` computes it and ``bench report`` shows it."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench.analysis.results import CellRecord, group_cells
from bench.metrics import METRICS, metric_versions, register_metric, rewrite_scores
from bench.report.rewrite import rewrite_tables

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "bench_chars_kept.py"
BUILTIN_KEYS = ["n_w", "rouge1", "rouge2", "rougeL", "bleu"]


@pytest.fixture
def chars_kept(monkeypatch):
    """The toy metric registered in this process, and unregistered afterwards (the registry
    has no public way to remove a name: a registered metric stays for the process)."""
    monkeypatch.syspath_prepend(str(FIXTURE.parent))
    module = importlib.import_module("bench_chars_kept")
    register_metric(module.CHARS_KEPT)
    yield module.CHARS_KEPT
    METRICS._entries.pop("chars_kept", None)
    sys.modules.pop("bench_chars_kept", None)


def test_rewrite_scores_computes_a_registered_rewrite_metric(chars_kept):
    orig, priv = [["the", "cat"], "a b"], [["the", "hat"], "a b"]
    s = rewrite_scores(orig, priv, with_bertscore=False)
    assert list(s) == BUILTIN_KEYS + ["chars_kept"]  # after the built-ins, in their order
    assert s["chars_kept"] == pytest.approx((6 + 3) / (7 + 3))
    from bench.metrics import REWRITE_METRICS

    assert REWRITE_METRICS == ("n_w", "rouge1", "bleu", "bertscore", "chars_kept")
    # its version joins the identity (hash) of every cell that computes rewrite metrics
    assert metric_versions(REWRITE_METRICS) == "bertscore=2,bleu=1,chars_kept=1,n_w=1,rouge1=1"
    assert rewrite_scores(orig, priv, with_bertscore=False, exclude={"chars_kept"}) == {
        k: v for k, v in s.items() if k != "chars_kept"}


def test_without_the_plugin_nothing_changes():
    from bench.metrics import REWRITE_METRICS

    assert "chars_kept" not in METRICS
    assert metric_versions(REWRITE_METRICS) == "bertscore=2,bleu=1,n_w=1,rouge1=1"
    assert list(rewrite_scores(["a b"], ["a c"], with_bertscore=False)) == BUILTIN_KEYS


def spec(mech, seed):
    return {"dataset": {"name": "rt", "config": {}, "version": "1"},
            "model": {"name": "bow", "params": {}, "version": "1"},
            "mechanism": {"name": mech, "params": {}, "version": "1"},
            "sensitivity": {"name": "none", "params": {}, "version": "1"},
            "mapping": {"name": "nearest", "params": {}, "version": "1"},
            "epsilon": 1.0, "seed": seed, "settings": {}, "suite_version": "0.3.0"}


def test_the_report_shows_it_with_its_label_digits_and_direction(chars_kept):
    recs = [CellRecord(f"{mech}{seed}", spec(mech, seed),
                       {"utility": {"macro_f1": 0.5},
                        "rewrite": {"n_w": 0.5, "rouge1": 0.5, "bleu": 10.0, "n_docs": 4,
                                    "chars_kept": value + 0.0001 * seed}}, Path("."))
            for mech, value in (("mvl", 0.61234), ("tem", 0.81234)) for seed in (0, 1)]
    groups, _ = group_cells(recs)
    (table,) = rewrite_tables(groups)
    md = table.markdown()
    # 4 decimals (the metric's), the identity value, the best (higher) value per ε in bold
    assert "| Chars kept ↑ | 1.0000 (identity) | 0.6124 ± 0.0006 | **0.8124 ± 0.0006** |" in md
    assert "Chars kept: toy: fraction of the original's characters unchanged" in md
    assert "| N\\_w ↑ |" in md  # the built-in rows are still there
    (row,) = [r for r in table.records if r["metric"] == "Chars kept" and r["mechanism"] == "tem"]
    assert row["higher_is_better"] == "true" and row["best"] == "true"
    assert row["original"] == "1.000000"


GRID = """
    name: charskept
    axes:
      dataset: [{name: bbc, subsample: 40, split: [0.6, 0.2, 0.2]}]
      model: [bow]
      mechanism: [mvl]
      mapping: [nearest]
      epsilon: [5]
      seed: [0]
    settings:
      vocab_size: 2000
      adversaries: [lexical]
      baseline: false
      rewrite_metrics: true
"""


def test_an_installed_plugin_metric_is_computed_and_reported(tmp_path):
    """The file as a plugin distribution: ``chars_kept = bench_chars_kept:CHARS_KEPT`` in the
    ``bench.metrics`` entry-point group, and nothing else."""
    site = tmp_path / "site"
    info = site / "bench_chars_kept-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bench-chars-kept\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[bench.metrics]\nchars_kept = bench_chars_kept:CHARS_KEPT\n")
    shutil.copy(FIXTURE, site / FIXTURE.name)
    grid = tmp_path / "g.yaml"
    grid.write_text(textwrap.dedent(GRID), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p))

    def bench(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "bench.cli", *args], capture_output=True,
                              text=True, timeout=300, env=env, cwd=tmp_path)

    r = bench("run", str(grid), "--results", "res", "--no-mlflow")
    assert r.returncode == 0, r.stderr
    (cell,) = (tmp_path / "res" / "cells").iterdir()
    metrics = json.loads((cell / "metrics.json").read_text())
    assert 0 < metrics["rewrite"]["chars_kept"] < 1
    assert json.loads((cell / "spec.json").read_text())["metrics"] == (
        "bertscore=2,bleu=1,chars_kept=1,n_w=1,rouge1=1")
    r = bench("report", "--results", "res", "--out", "rep")
    assert r.returncode == 0, r.stderr
    (md,) = (tmp_path / "rep" / "tables").glob("rewrite_*.md")
    row = next(line for line in md.read_text().splitlines() if line.startswith("| Chars kept"))
    assert row.startswith("| Chars kept ↑ | 1.0000 (identity) | ")
    assert len(row.split("|")[3].strip().split(".")[1]) == 4  # 4 decimals
