"""The notebook API (bench.api): docs/api.md's example runs as written, every function refuses
what it cannot take, and load() gives one readable row per cell."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import bench.api as api

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"
QUICKSTART = ROOT / "results" / "reference" / "quickstart"


def test_the_documented_example_runs_and_returns_a_dataframe(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), ns)  # noqa: S102 - our own documentation
    df, result = ns["df"], ns["result"]
    assert isinstance(df, pd.DataFrame) and len(df) == 10  # 2 baselines + 2 x 2 x 2
    assert set(result.frame.status) == {"done"} and len(result.frame) == 10
    assert df["utility_f1"].between(0, 1).all() and "privacy[author]" in df
    assert {"tem", "mvl", "none"} == set(df.mechanism)
    assert (tmp_path / "board" / "leaderboard.html").is_file()


def test_load_reads_a_committed_reference_one_row_per_cell():
    df = api.load(QUICKSTART)
    assert len(df) == 55 and df.hash.is_unique
    assert set(df.mechanism) == {"none", "mvl", "tem", "trlaplace", "truncated_gumbel",
                                 "identity", "no_information"}
    base = df[df.baseline]
    assert len(base) == 5 and base.epsilon.eq(float("inf")).all()
    assert base["delta_utility"].isna().all() and df["privacy[entities]"].notna().all()
    assert not df.dataset_config.str.contains("path").any()
    # anchored per cell against its seed's baseline: mvl ε = 1 is at chance in every seed
    mvl1 = df[(df.mechanism == "mvl") & (df.epsilon == 1.0)]
    assert mvl1.utility_retained.eq(0.0).all() and mvl1["anchored_tradeoff[entities]"].eq(0).all()
    assert (mvl1["tradeoff[entities]"] > 0).all()  # the thesis' sum rewards it
    assert base["utility_retained"].isna().all()
    priv = df[~df.baseline]
    assert priv["anchored_tradeoff[entities]"].between(0, 1).all()


def test_load_keeps_only_asked_hashes_and_refuses_a_missing_folder(tmp_path):
    some = sorted(p.name for p in (QUICKSTART / "cells").iterdir())[:3]
    assert sorted(api.load(QUICKSTART, hashes=some).hash) == some
    with pytest.raises(FileNotFoundError, match="no results folder"):
        api.load(tmp_path / "nothing")


@pytest.mark.parametrize("bad", [b"bytes", [["already", "tokens"]], 5, {"a": "b"}])
def test_privatize_takes_text_only(bad):
    with pytest.raises(TypeError, match="string or a list of strings"):
        api.privatize(bad, mechanism="tem", epsilon=10)


def test_privatize_returns_the_shape_it_was_given_and_needs_a_mechanism():
    p = api.privatizer(mechanism="tem", epsilon=50, seed=0, vocab_size=5000)
    one = api.privatize("The bank raised rates", using=p)
    assert isinstance(one, str) and one.split()[1] == "bank"  # ε = 50 keeps common words
    many = api.privatize(["The bank", "The match"], using=p)
    assert isinstance(many, list) and len(many) == 2
    with pytest.raises(ValueError, match="mechanism= and epsilon="):
        api.privatize("text")
    with pytest.raises(ValueError, match="not both"):
        api.privatize("text", using=p, epsilon=1)
