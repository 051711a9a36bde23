"""Who handed it in, and cells nothing vouches for (issue 24, items 1, 3 and 4): a verified
signer or "unsigned" (never a bare claimed name); a forged, resealed signed cell is left out;
a cell without a manifest is listed, never ranked; a conflict never removes an entry."""

from __future__ import annotations

import json
from pathlib import Path

from bench.cli import main
from bench.leaderboard import build, read_sources
from bench.results import signing
from tests.leaderboard.helpers import all_hashes, copy_results, rewrite_metrics, spec_of


def _signed(tmp_path: Path, name: str) -> tuple[Path, str]:
    folder = copy_results(tmp_path / name)
    kid = signing.generate_key(tmp_path / f"{name}.key")
    signed, skipped = signing.sign_results(folder, signing.load_private_key(tmp_path /
                                                                            f"{name}.key"))
    assert signed == len(all_hashes()) and skipped == []
    return folder, kid


def test_the_page_data_names_verified_signers_not_claimed_names(tmp_path):
    folder, kid = _signed(tmp_path, "a")
    doc = build(read_sources([folder]), keys={kid: "Alice"})
    assert doc["sources"][0]["signed"] == len(all_hashes())
    assert doc["sources"][0]["signers"] == [kid]
    for e in doc["entries"]:
        assert e["signed_by"] == [{"key": kid, "name": "Alice"}] and e["unsigned_cells"] == 0
        prov = e["points"][0]["cells"][0]["provenance"][0]
        assert prov["signer"] == {"key": kid, "name": "Alice"} and prov["sealed"] is True
    # a key the keyring does not list is shown by its key, with no name
    doc = build(read_sources([folder]))
    assert all(e["signed_by"] == [{"key": kid, "name": None}] for e in doc["entries"])
    # the committed references are not signed: "unsigned"
    plain = build(read_sources([copy_results(tmp_path / "plain")]))
    assert all(e["signed_by"] == [] and e["unsigned_cells"] > 0 for e in plain["entries"])


def test_a_forged_resealed_signed_cell_is_left_out_and_the_rest_stands(tmp_path):
    folder, kid = _signed(tmp_path, "a")
    honest = build(read_sources([copy_results(tmp_path / "honest")]))
    victim = next(h for h in all_hashes()
                  if spec_of(folder / "cells" / h)["mechanism"]["name"] == "tem")
    rewrite_metrics(folder / "cells" / victim,
                    lambda m: m["utility"].update(macro_f1=0.99))  # resealed
    doc = build(read_sources([folder]))
    line = next(p for p in doc["problems"] if victim in p)
    assert "signature.json does not verify" in line and "left out" in line
    assert doc["sources"][0]["left_out"] == 1
    ranks = {e["config"]: e["rank"] for e in honest["entries"]}
    used = {c["hash"] for e in doc["entries"] for p in e["points"] for c in p["cells"]}
    bases = [h for h in all_hashes()
             if spec_of(folder / "cells" / h)["mechanism"]["name"] == "none"]
    assert victim not in used and len(used) == len(all_hashes()) - 1 - len(bases)
    assert all(e["rank"] in (ranks[e["config"]], None) for e in doc["entries"])


def test_a_cell_without_a_manifest_is_listed_never_ranked(tmp_path):
    a = copy_results(tmp_path / "a")
    victim = next(h for h in all_hashes()
                  if spec_of(a / "cells" / h)["mechanism"]["name"] == "mvl")
    (a / "cells" / victim / "manifest.json").unlink()
    doc = build(read_sources([a]))
    assert doc["sources"][0]["unsealed"] == 1
    entry = next(e for e in doc["entries"]
                 if any(c["hash"] == victim for p in e["points"] for c in p["cells"]))
    assert entry["rank"] is None and entry["score"] is None and entry["rank_flag"] == "unsealed"
    cell = next(c for p in entry["points"] for c in p["cells"] if c["hash"] == victim)
    assert cell["unranked"] == "unsealed" and cell["provenance"][0]["sealed"] is False
    # a baseline without a manifest: every entry resting on it is listed, unranked
    base = next(h for h in all_hashes()
                if spec_of(a / "cells" / h)["mechanism"]["name"] == "none")
    (a / "cells" / base / "manifest.json").unlink()
    doc = build(read_sources([a]))
    assert {e["rank_flag"] for e in doc["entries"] if e["rank"] is None} >= {"baseline unsealed"}
    # a sealed copy of the same cell from another source is the one used, and ranked
    b = copy_results(tmp_path / "b")
    both = build(read_sources([a, b]))
    assert all(e["rank"] is not None for e in both["entries"])


def test_sign_and_keys_on_the_command_line(tmp_path, capsys):
    folder = copy_results(tmp_path / "r")
    assert main(["keygen", str(tmp_path / "me.key")]) == 0
    kid = (tmp_path / "me.key.pub").read_text().strip()
    assert main(["sign", "--results", str(folder), "--key", str(tmp_path / "me.key")]) == 0
    assert f"signed {len(all_hashes())} cell(s)" in capsys.readouterr().out
    (tmp_path / "ring").write_text(f"Alice {kid}\n")
    assert main(["leaderboard", str(folder), "--keys", str(tmp_path / "ring"),
                 "--out", str(tmp_path / "lb")]) == 0
    doc = json.loads((tmp_path / "lb" / "leaderboard.json").read_text())
    assert {s["name"] for e in doc["entries"] for s in e["signed_by"]} == {"Alice"}
    capsys.readouterr()
    (tmp_path / "ring").write_text("Alice ed25519:00\n")
    assert main(["leaderboard", str(folder), "--keys", str(tmp_path / "ring"),
                 "--out", str(tmp_path / "lb2")]) == 2
    err = capsys.readouterr().err
    assert "--keys" in err and "64 hex digits" in err and not (tmp_path / "lb2").exists()
    assert main(["sign", "--results", str(folder), "--key", str(tmp_path / "nope")]) == 2
    assert "no such key file" in capsys.readouterr().err
