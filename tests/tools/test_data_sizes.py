"""The data-size table of docs/reference.md (issue 47): positives counted per label, a grid's
splits as the runner makes them, and the 1,000 / 50 rule."""

from __future__ import annotations

import numpy as np

from bench.tools.data_sizes import Sizes, grid_sizes, label_positives, table


def test_positives_per_label_multilabel_and_single_label():
    test = np.array([0, 2, 3])
    multi = np.array([[1, 0], [1, 1], [0, 1], [1, 1]])
    assert label_positives(multi, ("uk", "london"), test) == {"uk": 2, "london": 2}
    single = np.array([0, 1, 1, 1])
    assert label_positives(single, ("dem", "rep"), test) == {"dem": 1, "rep": 2}
    assert label_positives(np.array([0, 0, 0, 0]), ("a", "b"), test) == {"a": 3, "b": 0}


def test_the_rule_needs_both_sizes():
    big = Sizes("g", (1, 1), (1, 1), (1_000, 1_064), {"entities": (85, "england")})
    assert big.meets()
    assert not Sizes("g", (1, 1), (1, 1), (999, 1_064), {"entities": (85, "x")}).meets()
    assert not Sizes("g", (1, 1), (1, 1), (2_000, 2_000), {"entities": (49, "x")}).meets()
    assert not Sizes("g", (1, 1), (1, 1), (2_000, 2_000), {}).meets()  # nothing private
    assert "| `g` | 1 / 1 / 1,000–1,064 | entities: 85 (`england`) | yes |" in table([big])
    rt = Sizes("rt", (1, 1), (1, 1), (1_275, 1_275), {})
    assert "| `rt` | 1 / 1 / 1,275 | no private label | yes (test size only) |" in table([rt])


def test_a_shipped_grid_is_counted_as_the_runner_splits_it():
    s = grid_sizes("smoke")
    n = sum(v[0] for v in (s.train, s.dev, s.test))
    assert s.test[0] > 0 and n > s.test[0]
    assert "entities" in s.positives and s.positives["entities"][0] >= 0
