"""Integrity-checked cells (bench.results.store): a cell counts as done only when its manifest, checksums,
schema and hash check out; damage of each kind is detected; a failed write (a full disk)
leaves nothing half-written."""

import errno
import json

import pytest

from bench.results import store
from bench.grid import cell_hash, load_grid
from bench.results.store import (
    MANIFEST,
    cell_done,
    cell_state,
    check_cell,
    quarantine,
    seal_cell,
    write_cell,
)

GRID = """
name: tinystore
axes:
  dataset: [{name: bbc, subsample: 60}]
  model: [bow]
  mechanism: [mvl]
  epsilon: [10]
  seed: [0]
"""


@pytest.fixture()
def cell(tmp_path):
    """A sound cell folder (spec from a real grid cell, small metrics) and its results root."""
    path = tmp_path / "g.yaml"
    path.write_text(GRID)
    c = next(c for c in load_grid(path).cells if not c.is_baseline)
    h = cell_hash(c, "d" * 64)
    spec = c.spec() | {"hash": h, "name": c.name, "dataset_hash": "d" * 64}
    results = tmp_path / "results"
    folder = results / "cells" / h
    write_cell(folder, spec, {"runtime": {"total_seconds": 1.5}, "utility": {"macro_f1": 0.5}})
    return folder, results


def test_written_cell_is_sound_and_sealed(cell):
    folder, _ = cell
    assert check_cell(folder) is None and cell_state(folder) == "done" and cell_done(folder)
    m = json.loads((folder / MANIFEST).read_text())
    assert m["hash"] == folder.name and set(m["files"]) == {"spec.json", "metrics.json"}
    assert m["files"]["metrics.json"]["bytes"] == (folder / "metrics.json").stat().st_size
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # no temp folder


def _truncate(f):
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


def _flip_value(f):
    f.write_text(f.read_text().replace("0.5", "0.7"))


def _hash_in_spec(f):
    spec = json.loads(f.read_text())
    spec["hash"] = "0" * 16
    f.write_text(json.dumps(spec))


@pytest.mark.parametrize("damage, file, expect", [
    (_truncate, "metrics.json", "bytes"),
    (_flip_value, "metrics.json", "checksum"),
    (_hash_in_spec, "spec.json", "bytes"),
    (lambda f: f.unlink(), "metrics.json", "unreadable"),
    (lambda f: f.unlink(), MANIFEST, "no manifest.json"),
    (lambda f: f.write_text("{"), MANIFEST, "manifest.json does not parse"),
    (lambda f: f.write_bytes(b"\x00\xff"), "spec.json", "bytes"),
])
def test_each_kind_of_damage_is_detected(cell, damage, file, expect):
    folder, _ = cell
    damage(folder / file)
    assert expect in check_cell(folder)
    assert cell_state(folder) == "damaged" and not cell_done(folder)


def test_consistent_edits_are_caught_by_schema_and_hash(cell):
    """An edit that rewrites the manifest too (not by bench) still has to pass the schema and
    the hash recomputed from the spec."""
    folder, _ = cell
    spec = json.loads((folder / "spec.json").read_text())
    metrics = json.loads((folder / "metrics.json").read_text())
    write_cell(folder, spec | {"seed": 7}, metrics)  # spec no longer hashes to the folder
    assert "hashes to" in check_cell(folder)
    write_cell(folder, spec, {"utility": {}})
    assert check_cell(folder) == "metrics.json lacks runtime"
    write_cell(folder, spec, [1, 2])
    assert check_cell(folder) == "metrics.json is not a JSON object"


def test_seal_adopts_sound_cells_only(cell):
    folder, _ = cell
    (folder / MANIFEST).unlink()
    assert cell_state(folder) == "damaged"
    seal_cell(folder)
    assert cell_done(folder)
    (folder / MANIFEST).unlink()
    _truncate(folder / "metrics.json")
    with pytest.raises(ValueError, match="does not parse"):
        seal_cell(folder)
    assert not (folder / MANIFEST).exists()


def test_states_of_unfinished_folders(tmp_path):
    folder = tmp_path / "cells" / "abc"
    assert cell_state(folder) == "missing"
    folder.mkdir(parents=True)
    (folder / "error.json").write_text("{}")
    assert cell_state(folder) == "failed"


def test_quarantine_keeps_the_evidence(cell):
    folder, results = cell
    _truncate(folder / "metrics.json")
    dest = quarantine(folder, results, "metrics.json has 3 bytes")
    assert not folder.exists() and dest.parent == results / "damaged"
    assert dest.name.startswith(folder.name + ".")
    assert (dest / "reason.txt").read_text() == "metrics.json has 3 bytes\n"
    assert (dest / "spec.json").is_file()


def test_full_disk_leaves_nothing_half_written(cell, monkeypatch):
    """ENOSPC while writing (simulated at the manifest, the last file): the cell keeps its
    previous state and no temporary folder is left behind."""
    folder, _ = cell
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    real = store._write_bytes

    def full(path, data):
        if path.name == MANIFEST:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(store, "_write_bytes", full)
    spec = json.loads((folder / "spec.json").read_text())
    with pytest.raises(OSError, match="No space"):
        write_cell(folder, spec, {"runtime": {}, "utility": {"macro_f1": 0.9}})
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]
    new = folder.parent / ("f" * 16)
    with pytest.raises(OSError):
        write_cell(new, spec, {"runtime": {}})
    assert not new.exists() and cell_state(new) == "missing"
