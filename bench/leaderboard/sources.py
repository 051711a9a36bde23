"""Where a leaderboard's cells come from: results folders and MLflow tracking stores.

:func:`read_folder` reads ``<folder>/cells`` through the report's reader (sealed cells are
integrity-checked; damaged, half-written and unreadable ones are left out with one line each),
the provenance each cell's manifest records and the signer its signature proves
(:mod:`bench.results.signing`). :func:`read_mlflow` finds the cell runs of a tracking store
(a tracking server through its REST API, every request bounded in bytes and time:
:mod:`bench.leaderboard.server`; a local store through MLflow's client) and reads each run's
spec, metrics, manifest, signature and provenance artifacts (:mod:`bench.results.layout` names
them) only from where the store keeps them, checked as a folder's cells are. Both give a
:class:`Source`.

A source that cannot be read at all (no such folder, no ``cells/`` inside, a server that does
not answer) raises :class:`LeaderboardError` with one line naming it.

Example:
    >>> src = read_folder("results", "s0")
    >>> len(src.cells), src.left_out
    (27, 0)
"""

from __future__ import annotations

import logging
import os
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.errors import InputError
from bench.leaderboard.server import CELL_FILTER, Server
from bench.results import layout
from bench.results.provenance import KEYS as PROVENANCE_KEYS
from bench.results.record import hash_problem, scan, validate
from bench.results.signing import SignatureError, cell_signer, verify_signature
from bench.results.store import (
    manifest_problem,
    parse_object,
    read_regular,
    spec_hash_problem,
)

if TYPE_CHECKING:
    from bench.analysis.results import CellRecord

logger = logging.getLogger(__name__)


class LeaderboardError(InputError, ValueError):
    """Bad input for ``bench leaderboard``: the message names the source or file."""


@dataclass
class SourceCell:
    """One cell as one source has it."""

    hash: str
    """The cell hash (its folder name, or the run's ``bench.cell_hash`` tag)."""
    spec: dict[str, Any]
    """The parsed spec."""
    metrics: dict[str, Any]
    """The parsed metrics."""
    source: str
    """Id of the :class:`Source`."""
    provenance: dict[str, Any]
    """:mod:`bench.results.provenance` record, every key present (null where unknown)."""
    href: str | None = None
    """Link to the cell's files (a ``file://`` URI of its folder), or None."""
    mlflow: str | None = None
    """Link to the cell's MLflow run (tracking servers only), or None."""
    sealed: bool = True
    """Whether the copy has a manifest its files match (a copy without one is listed, never
    ranked: nothing says its files are the ones that were computed)."""
    signer: str | None = None
    """Key id (``ed25519:<hex>``) whose signature of the manifest verifies, or None: unsigned
    (:mod:`bench.results.signing`)."""


@dataclass
class Source:
    """What one results folder or tracking store contributed."""

    id: str
    """``s0``, ``s1``, ... in the order given."""
    kind: str
    """``folder`` or ``mlflow``."""
    location: str
    """The absolute folder or the tracking URI."""
    cells: list[SourceCell] = field(default_factory=list)
    """The sound cells read."""
    problems: list[str] = field(default_factory=list)
    """One line per cell or file left out."""
    audit_folders: list[Path] = field(default_factory=list)
    """``bench audit`` record folders found with the source (``<folder>/audit``)."""

    @property
    def left_out(self) -> int:
        """Cells or runs left out (one problem line each)."""
        return len(self.problems)

    def describe(self) -> dict[str, Any]:
        """The source's entry in ``leaderboard.json``."""
        return {"id": self.id, "kind": self.kind, "location": self.location,
                "cells": len(self.cells), "left_out": self.left_out,
                "unsealed": sum(not c.sealed for c in self.cells),
                "signed": sum(c.signer is not None for c in self.cells),
                "signers": sorted({c.signer for c in self.cells if c.signer})}


MAX_CLAIM = 200
"""Characters kept of a provenance value (a host name, a commit, ``run_by``); a longer claim
is cut, and says so, so that no copied claim bloats the board (issue 48, trial 10)."""


def _claim(v: Any, limit: int = MAX_CLAIM) -> str | None:
    """A provenance value as the board shows it: text, at most ``limit`` characters (None for
    anything but text)."""
    if not isinstance(v, str):
        return None
    return v if len(v) <= limit else f"{v[:limit]}... ({len(v)} characters, cut)"


