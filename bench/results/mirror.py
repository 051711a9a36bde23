"""MLflow mirror of the result files: one parent run per grid invocation, one child per cell.

The files under ``results/cells`` are the source of truth; this module only mirrors them.
Default store: SQLite at ``results/mlflow.db`` (artifacts under ``results/mlartifacts``); any
tracking URI on request (``--tracking-uri`` or ``MLFLOW_TRACKING_URI``). During ``bench run``
one process talks to MLflow, the run's mirror process (:class:`BackgroundMirror`), never the
cells' workers. A cell is logged once: runs carry the tag ``bench.cell_hash`` and a cell whose
hash is already in the experiment is not logged again (after a resume, or by
:func:`sync_results`, which back-fills MLflow from the result files).

Logged per cell: params = the cell's axes and component parameters; metrics = every finite
number of ``metrics.json`` (flattened); tags = cell hash and name, grid name, git commit, suite
version, dataset hash, guarantee; artifacts = the cell's files byte for byte (spec, metrics,
manifest, signature when signed) and its provenance. Never any text from the dataset.

Example:
    >>> tracker = Tracker("sqlite:///results/mlflow.db", grid_name="smoke")
    >>> tracker.log_cell(hash_, spec, metrics)
    >>> tracker.finish({"done": 3})
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import bench
from bench.results.layout import METRICS, PROVENANCE, SPEC
from bench.results.provenance import git_commit

logger = logging.getLogger(__name__)

EXPERIMENT = "bench"


def import_mlflow() -> Any:
    """``import mlflow``, quietly and without telemetry: MLflow 3 sends usage records to its
    makers unless told not to, and this suite talks to no host but the tracking server the
    user named (``MLFLOW_DISABLE_TELEMETRY`` and ``GIT_PYTHON_REFRESH`` are set only where
    the user did not set them)."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
    import mlflow

    return mlflow


def flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}`` (lists of scalars are joined with commas)."""
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(d, (list, tuple)):
        if all(isinstance(x, (int, float, str, bool)) or x is None for x in d):
            out[prefix[:-1]] = ",".join(map(str, d))
        else:
            for i, v in enumerate(d):
                out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = d
    return out


def numeric_metrics(metrics: dict) -> dict[str, float]:
    """Finite numbers (and booleans as 0/1) of a metrics dict, flattened; the privatizer's
    description (configuration, not a measurement) is left out."""
    out = {}
    for k, v in flatten(metrics).items():
        if k.startswith("privatization.privatizer."):
            continue
        if isinstance(v, bool):
            out[k] = float(v)
        elif isinstance(v, (int, float)) and math.isfinite(float(v)):
            out[k] = float(v)
    return out


def cell_params(spec: dict) -> dict[str, str]:
    """MLflow params of a cell: its axes and component parameters (no settings noise)."""
    keep = {k: spec[k] for k in ("dataset", "model", "mechanism", "sensitivity", "mapping",
                                 "epsilon", "seed") if k in spec}
    return {k: str(v)[:500] for k, v in flatten(keep).items()}


def default_uri(results: str | Path) -> str:
    """``sqlite:///<results>/mlflow.db`` (absolute)."""
    return f"sqlite:///{(Path(results) / 'mlflow.db').resolve()}"


_FINISHED = "attributes.status = 'FINISHED'"
"""The search filter of runs logged whole (:meth:`Tracker.log_cell` finishes a run last)."""


