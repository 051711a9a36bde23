"""The rt corpus: sentiment only, privacy via membership inference."""

from __future__ import annotations

from bench.datasets import load_dataset


def test_rt_has_only_membership_privacy() -> None:
    ds = load_dataset("rt")
    assert ds.privacy_tasks == {}
    assert ds.utility_task.classes == ("rotten", "fresh")
    assert ds.groups is None
