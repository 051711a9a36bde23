"""Merging results folders into one leaderboard: duplicates, conflicts, versions, audits, bad
input, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.leaderboard import LeaderboardError, build, build_leaderboard, read_sources

from .helpers import (
    QUICKSTART,
    all_hashes,
    copy_results,
    rewrite_metrics,
    set_platform,
    set_provenance,
    spec_of,
)


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> dict:
    """The leaderboard of the quickstart reference alone."""
    return build(read_sources([copy_results(tmp_path_factory.mktemp("a"))]))


def _scores(doc: dict) -> dict:
    return {(e["model"], e["config"], e["board"]): (e["score"], e["rank"]) for e in doc["entries"]}


def _cells(doc: dict) -> dict[str, dict]:
    return {c["hash"]: c for e in doc["entries"] for p in e["points"] for c in p["cells"]}


def test_one_folder(alone):
    assert alone["schema"] == "bench-leaderboard" and alone["schema_version"] == 2
    (board,) = alone["boards"]
    assert (board["utility_task"], board["private_attribute"]) == ("topic", "entities")
    assert len(board["entries"]) == 6 and len(board["baselines"]) == 1  # 4 + the known answers
    assert [e["rank"] for e in alone["entries"]] == sorted(e["rank"] for e in alone["entries"])
    for e in alone["entries"]:
        assert e["score_ci"][0] <= e["score"] <= e["score_ci"][1]
        known = e["mechanism"] in ("identity", "no_information")  # one ε of their own
        assert len(e["points"]) == (1 if known else 2)
        assert all(len(p["cells"]) == 5 for p in e["points"])
    # every ranked entry's cells link to their folders; nothing from MLflow here
    cell = next(iter(_cells(alone).values()))
    assert cell["href"].startswith("file://") and cell["mlflow"] is None
    assert cell["provenance"][0]["source"] == "s0"
    # the version that computed the committed cell (its manifest's), not the running one
    manifest = json.loads((QUICKSTART / "cells" / cell["hash"] / "manifest.json").read_text())
    assert cell["provenance"][0]["suite_version"] == manifest["provenance"]["suite_version"]
    assert cell["provenance"][0]["numeric"].startswith("cpu-pinned-")
    assert cell["platform"] == cell["provenance"][0]["numeric"]


def test_overlapping_folders_merge_into_one_cell_each(alone, tmp_path):
    some = all_hashes()[:10]
    doc = build(read_sources([copy_results(tmp_path / "a"), copy_results(tmp_path / "b", some)]))
    assert [s["cells"] for s in doc["sources"]] == [55, 10]
    assert doc["conflicts"] == []
    assert _scores(doc) == _scores(alone)  # the duplicates changed nothing
    cells = _cells(doc)
    doubled = [h for h, c in cells.items() if len(c["provenance"]) == 2]
    assert sorted(doubled) == sorted(h for h in some if h in cells)
    assert {p["source"] for p in cells[doubled[0]]["provenance"]} == {"s0", "s1"}


def test_conflicting_duplicate_is_reported_and_not_ranked(tmp_path):
    """Two copies from the same numeric platform must agree: if not, a bug or a forgery."""
    a, b = copy_results(tmp_path / "a"), copy_results(tmp_path / "b")
    set_platform(a, "cpu-pinned-0000aaaa")
    set_platform(b, "cpu-pinned-0000aaaa")
    victim = next(h for h in all_hashes() if spec_of(a / "cells" / h)["mechanism"]["name"] == "mvl")

    def shift(m):
        m["utility"]["macro_f1"] += 0.05
    rewrite_metrics(b / "cells" / victim, shift)
    # run times differ from machine to machine: not a conflict
    other = next(h for h in all_hashes() if h != victim)
    rewrite_metrics(b / "cells" / other, lambda m: m["runtime"].update(
        {k: v * 2 for k, v in m["runtime"].items() if isinstance(v, float)}))
    doc = build(read_sources([a, b]))
    (conflict,) = doc["conflicts"]
    assert conflict["hash"] == victim and conflict["sources"] == ["s0", "s1"]
    assert any(d.startswith("metrics.utility.macro_f1:") for d in conflict["differences"])
    assert "both on cpu-pinned-0000aaaa" in conflict["differences"][0]
    # listed with the conflict named, never silently dropped, never ranked
    assert _cells(doc)[victim]["unranked"] == "conflict" and other in _cells(doc)
    assert _cells(doc)[other]["unranked"] is None
    (entry,) = [e for e in doc["entries"]
                if any(c["hash"] == victim for p in e["points"] for c in p["cells"])]
    assert entry["rank"] is None and entry["score"] is None and entry["rank_flag"] == "conflict"
    assert doc["platform_variants"] == []


def _shift_victim(b: Path) -> str:
    victim = next(h for h in all_hashes()
                  if spec_of(b / "cells" / h)["mechanism"]["name"] == "none")
    rewrite_metrics(b / "cells" / victim, lambda m: m["utility"].update(
        macro_f1=m["utility"]["macro_f1"] - 0.1))
    return victim


def test_copies_from_different_platforms_are_variants_ranked_with_the_pinned_copy(alone,
                                                                                 tmp_path):
    """A GPU copy that differs from the pinned-CPU copy is a platform variant: the cell (here
    a baseline, which every entry of its seed needs) stays ranked, with the pinned copy."""
    a, b = copy_results(tmp_path / "a"), copy_results(tmp_path / "b")
    set_platform(a, "cpu-pinned-1cc01654")
    set_platform(b, "cuda-0000bbbb")
    victim = _shift_victim(b)
    for order in ([b, a], [a, b]):  # whichever source comes first
        doc = build(read_sources(order))
        assert doc["conflicts"] == []
        assert _scores(doc) == _scores(alone)  # ranked as with the pinned copy alone
        (var,) = doc["platform_variants"]
        assert var["hash"] == victim and var["ranked"]["platform"] == "cpu-pinned-1cc01654"
        (other,) = var["others"]
        assert other["platform"] == "cuda-0000bbbb"
        assert any(d.startswith("metrics.utility.macro_f1:") for d in other["differences"])
        assert all(e["rank_flag"] != "no baseline" for e in doc["entries"])
        assert {p for e in doc["entries"] for p in e["platforms"]} == {"cpu-pinned-1cc01654"}
        # the baseline cell with two differing copies is still the board's baseline
        assert any(victim in b["cells"] for bd in doc["boards"] for b in bd["baselines"])
        cell = next(iter(_cells(doc).values()))  # every cell: a copy in each source
        assert cell["platform"] == "cpu-pinned-1cc01654"
        assert {p["numeric"] for p in cell["provenance"]} == {"cpu-pinned-1cc01654",
                                                              "cuda-0000bbbb"}


def test_unrecorded_platforms_are_variants_not_conflicts(alone, tmp_path):
    """Cells from before 0.4.0 record no platform: two such copies that differ (e.g. computed
    on an AVX2 and an AVX-512 CPU) cannot be called the same platform's, so they are variants;
    a recorded pinned copy is preferred over an unrecorded one."""
    a, b = copy_results(tmp_path / "a"), copy_results(tmp_path / "b")
    set_platform(a, "cpu-pinned-1cc01654")
    for cell in (b / "cells").iterdir():
        prov = json.loads((cell / "manifest.json").read_text()).get("provenance") or {}
        set_provenance(cell, {k: v for k, v in prov.items() if k != "numeric"})
    victim = _shift_victim(b)
    doc = build(read_sources([b, a]))
    assert doc["conflicts"] == [] and _scores(doc) == _scores(alone)
    (var,) = doc["platform_variants"]
    assert var["ranked"] == {"source": "s1", "platform": "cpu-pinned-1cc01654"}
    assert var["others"][0]["platform"] == "unrecorded" and var["hash"] == victim


def test_a_made_up_pinned_id_is_a_claim_and_a_trusted_copy_stands_over_variants(alone,
                                                                                tmp_path):
    """Issue 48, trial 5: a forged copy claiming a made-up pinned id (``cpu-pinned-deadbeef``),
    listed first, was ranked over the honest pinned copy; a copy claiming a GPU stood over a
    ``--trusted`` source. Now only a pinned id the suite knows counts as pinned, and a trusted
    copy stands over platform variants as it does in a conflict."""
    a, b = copy_results(tmp_path / "a"), copy_results(tmp_path / "b")
    set_platform(a, "cpu-pinned-1cc01654")
    set_platform(b, "cpu-pinned-deadbeef")
    victim = _shift_victim(b)
    doc = build(read_sources([b, a]))
    (var,) = doc["platform_variants"]
    assert var["hash"] == victim and var["ranked"] == {"source": "s1",
                                                       "platform": "cpu-pinned-1cc01654"}
    assert _scores(doc) == _scores(alone)
    set_platform(a, "cuda-0000bbbb")  # the maintainer's own copy, from a GPU, trusted
    set_platform(b, "cpu-pinned-1cc01654")
    doc = build(read_sources([b, a]), trusted=["s1"])
    (var,) = doc["platform_variants"]
    assert var["ranked"] == {"source": "s1", "platform": "cuda-0000bbbb"}
    assert _scores(doc) == _scores(alone)


def _as_version(folder: Path, version: str) -> None:
    """Turn every cell of ``folder`` into one written by another suite version (new hashes)."""
    from bench.grid import Cell
    from bench.grid.cell import legacy_cell_hash
    from bench.results.store import seal_cell

    for cell in sorted((folder / "cells").iterdir()):
        spec, metrics = (json.loads((cell / n).read_text()) for n in ("spec.json", "metrics.json"))
        spec["suite_version"] = version  # before 0.4.0 the hash covered it
        new = legacy_cell_hash(Cell.from_spec(spec), spec.get("dataset_hash"), version)
        spec["hash"] = new
        metrics["suite_version"] = version
        (cell / "spec.json").write_text(json.dumps(spec))
        (cell / "metrics.json").write_text(json.dumps(metrics))
        (cell / "manifest.json").unlink()
        cell = cell.rename(cell.with_name(new))
        seal_cell(cell)  # sealed as `bench verify --seal` seals an old cell


def test_versions_are_kept_apart_unless_mixing_is_allowed(tmp_path):
    a, b = copy_results(tmp_path / "a"), copy_results(tmp_path / "b")
    _as_version(b, "0.2.0")
    srcs = read_sources([a, b])
    apart = build(srcs)
    # cells written since 0.4.0 carry no suite version (it is not part of their hash); cells
    # of an older version, which hashed it, are kept apart from them
    assert sorted(bd["suite_version"] for bd in apart["boards"]) == ["", "0.2.0"]
    assert all(len(bd["entries"]) == 6 for bd in apart["boards"])
    mixed = build(srcs, allow_mixed_versions=True)
    (board,) = mixed["boards"]
    assert board["suite_version"] == "mixed" and len(board["entries"]) == 12
    assert {e["suite_version"] for e in mixed["entries"]} == {"", "0.2.0"}
    # identical numbers under two versions: each pair shares its rank
    by_cfg: dict[str, set] = {}
    for e in mixed["entries"]:
        by_cfg.setdefault(e["config"], set()).add(e["rank"])
    assert all(len(r) == 1 for r in by_cfg.values())


def _tem_violations(folder: Path) -> None:
    from bench.audit import AuditReport, AuditRow, write_audit_status

    for eps in (1.0, 10.0):
        write_audit_status(AuditReport(
            "tem", eps, {"beta": 0.001}, "none", "ε·d metric DP", 50, 4000, 0.95, 12,
            rows=[AuditRow("words", "nearest", ("w1", "w2"), 0.5, eps, eps + 1, "VIOLATION",
                           "constructed", 4)]), folder)


def test_audit_violation_is_ranked_last(tmp_path):
    a = copy_results(tmp_path / "a")
    _tem_violations(a / "audit")
    doc = build(read_sources([a]))
    tem = next(e for e in doc["entries"] if e["mechanism"] == "tem")
    assert tem["audit"] == "VIOLATION" and tem["rank_flag"] == "audit violation"
    assert tem["rank"] == 6 == max(e["rank"] for e in doc["entries"])
    assert doc["entries"][-1] is tem


def test_an_audit_only_source_changes_nothing_of_another_contributor(alone, tmp_path):
    """Issue 24: a folder holding only VIOLATION audit records used to mark every matching
    entry of every source 'audit violation' and rank it last. A source's audits now count
    only for entries whose every cell comes from that source alone."""
    a = copy_results(tmp_path / "a")
    hostile = tmp_path / "hostile"
    (hostile / "cells").mkdir(parents=True)
    _tem_violations(hostile / "audit")
    doc = build(read_sources([a, hostile]))
    assert _scores(doc) == _scores(alone)
    tem = next(e for e in doc["entries"] if e["mechanism"] == "tem")
    assert tem["audit"] != "VIOLATION" and tem["rank_flag"] == ""
    # copying the honest cells next to the audits does not give them a hold either
    both = copy_results(tmp_path / "both")
    _tem_violations(both / "audit")
    doc = build(read_sources([a, both]))
    assert next(e for e in doc["entries"] if e["mechanism"] == "tem")["audit"] != "VIOLATION"
    # the maintainer's own audit folder (--audit) counts for every entry
    doc = build(read_sources([a]), extra_audits=[hostile / "audit"])
    assert next(e for e in doc["entries"] if e["mechanism"] == "tem")["audit"] == "VIOLATION"


def test_a_trusted_copy_stands_in_a_conflict(alone, tmp_path):
    """A differing copy of a trusted source's cell (same platform) cannot take it out of the
    ranking: the conflict is listed, resolved by the trusted source."""
    a, b = copy_results(tmp_path / "a"), copy_results(tmp_path / "b")
    set_platform(a, "cpu-pinned-0000aaaa")
    set_platform(b, "cpu-pinned-0000aaaa")
    victim = _shift_victim(b)  # a baseline: without it every entry would lose its score
    untrusted = build(read_sources([a, b]))
    assert [c["resolved_by"] for c in untrusted["conflicts"]] == [None]
    # the entries resting on the baseline in conflict are listed, the conflict named
    unranked = [e for e in untrusted["entries"] if e["score"] is None]
    assert unranked and all(e["rank_flag"] == "baseline conflict" for e in unranked)
    assert len(untrusted["entries"]) == len(alone["entries"])
    assert _scores(untrusted) != _scores(alone)
    doc = build(read_sources([b, a]), trusted=["s1"])
    (conflict,) = doc["conflicts"]
    assert conflict["hash"] == victim and conflict["resolved_by"] == "s1"
    assert _scores(doc) == _scores(alone)
    assert [s["trusted"] for s in doc["sources"]] == [False, True]


def test_trusted_names_a_source(tmp_path):
    from bench.leaderboard import build_leaderboard

    a = copy_results(tmp_path / "a")
    doc = build_leaderboard([a], trusted=[a])
    assert doc["sources"][0]["trusted"] is True
    with pytest.raises(LeaderboardError, match="--trusted .*not one of the sources given"):
        build_leaderboard([a], trusted=[tmp_path / "elsewhere"])


def test_malformed_cell_is_named_and_the_rest_kept(tmp_path):
    a = copy_results(tmp_path / "a")
    bad = a / "cells" / "0123456789abcdef"
    bad.mkdir()
    (bad / "spec.json").write_text("{not json")
    (bad / "metrics.json").write_text("{}")
    src, = read_sources([a])
    assert len(src.cells) == 55
    assert len(src.problems) == 1 and "0123456789abcdef" in src.problems[0]


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "no such results folder"),
    (lambda p: (p / "empty").mkdir() or p / "empty", "not a results folder"),
])
def test_unreadable_folder_is_one_clear_error(tmp_path, make, message):
    with pytest.raises(LeaderboardError, match=message):
        read_sources([copy_results(tmp_path / "a"), make(tmp_path)])


def test_unreachable_tracking_server_fails_fast(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    start = time.monotonic()
    with pytest.raises(LeaderboardError, match=f"127.0.0.1:{port}.*not reachable"):
        read_sources([], [f"http://127.0.0.1:{port}"])
    assert time.monotonic() - start < 15


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.cli", "leaderboard", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_writes_both_files_and_refuses_bad_input(tmp_path):
    a = copy_results(tmp_path / "a")
    out = tmp_path / "board"
    r = _cli(str(a), "--out", str(out), "--resamples", "200")
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "leaderboard.json").read_text())
    assert len(doc["entries"]) == 6 and (out / "leaderboard.html").stat().st_size > 0
    assert "6 entries" in r.stdout
    bad = _cli(str(a), str(tmp_path / "nope"), "--out", str(tmp_path / "board2"))
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "nope: no such results folder" in lines[0]
    assert not (tmp_path / "board2").exists()


def test_build_leaderboard_writes_nothing_on_error(tmp_path):
    out = tmp_path / "board"
    with pytest.raises(LeaderboardError):
        build_leaderboard([tmp_path / "nope"], out=out)
    assert not out.exists()


def test_an_entry_without_a_dp_guarantee_is_listed_not_ranked(alone, tmp_path):
    """A configuration run with a departure that voids its guarantee (``allow_no_guarantee``,
    e.g. the TrLaplace code's shared noise) is shown with its numbers and never ranked."""
    from bench.guarantee import Guarantee

    a = copy_results(tmp_path / "a")
    mvl = [c for c in (a / "cells").iterdir() if spec_of(c)["mechanism"]["name"] == "mvl"]
    assert mvl

    def void(m):
        g = Guarantee.from_dict(m["guarantee"]).voided("noise shared by a batch of sentences")
        m["guarantee"] = g.to_dict()

    for c in mvl:
        rewrite_metrics(c, void)
    doc = build(read_sources([a]))
    e = next(e for e in doc["entries"] if e["mechanism"] == "mvl")
    assert e["rank_flag"] == "no DP guarantee" and e["rank"] is None and e["score"] is None
    assert e["guarantee"].startswith("no DP guarantee")
    assert all(p["utility"] is not None for p in e["points"])  # its numbers are still shown
    ranked = [e["mechanism"] for e in doc["entries"] if e["rank"] is not None]
    assert len(ranked) == 5 and "mvl" not in ranked
    before = {k: v for k, v in _scores(alone).items() if k[1].startswith("mvl") is False}
    assert {k: v[0] for k, v in _scores(doc).items() if k in before} == \
        {k: v[0] for k, v in before.items()}  # the others' scores are unchanged


def test_an_entry_says_which_plugin_package_computed_it(alone, tmp_path):
    """A cell records the plugin distribution and version of its components; the board shows
    it on the entry, so nobody ranks a plugin's results without knowing whose they are."""
    from bench.leaderboard.page import render_page

    folder = copy_results(tmp_path)
    tem = [c for c in (folder / "cells").iterdir() if spec_of(c)["mechanism"]["name"] == "tem"]
    for c in tem:
        rewrite_metrics(c, lambda m: m.update(plugins={"mechanism tem": "bench-tem-plus 1.2"}))
    doc = build(read_sources([folder]))
    by = {e["mechanism"]: e["plugins"] for e in doc["entries"]}
    assert by["tem"] == ["bench-tem-plus 1.2"]
    assert all(v == [] for k, v in by.items() if k != "tem")
    assert "bench-tem-plus 1.2" in render_page(doc)
