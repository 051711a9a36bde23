"""Shared fixtures of the report tests: the hand-made results folders and a built report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "basic"
ADV_FIXTURE = FIXTURE.parent / "adversaries"


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    """A writable copy of ``tests/fixtures/results/basic``."""
    dst = tmp_path / "results"
    shutil.copytree(FIXTURE, dst)
    return dst


@pytest.fixture()
def adv_results(tmp_path: Path) -> Path:
    """A writable copy of ``tests/fixtures/results/adversaries`` (several adversaries, validity)."""
    dst = tmp_path / "adv_results"
    shutil.copytree(ADV_FIXTURE, dst)
    return dst


@pytest.fixture()
def report(results: Path, tmp_path: Path):
    """The report built from the fixture results: (summary, out folder)."""
    from bench.report import build_report

    out = tmp_path / "report"
    return build_report(results, out), out


@pytest.fixture()
def audited_results(results: Path) -> Path:
    """The fixture results plus ``<results>/audit`` as ``bench audit`` writes it.

    * ``mvl`` ε=1, sensitivity none: a real (small, seeded) audit on a 50-word line embedding:
      PASS, key ``mvl__eps=1__sens=none__calibrate=False`` (the mechanism's parameter record,
      defaults filled in);
    * ``tem`` ε=10, β=0.001: a constructed report with one violating row;
    * ``laplace`` ε=5: matches no configuration of the fixture.
    """
    import numpy as np

    from bench.audit import AuditReport, AuditRow, run_audit, write_audit_status
    from bench.embeddings import Embedding

    audit = results / "audit"
    x = np.sort(np.random.default_rng(0).uniform(0, 10, size=(50, 1)), axis=0)
    line = Embedding("line", [f"w{i}" for i in range(50)], x)
    ok = run_audit("mvl", 1.0, embedding=line, pairs=1, draws=2000, joint_calls=200, seed=0)
    assert ok.passed
    write_audit_status(ok, audit)
    bad = AuditReport("tem", 10.0, {"beta": 0.001}, "none", "ε·d metric DP", 50, 4000, 0.95, 12,
                      rows=[AuditRow("words", "nearest", ("w1", "w2"), 0.5, 5.0, 5.481,
                                     "VIOLATION", "y=w1: P(w)/P(w') counts 900/2000 vs 1/2000",
                                     4)])
    write_audit_status(bad, audit)
    other = AuditReport("laplace", 5.0, {"C": 1.0}, "none", "ε-DP", 50, 4000, 0.95, 1,
                        rows=[AuditRow("words", "nearest", ("w1", "w2"), 0.5, 5.0, 1.0, "PASS",
                                       "", 1)])
    write_audit_status(other, audit)
    return results
