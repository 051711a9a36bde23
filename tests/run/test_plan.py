"""Planning a grid into worker groups: one group per privatized corpus, and the corpora of one
noise draw (``nearest`` / ``vickrey`` of the same seed) in one group, sharing their search."""

import numpy as np

from bench.grid import load_grid
from bench.privatize import Privatizer
from bench.run.grid import plan

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