class Tracker:
    """A parent run for one grid invocation; nested child runs for cells."""

    def __init__(self, uri: str, grid_name: str, results: str | Path = "results",
                 params: dict | None = None) -> None:
        mlflow = import_mlflow()

        for name in ("alembic", "mlflow.store.db.utils", "mlflow.tracking.fluent"):
            logging.getLogger(name).setLevel(logging.WARNING)
        self.mlflow = mlflow
        self.grid_name = grid_name
        self.commit = git_commit() or "unknown"
        before = os.environ.get("MLFLOW_TRACKING_URI")
        mlflow.set_tracking_uri(uri)
        # mlflow also exports the URI to the environment (for subprocesses): a later run in
        # this process, or a `bench run` it starts, on another results folder would then log
        # into this folder's store; only a URI the user set stays in the environment
        if before is None:
            os.environ.pop("MLFLOW_TRACKING_URI", None)
        else:
            os.environ["MLFLOW_TRACKING_URI"] = before
        _create_sqlite_store(uri, results)
        client = mlflow.MlflowClient()
        self.client = client
        exp = client.get_experiment_by_name(EXPERIMENT)
        if exp is None:
            exp_id = client.create_experiment(EXPERIMENT,
                                              artifact_location=_artifacts(uri, results))
        else:
            exp_id = exp.experiment_id
        self.experiment_id = exp_id
        self.logged = self._logged_hashes(client)
        self.parent = mlflow.start_run(experiment_id=exp_id, run_name=grid_name)
        mlflow.set_tags({"bench.grid": grid_name, "bench.kind": "grid",
                         "bench.git_commit": self.commit,
                         "bench.suite_version": bench.__version__})
        if params:
            mlflow.log_params({k: str(v)[:500] for k, v in params.items()})

    def _logged_hashes(self, client) -> set[str]:
        hashes: set[str] = set()
        token = None
        while True:
            page = client.search_runs([self.experiment_id], f"tags.`bench.kind` = 'cell' and "
                                      f"{_FINISHED}", max_results=1000, page_token=token)
            hashes.update(r.data.tags.get("bench.cell_hash", "") for r in page)
            token = page.token
            if not token:
                return hashes

    def is_logged(self, cell_hash: str) -> bool:
        """Whether the experiment has a run of this cell, asking MLflow again (another runner
        on the same results folder may have logged it since this tracker started)."""
        if cell_hash in self.logged:
            return True
        found = self.mlflow.MlflowClient().search_runs(
            [self.experiment_id], f"tags.`bench.cell_hash` = '{cell_hash}' and {_FINISHED}",
            max_results=1)
        if found:
            self.logged.add(cell_hash)
        return bool(found)

    def drop_leftovers(self, cell_hash: str) -> int:
        """Delete the runs of a cell that never finished (a process killed while logging it:
        tags, perhaps some metrics, no artifacts), so that logging it again leaves one run;
        returns how many. Call it holding the cell's mirror lock (:func:`mirror_cell`) and
        after :meth:`is_logged` said no: a run still unfinished then is nobody's."""
        runs = self.client.search_runs(
            [self.experiment_id], f"tags.`bench.cell_hash` = '{cell_hash}'", max_results=100)
        left = [r for r in runs if r.info.status != "FINISHED"]
        for r in left:
            self.client.delete_run(r.info.run_id)
        return len(left)

    def log_cell(self, cell_hash: str, spec: dict, metrics: dict, recheck: bool = False,
                 provenance: dict | None = None, files: dict[str, bytes] | None = None) -> bool:
        """Mirror one finished cell as a nested run; False if it was logged before (with
        ``recheck``, as MLflow says now, see :meth:`is_logged`; otherwise as it said when this
        tracker started or since).

        Artifacts: ``spec.json``, ``metrics.json`` (what ``bench leaderboard`` reads back) and
        ``provenance.json`` (``provenance``, by default :func:`bench.results.provenance.current`).
        ``files``: the cell folder's files as they are (:func:`cell_files`: spec, metrics,
        manifest, signature), logged byte for byte instead of ``spec`` and ``metrics``
        re-serialised, so a reader can check the manifest and the signature against them.
        """
        if self.is_logged(cell_hash) if recheck else cell_hash in self.logged:
            return False
        g = metrics.get("guarantee") or {}
        # tags at creation: a run cut short (a killed process) is still found by its hash, and
        # `bench verify` reports its metrics as disagreeing with the files
        tags = {"bench.kind": "cell", "bench.cell_hash": cell_hash,
                "bench.cell": spec.get("name", ""), "bench.grid": self.grid_name,
                "bench.git_commit": self.commit,
                "bench.suite_version": str((provenance or {}).get("suite_version")
                                           or spec.get("suite_version", "")),
                "bench.dataset_hash": spec.get("dataset_hash", ""),
                "bench.guarantee": g.get("kind", "none"),
                "bench.guarantee_proven": str(g.get("proven", ""))}
        # the client's calls, not mlflow.start_run's: one transaction for the run with its
        # tags, one per batch of params and metrics, one to close it (the fluent calls
        # committed about 27 times a cell and looked up the source's git state each time)
        from mlflow.entities import Metric, Param, RunStatus

        client = self.client
        tags["mlflow.parentRunId"] = self.parent.info.run_id
        run = client.create_run(self.experiment_id, tags=tags, run_name=spec.get("name"))
        run_id = run.info.run_id
        now = int(time.time() * 1000)
        params = [Param(k, v) for k, v in cell_params(spec).items()]
        values = [Metric(k, v, now, 0) for k, v in numeric_metrics(metrics).items()]
        for i in range(0, max(len(params), len(values)), 100):
            client.log_batch(run_id, metrics=values[i:i + 100], params=params[i:i + 100],
                             synchronous=True)
        if files:
            for name, data in sorted(files.items()):
                client.log_text(run_id, data.decode("utf-8"), name)
        else:
            client.log_dict(run_id, spec, SPEC)
            client.log_dict(run_id, metrics, METRICS)
        if provenance is None:
            from bench.results.provenance import current

            provenance = current()
        client.log_dict(run_id, provenance, PROVENANCE)
        client.set_terminated(run_id, RunStatus.to_string(RunStatus.FINISHED))
        self.logged.add(cell_hash)
        return True

    def finish(self, counts: dict[str, int], seconds: float | None = None) -> None:
        """Close the parent run with the invocation's counts."""
        metrics = {f"cells_{k}": float(v) for k, v in counts.items()}
        if seconds is not None:
            metrics["wall_seconds"] = float(seconds)
        self.mlflow.log_metrics(metrics)
        self.mlflow.end_run(status="FAILED" if counts.get("failed") else "FINISHED")