def provenance_record(raw: Any, suite_version: Any = None) -> dict[str, Any]:
    """A provenance record with every key (null where ``raw`` lacks it); the suite version
    falls back to the one the cell's metrics record.

    A submitted record is a claim, read as bounded text: each value a string of at most
    :data:`MAX_CLAIM` characters (anything else null) and ``numeric`` its platform ``id`` only
    (:func:`bench.leaderboard.merge.platform_of`; the whole record stays in the cell's
    manifest)."""
    raw = raw if isinstance(raw, dict) else {}
    out: dict[str, Any] = {k: _claim(raw.get(k)) for k in PROVENANCE_KEYS if k != "numeric"}
    num = raw.get("numeric")
    pid = _claim(num.get("id"), 64) if isinstance(num, dict) else None
    out["numeric"] = {"id": pid} if pid else None
    if out["suite_version"] is None and suite_version:
        out["suite_version"] = _claim(str(suite_version))
    return {k: out[k] for k in PROVENANCE_KEYS}


def invalid(spec: dict[str, Any], metrics: dict[str, Any]) -> str | None:
    """Why a cell from an untrusted source is not read, or None: the cell record's schema
    (:func:`bench.results.record.validate`)."""
    return validate(spec, metrics)


# --------------------------------------------------------------------------------------------
# Results folders
# --------------------------------------------------------------------------------------------


def cells_source(records: Iterable[CellRecord], sid: str, location: str, *,
                 problems: Sequence[str] = (), where: str = "",
                 href: Callable[[CellRecord], str | None] = lambda rec: rec.folder.as_uri(),
                 ) -> Source:
    """A folder :class:`Source` of cells already read, and validated, by
    :func:`bench.results.record.scan` (directly, or through the report's reader).

    Each cell is checked the same way for every caller: its spec must name its own hash
    (:func:`bench.results.record.hash_problem`; the leaderboard keys cells by hash); a cell
    that does not is left out with one problem line (``where`` + the cell + why).
    ``problems``: lines from the reading itself.
    ``href(cell)``: the link to the cell's files (None: no link).
    """
    src = Source(sid, "folder", location, problems=list(problems))
    for rec in records:
        signer = None
        try:
            why = hash_problem(rec)  # its values passed the schema when it was read
            if not why and rec.manifest is not None:
                signer = cell_signer(rec.folder)
        except SignatureError as e:
            why = str(e)
        if why:
            src.problems.append(f"{where}{layout.CELLS}/{rec.hash}: {why}; left out")
            continue
        src.cells.append(SourceCell(
            rec.hash, dict(rec.spec), dict(rec.metrics), sid,
            provenance_record(rec.provenance, rec.suite_version), href=href(rec),
            sealed=rec.manifest is not None, signer=signer))
    return src


def read_folder(path: str | Path, sid: str) -> Source:
    """The sound cells of a results folder (the one holding ``cells/``)."""

    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise LeaderboardError(f"{path}: no such results folder")
    if not layout.cells_dir(folder).is_dir():
        raise LeaderboardError(f"{path}: not a results folder (no cells/ inside; `bench run "
                               f"GRID --results {path}` writes one)")
    try:
        os.listdir(layout.cells_dir(folder))
    except OSError as e:
        raise LeaderboardError(f"{path}: cannot read cells/ ({e.strerror or e})") from None
    folder = folder.resolve()
    found = scan(folder, check_hash=False)  # cells_source checks the hash
    where = f"{sid} ({folder}): "
    src = cells_source(found.cells, sid, str(folder), where=where,
                       problems=[f"{where}{w}" for w in found.warnings]
                       + [f"{where}{layout.CELLS}/{h}: {why}; left out"
                          for h, why in found.refused])
    if (folder / "audit").is_dir():
        src.audit_folders.append(folder / "audit")
    return src


# --------------------------------------------------------------------------------------------
# MLflow
# --------------------------------------------------------------------------------------------


def _probe(uri: str) -> None:
    """Fail fast (one line) when a local store does not exist: MLflow's own client would
    create one, or retry for minutes."""
    if uri.startswith("sqlite:///"):
        db = Path(uri.removeprefix("sqlite:///"))
        if not db.is_file():
            raise LeaderboardError(f"{uri}: no MLflow store at {db}")
    elif uri.startswith("file:") or "://" not in uri:
        p = Path(uri.removeprefix("file://")) if uri.startswith("file:") else Path(uri)
        if not p.is_dir():
            raise LeaderboardError(f"{uri}: no MLflow store at {p}")


