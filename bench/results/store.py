"""The cells of a results folder: how a cell is written, when it counts as done, and what
happens to a damaged one.

Layout::

    results/cells/<hash>/spec.json       the cell, every axis resolved (Cell.spec + hash, name,
                                         dataset_hash; cells written before 0.4.0 also
                                         suite_version, which their hash covered)
    results/cells/<hash>/metrics.json    its measurements
    results/cells/<hash>/manifest.json   written last: format, hash, each file's size and
                                         sha256, and who wrote the cell (``provenance``:
                                         :func:`bench.results.provenance.current`)
    results/cells/<hash>/error.json      instead of the three above: a failed cell
    results/damaged/<hash>.<UTC time>/   a damaged cell moved aside, with reason.txt

A cell is written into a temporary folder that is renamed into place (atomic on one
filesystem), so a killed writer leaves a dot-folder, never a half-written cell. A cell counts as
done only when :func:`check_cell` finds nothing wrong: the manifest parses and names the
folder's hash, both files have the recorded size and sha256, both parse as JSON objects with
the documented keys (:data:`SPEC_KEYS`, :data:`METRICS_KEYS`), the spec names the folder's hash
and, for a cell written since 0.4.0 (its spec has no ``suite_version``: before, the suite
version was hashed too), the hash recomputed from the spec is the folder's name. Anything
else is *damaged*: ``bench run`` moves it aside with
:func:`quarantine` (evidence is never deleted), says so in one line and recomputes the cell;
``bench verify`` reports it.

Example:
    >>> write_cell(folder, spec, metrics)
    >>> check_cell(folder) is None
    True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from bench.results.layout import CELL_FILES, DAMAGED, ERROR, MANIFEST, METRICS, SPEC

logger = logging.getLogger(__name__)

MANIFEST_FORMAT = 1
"""Version of the manifest's layout (and of the cell record's schema:
:data:`bench.results.record.SCHEMA`)."""
SPEC_KEYS = ("hash", "name", "dataset", "model", "mechanism", "sensitivity", "mapping",
             "epsilon", "seed", "settings")
"""Keys every ``spec.json`` has (:meth:`bench.grid.Cell.spec` plus the runner's own)."""
METRICS_KEYS = ("runtime",)
"""Keys every ``metrics.json`` has, whatever the grid's ``metrics`` setting."""
MAX_FILE_BYTES = 64 * 2**20
"""Largest cell file read (a cell's JSON files are kilobytes; this bounds what a hostile or
broken results folder can make a reader load)."""


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------

def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    return str(o)


def clean(obj: Any) -> Any:
    """JSON-safe copy: non-finite floats become the strings 'inf' / '-inf' / 'nan'."""
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else ("inf" if f > 0 else "-inf" if f < 0 else "nan")
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def dumps(obj: Any) -> bytes:
    """The bytes a results JSON file holds (sorted keys, indent 1)."""
    return json.dumps(clean(obj), indent=1, sort_keys=True,
                      default=_json_default).encode("utf-8")


def _write_bytes(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (temp file in the same folder, then rename); on any error,
    including a full disk, the temp file is removed and ``path`` is left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        _write_bytes(Path(tmp), dumps(obj))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def staged_folder(final: Path, *, replace: bool = False,
                  mode: int | None = None) -> Iterator[Path]:
    """A temporary sibling folder of ``final`` to fill; when the block ends, it is renamed to
    ``final`` in one step, so no reader ever sees a half-written folder.

    If ``final`` exists then: with ``replace`` it is moved aside first (and removed after);
    without, or when another writer renamed its own copy into place meanwhile, the existing
    folder is kept and the temporary one removed (the cache entries: first writer wins). On any
    error in the block the temporary folder is removed and ``final`` is left as it was.
    ``mode``: the temporary folder's permissions (``mkdtemp`` makes it private)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}."))
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        yield tmp
        aside = None
        if replace and final.exists():
            aside = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".old-{final.name}."))
            os.rename(final, aside / final.name)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another writer finished first: theirs
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def manifest_for(folder_hash: str, files: dict[str, bytes],
                 provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of a cell: its hash, each file's size and sha256 and, when given, the
    provenance record of whoever wrote the files (not checked: it describes, it is not data)."""
    out: dict[str, Any] = {
        "format": MANIFEST_FORMAT, "hash": folder_hash,
        "files": {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                  for name, data in sorted(files.items())}}
    if provenance is not None:
        out["provenance"] = provenance
    return out


def write_cell(folder: Path, spec: dict, metrics: dict,
               provenance: dict[str, Any] | None = None) -> None:
    """Write ``spec.json``, ``metrics.json`` and, last, ``manifest.json`` as one atomic step:
    everything goes into a temporary sibling folder that is renamed into place. On any error
    (a full disk included) the temporary folder is removed and ``folder`` is left as it was.

    The manifest's provenance is ``provenance`` when given (``bench migrate`` keeps an old
    cell's own), else this process's (:func:`bench.results.provenance.current`): the process that
    computed the cell writes it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}."))
    try:
        files = {SPEC: dumps(spec), METRICS: dumps(metrics)}
        for name, data in files.items():
            _write_bytes(tmp / name, data)
        if provenance is None:
            from bench.results.provenance import current

            provenance = current()
        _write_bytes(tmp / MANIFEST, dumps(manifest_for(folder.name, files, provenance)))
        if folder.exists():  # e.g. an error.json from a failed earlier attempt
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_error(folder: Path, record: dict[str, Any]) -> None:
    """Record a failed cell: ``error.json`` (name, error, traceback) in its folder."""
    write_json(folder / ERROR, record)


def seal_cell(folder: Path) -> None:
    """Write the manifest of a cell whose files are otherwise sound (a cell written before
    manifests existed); refuses a cell :func:`check_cell` finds anything else wrong with."""
    problem = check_cell(folder, require_manifest=False)
    if problem:
        raise ValueError(f"{folder}: {problem}; not sealed")
    files = {n: (folder / n).read_bytes() for n in CELL_FILES}
    write_json(folder / MANIFEST, manifest_for(folder.name, files))


# --------------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------------

def read_regular(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    A results folder may come from anyone: a symbolic link is not followed (it could point
    anywhere, ``/dev/zero`` included), a FIFO or device is not opened (reading it could block
    or never end), and a file over ``limit`` is not loaded.

    Raises:
        OSError: any of these (the message names the file and why), or the file is missing.
    """
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise OSError(f"{path.name} is a symbolic link (not followed)")
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path.name} is not a regular file")
    if st.st_size > limit:
        raise OSError(f"{path.name} has {st.st_size} bytes, more than the {limit} a cell file "
                      "may have")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path.name} grew past {limit} bytes while being read")
    return data


