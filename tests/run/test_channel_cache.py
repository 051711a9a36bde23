"""The informed adversary's channels in a grid run: computed once per key and reused from the
results folder's cache, the run summary says how many, and no cell's metrics change."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench.attacks import informed_channel
from bench.mechanisms.tem import TEM
from bench.results import channels
from bench.results.compare import comparable, differences
from bench.run.runner import run_grid

GRID = """
name: channels
axes:
  dataset: [{name: bbc, subsample: 150}]
  model: [bow, {name: bow, C: 2.0}]
  mechanism: [mvl, tem]
  epsilon: [10]
  seed: [0, 1, 2]
settings:
  vocab_size: 2000
  adversaries: [informed]
  baseline: false
"""


def _metrics(results):
    return {m["cell"]: m for m in (json.loads(f.read_text())
                                   for f in results.glob("cells/*/metrics.json"))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The grid run with the channel cache (counting channel computations), and again with
    no cache at all (every cell computes its channels, as before the cache)."""
    base = tmp_path_factory.mktemp("channels")
    grid = base / "channels.yaml"
    grid.write_text(GRID)
    mp = pytest.MonkeyPatch()
    exact, sampled = Counter(), Counter()
    real_exact, real_sampled = TEM.channel, informed_channel._sampled_channel

    def count_exact(self, words):
        exact[(self.epsilon, words.tobytes())] += 1
        return real_exact(self, words)

    def count_sampled(privatizer, cand, *a, **k):
        sampled[(privatizer.mechanism.name, cand.tobytes())] += 1
        return real_sampled(privatizer, cand, *a, **k)

    try:
        channels.forget_memory()
        mp.setattr(TEM, "channel", count_exact)
        mp.setattr(informed_channel, "_sampled_channel", count_sampled)
        cached = run_grid(grid, results=base / "cached", mlflow=False)
        counts = (Counter(exact), Counter(sampled))
        mp.setattr(channels.ChannelStore, "get", lambda self, *a, **k: None)
        mp.setattr(channels.ChannelStore, "put", lambda self, *a, **k: False)
        uncached = run_grid(grid, results=base / "uncached", mlflow=False)
    finally:
        mp.undo()
        channels.forget_memory()
    return cached, uncached, counts, base


def test_each_channel_is_computed_once_per_key(runs):
    """3 seeds × 2 models: tem's exact channel once for all six cells, and mvl's sampled
    channel once for all six too (its draws are seeded by its key, not by the cell)."""
    cached, _, (exact, sampled), base = runs
    assert cached.count("done") == 12
    assert len(exact) == 1 and set(exact.values()) == {1}
    assert len(sampled) == 1 and set(sampled.values()) == {1}
    assert cached.channels == {"computed": 2, "reused": 10,
                               "computed_seconds": pytest.approx(
                                   cached.channels["computed_seconds"]),
                               "reused_seconds": pytest.approx(
                                   cached.channels["reused_seconds"])}
    assert "informed channels: 2 computed (" in cached.text()
    assert "10 reused from a cache" in cached.text()
    rt = {name: m["runtime"] for name, m in _metrics(base / "cached").items()}
    assert sum(r.get("channels_computed", 0) for r in rt.values()) == 2
    assert sum(r.get("channels_reused", 0) for r in rt.values()) == 10
    assert all(("channel_seconds" in r) != ("channel_reuse_seconds" in r) for r in rt.values())
    assert len(list((base / "cached" / "cache" / "channels").iterdir())) == 2


def test_no_metric_changes(runs):
    """Every cell's metrics, run times aside, are bit for bit those computed without a cache."""
    cached, uncached, _, base = runs
    assert uncached.channels["computed"] == 12 and uncached.channels["reused"] == 0
    a, b = _metrics(base / "cached"), _metrics(base / "uncached")
    assert a.keys() == b.keys() and len(a) == 12
    for name in a:
        assert differences(comparable(b[name]), comparable(a[name])) == [], name
