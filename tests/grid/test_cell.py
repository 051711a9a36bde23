"""The Cell record: hashes (what changes them and what does not), immutability."""

from __future__ import annotations

import dataclasses
import json

import pytest

import bench
from bench import grid as G
from bench.datasets import content_digest
from bench.grid import (
    Cell,
    cell_hash,
    load_grid,
    privatization_hash,
)

from .helpers import (
    GOOD_AXES,
    grid_with,
    one_cell,
    write,
)

# ----------------------------------------------------------------------------------- hashes


def test_hash_stable_for_same_spec(tmp_path):
    a = one_cell(tmp_path, "a.yaml", mechanism="[tem]", mapping="[none]")
    b = one_cell(tmp_path, "b.yaml", mechanism="[{name: tem, beta: 0.001}]", mapping="[none]",
                 epsilon="[1.0]")
    assert a == b and a.hash == b.hash and a.privatization_key == b.privatization_key
    assert len(a.hash) == 16 and int(a.hash, 16) >= 0
    assert a.hash == cell_hash(a) == cell_hash(a, None)
    # the YAML key order does not matter
    text = "axes:\n" + "".join(f"  {k}: {v}\n" for k, v in reversed(list(GOOD_AXES.items())))
    c = next(x for x in load_grid(write(tmp_path, text, "c.yaml")).cells if not x.is_baseline)
    assert c.hash == one_cell(tmp_path, "d.yaml").hash
    # rebuilding from the stored spec gives the same identity
    spec = json.loads(json.dumps(a.spec()))
    assert Cell.from_spec(spec) == a and Cell.from_spec(spec).hash == a.hash


@pytest.mark.parametrize(
    "override",
    [
        {"epsilon": "[2]"},
        {"seed": "[1]"},
        {"mechanism": "[{name: mvl, calibrate: true}]"},
        {"mechanism": "[trlaplace]"},
        {"sensitivity": "[unit_norm]"},
        {"sensitivity": "[{name: unit_norm, fit_on: train}]"},
        {"mapping": "[vickrey]"},
        {"mapping": "[{name: vickrey, t: 0.5}]"},
        {"model": "[bow]"},
        {"dataset": "[conventions]"},
        {"dataset": "[{name: bbc, subsample: 0.5}]"},
    ],
)
def test_hash_changes_with_any_axis(tmp_path, override):
    ref = one_cell(tmp_path, "ref.yaml")
    if "mapping" in override and "vickrey" in override["mapping"]:
        ref = one_cell(tmp_path, "ref.yaml", mapping="[vickrey]")
        if override["mapping"] == "[vickrey]":
            override = {"mapping": "[nearest]"}
    other = one_cell(tmp_path, "other.yaml", **override)
    assert other.hash != ref.hash
    assert cell_hash(other, "d" * 64) != cell_hash(ref, "d" * 64)


def test_hash_changes_with_settings_dataset_hash_and_version(tmp_path, monkeypatch):
    ref = one_cell(tmp_path)
    g = load_grid(write(tmp_path, grid_with() + "settings: {mia: true}\n", "s.yaml"))
    mia = next(c for c in g.cells if not c.is_baseline)
    assert mia.hash != ref.hash
    assert mia.privatization_key == ref.privatization_key  # model/metric settings only
    assert cell_hash(ref, "a" * 64) != cell_hash(ref, "b" * 64) != ref.hash
    h = ref.hash
    # the suite version is not hashed: a release that changes nothing a cell computes keeps
    # every hash (issue 22); the pipeline version and every component's version are
    monkeypatch.setattr(bench, "__version__", "999.0")
    assert cell_hash(ref) == h
    monkeypatch.setattr(G.cell, "PIPELINE_VERSION", 999)
    assert cell_hash(ref) != h
    monkeypatch.undo()
    changed = dataclasses.replace(ref, versions=G.freeze({**ref.versions, "mechanism": "2"}))
    assert changed.hash != h and ref.hash == h