def _artifacts(uri: str, results: str | Path) -> str | None:
    """Where a new experiment keeps its artifacts: ``<results>/mlartifacts`` with a SQLite
    store, the server's default otherwise."""
    return (Path(results).resolve() / "mlartifacts").as_uri() if uri.startswith("sqlite:") \
        else None


def _create_sqlite_store(uri: str, results: str | Path) -> None:
    """Create a SQLite store that does not exist yet whole or not at all: its schema (MLflow's
    migrations, about 1.5 s of commits) and the experiment are written to a temporary file
    beside it, which is then linked into place. A run killed meanwhile leaves no store, not a
    half-migrated one that the next run could not open; if another process created the store
    first, its store is kept."""
    mlflow = import_mlflow()
    prefix = "sqlite:///"
    if not uri.startswith(prefix) or uri.endswith(":memory:"):
        return
    path = Path(uri[len(prefix):])
    if not path.parent.is_dir():
        return
    drop_creating_leftovers(path)  # a killed creation's, also where another one succeeded
    if path.exists():
        return
    tmp = path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}.creating")
    tmp.unlink(missing_ok=True)
    try:
        client = mlflow.MlflowClient(tracking_uri=prefix + str(tmp))
        client.create_experiment(EXPERIMENT, artifact_location=_artifacts(uri, results))
        forget_engine(prefix + str(tmp))
        try:
            os.link(tmp, path)  # fails if the store appeared meanwhile: that one is kept
        except FileExistsError:
            pass
        else:
            fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        tmp.unlink(missing_ok=True)


