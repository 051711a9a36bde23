"""bench.tools.costs: the committed references' recorded run times, summed per reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.reference import committed_references
from bench.tools.costs import main, reference_costs, table

ROOT = Path(__file__).resolve().parents[2]


def test_the_sum_is_the_cells_recorded_times(monkeypatch):
    monkeypatch.chdir(ROOT)
    folder = ROOT / "results" / "reference" / "debates2016" / "cells"
    secs = [json.loads((d / "metrics.json").read_text())["runtime"]["total_seconds"]
            for d in folder.iterdir() if d.is_dir()]
    got = reference_costs("debates2016")
    assert got["cells"] == len(secs) == 27
    assert got["cpu_seconds"] == pytest.approx(sum(secs), rel=1e-12)
    assert got["largest"] == max(secs) and min(secs) <= got["median"] <= max(secs)
    text = table(["debates2016", "news_outlets"], cores=4)
    assert "hours on 4 cores" in text and "| all 2 | 54 |" in text
    assert f"| {sum(secs) / 3600:.2f} |" in text


def test_every_committed_reference_and_a_clear_error(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert "quickstart" in committed_references() and "thesis_reference" in committed_references()
    with pytest.raises(SystemExit) as e:
        main(["no_such_grid"])
    assert e.value.code == 2
    assert "not a committed reference: no_such_grid (expected one of" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--cores", "0"])
