"""Boards in words: a short title for each board and its full settings, for the page.

A board's key is the report's dataset label (``bbc(max_tokens=200, split=[0.6,0.2,0.2], ...)``,
``csv(data=083eff23, label=stance, text=body)``, with every setting that differs in the results
set): exact, but a settings dump. The page titles a board in words instead -- the dataset (for a
file dataset, ``csv`` / ``jsonl``, the file's base name, never its folder), the utility task, the
private attribute and the model(s) -- and lists the settings behind a toggle. Where two boards
would get the same title, each title names what tells them apart (a dataset parameter, a
setting, and only as a last resort the data's content digest).

Both are new keys of a board in ``leaderboard.json`` (``title``, ``settings``; added within
schema version 1, :mod:`bench.leaderboard.build`); a page given an older document falls back to
the label.

Example:
    >>> infos = [describe_board(records, task="topic", attribute="entities", suite="",
    ...                         models=["lstm"])]
    >>> titles(infos)
    >>> infos[0].title
    'bbc · utility: topic · private attribute: entities · model: lstm'
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.analysis.results import CellRecord, fmt_value

FILE_DATASETS = frozenset({"csv", "jsonl"})
"""Datasets read from a user's file: titled by the file's base name."""

DIGEST_KEYS = ("data",)
"""Dataset config keys that hold a content digest: never in a title unless nothing else tells
two boards apart (the digest identifies the data; the file name names it)."""

VARIES = "varies"
"""The value shown for a setting whose cells on one board disagree (e.g. a per-seed value)."""

_SEP = re.compile(r"[\\/]")


def base_name(path: Any) -> str:
    """The last component of a path written with ``/`` or ``\\`` (``""`` for none)."""
    if path is None:
        return ""
    parts = [p for p in _SEP.split(str(path)) if p]
    return parts[-1] if parts else ""


@dataclass
class BoardInfo:
    """What a board is about, in words."""

    dataset: str
    """The dataset as a title names it: its registry name, or a file's base name."""
    task: str
    """The utility task(s)."""
    attribute: str
    """The private attribute (``""``: the board of configurations that measure none)."""
    models: list[str]
    """The utility models on the board."""
    suite: str
    """The suite version of cells written before 0.4.0 (``""`` since; ``mixed``)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """Every setting of the board's cells, flat (``dataset.config.subsample``:
    ``600``); a value its cells disagree on is :data:`VARIES`."""
    title: str = ""
    """The title (:func:`titles` fills it, naming what tells colliding boards apart)."""
    extra: str = ""
    """What tells the board apart from another of the same words (``subsample=600``; ``""``)."""

    @property
    def dataset_title(self) -> str:
        """The dataset as the title names it, with what tells it apart."""
        return self.dataset + (f" ({self.extra})" if self.extra else "")

    def base_title(self) -> str:
        """The title: the dataset (with :attr:`extra`), task, attribute, model(s), suite."""
        parts = [self.dataset_title,
                 f"utility: {self.task}",
                 f"private attribute: {self.attribute}" if self.attribute
                 else "no private attribute",
                 ("model: " if len(self.models) == 1 else "models: ") + ", ".join(self.models)]
        if self.suite:
            parts.append(f"suite {self.suite}")
        return " · ".join(parts)


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """``value`` flattened into ``out`` (mappings one level per key, keys joined with ``.``)."""
    if isinstance(value, Mapping) and value:
        for k in sorted(value, key=str):
            _flat(f"{prefix}.{k}" if prefix else str(k), value[k], out)
    else:
        out[prefix] = value


def _json_safe(v: Any) -> Any:
    """A value the document can hold (``allow_nan=False``): non-finite floats as text."""
    if isinstance(v, float) and not math.isfinite(v):
        return fmt_value(v)
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _json_safe(x) for k, x in v.items()}
    return v


def _settings(records: Sequence[CellRecord]) -> dict[str, Any]:
    """The settings every cell of the board has (dataset, its content, the run settings), with
    :data:`VARIES` where the cells disagree (a dataset seed, the baseline's own settings)."""
    seen: dict[str, list[str]] = {}
    values: dict[str, Any] = {}
    for r in records:
        flat: dict[str, Any] = {}
        ds = r.spec.get("dataset")
        if isinstance(ds, Mapping):
            flat["dataset.name"] = ds.get("name")
            flat["dataset.version"] = ds.get("version")
            _flat("dataset.config", ds.get("config") or {}, flat)
        else:
            flat["dataset.name"] = ds
        flat["dataset.content"] = r.spec.get("dataset_hash")
        _flat("settings", r.spec.get("settings") or {}, flat)
        for k, v in flat.items():
            text = fmt_value(v)
            if text not in seen.setdefault(k, []):
                seen[k].append(text)
            values.setdefault(k, _json_safe(v))
    first = ("dataset.name", "dataset.version")
    order = sorted(seen, key=lambda k: (k not in first, first.index(k) if k in first else 0,
                                        k == "dataset.content", not k.startswith("dataset."), k))
    return {k: (values[k] if len(seen[k]) == 1 else VARIES) for k in order}


def describe_board(records: Iterable[CellRecord], *, task: str, attribute: str, suite: str,
                   models: Iterable[str]) -> BoardInfo:
    """The words of one board, from the cells on it (entries and baselines)."""
    records = list(records)
    settings = _settings(records)
    name = settings.get("dataset.name")
    name = "?" if name in (None, VARIES) else str(name)
    shown = name
    path = settings.get("dataset.config.path")
    if name in FILE_DATASETS and path not in (None, VARIES) and base_name(path):
        shown = base_name(path)
    return BoardInfo(shown, task, attribute, sorted(set(models)), suite, settings)


_PREFIXES = ("dataset.config.", "settings.", "dataset.")


def _short(key: str) -> str:
    """A setting's key as a title names it (``dataset.config.subsample`` -> ``subsample``,
    ``settings.model_defaults.epochs`` -> ``model_defaults.epochs``)."""
    return next((key[len(p):] for p in _PREFIXES if key.startswith(p)), key)


def _difference(infos: Sequence[BoardInfo]) -> list[str]:
    """For boards of one title, the text that tells each apart (``""`` where none)."""
    keys = sorted({k for i in infos for k in i.settings})

    def differs(k: str) -> bool:
        return len({fmt_value(i.settings.get(k)) for i in infos}) > 1

    def digest(k: str) -> bool:
        return k == "dataset.content" or k.rsplit(".", 1)[-1] in DIGEST_KEYS

    varying = [k for k in keys if differs(k) and not digest(k)]
    if not varying:  # nothing but the data itself: name its digest (short)
        varying = [k for k in keys if differs(k)]
    out = []
    for i in infos:
        bits = []
        for k in varying:
            v = i.settings.get(k)
            short = _short(k)
            if v is None:
                continue
            if short == "path":
                text = base_name(v) if len({base_name(j.settings.get(k)) for j in infos}) \
                    == len(infos) else str(v)
            elif digest(k):
                short, text = "data", str(v)[:8]
            else:
                text = fmt_value(v)
            bits.append(f"{short}={text}")
        out.append(", ".join(bits))
    return out


def titles(infos: Sequence[BoardInfo]) -> None:
    """Set each board's :attr:`BoardInfo.title`: its words, and where several boards would share
    a title, what tells each apart."""
    groups: dict[str, list[BoardInfo]] = {}
    for i in infos:
        i.extra = ""
        groups.setdefault(i.base_title(), []).append(i)
    for same in groups.values():
        extras = _difference(same) if len(same) > 1 else [""]
        for i, extra in zip(same, extras, strict=True):
            i.extra = extra
            i.title = i.base_title()


__all__ = ["DIGEST_KEYS", "FILE_DATASETS", "VARIES", "BoardInfo", "base_name",
           "describe_board", "titles"]
