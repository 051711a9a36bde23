"""The pure rules of uncertainty (:mod:`bench.analysis.stats`,
:class:`bench.analysis.results.Stat`): 95% intervals, significance of a Δ and
interval-respecting ranks, on synthetic numbers checked by hand. How the report's tables and
the leaderboard show them: ``tests/report/test_stats.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.analysis.results import CellRecord, fmt_interval, group_cells, stat
from bench.analysis.stats import (
    BOOTSTRAP,
    OVERLAP,
    PAIRED_T,
    T,
    bootstrap_interval,
    delta_significance,
    interval_ranks,
    intervals_overlap,
    t_interval,
    t_quantile,
)

T_975_2 = 4.302652729749462
"""t_{0.975, 2} from a t table (two-sided 95%, 2 degrees of freedom)."""



def test_t_interval_matches_hand_computation() -> None:
    # three seeds 0.70, 0.74, 0.78: mean 0.74, s = 0.04, half = t_{0.975,2} · 0.04 / √3
    half = T_975_2 * 0.04 / math.sqrt(3)
    assert half == pytest.approx(0.0993655, abs=1e-7)
    mean, lo, hi = t_interval([0.70, 0.74, 0.78])
    assert mean == pytest.approx(0.74)
    assert (lo, hi) == (pytest.approx(0.74 - half), pytest.approx(0.74 + half))
    assert t_quantile(1) == pytest.approx(12.706204736, abs=1e-8)
    assert t_interval([0.5]) is None  # one seed: no t interval
    assert t_interval([0.5, 0.5]) == (0.5, 0.5, 0.5)  # no spread: a point
    assert t_interval([0.7, None, float("nan"), "x", 0.6])[0] == pytest.approx(0.65)


def test_stat_interval_kinds() -> None:
    s = stat([0.70, 0.74, 0.78])
    assert s.kind == T and s.n == 3 and s.std == pytest.approx(0.04)
    assert s.half_width == pytest.approx(T_975_2 * 0.04 / math.sqrt(3))
    assert fmt_interval(s) == "0.740 ± 0.099"
    # one seed: its bootstrap interval over the test documents, shown as [lo, hi]
    one = stat([0.6], [[0.55, 0.66]])
    assert (one.kind, one.lo, one.hi, one.std) == (BOOTSTRAP, 0.55, 0.66, None)
    assert one.half_width is None and fmt_interval(one) == "0.600 [0.550, 0.660]"
    # with n >= 2 the per-seed bootstrap intervals are not used: t across seeds
    assert stat([0.7, 0.6], [[0.0, 1.0], [0.0, 1.0]]).kind == T
    # no interval: not stored, NaN, reversed or malformed -> none invented
    for ci in (None, [math.nan, 0.7], [0.7, 0.5], [0.5], "0.5,0.7"):
        bare = stat([0.6], [ci])
        assert bare.kind is None and not bare.has_interval and fmt_interval(bare) == "0.600"
        assert bare.bounds == (0.6, 0.6)
    assert bootstrap_interval((0.1, 0.2)) == (0.1, 0.2)
    # the interval follows the value that is kept (seed 0 has no value)
    kept = stat([None, 0.8], [[0.1, 0.2], [0.75, 0.85]])
    assert (kept.n, kept.lo, kept.hi) == (1, 0.75, 0.85)
    with pytest.raises(ValueError, match="2 intervals for 1 values"):
        stat([0.5], [None, None])


def test_group_stat_reads_the_ci_alongside_the_value(tmp_path: Path) -> None:
    spec = {"dataset": {"name": "d"}, "model": {"name": "m"}, "mechanism": {"name": "none"},
            "epsilon": "inf", "seed": 0}
    recs = [CellRecord(f"h{s}", dict(spec, seed=s),
                       {"utility": {"macro_f1": u, **({"macro_f1_ci95": ci} if ci else {})}},
                       tmp_path) for s, u, ci in ((0, 0.8, [0.7, 0.9]), (1, 0.6, None))]
    groups, _ = group_cells(recs[:1])
    s = groups[0].stat(lambda m: m.utility.macro_f1, lambda m: m.utility.macro_f1_ci95)
    assert (s.kind, s.lo, s.hi) == (BOOTSTRAP, 0.7, 0.9)
    groups, _ = group_cells(recs)
    s = groups[0].stat(lambda m: m.utility.macro_f1, lambda m: m.utility.macro_f1_ci95)
    assert s.kind == T and s.lo == pytest.approx(0.7 - 12.7062047 * 0.1, abs=1e-6)


def test_paired_significance() -> None:
    clear = delta_significance([0.30, 0.31, 0.29, 0.305])
    assert clear.significant is True and clear.rule == PAIRED_T and clear.n == 4
    noise = delta_significance([0.05, -0.04, 0.02])
    assert noise.significant is False and noise.rule == PAIRED_T
    # a large mean difference with two noisy seeds is still not significant (t_{0.975,1} = 12.7)
    assert delta_significance([0.3, 0.1]).significant is False
    assert delta_significance([0.2, 0.2]).significant is True  # identical differences, not 0
    assert delta_significance([0.0, 0.0]).significant is False
    assert delta_significance([]).significant is None


def test_one_seed_significance_by_bootstrap_overlap() -> None:
    apart = delta_significance([-0.2], ci_priv=[0.55, 0.65], ci_base=[0.75, 0.85])
    assert apart.significant is True and apart.rule == OVERLAP
    overlap = delta_significance([0.05], ci_priv=[0.40, 0.50], ci_base=[0.35, 0.45])
    assert overlap.significant is False and overlap.rule == OVERLAP
    touching = delta_significance([0.1], ci_priv=[0.5, 0.6], ci_base=[0.6, 0.7])
    assert touching.significant is False  # closed intervals sharing an end point overlap
    missing = delta_significance([0.3], ci_priv=[0.5, 0.6], ci_base=None)
    assert missing.significant is None and missing.rule == ""
    assert intervals_overlap((0.0, 1.0), (0.2, 0.3)) and not intervals_overlap((0, 1), (2, 3))


def test_interval_ranks_share_overlapping_and_separate_disjoint() -> None:
    assert interval_ranks([(0.8, 0.9), (0.7, 0.85), (0.5, 0.6)]) == [1, 1, 3]
    # a chain: A and C are disjoint, B overlaps both -> A 1, B 1, C 2
    assert interval_ranks([(0.80, 0.90), (0.75, 0.82), (0.70, 0.78)]) == [1, 1, 2]
    assert interval_ranks([(0.1, 0.2), (0.3, 0.4), (0.5, 0.6)]) == [3, 2, 1]
    # lower is better: the lowest disjoint interval ranks first
    assert interval_ranks([(0.1, 0.2), (0.3, 0.4), (0.35, 0.5)],
                          higher_is_better=False) == [1, 2, 2]
    # entries without an interval: their mean as a point
    assert interval_ranks([(0.5, 0.5), (0.5, 0.5), (0.7, 0.7)]) == [2, 2, 1]
    assert interval_ranks([]) == []
