"""The channel cache of a results folder (bench.results.channels): entries in memory and on
disk, checksummed, written atomically; a damaged entry is ignored and rebuilt; concurrent
writers and readers never see half an entry."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from bench.results import channels
from bench.results.channels import ChannelStore, entry_key, forget_memory
from bench.results.layout import channels_dir


@pytest.fixture(autouse=True)
def _fresh_memory():
    forget_memory()
    yield
    forget_memory()


def _entry(n: int = 5):
    payload = {"kind": "exact", "mechanism": {"name": "tem", "epsilon": 1.0}, "n": n,
               "streams": [{"state": 2**100 + n}]}
    arrays = {"Z": np.linspace(0.5, 2.0, n), "cand": np.arange(n, dtype=np.int64),
              "gamma": np.array([np.inf])}
    return entry_key(payload), payload, arrays, {"channel": {"type": "exp"}, "seconds": 1.5}


def _equal(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)


def test_put_then_get_from_memory_and_from_disk(tmp_path):
    store = ChannelStore(channels_dir(tmp_path))
    key, payload, arrays, meta = _entry()
    assert store.get(key, payload) is None
    assert store.put(key, payload, arrays, meta)
    got, got_meta, where = store.get(key, payload)
    assert where == "memory" and _equal(got, arrays) and got_meta == meta
    got["Z"][0] = 99.0  # the caller's copy: the cache is not changed through it
    forget_memory()  # another process: from disk, checksummed
    got, got_meta, where = store.get(key, payload)
    assert where == "disk" and _equal(got, arrays) and got_meta == meta
    assert sorted(p.name for p in (tmp_path / "cache" / "channels" / key).iterdir()) == [
        "arrays.npz", "manifest.json", "meta.json"]
    # a tuple in the payload reads back as the list it is in JSON: the same entry
    assert store.get(key, payload | {"streams": tuple(payload["streams"])}) is not None


def test_the_key_is_the_payload():
    key, payload, _, _ = _entry()
    assert len(key) == 32 and key == entry_key(dict(reversed(payload.items())))
    assert entry_key(payload | {"n": 6}) != key
    with pytest.raises(ValueError, match="not a key"):
        ChannelStore("x").entry("../../etc")


@pytest.mark.parametrize("damage", ["flip", "truncate", "meta", "manifest", "payload"])
def test_a_damaged_entry_is_ignored_and_rebuilt(tmp_path, caplog, damage):
    store = ChannelStore(channels_dir(tmp_path))
    key, payload, arrays, meta = _entry()
    store.put(key, payload, arrays, meta)
    forget_memory()
    folder = store.entry(key)
    f = folder / ("manifest.json" if damage == "manifest" else
                  "meta.json" if damage == "meta" else "arrays.npz")
    data = bytearray(f.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "payload":  # another payload under this key, checksums redone
        other = ChannelStore(tmp_path / "other")
        other.put(key, payload | {"n": 7}, arrays, meta)
        for name in ("arrays.npz", "meta.json", "manifest.json"):
            (folder / name).write_bytes((other.entry(key) / name).read_bytes())
        data = bytearray(f.read_bytes())
    else:
        data[-20] ^= 0xFF
    f.write_bytes(bytes(data))
    forget_memory()
    with caplog.at_level(logging.WARNING, logger="bench.results.channels"):
        assert store.get(key, payload) is None
    assert f"channel {key} in the cache is damaged" in caplog.text
    assert not folder.exists()  # discarded
    assert store.put(key, payload, arrays, meta)  # rebuilt by the caller
    forget_memory()
    got, _, where = store.get(key, payload)
    assert where == "disk" and _equal(got, arrays)


def test_a_half_written_entry_is_never_read(tmp_path):
    """A writer's temporary folder is not the entry; the entry appears by one rename."""
    store = ChannelStore(channels_dir(tmp_path))
    key, payload, arrays, meta = _entry()
    tmp = store.folder / f".{key}.abc123"
    tmp.mkdir(parents=True)
    (tmp / "arrays.npz").write_bytes(b"half")
    assert store.get(key, payload) is None
    store.put(key, payload, arrays, meta)
    assert store.entry(key).is_dir()


def test_the_first_writer_wins(tmp_path):
    store = ChannelStore(channels_dir(tmp_path))
    key, payload, arrays, meta = _entry()
    store.put(key, payload, arrays, meta)
    store.put(key, payload, arrays, meta | {"seconds": 2.5})  # same key from another worker
    forget_memory()
    assert store.get(key, payload)[1]["seconds"] == 1.5
    assert [p.name for p in store.folder.iterdir()] == [key]  # no temporary folder left


def test_too_large_entries_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(channels, "MAX_ENTRY_BYTES", 16)
    store = ChannelStore(channels_dir(tmp_path))
    key, payload, arrays, meta = _entry()
    assert not store.put(key, payload, arrays, meta)
    assert store.get(key, payload) is None and not store.folder.exists()


def test_memory_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(channels, "MEMORY_BYTES", 200)  # room for two entries of 96 bytes
    store = ChannelStore(channels_dir(tmp_path))
    entries = [_entry(n) for n in (4, 4 + 100, 4 + 200)]
    for key, payload, arrays, meta in entries:
        arrays = {"Z": np.zeros(12)}
        store.put(key, payload, arrays, meta)
    # the oldest went out of memory (it is still on disk)
    assert [store.get(k, p)[2] for k, p, _, _ in reversed(entries)] == ["memory", "memory",
                                                                          "disk"]


WRITER = textwrap.dedent("""
    import sys
    import numpy as np
    from bench.results.channels import ChannelStore, entry_key
    store = ChannelStore(sys.argv[1])
    for i in range(40):
        payload = {"i": i}
        store.put(entry_key(payload), payload, {"a": np.arange(20_000) * i}, {"i": i})
""")


def test_two_processes_writing_while_one_reads(tmp_path, caplog):
    """Two worker processes write the same 40 entries while this one reads them: every read
    is nothing yet or the whole entry, never a damaged one."""
    folder = channels_dir(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(folder)]) for _ in range(2)]
    store = ChannelStore(folder)
    seen = set()
    with caplog.at_level(logging.WARNING, logger="bench.results.channels"):
        while True:
            done = all(p.poll() is not None for p in procs)
            for i in range(40):
                forget_memory()
                got = store.get(entry_key({"i": i}), {"i": i})
                if got is not None:
                    assert np.array_equal(got[0]["a"], np.arange(20_000) * i)
                    assert got[1] == {"i": i}
                    seen.add(i)
            if done:  # one full pass after both writers finished
                break
    assert [p.wait() for p in procs] == [0, 0]
    assert len(seen) == 40 and "damaged" not in caplog.text
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        entry_key({"i": i}) for i in range(40))  # no temporary folder left behind