def drop_creating_leftovers(path: Path) -> list[Path]:
    """Delete the temporary stores (``.<name>.<host>.<pid>.creating``) that processes of this
    host killed while creating ``path`` left behind (their process is gone); returns them. A
    store another live process is creating, or one of another host, is left alone."""
    gone = []
    host = socket.gethostname()
    for tmp in path.parent.glob(f".{path.name}.*.creating"):
        parts = tmp.name[len(path.name) + 2:-len(".creating")].rsplit(".", 1)
        if len(parts) != 2 or parts[0] != host or not parts[1].isdigit() or not tmp.is_file():
            continue
        try:
            os.kill(int(parts[1]), 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
            gone.append(tmp)
        except (PermissionError, OverflowError):
            continue
    return gone


def forget_engine(uri: str) -> None:
    """Drop MLflow's cached database engine for ``uri`` and close its pooled connections (a
    store file that was moved away or was a temporary one)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    engine = SqlAlchemyStore._engine_map.pop(uri, None)
    if engine is not None:
        engine.dispose()


def cell_files(folder: Path) -> dict[str, bytes]:
    """A sealed cell's files as MLflow artifacts carry them: spec, metrics, manifest and, when
    it is signed, the signature (read as any cell file: regular, bounded)."""
    from bench.results import layout
    from bench.results.store import read_regular

    names = [SPEC, METRICS, layout.MANIFEST]
    if layout.signature_file(folder).is_file():
        names.append(layout.SIGNATURE)
    return {n: read_regular(folder / n) for n in names}


def _parsed(files: dict[str, bytes], name: str) -> dict[str, Any]:
    """One of :func:`cell_files`' files as its JSON object (the bytes read once serve both)."""
    from bench.results.store import parse_object

    return parse_object(files[name], name)


def sync_results(results: str | Path = "results", uri: str | None = None) -> tuple[int, int]:
    """Back-fill MLflow from ``results/cells``: log every sound cell not yet logged.

    Returns:
        ``(logged, already_there)``.
    """
    from bench.results import layout
    from bench.results.store import cell_done

    results = Path(results)
    cells = [f for f in layout.cell_folders(results)
             if cell_done(f)]  # sound cells only (bench.results.store)
    tracker = Tracker(uri or default_uri(results), "mlflow-sync", results)
    logged = sum(mirror_cell(tracker, results, folder.name) for folder in cells)
    tracker.finish({"synced": logged})
    return logged, len(cells) - logged


def mirror_cell(tracker: Tracker, results: str | Path, cell_hash: str) -> bool:
    """Log one finished cell to MLflow from its files, once; False when MLflow had it already.

    Under a per-cell lock and asking MLflow again: another runner on the same results folder
    may be logging the same cell (it computed it; here it is cached). A run of the cell that
    never finished (a killed ``mlflow-sync`` or run) is deleted first. The run carries the
    cell's files byte for byte (manifest and signature included) and the provenance of whoever
    computed the cell, never this process's (``bench run``, ``bench mlflow-sync`` and
    ``bench verify --repair`` alike; ``{}`` for a cell that predates provenance).
    """
    from bench.results import layout
    from bench.results.locks import CellLock
    from bench.results.store import read_provenance

    folder = layout.cell_dir(results, cell_hash)
    lock = CellLock(layout.lock_file(results, f"{cell_hash}.mlflow"))
    for _ in range(600):  # 30 s; a lock held that long belongs to a stuck runner: go on
        if lock.acquire():
            break
        time.sleep(0.05)
    try:
        if tracker.is_logged(cell_hash):
            return False
        tracker.drop_leftovers(cell_hash)
        files = cell_files(folder)
        # the cell's own provenance (written by the worker that computed it, with the numeric
        # platform it ran on), not this process's
        return tracker.log_cell(cell_hash, _parsed(files, SPEC), _parsed(files, METRICS),
                                provenance=read_provenance(folder) or {}, files=files)
    finally:
        lock.release()


def open_tracker(results: Path, uri: str, grid_name: str,
                 params: dict[str, Any]) -> tuple[Tracker | None, str]:
    """A run's MLflow tracker, or None and why the store cannot be used (the run then goes
    on without it). One runner at a time opens the store: two creating the same SQLite file
    at once ran its schema migration twice, and the second failed ("duplicate column
    name")."""
    from bench.results import layout
    from bench.results.locks import CellLock

    store_lock = CellLock(layout.lock_file(results, "mlflow-store"))
    for _ in range(1200):  # 60 s; then go ahead unlocked
        if store_lock.acquire():
            break
        time.sleep(0.05)
    try:
        return Tracker(uri, grid_name, results, params=params), ""
    except Exception as e:  # e.g. a store an older version's killed run left half-created
        return None, (f"MLflow store {uri} cannot be used ({type(e).__name__}: "
                      f"{_first_line(e)}); the run goes on without it: the files under "
                      f"{results}/cells are the results (`bench verify --results {results} "
                      f"--repair` rebuilds a broken results/mlflow.db)")
    finally:
        store_lock.release()


def _first_line(e: BaseException) -> str:
    return str(e).splitlines()[0] if str(e) else ""


def lost_text(e: BaseException, results: str | Path) -> str:
    """The one warning a run gives when MLflow stops answering."""
    return (f"MLflow stopped answering ({type(e).__name__}: {_first_line(e)}); the run goes "
            f"on without it: the files under {results}/cells are the results, and `bench "
            f"mlflow-sync --results {results}` mirrors them later, each cell once")


MIRROR_COMMAND = [sys.executable, "-m", "bench.results.mirror"]
"""The mirror process :class:`BackgroundMirror` starts (with its configuration as the last
argument, JSON); :func:`serve` is what it runs."""


class BackgroundMirror:
    """The MLflow mirror of one ``bench run``, in a process of its own, off the cells' path.

    Importing MLflow, opening (or creating) its store and logging a cell cost CPU and wait on
    SQLite commits: 0.4 s a cell, 38-59% of the wall time of a grid of fast ``bow`` cells, when
    the run did it between cells; on a thread of the run's process the same work still took
    18% of such a grid run in-process (``--jobs 1``), through the interpreter lock. Here a
    child process (:func:`serve`) does it: the run hands it each finished cell's hash and goes
    on, and :meth:`close` waits until the child has mirrored every cell handed over and closed
    the parent run, so a run that ends normally has mirrored every cell, as before. The child
    reads the cells from their files and talks to MLflow; it dies with the run (Linux), so a
    killed run leaves what a killed run left before: cells not yet mirrored, which the next
    run (it mirrors a cached cell MLflow lacks) or ``bench mlflow-sync`` mirrors, and at most
    one run cut short, which ``bench verify --repair`` re-logs. No cell is logged twice: a
    cell's run is found by its hash tag.

    ``warn(text)`` is called (on a reader thread) with each warning of the child: the store
    cannot be used, or MLflow stopped answering; the child then drops the remaining cells.
    """

    def __init__(self, results: str | Path, uri: str, grid_name: str, params: dict[str, Any],
                 warn: Any) -> None:
        import json
        import subprocess
        import threading

        self.results = Path(results)
        self.warn = warn
        self.busy_s = 0.0  # seconds the child spent opening the store and mirroring cells
        self.wait_s = 0.0  # seconds the run waited for the child (in close)
        self.mirrored = 0
        config = {"results": str(self.results.resolve()), "uri": uri, "grid": grid_name,
                  "params": params, "parent": os.getpid()}
        self._proc = subprocess.Popen([*MIRROR_COMMAND, json.dumps(config)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, encoding="utf-8")
        self._reader = threading.Thread(target=self._read, name="bench-mlflow-mirror",
                                        daemon=True)
        self._reader.start()

    def _send(self, message: dict[str, Any]) -> None:
        import json

        try:
            self._proc.stdin.write(json.dumps(message) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):  # the child is gone: nothing to mirror
            pass

    def _read(self) -> None:
        import json

        for line in self._proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "logged" in msg:
                self.mirrored += 1
            elif "warning" in msg:
                self.warn(msg["warning"])
            elif "busy" in msg:
                self.busy_s = float(msg["busy"])

    def put(self, cell_hash: str) -> None:
        """Hand a finished cell over (by its hash: the child reads its files); returns at
        once."""
        self._send({"cell": cell_hash})

    def close(self, counts: dict[str, int], started: float,
              abandon: bool = False) -> None:
        """Mirror what was handed over, then close the parent run with ``counts`` and the
        run's wall seconds since ``started`` (a :func:`time.perf_counter` value).
        ``abandon``: the run was interrupted; the child gets 30 s, then is stopped (cells not
        yet mirrored are left to the next run or ``bench mlflow-sync``)."""
        import subprocess

        t = time.perf_counter()
        self._send({"finish": counts, "seconds": t - started})
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=30 if abandon else None)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=10)
        self.wait_s += time.perf_counter() - t