def _server_runs(uri: str, src: Source) -> tuple[Server, list[tuple[str, Any]]]:
    """A tracking server's cell runs, read with bounds (:mod:`bench.leaderboard.server`)."""
    try:
        server = Server(uri)
        server.health()
    except (OSError, ValueError) as e:
        raise LeaderboardError(f"{uri}: MLflow tracking server not reachable ({e})") from None
    try:
        _n, runs, more = server.cell_runs()
    except OSError as e:
        raise LeaderboardError(f"{uri}: cannot read the MLflow store ({e})") from None
    if more:
        src.problems.append(f"{src.id}: more than the {len(runs):,} cell runs read; the "
                            "others not read")
    return server, [(r.info.experiment_id, r) for r in runs]


def read_mlflow(uri: str, sid: str) -> Source:
    """The cell runs (tag ``bench.kind = cell``) of every experiment of a tracking URI.

    A store is as untrusted as a folder. Each run's artifacts are read only where the store
    itself keeps them (:func:`_artifact_reader`): through the tracking server's own artifact
    proxy (``mlflow-artifacts:`` URIs) for a server, inside the store's folder for a local
    store; only the cell's named files, regular and size-bounded, then parsed and validated as
    a folder's cells are. A run whose artifacts point anywhere else is left out, by name."""
    src = Source(sid, "mlflow", uri)
    if uri.startswith(("http://", "https://")):
        server, runs = _server_runs(uri, src)
        web: str | None = uri.rstrip("/")
    else:
        server, runs, web = None, _local_runs(uri), None
    for exp_id, run in runs:
        cell = _run_cell(uri, exp_id, run, sid, web, server)
        if isinstance(cell, str):
            src.problems.append(cell)
        else:
            src.cells.append(cell)
    if runs and not src.cells:
        raise LeaderboardError(
            f"{uri}: none of its {len(runs)} cell run(s) could be read (e.g. "
            f"{src.problems[-1]}). Fix: read the results folder itself (bench leaderboard "
            f"RESULTS) or its store (--mlflow sqlite:///RESULTS/mlflow.db); a tracking server "
            f"must serve its runs' artifacts (mlflow ui / mlflow server on that store, or "
            f"bench mlflow-sync --results RESULTS --tracking-uri URI to log them there)")
    return src


def _local_runs(uri: str) -> list[tuple[str, Any]]:
    """A local store's cell runs, through MLflow's own client (the store is a file here)."""
    _probe(uri)
    from bench.results.mirror import import_mlflow

    MlflowClient = import_mlflow().MlflowClient  # noqa: N806 (the class, by its name)

    try:
        client = MlflowClient(tracking_uri=uri)
        runs = []
        for exp in client.search_experiments():
            token = None
            while True:
                page = client.search_runs([exp.experiment_id], CELL_FILTER,
                                          max_results=1000, page_token=token)
                runs += [(exp.experiment_id, r) for r in page]
                token = page.token
                if not token:
                    break
    except Exception as e:  # noqa: BLE001 - any MLflow failure: one line naming the URI
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise LeaderboardError(f"{uri}: cannot read the MLflow store ({first})") from None
    return runs


def _store_root(uri: str) -> Path | None:
    """The folder a local store keeps everything in (its artifacts must be inside), or None
    for a tracking server."""
    if uri.startswith(("http://", "https://")):
        return None
    if uri.startswith("sqlite:///"):
        return Path(uri.removeprefix("sqlite:///")).resolve().parent
    return Path(urllib.parse.urlparse(uri).path if uri.startswith("file:") else uri).resolve()