def parse_object(data: bytes, name: str) -> dict:
    """A JSON object from a cell file's bytes (ValueError naming ``name`` otherwise, deep
    nesting included: it would exhaust the parser's recursion)."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{name} is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"{name} does not parse ({e})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{name} is not a JSON object")
    return obj


def load_object(path: Path) -> dict:
    """A cell file's JSON object, read safely (:func:`read_regular`, :func:`parse_object`).

    Raises:
        OSError: the file cannot be read as a regular cell file.
        ValueError: it is not a JSON object.
    """
    return parse_object(read_regular(path), path.name)


def read_provenance(folder: Path) -> dict[str, Any] | None:
    """The provenance record in a cell's manifest (:func:`bench.results.provenance.current`),
    or None: no manifest, none recorded, or not readable as a cell file."""
    try:
        prov = load_object(folder / MANIFEST).get("provenance")
    except (OSError, ValueError):
        return None
    return prov if isinstance(prov, dict) else None


def file_mismatch(name: str, data: bytes, want: Any) -> str | None:
    """What differs between a file's bytes and its manifest entry (``{"bytes", "sha256"}``, as
    :func:`manifest_for` writes it), or None."""
    want = want if isinstance(want, dict) else {}
    if len(data) != want.get("bytes"):
        return f"{name} has {len(data)} bytes, the manifest says {want.get('bytes')}"
    if hashlib.sha256(data).hexdigest() != want.get("sha256"):
        return f"{name} does not match its checksum"
    return None


def manifest_problem(manifest: dict[str, Any], cell_hash: str,
                     raw: dict[str, bytes]) -> str | None:
    """What does not match between a cell's manifest and its files' bytes (``raw``: each of
    :data:`CELL_FILES`), or None: the format, the cell hash, the list of files, and each
    file's size and sha256. For a cell folder and for the copy an MLflow run carries alike."""
    if manifest.get("format") != MANIFEST_FORMAT:
        return f"{MANIFEST} has format {manifest.get('format')!r}, expected {MANIFEST_FORMAT}"
    if manifest.get("hash") != cell_hash:
        return f"{MANIFEST} names cell {manifest.get('hash')!r}, not {cell_hash!r}"
    files = manifest.get("files")
    if not isinstance(files, dict) or set(files) != set(CELL_FILES):
        return f"{MANIFEST} does not list exactly {', '.join(CELL_FILES)}"
    for name in CELL_FILES:
        problem = file_mismatch(name, raw[name], files[name])
        if problem:
            return problem
    return None


