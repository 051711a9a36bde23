"""Where everything lives in a results folder: the only module that spells its file names.

Layout of a results folder (``--results``, default ``results/``)::

    cells/<hash>/spec.json        the cell, every axis resolved (:meth:`bench.grid.Cell.spec`)
    cells/<hash>/metrics.json     its measurements
    cells/<hash>/manifest.json    written last: format, hash, checksums, provenance
    cells/<hash>/signature.json   optional: the contributor's ed25519 signature of the manifest
    cells/<hash>/error.json       instead of the three above: a failed cell
    damaged/<hash>.<UTC time>/    a damaged cell moved aside, with reason.txt
    locks/<hash>.lock             a cell being computed (:class:`bench.results.locks.CellLock`)
    cache/privatized/<key>/       privatized corpora (:mod:`bench.results.corpus`)
    cache/channels/<key>/         the informed adversary's channels (:mod:`bench.results.channels`)
    cache/...                     rewriter checkpoints and rewritten corpora
    mlflow.db, mlartifacts/       the MLflow mirror (:mod:`bench.results.mirror`)
    report/                       ``bench report``: tables, plots, leaderboard.html, index.md
    audit/                        ``bench audit`` records

Everything else in the package asks this module (or :mod:`bench.results`) for a path.
"""

from __future__ import annotations

from pathlib import Path

from bench.errors import InputError

CELLS = "cells"
"""Folder of the cell folders."""
SPEC = "spec.json"
"""A cell's resolved configuration."""
METRICS = "metrics.json"
"""A cell's measurements."""
MANIFEST = "manifest.json"
"""Checksums and provenance, written last into a cell's folder (and a cached corpus')."""
ERROR = "error.json"
"""What a failed cell leaves instead of the three files above."""
SIGNATURE = "signature.json"
"""A contributor's signature of a cell's manifest (:mod:`bench.results.signing`)."""
PROVENANCE = "provenance.json"
"""The provenance record as an MLflow artifact (in a cell folder it is inside the manifest)."""
CELL_FILES = (SPEC, METRICS)
"""The files a manifest seals."""
DAMAGED = "damaged"
"""Folder that damaged cells are moved to."""
LOCKS = "locks"
"""Folder of the lock files."""
CACHE = "cache"
"""Folder of the caches (privatized corpora, rewriter checkpoints)."""
PRIVATIZED = "privatized"
"""Sub-folder of :data:`CACHE` holding privatized corpora."""
CHANNELS = "channels"
"""Sub-folder of :data:`CACHE` holding the informed adversary's channels."""
REPORT_METRICS = "metrics.json"
"""The report's headline numbers (``dvc metrics show``), in the report folder."""


def cells_dir(results: str | Path) -> Path:
    """``<results>/cells``."""
    return Path(results) / CELLS


def cell_dir(results: str | Path, cell_hash: str) -> Path:
    """``<results>/cells/<hash>``."""
    return Path(results) / CELLS / cell_hash


def spec_file(folder: Path) -> Path:
    """A cell folder's spec file."""
    return folder / SPEC


def metrics_file(folder: Path) -> Path:
    """A cell folder's metrics file."""
    return folder / METRICS


def manifest_file(folder: Path) -> Path:
    """A cell folder's manifest."""
    return folder / MANIFEST


def signature_file(folder: Path) -> Path:
    """A cell folder's signature (:mod:`bench.results.signing`)."""
    return folder / SIGNATURE


def error_file(folder: Path) -> Path:
    """A failed cell's error record."""
    return folder / ERROR


def lock_file(results: str | Path, name: str) -> Path:
    """``<results>/locks/<name>.lock``."""
    return Path(results) / LOCKS / f"{name}.lock"


def cache_dir(results: str | Path) -> Path:
    """``<results>/cache``."""
    return Path(results) / CACHE


def privatized_dir(results: str | Path) -> Path:
    """``<results>/cache/privatized``: the privatized-corpus cache."""
    return Path(results) / CACHE / PRIVATIZED


def channels_dir(results: str | Path) -> Path:
    """``<results>/cache/channels``: the informed adversary's channel cache."""
    return Path(results) / CACHE / CHANNELS


def cell_folders(results: str | Path) -> list[Path]:
    """The cell folders under ``<results>/cells`` (dot-folders, a writer's temporary ones,
    left out), sorted by name; a symbolic link to a folder is listed too (readers refuse it
    by name)."""
    return sorted(p for p in cells_dir(results).iterdir()
                  if p.is_dir() and not p.name.startswith("."))


class NoResultsError(InputError, FileNotFoundError):
    """A folder given as a results folder holds no ``cells/`` (bad input)."""


class UnsafeResultsError(InputError, ValueError):
    """A results folder whose ``cells/``, ``damaged/`` or ``locks/`` is a symbolic link, so that
    a command moving or writing cells would write outside it (bad input)."""


def check_results(results: str | Path, *, writes: bool = False) -> Path:
    """``results`` as a :class:`~pathlib.Path`, checked before a command reads (or, with
    ``writes``, moves and writes) its cells.

    Raises:
        NoResultsError: ``<results>/cells`` is not a folder.
        UnsafeResultsError: ``writes`` and ``cells/``, ``damaged/`` or ``locks/`` is a symbolic
            link (nothing is read through it, nothing written).
    """
    results = Path(results)
    if not cells_dir(results).is_dir():
        raise NoResultsError(f"no results under {cells_dir(results)}")
    for sub_folder in (CELLS, DAMAGED, LOCKS) if writes else ():
        if (results / sub_folder).is_symlink():
            raise UnsafeResultsError(f"{results / sub_folder} is a symbolic link: bench reads and "
                                     f"writes only inside {results}; nothing was changed")
    return results