def _artifact_reader(uri: str, artifact_uri: str, run_id: str = "",
                     server: Server | None = None) -> Callable[[str], bytes | None] | str:
    """A reader of one run's named artifacts (``read(name)``: its bytes, None if the run has
    no such artifact; OSError if it cannot be read), or why the run's artifacts are not read.

    A tracking server (``server``): through the server's own ``get-artifact`` route, which
    reads the run's artifacts where that server keeps them (its ``mlflow-artifacts:`` proxy,
    or its own folder: ``mlflow ui`` over a SQLite store whose runs were logged with ``file:``
    artifacts), each answer bounded in size and time (:meth:`bench.leaderboard.server.Server.
    artifact`); this machine never reads a path a server names and sends no traffic anywhere
    but to the server. A local store: only folders that resolve inside the store's folder,
    read as any untrusted cell file (:func:`bench.results.store.read_regular`: no symbolic
    link followed, bounded)."""
    parsed = urllib.parse.urlparse(artifact_uri)
    if server is not None:
        own = urllib.parse.urlparse(uri)
        if parsed.scheme == "mlflow-artifacts" and (
                parsed.netloc not in ("", own.netloc) or ".." in parsed.path.split("/")):
            return (f"artifacts at {artifact_uri[:120]!r}, not on the tracking server's own "
                    "artifact proxy; not read")
        return lambda name: server.artifact(run_id, name)
    root = _store_root(uri)
    if parsed.scheme not in ("", "file"):
        return f"artifacts at {artifact_uri[:120]!r}, outside the store; not read"
    folder = Path(urllib.parse.unquote(parsed.path) if parsed.scheme else artifact_uri).resolve()
    if root is None or not folder.is_relative_to(root):
        return f"artifacts at {artifact_uri[:120]!r}, outside the store's folder {root}; not read"

    def read(name: str) -> bytes | None:
        try:
            return read_regular(folder / name)
        except FileNotFoundError:
            return None
    return read


def _run_cell(uri: str, exp_id: str, run: Any, sid: str, web: str | None,
              server: Server | None = None) -> SourceCell | str:
    """One run as a :class:`SourceCell`, or the line saying why it is left out."""
    rid = run.info.run_id
    h = run.data.tags.get("bench.cell_hash", "")
    where = f"{sid}: run {rid[:12]} (cell {str(h)[:64] or '?'})"
    if run.info.status != "FINISHED":
        return f"{where}: run status {str(run.info.status)[:40]}; left out"
    read = _artifact_reader(uri, str(run.info.artifact_uri or ""), rid, server)
    if isinstance(read, str):
        return f"{where}: {read}; left out"
    raw: dict[str, bytes | None] = {}
    try:
        for name in (layout.SPEC, layout.METRICS, layout.PROVENANCE, layout.MANIFEST,
                     layout.SIGNATURE):
            raw[name] = read(name)
    except OSError as e:
        return f"{where}: artifacts not readable ({str(e).splitlines()[0][:200]}); left out"
    parsed: dict[str, dict | None] = {}
    try:
        for name in (layout.SPEC, layout.METRICS, layout.PROVENANCE, layout.MANIFEST):
            data = raw[name]
            parsed[name] = None if data is None else parse_object(data, name)
    except ValueError as e:
        return f"{where}: {e}; left out"
    spec, metrics = parsed[layout.SPEC], parsed[layout.METRICS]
    if spec is None or metrics is None:
        missing = layout.SPEC if spec is None else layout.METRICS
        return (f"{where}: no {missing} artifact (logged by an older bench); left out -- "
                "`bench leaderboard` on its results folder reads it")
    if spec.get("hash") != h:
        return f"{where}: {layout.SPEC} names cell {spec.get('hash')!r}; left out"
    why = invalid(spec, metrics) or spec_hash_problem(spec, h)
    if why:  # a run's spec is held to the hash rule a folder's is (issue 48, trial 10)
        return f"{where}: {why}; left out"
    manifest, signer = parsed[layout.MANIFEST], None
    if manifest is not None:  # sealed: the manifest must match the files' bytes
        files = {n: raw[n] or b"" for n in layout.CELL_FILES}
        why = manifest_problem(manifest, h, files)
        if why:
            return f"{where}: damaged ({why}); left out"
        if raw[layout.SIGNATURE] is not None:
            try:
                signer = verify_signature(raw[layout.MANIFEST] or b"", raw[layout.SIGNATURE])
            except SignatureError as e:
                return f"{where}: {e}; left out"
    link = f"{web}/#/experiments/{exp_id}/runs/{rid}" if web else None
    prov = manifest.get("provenance") if manifest is not None else parsed[layout.PROVENANCE]
    return SourceCell(h, spec, metrics, sid,
                      provenance_record(prov, spec.get("suite_version")),
                      href=None, mlflow=link, sealed=manifest is not None, signer=signer)
