"""Rewriter cells: where the rewriter may be trained (the public-corpus rule), what the grid
refuses, what the cell hash covers, and the rewrite's metrics flowing through a real cell."""

import json
from pathlib import Path

import pytest

from bench.cli import main
from bench.grid import GridError, load_grid
from bench.run.runner import run_grid

BASE = """
name: rw
axes:
  dataset: [{dataset}]
  model: [bow]
  mechanism: [{mechanism}]
  mapping: [{mapping}]
  rewriter: [{rewriter}]
  epsilon: [1]
  seed: [0]
settings:
  vocab_size: 3000
  rewrite_metrics: true
  metrics: [utility, privacy, runtime, guarantee]
{extra}
"""

RT_PUBLIC = "{name: rt, subsample: 300, public: 150}"
AE = "{name: autoencoder, epochs: 1, hidden_size: 16}"


def grid(tmp_path: Path, *, dataset=RT_PUBLIC, mechanism="{name: laplace, C: 1.0}",
         mapping="none", rewriter=AE, extra="") -> Path:
    p = tmp_path / "g.yaml"
    p.write_text(BASE.format(dataset=dataset, mechanism=mechanism, mapping=mapping,
                             rewriter=rewriter, extra=extra))
    return p


def rewriter_cells(g):
    return [c for c in g.cells if c.has_rewriter]


def test_rewriter_cell_reads_vectors_and_outputs_text(tmp_path):
    g = load_grid(grid(tmp_path))
    (cell,) = rewriter_cells(g)
    assert cell.mapping == "none" and cell.output == "text"
    assert "rw=autoencoder(" in cell.name
    assert cell.spec()["rewriter"]["params"]["corpus"] == "public"
    assert "informed" not in cell.spec()["adversaries"]
    base = [c for c in g.cells if c.is_baseline]
    assert base and "rewriter" not in base[0].spec()


@pytest.mark.parametrize("kw, match", [
    ({"mapping": "nearest"}, "reads privatized vectors, but this cell's privatization outputs "
                             "text"),
    ({"mechanism": "tem", "mapping": "none"}, "reads privatized vectors"),
    ({"rewriter": "{name: autoencoder, corpus: rt}"}, "is the evaluated data"),
    ({"rewriter": "{name: autoencoder, corpus: conventionz}"}, "did you mean 'conventions'"),
    ({"dataset": "{name: rt, subsample: 300}"}, "holds none apart: set public: N"),
    ({"rewriter": "autoencoderr"}, "did you mean 'autoencoder'"),
    ({"rewriter": "{name: autoencoder, seed: 3}"}, "unknown rewriter 'autoencoder' parameter"),
    ({"rewriter": "{name: autoencoder, epochs: 0}"}, "epochs must be an integer >= 1"),
    ({"extra": "  rewriter_fit_on: sometimes"}, "rewriter_fit_on: must be 'public'"),
    ({"extra": "  rewriter_fit_on: private",
      "rewriter": "{name: autoencoder, corpus: conventions}"}, "remove corpus"),
    ({"rewriter": "{name: autoencoder, train_embeddings: true}"},
     "train_embeddings: true .* add allow_no_guarantee: true"),
    ({"mechanism": "{name: laplace, C: 0.005, clip: false}"},
     "clip: false .* add allow_no_guarantee: true"),
    ({"mechanism": "{name: trlaplace, noise_shared: batch}"},
     "noise_shared: batch .* add allow_no_guarantee: true"),
])
def test_bad_configuration_is_one_clear_line_and_exit_2(tmp_path, capsys, kw, match):
    path = grid(tmp_path, **kw)
    with pytest.raises(GridError, match=match):
        load_grid(path)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_cell_hash_covers_the_training_corpus_and_fit_on(tmp_path):
    public = rewriter_cells(load_grid(grid(tmp_path)))[0]
    other = rewriter_cells(load_grid(grid(
        tmp_path, rewriter="{name: autoencoder, epochs: 1, hidden_size: 16, "
                           "corpus: conventions}")))[0]
    private = rewriter_cells(load_grid(grid(tmp_path, extra="  rewriter_fit_on: private")))[0]
    assert len({public.hash, other.hash, private.hash}) == 3
    assert private.rewriter_params["corpus"] == "train"
    assert private.settings["rewriter_fit_on"] == "private"
    # the vector corpus itself is shared: only the rewriter differs
    assert public.privatization_key == other.privatization_key == private.privatization_key


def test_cells_without_a_rewriter_keep_their_spec(tmp_path):
    """No rewriter: no `rewriter` key in the spec and no `rewriter_fit_on` setting, so every
    cell computed before rewriters existed keeps its hash."""
    g = load_grid(grid(tmp_path, mapping="nearest", rewriter="none"))
    for c in g.cells:
        spec = c.spec()
        assert "rewriter" not in spec and "rewriter_fit_on" not in spec["settings"]
        assert "rw=" not in c.name


CODE_MECHANISM = ("{name: laplace, C: 0.005, clip: false, noise_shared: batch, "
                  "allow_no_guarantee: true}")
