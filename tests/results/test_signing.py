"""Signatures of cell manifests (bench.results.signing): who handed a cell in is checkable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.results import signing
from bench.results.signing import SignatureError

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "results" / "reference" / "quickstart" / "cells"


def _cell(tmp_path: Path) -> Path:
    src = sorted(p for p in QUICKSTART.iterdir() if p.is_dir())[0]
    return Path(shutil.copytree(src, tmp_path / "r" / "cells" / src.name))


def test_keygen_writes_a_private_key_only_its_owner_reads_and_a_public_key_line(tmp_path):
    kid = signing.generate_key(tmp_path / "me.key")
    assert (tmp_path / "me.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "me.key.pub").read_text().strip() == kid
    assert kid == signing.public_id(signing.load_private_key(tmp_path / "me.key"))
    assert signing.parse_key_id(kid) == kid and len(kid) == len("ed25519:") + 64
    with pytest.raises(SignatureError, match="exists; not overwritten"):
        signing.generate_key(tmp_path / "me.key")


def test_a_signed_cell_names_its_signer_and_any_change_breaks_the_signature(tmp_path):
    cell = _cell(tmp_path)
    kid = signing.generate_key(tmp_path / "k")
    assert signing.cell_signer(cell) is None  # unsigned
    signing.sign_cell(cell, signing.load_private_key(tmp_path / "k"))
    assert signing.cell_signer(cell) == kid
    # the forger edits the metrics and reseals: the checksum is theirs to recompute, the
    # signature is not
    from bench.results.store import seal_cell

    m = json.loads((cell / "metrics.json").read_text())
    m["utility"]["macro_f1"] = 0.99
    (cell / "metrics.json").write_text(json.dumps(m))
    (cell / "manifest.json").unlink()
    seal_cell(cell)
    with pytest.raises(SignatureError, match="does not verify"):
        signing.cell_signer(cell)


def test_a_signature_claiming_another_key_does_not_verify(tmp_path):
    cell = _cell(tmp_path)
    signing.generate_key(tmp_path / "mallory")
    victim = signing.generate_key(tmp_path / "alice")
    signing.sign_cell(cell, signing.load_private_key(tmp_path / "mallory"))
    sig = json.loads((cell / "signature.json").read_text())
    sig["public_key"] = victim.split(":")[1]  # claim alice signed it
    (cell / "signature.json").write_text(json.dumps(sig))
    with pytest.raises(SignatureError, match="does not verify"):
        signing.cell_signer(cell)


@pytest.mark.parametrize("text, why", [
    ("{", "does not parse"),
    ('{"format": 2, "algorithm": "ed25519"}', "format 1"),
    ('{"format": 1, "algorithm": "rsa"}', "ed25519"),
    ('{"format": 1, "algorithm": "ed25519", "public_key": "zz", "signature": "00"}',
     "malformed"),
    ("[" * 100_000 + "]" * 100_000, "does not parse"),
])
def test_malformed_signatures_are_refused_with_one_reason(tmp_path, text, why):
    with pytest.raises(SignatureError, match=why):
        signing.verify_signature(b"{}", text.encode())


def test_a_symlinked_signature_is_not_followed(tmp_path):
    cell = _cell(tmp_path)
    (cell / "signature.json").symlink_to("/dev/zero")
    with pytest.raises(SignatureError, match="symbolic link"):
        signing.cell_signer(cell)


def test_only_sound_cells_are_signed(tmp_path):
    cell = _cell(tmp_path)
    (cell / "metrics.json").write_text("{}")
    signing.generate_key(tmp_path / "k")
    key = signing.load_private_key(tmp_path / "k")
    signed, skipped = signing.sign_results(tmp_path / "r", key)
    assert signed == 0 and len(skipped) == 1 and "not signed" in skipped[0]
    assert not (cell / "signature.json").exists()


def test_keyring_names_keys_and_refuses_bad_lines(tmp_path):
    a, b = signing.generate_key(tmp_path / "a"), signing.generate_key(tmp_path / "b")
    ring = tmp_path / "ring"
    ring.write_text(f"# contributors\nAlice Example {a}\nbob {b}  # second\n\n")
    assert signing.read_keyring(ring) == {a: "Alice Example", b: "bob"}
    ring.write_text(f"{a}\n")
    with pytest.raises(SignatureError, match="ring:1: expected 'NAME"):
        signing.read_keyring(ring)
    ring.write_text("eve ed25519:1234\n")
    with pytest.raises(SignatureError, match="64 hex digits"):
        signing.read_keyring(ring)
    ring.write_text(f"alice {a}\neve {a}\n")
    with pytest.raises(SignatureError, match="both 'alice' and 'eve'"):
        signing.read_keyring(ring)
    # issue 48, trial 11: one name for two keys made the page unable to say which one signed
    ring.write_text(f"alice {a}\nalice {b}\n")
    with pytest.raises(SignatureError, match="ring:2: the name 'alice' is already given"):
        signing.read_keyring(ring)
    ring.write_text(f"alice {a}\nalice {a}\n")  # the same line twice is harmless
    assert signing.read_keyring(ring) == {a: "alice"}
