"""Planning a grid into worker groups: one group per privatized corpus, and the corpora of one
noise draw (``nearest`` / ``vickrey`` of the same seed) in one group, sharing their search; and
scheduling them: a group starts once the baselines its cells compare with have finished."""

import numpy as np

from bench.grid import load_grid
from bench.privatize import Privatizer
from bench.run.runner import plan

GRID = """
name: plan
axes:
  dataset: [{name: bbc, subsample: 150}]
  model: [bow]
  mechanism: [mvl]
  mapping: [nearest, vickrey, none]
  epsilon: [5, 10]
  seed: [0, 1]
include:
  - mechanism: tem
    mapping: none
    epsilon: [5]
    seed: [0]
"""


def test_plan_joins_the_mappings_of_one_noise_draw(tmp_path):
    path = tmp_path / "plan.yaml"
    path.write_text(GRID)
    grid = load_grid(path)
    groups = plan(grid)
    assert sum(len(g) for g in groups) == len(grid.cells)
    base = [g for g in groups if g[0][0].is_baseline]
    assert groups[: len(base)] == base and all(len(g) == 1 for g in base)
    rest = groups[len(base):]
    maps = sorted(tuple(c.mapping for c, _, _ in g) for g in rest)
    # per (eps, seed): vickrey (k = 2) before nearest (k = 1); `none` and tem on their own
    assert maps == sorted([("vickrey", "nearest")] * 4 + [("none",)] * 4 + [("none",)])
    for g in rest:
        cells = [c for c, _, _ in g]
        assert len({(c.epsilon, c.seed, c.mechanism) for c in cells}) == 1


def test_nearest_after_vickrey_reuses_its_search_bit_for_bit():
    """Same seed, same noise: the ``nearest`` privatizer run after the ``vickrey`` one takes
    its search from the memo and outputs exactly what its own search gives."""
    import bench.neighbors as nb
    from bench.embeddings import load_embedding

    emb = load_embedding("glove-6b-50d", 5_000)
    rng = np.random.default_rng(0)
    words = list(emb.words)
    docs = [[words[i] for i in rng.integers(0, 5_000, 100)] for _ in range(60)]  # 6,000 tokens

    def run(mapping):
        p = Privatizer.build(mechanism="mvl", epsilon=20, mapping=mapping, seed=7,
                             embedding=emb)
        return p.privatize(docs).tokens

    nb.SEARCH_MEMO.clear()
    own = run("nearest")
    nb.SEARCH_MEMO.clear()
    run("vickrey")
    shared = run("nearest")
    assert nb.SEARCH_MEMO.hits == 1
    assert shared == own
    changed = sum(a != b for d1, d2 in zip(own, docs) for a, b in zip(d1, d2))
    assert 0 < changed < 6_000  # a real search, neither identity nor all noise


class _ScriptedPool:
    """A stand-in executor: records what is submitted and finishes groups in the order the
    test asks for (``order``: a key per group, the cell's seed and whether it is a baseline)."""

    def __init__(self, order):
        self.order = list(order)
        self.queue = []
        self.log = []  # ("submit" | "finish", key)

    @staticmethod
    def key(group):
        cell = group[0][0]
        return ("base" if cell.is_baseline else "priv", cell.seed)

    @property
    def running(self):
        return bool(self.queue)

    def submit(self, group, args):
        self.queue.append(group)
        self.log.append(("submit", self.key(group)))

    def next_batch(self):
        from bench.grid import cell_hash
        from bench.run.worker import CellResult

        want = self.order.pop(0)
        group = next(g for g in self.queue if self.key(g) == want)
        self.queue.remove(group)
        self.log.append(("finish", want))
        return [CellResult(cell_hash(c, dh), c.name, "done") for c, dh, _ in group]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def test_a_group_starts_once_its_own_baseline_is_done(tmp_path):
    """A privatized group waits for the baseline its cells compare with, not for every
    baseline: seed 0's groups start while seed 1's (slow) baseline still runs, seed 1's only
    after it. Nothing starts before its baseline, and every group runs once."""
    from bench.run.runner import _Collector, _Dependencies, _run_groups

    path = tmp_path / "plan.yaml"
    path.write_text(GRID)
    groups = plan(load_grid(path))
    n_base = sum(1 for g in groups if g[0][0].is_baseline)
    assert n_base == 2
    n_priv = {s: sum(1 for g in groups[n_base:] if g[0][0].seed == s) for s in (0, 1)}
    # seed 0's baseline finishes first, then all of seed 0's groups, then seed 1's baseline
    order = [("base", 0)] + [("priv", 0)] * n_priv[0] + [("base", 1)] + [("priv", 1)] * n_priv[1]
    pool = _ScriptedPool(order)
    collector = _Collector(None, tmp_path, None, False)
    warnings = _run_groups(groups, n_base, collector, tmp_path, executor="local", jobs=2,
                           scheduler=None, overwrite="only-missing", fail_fast=False, pool=pool)
    assert warnings == []  # no baseline metrics on disk: nothing to warn about
    assert len(collector.outcomes) == len(load_grid(path).cells)
    log = pool.log
    assert log[:2] == [("submit", ("base", 0)), ("submit", ("base", 1))]
    first_priv0 = log.index(("submit", ("priv", 0)))
    assert log.index(("finish", ("base", 0))) < first_priv0 < log.index(("finish", ("base", 1)))
    assert log.index(("finish", ("base", 1))) < log.index(("submit", ("priv", 1)))
    assert sum(e[0] == "submit" for e in log) == len(groups)

    # the bookkeeping on its own: baseline 0 releases exactly seed 0's groups, in plan order
    from bench.grid import cell_hash
    from bench.run.worker import CellResult

    deps = _Dependencies(groups, n_base)
    assert [_ScriptedPool.key(g) for g in deps.take_ready()] == [("base", 0), ("base", 1)]
    assert deps.take_ready() == []
    (b0, dh0, _), = groups[0]
    deps.finished([CellResult(cell_hash(b0, dh0), b0.name, "failed")])  # any outcome counts
    assert deps.take_ready() == [g for g in groups[n_base:] if g[0][0].seed == b0.seed]
    assert deps.baselines_left and deps.waiting


def test_grid_without_baselines_runs_every_group_at_once(tmp_path):
    """No baseline in the grid (``baseline: false``): every group is ready from the start."""
    from bench.run.runner import _Dependencies

    path = tmp_path / "plan.yaml"
    path.write_text(GRID + "settings:\n  baseline: false\n")
    groups = plan(load_grid(path))
    assert not any(g[0][0].is_baseline for g in groups)
    deps = _Dependencies(groups, 0)
    assert deps.take_ready() == groups and deps.baselines_left == set()
