"""The yelp loader reads review JSON lines (stars or polarity)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.datasets import DatasetFormatError, load_dataset


def test_yelp_json_lines(tmp_path: Path) -> None:
    f = tmp_path / "review.json"
    rows = [
        {
            "review_id": str(i),
            "user_id": f"u{i % 3}",
            "business_id": "b",
            "stars": float(s),
            "text": f"text {i}",
            "date": "2018-01-01",
        }
        for i, s in enumerate([1, 2, 3, 4, 5] * 4)
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ds = load_dataset("yelp", path=f)
    assert len(ds) == 20 and ds.utility_task.counts() == {str(s): 4 for s in range(1, 6)}
    assert ds.groups.tolist()[:4] == ["u0", "u1", "u2", "u0"]
    pol = load_dataset("yelp", path=f, polarity=True)
    assert len(pol) == 16 and pol.utility_task.kind == "binary"
    assert len(load_dataset("yelp", path=f, max_rows=10)) == 10
    f.write_text(json.dumps({"text": "x"}) + "\n")
    with pytest.raises(DatasetFormatError, match="'text' and 'stars'"):
        load_dataset("yelp", path=f)