def _die_with_parent(parent: int) -> None:
    """Be killed when the run that started this mirror dies (Linux's parent-death signal); a
    run killed before this took effect is noticed by its pid changing."""
    import signal

    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the mirror ends when its input closes
        return
    if os.getppid() != parent:
        os._exit(0)


def serve(config: dict[str, Any], stdin: Any = None, stdout: Any = None) -> int:
    """The mirror process (:class:`BackgroundMirror`): open the tracker, then, one JSON line
    of ``stdin`` at a time, log a cell (``{"cell": hash}``) or close the parent run
    (``{"finish": counts, "seconds": s}``). Writes JSON lines to ``stdout``: ``{"logged":
    hash}``, ``{"warning": text}``, and ``{"busy": seconds}`` at the end."""
    import json

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout

    def emit(message: dict[str, Any]) -> None:
        stdout.write(json.dumps(message) + "\n")
        stdout.flush()

    if config.get("parent"):
        _die_with_parent(int(config["parent"]))
    results = Path(config["results"])
    t = time.perf_counter()
    tracker, problem = open_tracker(results, config["uri"], config["grid"], config["params"])
    if problem:
        emit({"warning": problem})
    busy = time.perf_counter() - t
    for line in stdin:
        msg = json.loads(line)
        t = time.perf_counter()
        if "cell" in msg and tracker is not None:
            try:
                if mirror_cell(tracker, results, msg["cell"]):
                    emit({"logged": msg["cell"]})
            except Exception as e:  # MLflow is a mirror: losing it never loses a cell
                emit({"warning": lost_text(e, results)})
                _end_quietly(tracker, "FAILED")
                tracker = None
        elif "finish" in msg:
            if tracker is not None:
                try:
                    tracker.finish(msg["finish"], msg["seconds"])
                except Exception as e:
                    emit({"warning": lost_text(e, results)})
                    _end_quietly(tracker, "FAILED")
            emit({"busy": busy + time.perf_counter() - t})
            return 0
        busy += time.perf_counter() - t
    if tracker is not None:  # the run's input ended without a finish: it was killed
        _end_quietly(tracker, "KILLED")
    return 0


def _end_quietly(tracker: Tracker, status: str) -> None:
    """Close the parent run as far as MLflow lets us (a server that is gone keeps it open)."""
    try:
        tracker.mlflow.end_run(status=status)
    except Exception:
        logger.debug("could not close the MLflow parent run", exc_info=True)


if __name__ == "__main__":
    import json

    sys.exit(serve(json.loads(sys.argv[-1])))
