"""Boards in words (``bench.leaderboard.titles``): a board is titled by its dataset (a file
dataset by its file's base name, never a content digest or a folder), its utility task, private
attribute and model; colliding titles name what tells the boards apart; the settings are kept
whole for the page's toggle."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from bench.analysis import load_results
from bench.leaderboard.page import render_page
from bench.leaderboard.report_page import grid_document
from bench.leaderboard.titles import VARIES, base_name, describe_board, titles
from bench.results.record import CellRecord

from .helpers import QUICKSTART, copy_results, spec_of

DIGEST = "083eff23c0ffee0123456789abcdef0123456789abcdef0123456789abcdef01"
CSV_PATH = "/home/alice/private data/mine.csv"


def _rec(h: str, dataset: dict, settings: dict | None = None, data: str = "d" * 64,
         seed: int = 0) -> CellRecord:
    spec = {"hash": h, "dataset": dataset, "dataset_hash": data, "seed": seed,
            "settings": settings or {"vocab_size": 50000}}
    return CellRecord(h, spec, {}, Path(h))


def _info(records, task="topic", attribute="entities", suite="", models=("lstm",)):
    return describe_board(records, task=task, attribute=attribute, suite=suite, models=models)


@pytest.mark.parametrize(("path", "name"), [
    ("/home/alice/data/mine.csv", "mine.csv"), ("C:\\Users\\bob\\posts.jsonl", "posts.jsonl"),
    ("mine.csv", "mine.csv"), ("data/", "data"), (None, "")])
def test_base_name(path, name) -> None:
    assert base_name(path) == name


def test_title_in_words_with_the_settings_kept_whole() -> None:
    info = _info([_rec("a", {"name": "bbc", "version": "2",
                             "config": {"subsample": 600, "split": [0.6, 0.2, 0.2]}}, seed=0),
                  _rec("b", {"name": "bbc", "version": "2",
                             "config": {"subsample": 600, "split": [0.6, 0.2, 0.2]}}, seed=1,
                       data="e" * 64)])
    titles([info])
    assert info.title == "bbc · utility: topic · private attribute: entities · model: lstm"
    assert info.dataset_title == "bbc"
    assert list(info.settings)[:2] == ["dataset.name", "dataset.version"]
    assert info.settings["dataset.config.subsample"] == 600
    assert info.settings["dataset.config.split"] == [0.6, 0.2, 0.2]
    assert info.settings["settings.vocab_size"] == 50000
    assert info.settings["dataset.content"] == VARIES  # per seed: said, not one seed's value
    none = _info([_rec("c", {"name": "rt", "config": {}})], task="sentiment", attribute="",
                 suite="0.3.0", models=["bow", "lstm"])
    titles([none])
    assert none.title == "rt · utility: sentiment · no private attribute · models: bow, lstm · " \
                         "suite 0.3.0"


def test_file_dataset_titled_by_its_base_name_never_its_digest_or_folder() -> None:
    ds = {"name": "csv", "version": "1",
          "config": {"path": CSV_PATH, "data": DIGEST, "text": "body", "label": "topic"}}
    info = _info([_rec("a", ds)])
    titles([info])
    assert info.title.startswith("mine.csv · utility: topic")
    assert "083eff23" not in info.title and "alice" not in info.title
    assert info.settings["dataset.config.path"] == CSV_PATH  # whole, behind the toggle
    assert info.settings["dataset.config.data"] == DIGEST


def test_colliding_titles_name_what_tells_them_apart() -> None:
    def csv(path: str, data: str, **config) -> dict:
        return {"name": "csv", "config": {"path": path, "data": data, "text": "t", "label": "y",
                                          **config}}

    # two files of one name in two folders, and the same file at two sizes
    a = _info([_rec("a", csv("/a/mine.csv", "1" * 64, max_rows=100))])
    b = _info([_rec("b", csv("/b/mine.csv", "2" * 64, max_rows=100))])
    c = _info([_rec("c", csv("/a/mine.csv", "1" * 64, max_rows=500))])
    other = _info([_rec("d", {"name": "bbc", "config": {}})])
    titles([a, b, c, other])
    assert other.title.startswith("bbc · ")  # no collision: nothing added
    assert (a.extra, b.extra, c.extra) == ("max_rows=100, path=/a/mine.csv",
                                           "max_rows=100, path=/b/mine.csv",
                                           "max_rows=500, path=/a/mine.csv")
    assert len({a.title, b.title, c.title}) == 3
    assert all("1111" not in i.title and "2222" not in i.title for i in (a, b, c))
    # the same file twice, only its content changed: the digest is all that tells them apart
    x = _info([_rec("x", csv("/a/mine.csv", "1" * 64))])
    y = _info([_rec("y", csv("/a/mine.csv", "2" * 64))], models=["lstm"])
    titles([x, y])
    assert (x.dataset_title, y.dataset_title) == ("mine.csv (data=11111111)",
                                                  "mine.csv (data=22222222)")
    # settings that differ (a merged leaderboard of two grids)
    p = _info([_rec("p", {"name": "bbc", "config": {}}, {"model_defaults": {}})])
    q = _info([_rec("q", {"name": "bbc", "config": {}}, {"model_defaults": {"epochs": 20}})])
    titles([p, q])
    assert (p.dataset_title, q.dataset_title) == ("bbc (model_defaults={})",
                                                  "bbc (model_defaults.epochs=20)")


def _csv_cells(dst: Path) -> Path:
    """The quickstart's baseline and mvl cells, made cells of a user's CSV file (hand-edited,
    so unsealed: the report's own folder is trusted)."""
    copy_results(dst)
    for cell in sorted((dst / "cells").iterdir()):
        spec = spec_of(cell)
        if spec["mechanism"]["name"] not in ("none", "mvl"):
            shutil.rmtree(cell)
            continue
        spec["dataset"] = {"name": "csv", "version": "1",
                           "config": {"path": CSV_PATH, "data": DIGEST, "text": "body",
                                      "label": "topic", "private": ["entities"]}}
        (cell / "spec.json").write_text(json.dumps(spec))
        (cell / "manifest.json").unlink()
    return dst


def test_board_of_a_csv_dataset_is_titled_by_the_files_base_name(tmp_path, dump_dom) -> None:
    folder = _csv_cells(tmp_path / "results")
    doc = grid_document(load_results(folder))
    (board,) = doc["boards"]
    assert board["title"] == ("mine.csv · utility: topic · private attribute: entities · "
                              "model: lstm")
    assert board["dataset_title"] == "mine.csv"
    assert "csv(" in board["dataset"]  # the key stays the report's exact label
    assert board["settings"]["dataset.config.path"] == CSV_PATH
    page = tmp_path / "leaderboard.html"
    page.write_text(render_page(doc), encoding="utf-8")
    dom = dump_dom(page.resolve().as_uri(), window=(1280, 900))
    table = dom.split('<table id="board"', 1)[1].split("</table>", 1)[0]
    (title,) = re.findall(r'<span class="btitle">(.*?)</span>', table)
    assert title == board["title"]
    plots = dom.split('<div id="plots"', 1)[1].split("</div>", 1)[0]
    assert '<span class="ptitle">mine.csv · utility: topic' in plots
    options = re.findall(r"<option[^>]*>([^<]*)</option>", dom.split('id="filter-dataset"')[1]
                         .split("</select>")[0])
    assert options[1:] == ["mine.csv (1)"]
    visible = re.sub(r'<script type="application/json".*?</script>', "", dom, flags=re.DOTALL)
    visible = re.sub(r"<details class=\"settings\">.*?</details>", "", visible, flags=re.DOTALL)
    assert "083eff23" not in visible and "/home/alice" not in visible


def test_committed_reference_boards_have_titles() -> None:
    """The builder titles the quickstart reference's board in words (not its settings dump)."""
    doc = grid_document(load_results(QUICKSTART))
    (board,) = doc["boards"]
    assert board["title"] == "bbc · utility: topic · private attribute: entities · model: lstm"
    assert board["dataset"].startswith("bbc(max_tokens=200")