def test_rewrite_metric_versions_are_part_of_the_hash(tmp_path, monkeypatch):
    """Cells that compute the rewrite metrics carry their versions (and a bump re-keys them);
    cells that do not compute them keep their hash."""
    from bench.metrics import METRICS

    plain = one_cell(tmp_path)
    assert "metrics" not in plain.spec()
    g = load_grid(write(tmp_path, grid_with() + "settings: {rewrite_metrics: true}\n", "r.yaml"))
    rw = next(c for c in g.cells if not c.is_baseline)
    base = next(c for c in g.cells if c.is_baseline)
    assert rw.spec()["metrics"] == "bertscore=2,bleu=1,n_w=1,rouge1=1"
    assert G.Cell.from_spec(rw.spec()) == rw
    assert "metrics" not in base.spec()  # baselines compute no rewrite metrics
    info = METRICS.get("bertscore")
    monkeypatch.setitem(METRICS._entries, "bertscore", dataclasses.replace(info, version="3"))
    g2 = load_grid(write(tmp_path, grid_with() + "settings: {rewrite_metrics: true}\n", "r.yaml"))
    assert next(c for c in g2.cells if not c.is_baseline).hash != rw.hash
    assert one_cell(tmp_path).hash == plain.hash


def test_a_dataset_file_is_identified_by_its_content_not_its_path(tmp_path):
    f1, f2, f3 = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    for f in (f1, f2):
        f.write_text('"1","t","d"\n')
    f3.write_text('"2","t","d"\n')
    a, b, c = (one_cell(tmp_path, f"{f.stem}.yaml", dataset=f"[{{name: agnews, path: {f}}}]")
               for f in (f1, f2, f3))
    assert a.hash == b.hash  # the same content at two paths: one dataset
    assert a.hash != c.hash  # two contents: two datasets, before any run
    assert a.dataset_config["data"] == content_digest(f1) != c.dataset_config["data"]
    assert "data" not in a.dataset_kwargs() and a.dataset_kwargs()["path"] == str(f1)
    assert a.name.startswith("agnews(file=a.csv)") and str(tmp_path) not in a.name
    assert cell_hash(a, "x" * 64) != cell_hash(b, "y" * 64)


def test_two_csv_files_in_one_grid_are_two_datasets(tmp_path):
    f1, f2 = tmp_path / "one.csv", tmp_path / "two.csv"
    f1.write_text("body,topic\nthe bank,econ\nthe match,sport\n")
    f2.write_text("body,topic\nthe film,arts\nthe goal,sport\n")
    ds = ", ".join(f"{{name: csv, path: {f}, text: body, label: topic}}" for f in (f1, f2))
    g = load_grid(write(tmp_path, grid_with(dataset=f"[{ds}]", mechanism="[tem]",
                                            mapping="[none]")))
    assert len(g.cells) == 4 and len({c.hash for c in g.cells}) == 4
    assert {c.name.split(":")[0] for c in g.cells} == {
        "csv(file=one.csv,label=topic,text=body)", "csv(file=two.csv,label=topic,text=body)"}


def test_privatization_key_shared_between_models(tmp_path):
    g = load_grid(write(tmp_path, grid_with(model="[lstm, bow]", epsilon="[1, 2]")))
    priv = [c for c in g.cells if not c.is_baseline]
    keys = {(c.model, c.epsilon): c.privatization_key for c in priv}
    assert keys[("lstm", 1.0)] == keys[("bow", 1.0)]
    assert keys[("lstm", 1.0)] != keys[("lstm", 2.0)]
    assert priv[0].hash != priv[2].hash  # lstm vs bow at the same eps
    assert privatization_hash(priv[0], "x") != priv[0].privatization_key
    g2 = load_grid(write(tmp_path, grid_with() + "settings: {vocab_size: 1000}\n", "v.yaml"))
    assert next(c for c in g2.cells if not c.is_baseline).privatization_key != keys[("lstm", 1.0)]


def test_cell_is_frozen(tmp_path):
    c = one_cell(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.mechanism_params["calibrate"] = True
    assert hash(c) == hash(Cell.from_spec(c.spec()))
