"""A results folder from someone else is untrusted input (issue 24, items 3 and 5): cell files
are read only as regular, size-bounded, depth-safe files; nothing is followed out of the
folder; one bad cell never stops a report or a leaderboard; ``bench verify --repair`` reads
and writes only inside its folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from bench.cli import main
from bench.results.store import check_cell, parse_object, read_regular

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "results" / "reference" / "quickstart" / "cells"
LM_COMPARISON = ROOT / "results" / "reference" / "lm_comparison" / "cells"
"""Its baselines train a bag of words in about a second: what a test whose ``--verify`` reruns
a baseline, and proves nothing about the LSTM, copies (a quickstart baseline is ~45 s)."""


def _copy(dst: Path, n: int | None = None, source: Path = QUICKSTART) -> Path:
    cells = sorted(p for p in source.iterdir() if p.is_dir())
    for c in cells[:n]:
        shutil.copytree(c, dst / "cells" / c.name)
    return dst


def _one_cell(tmp_path: Path) -> Path:
    return next((_copy(tmp_path / "r", 1) / "cells").iterdir())


def test_a_symlink_to_dev_zero_is_not_followed(tmp_path):
    cell = _one_cell(tmp_path)
    (cell / "metrics.json").unlink()
    (cell / "metrics.json").symlink_to("/dev/zero")
    assert "symbolic link (not followed)" in check_cell(cell)


def test_a_fifo_is_not_opened(tmp_path):
    cell = _one_cell(tmp_path)
    (cell / "metrics.json").unlink()
    os.mkfifo(cell / "metrics.json")  # opening it to read would block forever
    assert "not a regular file" in check_cell(cell)


def test_size_bound_and_nesting(tmp_path):
    f = tmp_path / "big.json"
    f.write_bytes(b" " * 100)
    with pytest.raises(OSError, match="more than the 10"):
        read_regular(f, limit=10)
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_object(b"[" * 100_000 + b"]" * 100_000, "metrics.json")
    assert parse_object(b'{"a": [[1]]}', "x") == {"a": [[1]]}


def test_a_symlinked_cell_folder_is_not_followed(tmp_path):
    elsewhere = _one_cell(tmp_path)
    results = tmp_path / "other"
    (results / "cells").mkdir(parents=True)
    (results / "cells" / elsewhere.name).symlink_to(elsewhere)
    assert "symbolic link" in check_cell(results / "cells" / elsewhere.name)


def test_one_bad_cell_of_each_kind_leaves_every_honest_entry_on_the_board(tmp_path):
    from bench.leaderboard import build, read_sources

    honest = build(read_sources([_copy(tmp_path / "honest")]))
    results = _copy(tmp_path / "r")
    bad = results / "cells"
    for name, make in {
        "aaaaaaaaaaaaaaa1": lambda d: (d / "metrics.json").symlink_to("/dev/zero"),
        "aaaaaaaaaaaaaaa2": lambda d: os.mkfifo(d / "metrics.json"),
        "aaaaaaaaaaaaaaa3": lambda d: (d / "metrics.json").write_text("[" * 100_000),
        "aaaaaaaaaaaaaaa4": lambda d: (d / "metrics.json").write_text('{"x": 1e999}'),
    }.items():
        d = bad / name
        d.mkdir()
        (d / "spec.json").write_text(json.dumps({"hash": name}))
        make(d)
    (bad / "aaaaaaaaaaaaaaa5").symlink_to(QUICKSTART / sorted(os.listdir(QUICKSTART))[0])
    doc = build(read_sources([results]))
    assert [(e["config"], e["score"], e["rank"]) for e in doc["entries"]] == \
        [(e["config"], e["score"], e["rank"]) for e in honest["entries"]]
    named = " ".join(doc["problems"])
    for i in range(1, 6):
        assert f"aaaaaaaaaaaaaaa{i}" in named, (i, doc["problems"])


def test_verify_repair_does_not_write_through_a_symlinked_damaged_folder(tmp_path, capsys):
    results = _copy(tmp_path / "r", 2)
    outside = tmp_path / "outside"
    outside.mkdir()
    (results / "damaged").symlink_to(outside)
    cell = next((results / "cells").iterdir())
    (cell / "metrics.json").write_text("{}")  # damaged: --repair would move it
    assert main(["verify", "--results", str(results), "--repair"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert list(outside.iterdir()) == [] and (cell / "metrics.json").read_text() == "{}"


def test_verify_repair_moves_a_symlinked_cell_not_its_target(tmp_path):
    from bench.verify import verify_results

    target = _one_cell(tmp_path)
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    results = tmp_path / "other"
    (results / "cells").mkdir(parents=True)
    (results / "cells" / target.name).symlink_to(target)
    report = verify_results(results, repair=True)
    assert any("not recomputing" in a and "symbolic link" in a for a in report.actions), \
        report.actions
    moved = next((results / "damaged").iterdir())
    assert (moved / target.name).is_symlink()  # the link was moved; its target is untouched
    assert "symbolic link" in (moved / "reason.txt").read_text()
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert not (target / "error.json").exists()


def test_verify_repair_does_not_recompute_a_spec_naming_a_file(tmp_path):
    from bench.verify import verify_results

    cell = _one_cell(tmp_path)
    spec = json.loads((cell / "spec.json").read_text())
    spec["dataset"]["config"]["path"] = "/etc/passwd"
    (cell / "spec.json").write_text(json.dumps(spec))  # damaged (checksum): to be repaired
    report = verify_results(cell.parent.parent, repair=True)
    assert any("its dataset is a file named in the spec" in a for a in report.actions), \
        report.actions
    assert not any(a.startswith("recomputed") for a in report.actions)


@pytest.mark.parametrize("edit, why", [
    (lambda s, m: m["utility"].update(macro_f1="0.99"), "is the text '0.99', not a number"),
    (lambda s, m: m["utility"].update(macro_f1=float("nan")), "not a finite number"),
    (lambda s, m: m["utility"].update(macro_f1=float("inf")), "not a finite number"),
    (lambda s, m: m["utility"].update(macro_f1=-5), "outside [0, 1]"),
    (lambda s, m: m["runtime"].update(total_seconds=1e308), "not a finite number of sensible"),
    (lambda s, m: s.update(seed="0"), "seed '0' is not an integer"),
    (lambda s, m: s.update(epsilon=-1), "epsilon -1 is not a positive number"),
    # issue 48, trial 9: look-alike names ranked beside the real one, looking identical
    (lambda s, m: s["mechanism"].update(name="m\u200bvl"), "U+200B at position 2"),
    (lambda s, m: s["mechanism"].update(name="mv\u04cf"), "U+04CF at position 3"),
    (lambda s, m: s["model"].update(name="lstm "), "U+0020 at position 5"),
    # issue 48, trial 6: a privatized cell claiming epsilon = inf stopped every board
    (lambda s, m: s.update(epsilon="inf"), "only the unprivatized baseline has epsilon = inf"),
    # issue 48, trial 10: each private attribute is a board the cell is copied onto
    (lambda s, m: m.setdefault("privacy", {}).update({f"a{i}": {} for i in range(17)}),
     "more than the 16 a cell may"),
    (lambda s, m: m.setdefault("privacy", {}).update({"k" * 129: {}}),
     "a private attribute's name is not printable text of 1 to 128 characters"),
])
def test_values_out_of_their_domain_are_left_out_by_name(tmp_path, edit, why):
    """Issue 24: NaN, ∞, −5 and "0.99" were accepted as utilities, 1e308 overflowed the
    statistics, a string seed stopped the board for everyone. Now the cell is left out with
    one line naming it, and every honest entry stays as it was."""
    from bench.leaderboard import build, read_sources

    honest = build(read_sources([_copy(tmp_path / "honest")]))
    results = _copy(tmp_path / "r")
    victim = sorted((results / "cells").iterdir())[3]
    spec = json.loads((victim / "spec.json").read_text())
    metrics = json.loads((victim / "metrics.json").read_text())
    edit(spec, metrics)
    (victim / "spec.json").write_text(json.dumps(spec))
    (victim / "metrics.json").write_text(json.dumps(metrics))
    (victim / "manifest.json").unlink()  # unsealed: read as it is
    doc = build(read_sources([results]))
    line = next(p for p in doc["problems"] if victim.name in p)
    assert why in line and "left out" in line
    keep = {(e["config"], e["rank"]) for e in honest["entries"]}
    assert {(e["config"], e["rank"]) for e in doc["entries"]} <= keep | {
        (e["config"], None) for e in honest["entries"]}


def _hostile(cell: Path, edit) -> Path:
    """Damage ``cell`` as a careful submitter would: its spec edited and hashed to the folder's
    new name (so only the manifest tells), for `--repair` to recompute."""
    from bench.grid import Cell, cell_hash

    spec = json.loads((cell / "spec.json").read_text())
    edit(spec)
    spec["hash"] = cell_hash(Cell.from_spec(spec), spec.get("dataset_hash"))
    target = cell.rename(cell.parent / spec["hash"])
    (target / "spec.json").write_text(json.dumps(spec))  # the manifest no longer matches
    return target


def _files(root: Path, leave_out: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and leave_out not in p.parents}


def test_verify_repair_does_not_recompute_epochs_1e9(tmp_path, capsys, monkeypatch):
    """Issue 24: a damaged cell whose spec trains the LSTM for 1e9 epochs was recomputed
    (without bound); now it is refused with the limit `bench run` applies to a grid."""
    import bench.run.worker
    from bench.verify import verify_results

    def run_cell(*args, **kwargs):
        raise AssertionError("recomputed a spec that bench run refuses")

    monkeypatch.setattr(bench.run.worker, "run_cell", run_cell)
    results = _copy(tmp_path / "r", 2)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "f").write_text("x")
    cell = _hostile(sorted((results / "cells").iterdir())[0],
                    lambda s: s["model"]["params"].update(epochs=1e9))
    assert verify_results(results).damaged.keys() == {cell.name}
    outside = _files(tmp_path, results)
    assert main(["verify", "--results", str(results), "--repair"]) == 1  # as for any refusal
    lines = [x for x in capsys.readouterr().out.splitlines() if "not recomputing" in x]
    assert lines == [
        f"  not recomputing {cell.name}: `bench run` would refuse it: model: model 'lstm' "
        "parameter epochs = 1000000000.0 is above its limit 1,000 (passes over the training "
        "data; the shipped grids use at most 20); run its grid again (`bench run GRID "
        f"--results {results}`)"]
    assert _files(tmp_path, results) == outside  # nothing written outside the folder
    assert not (results / "cells" / cell.name).exists()
    assert [p.name for p in (results / "damaged").iterdir()][0].startswith(cell.name)


@pytest.mark.parametrize("edit", [
    lambda s: s.update(dataset="bbc"),  # a name where {name, config} is now
    lambda s: s.pop("settings"),
    lambda s: s["model"].update(params=None),
    lambda s: s.update(seed="0"),
    lambda s: s.update(mechanism=["mvl", {}]),
], ids=["dataset-a-name", "no-settings", "params-null", "seed-a-string", "mechanism-a-list"])
def test_a_spec_of_an_old_format_is_one_line_never_a_crash(tmp_path, edit):
    """`bench verify --repair` and `bench leaderboard --verify` (both through
    recompute_refusal) name such a spec in one line; neither raises."""
    from bench.verify import recompute_refusal, verify_results

    cell = _one_cell(tmp_path)
    spec = json.loads((cell / "spec.json").read_text())
    edit(spec)
    why = recompute_refusal(spec)
    assert why and "\n" not in why and "`bench run` would refuse it" in why, why
    (cell / "spec.json").write_text(json.dumps(spec))
    report = verify_results(cell.parent.parent, repair=True)
    (line,) = [a for a in report.actions if a.startswith(f"not recomputing {cell.name}")]
    assert "\n" not in line


@pytest.mark.parametrize("edit, why", [
    (lambda s: s["settings"].update(embedding_path="/dev/zero"),
     "its embedding is a file named in the spec (settings.embedding_path)"),
    (lambda s: (s["model"].update(name="transformer", params={"model_path": "/etc"}),
                s["settings"].update(model_defaults={})),
     "its model is a folder named in the spec (model_path)"),
], ids=["embedding_path", "model_path"])
def test_verify_repair_does_not_recompute_a_spec_naming_another_file(tmp_path, monkeypatch,
                                                                     edit, why):
    """Like a dataset `path`: the embedding file (`/dev/zero` would be read forever) and a
    model folder are named by the grid, never by a stored spec (`bench run` accepts both)."""
    import bench.run.worker
    from bench.grid.stored import spec_refusal
    from bench.verify import verify_results

    def run_cell(*args, **kwargs):
        raise AssertionError("recomputed a spec naming a file")

    monkeypatch.setattr(bench.run.worker, "run_cell", run_cell)

    cell = _hostile(_one_cell(tmp_path), edit)
    assert spec_refusal(json.loads((cell / "spec.json").read_text())) is None
    report = verify_results(cell.parent.parent, repair=True)
    assert any(a.startswith(f"not recomputing {cell.name}: {why}") for a in report.actions), \
        report.actions
    assert not any(a.startswith("recomputed") for a in report.actions)


def test_a_made_up_dataset_hash_is_left_out_and_splits_no_board(tmp_path):
    """Issue 48, trial 6: one cell claiming a made-up `dataset_hash` for a shipped dataset
    re-labelled every cell of that dataset `data=<hash>` and split the board (6 boards of 21
    one-seed entries). A shipped dataset has one content per configuration and seed, which the
    leaderboard computes: the claim is refused with one line, the honest board stands."""
    from bench.leaderboard import build, read_sources
    from bench.results.store import seal_cell

    honest = _copy(tmp_path / "honest")
    hostile = _copy(tmp_path / "hostile", 1)
    cell = next((hostile / "cells").iterdir())
    made_up = "ab" * 32
    cell = _hostile(cell, lambda s: s.update(dataset_hash=made_up))
    (cell / "manifest.json").unlink()
    seal_cell(cell)  # a careful forger reseals
    alone = build(read_sources([honest]), resamples=100)
    both = build(read_sources([honest, hostile]), resamples=100)
    assert len(both["boards"]) == len(alone["boards"]) == 1
    assert [(e["config"], e["score"], e["rank"]) for e in both["entries"]] == [
        (e["config"], e["score"], e["rank"]) for e in alone["entries"]]
    (line,) = [p for p in both["problems"] if cell.name in p]
    assert f"its dataset_hash '{made_up[:16]}' is not the content of the shipped dataset bbc" \
        in line and line.endswith("left out")
    assert not any("data=" in b["dataset"] for b in both["boards"])


def test_claiming_an_old_suite_version_skips_neither_the_hash_nor_the_ranking(tmp_path):
    """Issue 48, trial 5: adding `suite_version` to a spec skipped both the hash check and the
    recomputation (a forged tem ranked first with --allow-mixed-versions). Now the claim is
    checked against the hash cells had before 0.4.0 (which covered the suite version), and a
    cell that cannot be recomputed leaves its entry unranked under --verify, with the reason."""
    from bench.grid import Cell
    from bench.grid.cell import legacy_cell_hash
    from bench.leaderboard import build, read_sources
    from bench.results.store import check_cell, seal_cell

    results = _copy(tmp_path / "r", source=LM_COMPARISON)
    victim = next(d for d in sorted((results / "cells").iterdir())
                  if json.loads((d / "spec.json").read_text())["mechanism"]["name"] == "tem")
    seed = json.loads((victim / "spec.json").read_text())["seed"]
    for d in (results / "cells").iterdir():  # the victim and its baseline, which --verify reruns
        other = json.loads((d / "spec.json").read_text())
        if d != victim and (other["mechanism"]["name"] != "none" or other["seed"] != seed):
            shutil.rmtree(d)
    spec = json.loads((victim / "spec.json").read_text())
    spec["suite_version"] = "0.3.0"
    (victim / "spec.json").write_text(json.dumps(spec))
    (victim / "manifest.json").unlink()
    assert "with its suite_version '0.3.0', not to its folder's name" in check_cell(
        victim, require_manifest=False)
    with pytest.raises(ValueError, match="with its suite_version '0.3.0'"):
        seal_cell(victim)  # not even resealed
    # a careful forger also renames the folder to the old-style hash: self-consistent now
    h = legacy_cell_hash(Cell.from_spec(spec), spec["dataset_hash"], "0.3.0")
    spec["hash"] = h
    (victim / "spec.json").write_text(json.dumps(spec))
    victim = victim.rename(victim.parent / h)
    seal_cell(victim)
    assert check_cell(victim) is None
    doc = build(read_sources([results]), allow_mixed_versions=True, verify=1, verify_seed=1,
                resamples=100)
    tem = [e for e in doc["entries"] if any(c["hash"] == h for p in e["points"]
                                            for c in p["cells"])]
    assert tem and all(e["rank"] is None for e in tem)
    assert all("written before 0.4.0" in e["rank_flag"] for e in tem), tem  # for the claim
    assert all(e["rank_flag"].startswith("unverified: ") for e in tem
               if e["verification"]["status"] == "unverified")


def test_an_unknown_component_name_is_listed_and_never_ranked(tmp_path):
    """Issue 48, trial 9: unknown component names were ranked (a made-up mechanism ranks as
    well as a real one). Now an entry whose cells name a component this installation does not
    register is listed with why and never ranked."""
    from bench.leaderboard import build, read_sources
    from bench.results.store import seal_cell

    honest = build(read_sources([_copy(tmp_path / "honest")]), resamples=100)
    results = _copy(tmp_path / "r")
    for d in sorted((results / "cells").iterdir()):
        if json.loads((d / "spec.json").read_text())["mechanism"]["name"] == "tem":
            (d / "manifest.json").unlink()
            seal_cell(_hostile(d, lambda s: s["mechanism"].update(name="tem2")))
    doc = build(read_sources([results]), resamples=100)
    (made_up,) = [e for e in doc["entries"] if e["mechanism"].startswith("tem2")]
    assert made_up["rank"] is None and made_up["score"] is None
    assert made_up["rank_flag"] == "unknown mechanism 'tem2' (not registered here)"
    ranked = {e["config"]: e["score"] for e in honest["entries"] if e["mechanism"] != "tem"}
    assert {e["config"]: e["score"] for e in doc["entries"]
            if not e["mechanism"].startswith("tem2")} == ranked


def _bloat(results: Path, n_attributes: int = 0, claim: int = 0) -> Path:
    """Make every cell of ``results`` an amplifier and reseal it, as a careful forger would:
    ``n_attributes`` tiny private attributes (each a board the cell is copied onto) and
    provenance claims of ``claim`` characters (copied with every copy of the cell)."""
    from bench.results.store import seal_cell

    for d in sorted((results / "cells").iterdir()):
        manifest = json.loads((d / "manifest.json").read_text())
        if n_attributes:
            m = json.loads((d / "metrics.json").read_text())
            small = {"runtime": {}, "utility": {"macro_f1": m["utility"]["macro_f1"]}}
            small["privacy"] = {f"a{i}": {"privacy": 0.5, "privacy_valid": True}
                                for i in range(n_attributes)}
            (d / "metrics.json").write_text(json.dumps(small))
        prov = manifest["provenance"]
        if claim:
            prov |= {"run_by": "x" * claim, "machine": "y" * claim,
                     "numeric": prov["numeric"] | {"id": "z" * claim, "extra": ["w" * claim]}}
        (d / "manifest.json").unlink()
        seal_cell(d)
        sealed = json.loads((d / "manifest.json").read_text())
        (d / "manifest.json").write_text(json.dumps(sealed | {"provenance": prov}))
    return results


def test_a_source_cannot_bloat_the_board_with_its_claims(tmp_path):
    """Issue 48, trial 10: a 16 MB source made 420 MB of board, its provenance claims copied
    with every cell on every board. A claim is now bounded text (200 characters, said cut;
    the numeric record its id only): copies of the honest cells claiming 100,000-character
    provenance add kilobytes, never their size, and the honest scores stand."""
    from bench.leaderboard import build, read_sources

    honest = _copy(tmp_path / "honest")
    alone = build(read_sources([honest]), resamples=100)
    hostile = _bloat(_copy(tmp_path / "hostile"), claim=100_000)
    size = sum(f.stat().st_size for f in hostile.rglob("*") if f.is_file())
    both = build(read_sources([honest, hostile]), resamples=100)
    assert [(e["config"], e["score"], e["rank"]) for e in both["entries"]] == [
        (e["config"], e["score"], e["rank"]) for e in alone["entries"]]
    grown = len(json.dumps(both)) - len(json.dumps(alone))
    assert 0 < grown < size / 50, (grown, size)
    claims = [p for e in both["entries"] for pt in e["points"] for c in pt["cells"]
              for p in c["provenance"] if p["source"] == "s1"]
    assert claims and all(p["run_by"].endswith("(100000 characters, cut)")
                          and len(p["run_by"]) < 240 for p in claims)
    assert all(p["numeric"] == "unrecorded" or len(p["numeric"]) < 120 for p in claims)


def test_a_source_whose_entries_outgrow_its_cells_is_left_out_whole(tmp_path, monkeypatch):
    """Issue 48, trial 10: output size bounded per source. A source whose entries would take
    more of leaderboard.json than its own cells hold (here: cells cut to a few hundred bytes,
    each measuring 16 private attributes, so copied onto 16 boards) is left out whole, with
    one line, and the board built without it; honest sources take a few percent of theirs.
    The floor every source may take (4 MiB) is lowered here so 45 cells can show it."""
    import bench.leaderboard.bounds as lb
    from bench.leaderboard import build, read_sources

    monkeypatch.setattr(lb, "OUTPUT_FLOOR", 0)
    alone = build(read_sources([_copy(tmp_path / "honest")]), resamples=100)
    assert not any("bytes of the board" in p for p in alone["problems"]) and alone["entries"]
    amplifier = _bloat(_copy(tmp_path / "amp"), n_attributes=16)
    doc = build(read_sources([amplifier]), resamples=100)
    (line,) = [p for p in doc["problems"] if "bytes of the board" in p]
    assert line.startswith("s0: its entries would take ") and "all its cells left out" in line
    assert doc["sources"][0]["cells"] == 0 and not doc["entries"] and not doc["boards"]
    monkeypatch.setattr(lb, "OUTPUT_FLOOR", 4 * 2**20)  # the default: small sources stand
    assert len(build(read_sources([amplifier]), resamples=100)["boards"]) == 16