def check_cell(folder: Path, require_manifest: bool = True) -> str | None:
    """What is wrong with a finished cell's folder, or None if it is sound (see the module
    docstring for what is checked). A folder without ``spec.json`` and ``metrics.json`` is
    not a finished cell: ask :func:`cell_state` first. Only regular files are read, with a size
    bound (:func:`read_regular`); a cell folder that is a symbolic link is not followed."""
    if folder.is_symlink():
        return "the cell folder is a symbolic link (not followed)"
    try:
        raw = {n: read_regular(folder / n) for n in CELL_FILES}
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    if require_manifest:
        mf = folder / MANIFEST
        if not mf.is_file():
            return (f"no {MANIFEST} (written before manifests existed, or not by bench; "
                    "`bench verify --seal` seals sound ones)")
        try:
            manifest = load_object(mf)
        except (OSError, ValueError) as e:
            return str(e)
        problem = manifest_problem(manifest, folder.name, raw)
        if problem:
            return problem
    try:
        spec = parse_object(raw[SPEC], SPEC)
        metrics = parse_object(raw[METRICS], METRICS)
    except ValueError as e:
        return str(e)
    for name, obj, keys in ((SPEC, spec, SPEC_KEYS), (METRICS, metrics, METRICS_KEYS)):
        missing = [k for k in keys if k not in obj]
        if missing:
            return f"{name} lacks {', '.join(missing)}"
    if spec["hash"] != folder.name:
        return f"{SPEC} names cell {spec['hash']!r}, not {folder.name!r}"
    return spec_hash_problem(spec, folder.name)


def spec_hash_problem(spec: dict[str, Any], name: str) -> str | None:
    """Why a cell's spec does not hash to ``name`` (its folder's name, or a run's cell hash
    tag), or None. A spec without ``suite_version`` is checked against the cell hash; one
    claiming a suite version against the hash cells had before 0.4.0, which covered it (issue
    48, trial 5: adding ``suite_version`` skipped the check); a spec of a format older still,
    which no longer describes a cell, cannot be checked."""
    from bench.grid import Cell, cell_hash
    from bench.grid.cell import legacy_cell_hash

    if "suite_version" not in spec:
        try:
            h = cell_hash(Cell.from_spec(spec), spec.get("dataset_hash"))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            return f"{SPEC} does not describe a cell ({type(e).__name__}: {e})"
        if h != name:
            return f"{SPEC} hashes to {h}, not to its folder's name"
        return None
    try:
        cell = Cell.from_spec(spec)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    h = legacy_cell_hash(cell, spec.get("dataset_hash"), str(spec["suite_version"]))
    if h != name:
        return (f"{SPEC} hashes to {h} with its suite_version {spec['suite_version']!r}, not "
                "to its folder's name")
    return None


def cell_state(folder: Path) -> str:
    """``"missing"`` (no cell files), ``"failed"`` (only ``error.json``), ``"done"`` (sound)
    or ``"damaged"`` (anything else: see :func:`check_cell`)."""
    has = [(folder / n).exists() for n in (*CELL_FILES, MANIFEST)]
    if not any(has):
        return "failed" if (folder / ERROR).is_file() else "missing"
    return "done" if check_cell(folder) is None else "damaged"


def cell_done(folder: Path) -> bool:
    """Whether the cell in ``folder`` is finished and sound (:func:`check_cell`)."""
    return cell_state(folder) == "done"


def quarantine(path: Path, results: Path, reason: str) -> Path:
    """Move a damaged cell's folder (or a damaged file, e.g. a broken ``mlflow.db``) to
    ``results/damaged/<name>.<UTC time>/`` with a ``reason.txt``; never deletes it. A file or a
    symbolic link goes inside that folder (a link is moved, never followed). Returns the new
    location.

    Raises:
        OSError: ``results/damaged`` is a symbolic link or not a folder inside ``results``.
    """
    damaged = results / DAMAGED
    inside = results.resolve()
    if damaged.is_symlink() or (damaged.exists() and not damaged.is_dir()) or \
            inside not in (damaged.resolve(), *damaged.resolve().parents):
        raise OSError(f"{damaged} is not a folder inside {results} (a symbolic link?): "
                      "nothing is moved there")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = results / DAMAGED / f"{path.name}.{stamp}"
    n = 1
    while dest.exists():
        n += 1
        dest = results / DAMAGED / f"{path.name}.{stamp}.{n}"
    if path.is_dir() and not path.is_symlink():
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, dest)
    else:  # a file, or a symbolic link (moved itself, into a folder of its own: never written
        # through)
        dest.mkdir(parents=True)
        os.replace(path, dest / path.name)
    (dest / "reason.txt").write_text(reason + "\n", encoding="utf-8")
    return dest
