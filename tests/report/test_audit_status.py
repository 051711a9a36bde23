"""``bench audit`` status records in the report.

Matching, leaderboard, index, metrics, bad input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.analysis import group_cells, load_results
from bench.analysis.audits import AUDIT_FORMAT, config_keys, load_audits
from bench.report import ReportError, build_report, cli_report

MVL_1 = "mvl__eps=1__sens=none__calibrate=False"
TEM_10 = "tem__eps=10__sens=none__beta=0.001"
CONFIG = "bbc(suite=0.1.0) | lstm | {} | sens={} | map={} | eps={} | suite=0.1.0"


def _doc(page: str) -> dict:
    """The ``leaderboard.json`` document the leaderboard page embeds."""
    m = re.search(r'id="leaderboard-data">(.*?)</script>', page, re.DOTALL)
    assert m is not None
    return json.loads(m.group(1))


def _audits(page: str) -> dict[tuple[str, str, str], tuple[str, list[str]]]:
    """(dataset, mechanism, sensitivity) -> the entry's audit status and each ε's."""
    return {(e["dataset"], e["mechanism"], e["sensitivity"]):
            (e["audit"], [q["audit"] for q in e["points"]]) for e in _doc(page)["entries"]}


def test_format_is_the_auditors() -> None:
    from bench import audit

    assert AUDIT_FORMAT == audit.AUDIT_FORMAT


def test_keys_from_mechanism_params_then_spec(results: Path) -> None:
    groups, _ = group_cells(load_results(results).cells)
    keys = {(g.config.mechanism, g.config.sensitivity, g.config.epsilon, g.config.suite_version):
            config_keys(g) for g in groups if not g.config.is_baseline}
    # the mechanism's own parameter record (calibrate=False filled in) first, then the spec's
    assert keys[("mvl", "none", 1.0, "0.1.0")] == [MVL_1, "mvl__eps=1__sens=none"]
    assert keys[("tem", "none", 10.0, "0.1.0")] == [TEM_10]  # both give the same key
    assert keys[("mvl", "none", 10.0, "0.0.9")] == ["mvl__eps=10__sens=none__calibrate=False",
                                                   "mvl__eps=10__sens=none"]


@pytest.mark.parametrize("mechanism, params, eps, want", [
    ("tem", {}, 1.0, "tem__eps=1__sens=none__beta=0.001"),  # not γ, a fitted statistic
    ("truncated_gumbel", {}, 100.0, "truncated_gumbel__eps=100__sens=none"),  # not the derived b
    ("trlaplace", {"C": 1.0}, 10.0, None),  # configured parameters only, as the audit records
])
def test_keys_leave_out_fitted_statistics(mechanism, params, eps, want) -> None:
    from bench.analysis.audits import _constructed_params
    from bench.audit import audit_key
    from bench.mechanisms import MECHANISMS

    built = _constructed_params(mechanism, eps, params)
    assert built == MECHANISMS.create(mechanism, epsilon=eps, **params).params
    key = audit_key(mechanism, eps, built, "none")
    if want is not None:
        assert key == want
    for derived in ("gamma", "b=", "delta_max", "alpha=", "d_eff", "A="):
        assert derived not in key.replace(f"{mechanism}__", "")


def test_leaderboard_shows_pass_violation_not_audited(audited_results: Path,
                                                      tmp_path: Path) -> None:
    summary = build_report(audited_results, tmp_path / "r")
    assert summary.audit == {"records": 3, "audited": 2, "violations": 1, "not_audited": 4}
    text = summary.text()
    assert "audit: 3 record(s); 2 privatized configuration(s) audited, 4 not audited" in text
    assert "AUDIT VIOLATION in 1 configuration(s)" in text
    page = (tmp_path / "r" / "leaderboard.html").read_text()
    audits = _audits(page)
    # mvl passed at ε=1, its ε=10 has no record: the entry is not audited as a whole
    assert audits[("bbc(suite=0.1.0)", "mvl", "none")] == ("not audited", ["PASS", "not audited"])
    assert audits[("bbc(suite=0.1.0)", "tem", "none")] == ("VIOLATION", ["not audited",
                                                                        "VIOLATION"])
    assert audits[("bbc(suite=0.1.0)", "mvl", "unit_norm")] == ("not audited", ["not audited"])
    assert audits[("bbc(suite=0.0.9)", "mvl", "none")] == ("not audited", ["not audited"])
    assert len(audits) == 4  # the baseline is no entry (nothing to audit)
    assert re.search(r'<p class="violation">⚠ Privacy audit VIOLATION: [^<]*tem · sens=none · '
                     r"map=none at ε=10", page)


def test_index_and_metrics_show_audit_status(audited_results: Path, tmp_path: Path) -> None:
    build_report(audited_results, tmp_path / "r")
    index = (tmp_path / "r" / "index.md").read_text()
    assert index.index("## Privacy audit") < index.index("## Tables")
    assert "**⚠ VIOLATION: the audit found the claimed guarantee violated for 1 " in index
    rows = {line.split(" | ")[-1].strip(" |`"): line for line in index.splitlines()
            if line.startswith("| ") and "`" in line}
    assert rows[MVL_1].startswith("| mvl | none | 1 | PASS | max excess −0.")
    assert rows[TEM_10].startswith("| tem | none | 10 | **⚠ VIOLATION** | max excess +0.481; "
                                   "4,000 draws per word, 1 word pairs, 12 tests, "
                                   "confidence 0.95; ")
    assert rows["tem__eps=1__sens=none__beta=0.001"].startswith(
        "| tem | none | 1 | not audited | — |")
    assert rows["mvl__eps=10__sens=unit_norm__calibrate=False"].startswith(
        "| mvl | unit\\_norm | 10 | not audited |")
    assert ("Audit records that match no configuration of this report (1): "
            "`laplace__eps=5__sens=none__C=1.0` (PASS).") in index
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["audit"] == {"records": 3, "audited": 2, "violations": 1, "not_audited": 4}
    by = metrics["by_configuration"]
    assert by[CONFIG.format("mvl", "none", "nearest", 1)]["audit"] == "PASS"
    tem = by[CONFIG.format("tem", "none", "none", 10)]
    assert (tem["audit"], tem["audit_max_excess"]) == ("VIOLATION", 0.481)
    assert by[CONFIG.format("tem", "none", "none", 1)]["audit"] == "not audited"
    base = next(v for k, v in by.items() if "| none | sens=none | map=none" in k)
    assert "audit" not in base


def test_no_audit_folder_no_column(report) -> None:
    summary, out = report
    assert summary.audit is None and "  audit:" not in summary.text()
    page = (out / "leaderboard.html").read_text()
    assert {a for a, _each in _audits(page).values()} == {"not audited"}
    assert 'class="violation"' not in page
    assert "Privacy audit" not in (out / "index.md").read_text()
    metrics = json.loads((out / "metrics.json").read_text())
    assert "audit" not in metrics
    assert all("audit" not in v for v in metrics["by_configuration"].values())


@pytest.mark.parametrize(("name", "content", "why"), [
    ("broken.json", "{not json", "Expecting property name"),
    ("other-format.json", json.dumps({"format": "bench-audit/0", "key": "x", "status": "PASS"}),
     "unknown format 'bench-audit/0'"),
    ("list.json", "[1, 2]", "is not a JSON object"),
    ("odd-status.json", json.dumps({"format": AUDIT_FORMAT, "key": MVL_1, "status": "MAYBE"}),
     "status 'MAYBE' is neither"),
    ("no-key.json", json.dumps({"format": AUDIT_FORMAT, "status": "PASS"}), "no 'key'"),
    ("latin1.json", b"\xff\xfe{}", "codec can't decode"),
], ids=["bad-json", "format", "not-object", "status", "no-key", "not-utf8"])
def test_malformed_record_is_a_warning(results: Path, tmp_path: Path, name: str,
                                       content: str | bytes, why: str) -> None:
    audit = results / "audit"
    audit.mkdir()
    path = audit / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    summary = build_report(results, tmp_path / "r")
    warning = next(w for w in summary.warnings if name in w)
    assert warning.startswith(f"audit record {name}: not a readable bench-audit/1 status "
                              "record (") and why in warning and warning.endswith("; ignored")
    assert f"warning: {warning}" in summary.text()
    assert name in (tmp_path / "r" / "index.md").read_text()
    assert summary.audit == {"records": 0, "audited": 0, "violations": 0, "not_audited": 6}
    page = (tmp_path / "r" / "leaderboard.html").read_text()
    assert {a for a, _each in _audits(page).values()} == {"not audited"}
    assert warning in _doc(page)["problems"]  # shown in the page's problem list


def test_dot_files_and_duplicates(audited_results: Path) -> None:
    audit = audited_results / "audit"
    (audit / ".tmp-abc.json").write_text("{half written")  # write_audit_status's temp file
    copy = json.loads((audit / f"{TEM_10}.json").read_text())
    (audit / "zz-copy.json").write_text(json.dumps(copy | {"status": "PASS"}))
    audits = load_audits(audit)
    assert len(audits.records) == 3 and audits.records[TEM_10].file == "zz-copy.json"
    assert audits.warnings == [(f"audit records {TEM_10}.json and zz-copy.json have the same "
                                f"key {TEM_10}; only zz-copy.json is shown")]


def test_audit_folder_override_and_errors(audited_results: Path, tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    (audited_results / "audit").rename(moved)
    text = cli_report(audited_results, tmp_path / "a")
    assert "  audit:" not in text  # the default <results>/audit is gone: no column
    text = cli_report(audited_results, tmp_path / "b", audit=moved)
    assert "AUDIT VIOLATION in 1 configuration(s)" in text
    with pytest.raises(ReportError, match="audit folder .*missing does not exist"):
        cli_report(audited_results, tmp_path / "c", audit=tmp_path / "missing")
    assert not (tmp_path / "c").exists()


def test_cli_report_audit_option(audited_results: Path, tmp_path: Path, capsys) -> None:
    from bench.cli import main
    from bench.report.__main__ import main as module_main

    moved = tmp_path / "elsewhere"
    (audited_results / "audit").rename(moved)
    assert main(["report", "--results", str(audited_results), "--out", str(tmp_path / "a"),
                 "--audit", str(moved)]) == 0
    assert "AUDIT VIOLATION in 1" in capsys.readouterr().out
    assert main(["report", "--results", str(audited_results), "--out", str(tmp_path / "b"),
                 "--audit", str(tmp_path / "missing")]) == 2
    assert "bench: error: audit folder" in capsys.readouterr().err
    assert module_main(["--results", str(audited_results), "--out", str(tmp_path / "c"),
                        "--audit", str(moved)]) == 0
    assert "audit: 3 record(s)" in capsys.readouterr().out


def test_byte_identical_with_audits(audited_results: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    build_report(audited_results, a)
    build_report(audited_results, b)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
