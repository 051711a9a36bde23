"""``bench audit`` records read from a folder someone else sent (issue 48, trial 7: a FIFO, a
link to /dev/zero or deeply nested JSON in a source's ``audit/`` hung, exhausted memory or
crashed the leaderboard): every file is read as a bounded regular file, a bad one is skipped
with one warning, the others still count."""

from __future__ import annotations

import json
import os

from bench.analysis.audits import MAX_RECORD_BYTES, load_audits

RECORD = {"format": "bench-audit/1", "key": "mvl eps=1", "status": "PASS"}


def test_hostile_files_in_an_audit_folder_are_skipped_and_honest_ones_read(tmp_path):
    folder = tmp_path / "audit"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(RECORD))
    os.mkfifo(folder / "fifo.json")
    (folder / "zero.json").symlink_to("/dev/zero")
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "big.json").write_text(" " * (MAX_RECORD_BYTES + 1) + "{}")
    audits = load_audits(folder)
    assert audits is not None
    text = "\n".join(audits.warnings)
    for name, why in (("fifo.json", "not a regular file"), ("zero.json", "symbolic link"),
                      ("deep.json", "nested too deeply"), ("big.json", "bytes")):
        assert f"audit record {name}" in text and why in text, (name, text)
    assert [r.file for r in audits.records.values()] == ["good.json"]


def test_a_linked_audit_folder_is_not_followed(tmp_path):
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "good.json").write_text(json.dumps(RECORD))
    (tmp_path / "audit").symlink_to(real)
    audits = load_audits(tmp_path / "audit")
    assert audits is not None and not audits.records
    assert "symbolic link (not followed)" in audits.warnings[0]
