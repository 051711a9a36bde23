"""``bench leaderboard``: results of many runs merged into one ranking per task.

Sources (:mod:`~bench.leaderboard.sources`: results folders, MLflow tracking stores) ->
merged cells, one per hash, conflicts set apart (:mod:`~bench.leaderboard.merge`) -> boards
and entries with their scores, bootstrap intervals and ranks (:mod:`~bench.leaderboard.build`,
:mod:`~bench.leaderboard.rank`) -> ``leaderboard.json`` and the page
(:mod:`~bench.leaderboard.page`, its script and style in ``static/``). ``bench report``'s
``leaderboard.html`` is the same builder and page on one folder
(:mod:`~bench.leaderboard.report_page`). ``docs/leaderboard.md`` documents the score and the schema.

Example:
    >>> doc = build_leaderboard(["results", "../other/results"], out="board")
    >>> doc["boards"][0]["private_attribute"], doc["entries"][0]["rank"]
    ('entities', 1)
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.leaderboard.build import SCHEMA, SCHEMA_VERSION, build
from bench.leaderboard.report_page import render_grid_page
from bench.leaderboard.sources import LeaderboardError, Source, read_folder, read_mlflow


def read_sources(folders: Sequence[str | Path] = (),
                 mlflow_uris: Sequence[str] = ()) -> list[Source]:
    """Every source, folders first, ids ``s0, s1, ...`` in the order given."""
    if not folders and not mlflow_uris:
        raise LeaderboardError("no sources: give results folders and/or --mlflow URI")
    sources = [read_folder(f, f"s{i}") for i, f in enumerate(folders)]
    sources += [read_mlflow(u, f"s{len(folders) + i}") for i, u in enumerate(mlflow_uris)]
    return sources


def trusted_ids(sources: Sequence[Source], trusted: Sequence[str | Path]) -> list[str]:
    """The ids of the sources named in ``trusted`` (a folder by its resolved path, a tracking
    store by its URI); a name that is not one of the sources is an error."""
    out = []
    for t in trusted:
        want = str(t) if "://" in str(t) else str(Path(t).expanduser().resolve())
        match = [s.id for s in sources if s.location == want]
        if not match:
            raise LeaderboardError(f"--trusted {t}: not one of the sources given")
        out += match
    return out


def write_leaderboard(doc: dict[str, Any], out: str | Path) -> Path:
    """Write ``leaderboard.json`` and ``leaderboard.html`` into ``out`` together: both are
    built in a temporary sibling folder first, so an error leaves ``out`` as it was. A
    non-finite number (the ε = ∞ of the ``identity`` known answer) is written as the page
    embeds it and as ``spec.json`` stores it: ``"inf"`` (:func:`~bench.leaderboard.page.
    finite_json`)."""
    from bench.leaderboard.page import finite_json, render_page

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise LeaderboardError(f"{out}: exists and is not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        (tmp / "leaderboard.json").write_text(
            json.dumps(finite_json(doc), indent=1, sort_keys=True, allow_nan=False) + "\n",
            encoding="utf-8")
        (tmp / "leaderboard.html").write_text(render_page(doc), encoding="utf-8")
        out.mkdir(exist_ok=True)
        for name in ("leaderboard.json", "leaderboard.html"):
            os.replace(tmp / name, out / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def build_leaderboard(folders: Sequence[str | Path] = (), mlflow_uris: Sequence[str] = (),
                      out: str | Path | None = None, *, allow_mixed_versions: bool = False,
                      resamples: int = 1000, seed: int = 0,
                      audits: Sequence[str | Path] = (),
                      trusted: Sequence[str | Path] = (), verify: int = 0,
                      verify_seed: int | None = None, keys: str | Path | None = None
                      ) -> dict[str, Any]:
    """Read the sources, merge and rank them; write the files into ``out`` when given.

    ``trusted``: sources (results folders or tracking URIs, as given) whose copy stands in a
    conflict (the maintainer's own results; ``docs/leaderboard.md``). ``verify``: cells of
    every entry to recompute (:mod:`bench.leaderboard.recompute`), chosen with ``verify_seed``
    (None: a fresh random seed, recorded in the document).
    ``keys``: a keyring file naming contributors' public keys
    (:func:`bench.results.signing.read_keyring`).
    """
    from bench.results.signing import SignatureError, read_keyring

    if verify < 0:
        raise LeaderboardError(f"--verify must be 0 or more, got {verify}")
    if resamples < 100:
        raise LeaderboardError(f"--resamples must be at least 100, got {resamples}")
    for a in audits:
        if not Path(a).is_dir():
            raise LeaderboardError(f"{a}: no such audit folder")
    try:
        keyring = read_keyring(keys) if keys is not None else {}
    except SignatureError as e:
        raise LeaderboardError(f"--keys {e}") from None
    sources = read_sources(folders, mlflow_uris)
    doc = build(sources, allow_mixed_versions=allow_mixed_versions, resamples=resamples,
                seed=seed, extra_audits=audits, trusted=trusted_ids(sources, trusted),
                verify=verify, verify_seed=verify_seed, keys=keyring)
    if out is not None:
        write_leaderboard(doc, out)
    return doc


__all__ = ["SCHEMA", "SCHEMA_VERSION", "LeaderboardError", "build", "build_leaderboard",
           "render_grid_page",
           "read_sources", "write_leaderboard"]