CODE_REWRITER = ("{name: autoencoder, epochs: 1, hidden_size: 16, train_embeddings: true, "
                 "allow_no_guarantee: true}")


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """One public-corpus rewriter cell, one trained on the evaluated train split, and one with
    every departure of the public code of Huang et al. (2024)."""
    out = {}
    for fit_on in ("public", "private", "code"):
        tmp = tmp_path_factory.mktemp(fit_on)
        extra = "  rewriter_fit_on: private" if fit_on != "public" else ""
        kw = {"mechanism": CODE_MECHANISM, "rewriter": CODE_REWRITER} if fit_on == "code" else {}
        summary = run_grid(grid(tmp, extra=extra, **kw), results=tmp / "results", mlflow=False)
        assert summary.count("failed") == 0, summary.text()
        cells = {}
        for f in (tmp / "results" / "cells").glob("*/metrics.json"):
            spec = json.loads((f.parent / "spec.json").read_text())
            cells["rewriter" if "rewriter" in spec else "baseline"] = json.loads(f.read_text())
        out[fit_on] = (tmp, cells)
    return out


def test_rewrite_metrics_flow_through_the_cell(ran):
    _, cells = ran["public"]
    m = cells["rewriter"]
    rw = m["rewriter"]
    assert rw["corpus"] == "public" and rw["fit_on"] == "public" and rw["docs"] == 150
    assert rw["guarantee_void"] is False and "void" not in m["guarantee"]
    assert m["rewrite"]["loss"] == rw["test_loss"] > 0
    for key in ("n_w", "rouge1", "bleu", "bertscore", "loss", "n_docs"):
        assert key in m["rewrite"] and key in m["rewrite_reference"]
    # the eps = inf reference (clean embeddings) reconstructs better than eps = 1 with C = 1
    assert m["rewrite_reference"]["loss"] < m["rewrite"]["loss"]
    # the utility model trained on the rewritten text, and deltas against the plain baseline
    assert 0 <= m["utility"]["macro_f1"] <= 1
    assert m["vs_baseline"]["delta_utility"] == pytest.approx(
        m["utility"]["macro_f1"] - cells["baseline"]["utility"]["macro_f1"])
    assert m["runtime"]["rewriter_seconds"] > 0


def test_private_fit_voids_the_guarantee(ran):
    _, cells = ran["private"]
    m = cells["rewriter"]
    assert m["rewriter"]["corpus"] == "train" and m["rewriter"]["fit_on"] == "private"
    assert m["rewriter"]["guarantee_void"] is True
    assert m["guarantee"]["void"] is True and "own train split" in m["guarantee"]["void_reason"]
    assert m["rewriter"]["docs"] == 240  # the train split: 0.8 of the 300 evaluated snippets


def test_the_public_codes_departures_void_the_guarantee_with_every_reason(ran):
    _, cells = ran["code"]
    m = cells["rewriter"]
    why = m["guarantee"]["void_reason"]
    assert m["guarantee"]["void"] is True and m["rewriter"]["guarantee_void"] is True
    for reason in ("clip: false", "noise_shared: batch", "own train split", "train_embeddings"):
        assert reason in why
    assert m["privatization"]["privatizer"]["mechanism"]["noise_shared"] == "batch"
    assert m["privatization"]["guarantee_text"].startswith("no DP guarantee")
    assert m["rewriter"]["params"]["train_embeddings"] is True


def test_rerun_reuses_the_cached_rewrite_and_gives_the_same_metrics(ran):
    tmp, cells = ran["public"]
    summary = run_grid(grid(tmp), results=tmp / "results", mlflow=False, overwrite="always")
    assert summary.count("done") == 2
    again = {}
    for f in (tmp / "results" / "cells").glob("*/metrics.json"):
        spec = json.loads((f.parent / "spec.json").read_text())
        again["rewriter" if "rewriter" in spec else "baseline"] = json.loads(f.read_text())
    assert again["rewriter"]["rewriter"]["cache_hit"] is True
    assert again["rewriter"]["rewrite"] == cells["rewriter"]["rewrite"]
    assert again["rewriter"]["utility"]["macro_f1"] == cells["rewriter"]["utility"]["macro_f1"]


def test_bench_ls_rewriters(capsys):
    assert main(["ls", "rewriters"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["name", "version", "reads", "writes", "description"]
    assert out.splitlines()[1].startswith("autoencoder  1        vectors  words")


def test_the_reference_cache_keeps_scores_not_the_near_private_text(ran):
    import pyarrow.parquet as pq

    tmp, _ = ran["public"]
    kinds = []
    for stats in (tmp / "results" / "cache" / "rewritten").glob("*/stats.json"):
        tokens = pq.read_table(stats.parent / "tokens.parquet").column("tokens").to_pylist()
        is_ref = "reference" in json.loads(stats.read_text())
        kinds.append(is_ref)
        assert (tokens == []) == is_ref
    assert sorted(kinds) == [False, True]


def test_a_stored_reference_is_read_where_the_cell_computes_it(ran, tmp_path):
    """`bench reference check` may take a rewriter cell's ε = ∞ reference from the committed
    cell (store_reference): it lands in the cache entry the cell's own run wrote, and the cell
    then reads it instead of training the reference rewriter."""
    from bench.rewriters.pipeline import reference_folder, reference_scores, store_reference
    from bench.run import inputs

    tmp, _ = ran["public"]
    cell = rewriter_cells(load_grid(tmp / "g.yaml"))[0]
    ds = inputs.dataset(cell)
    assert (reference_folder(cell, ds, tmp / "results" / "cache") / "stats.json").is_file()
    planted = {"rouge1": 0.123, "n_docs": 7, "loss": 9.0}
    store_reference(cell, ds, tmp_path, planted)
    assert reference_scores(cell, ds, [], tmp_path, embedding=None) == planted
