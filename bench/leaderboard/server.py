"""Reading a tracking server as untrusted input: every request bounded in bytes and in time.

``bench leaderboard --mlflow http://...`` reads a server someone else runs. MLflow's own client
reads whatever a server sends, as slowly as it sends it (a 300 MB search answer took 1.46 GB;
its 30 s limit is per socket read, so a server trickling bytes held each artifact 75 s with no
total limit: issue 48, trial 10). :class:`Server` asks the server's REST API directly instead:

* each request (connection, headers and body) must be answered whole within
  :data:`REQUEST_SECONDS`; a watchdog shuts the connection when that time is up, however the
  bytes trickle;
* all requests to one server together within :data:`SERVER_SECONDS`; runs not read by then are
  left out, each with one line;
* an answer is read up to a bound (:data:`MAX_ANSWER_BYTES` for a search page,
  :data:`bench.results.store.MAX_FILE_BYTES` for an artifact), never further;
* at most :data:`MAX_RUNS` cell runs are listed.

Only the server named is contacted (no proxy from the environment, no redirect followed).
``MLFLOW_TRACKING_TOKEN`` or ``MLFLOW_TRACKING_USERNAME`` / ``MLFLOW_TRACKING_PASSWORD``, which
MLflow's own client reads, are sent as its authorization header.

Example:
    >>> srv = Server("http://127.0.0.1:5000")
    >>> experiments, runs, more = srv.cell_runs()
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from bench.results.store import MAX_FILE_BYTES, parse_object

REQUEST_SECONDS = 30.0
"""Longest one request may take, whole: connecting, the headers and the body."""
SERVER_SECONDS = 600.0
"""Longest all the requests to one server may take together."""
MAX_ANSWER_BYTES = 32 * 2**20
"""Largest search answer read (a page of 1,000 cell runs with their tags is about 2 MB)."""
MAX_RUNS = 100_000
"""Most cell runs listed from one server."""
PAGE = 1000
"""Runs asked for per search page."""
CELL_FILTER = "tags.`bench.kind` = 'cell'"
"""The search filter of the runs :mod:`bench.results.mirror` logs for cells."""


@dataclass
class RunInfo:
    """What :func:`bench.leaderboard.sources.read_mlflow` needs of a run, as MLflow's
    ``Run.info`` names it."""

    run_id: str
    status: str
    artifact_uri: str
    experiment_id: str


@dataclass
class RunData:
    """A run's tags, as MLflow's ``Run.data`` holds them."""

    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class Run:
    """One run from a search answer: :class:`RunInfo` and :class:`RunData`."""

    info: RunInfo
    data: RunData


def _auth() -> dict[str, str]:
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user, pw = (os.environ.get("MLFLOW_TRACKING_USERNAME"),
                os.environ.get("MLFLOW_TRACKING_PASSWORD"))
    if user and pw:
        return {"Authorization": "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode()}
    return {}


class Server:
    """One tracking server (``http://`` or ``https://`` URI), read with bounds."""

    def __init__(self, uri: str) -> None:
        p = urllib.parse.urlparse(uri)
        if p.scheme not in ("http", "https") or not p.hostname:
            raise ValueError(f"{uri!r} is not an http(s) URI")
        self.uri = uri.rstrip("/")
        self.https = p.scheme == "https"
        self.host, self.port = p.hostname, p.port
        self.prefix = p.path.rstrip("/")
        self.deadline = time.monotonic() + SERVER_SECONDS
        self.headers = {"Accept": "application/json", **_auth()}

    def request(self, method: str, path: str, body: dict[str, Any] | None = None,
                limit: int | None = None) -> tuple[int, bytes]:
        """``(status, body)`` of one request, answered whole within :data:`REQUEST_SECONDS`
        and this server's remaining time, the body at most ``limit`` bytes (None:
        :data:`MAX_ANSWER_BYTES`).

        Raises:
            OSError: no whole answer in time, a longer answer, or a connection error; the
                message is one line.
        """
        limit = MAX_ANSWER_BYTES if limit is None else limit
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise OSError(f"the {SERVER_SECONDS:g} s a tracking server may take are spent")
        seconds = min(REQUEST_SECONDS, left)
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=seconds)
        cut = threading.Event()

        def watchdog() -> None:  # however the bytes trickle, the request ends here
            cut.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(seconds, watchdog)
        timer.daemon = True
        timer.start()
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            resp = conn.getresponse()
            answer = resp.read(limit + 1)
        except (OSError, http.client.HTTPException) as e:
            if cut.is_set():
                raise OSError(f"no whole answer within {seconds:g} s") from None
            raise OSError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
        finally:
            timer.cancel()
            conn.close()
        if cut.is_set():
            raise OSError(f"no whole answer within {seconds:g} s")
        if len(answer) > limit:
            raise OSError(f"an answer of more than {limit:,} bytes")
        return resp.status, answer

    def health(self) -> None:
        """Raise OSError unless the server answers its health check."""
        status, _ = self.request("GET", "/health", limit=4096)
        if status != 200:
            raise OSError(f"HTTP {status} from /health")

    def _page(self, what: str, body: dict[str, Any]) -> dict[str, Any]:
        status, data = self.request("POST", f"/api/2.0/mlflow/{what}/search", body)
        if status != 200:
            raise OSError(f"{what} search: HTTP {status}")
        try:
            return parse_object(data, f"the {what} search answer")
        except ValueError as e:
            raise OSError(str(e)) from None

    def _pages(self, what: str, body: dict[str, Any], cap: int) -> tuple[list[Any], bool]:
        """The items of every page of a search (at most ``cap``; True: more were left)."""
        items: list[Any] = []
        token = None
        while True:
            ans = self._page(what, body | {"max_results": PAGE}
                             | ({"page_token": token} if token else {}))
            got = ans.get(what, [])
            if not isinstance(got, list):
                raise OSError(f"the {what} search answer has no list of {what}")
            items += got
            token = ans.get("next_page_token")
            if len(items) >= cap:
                return items[:cap], bool(token) or len(items) > cap
            if not token:
                return items, False
            if not isinstance(token, str):
                raise OSError(f"the {what} search answer has a malformed page token")

    def cell_runs(self) -> tuple[int, list[Run], bool]:
        """``(experiments, runs, more)``: the number of experiments, every cell run of them
        (at most :data:`MAX_RUNS`) and whether more were left unread.

        Raises:
            OSError: a search the server does not answer well, in time or in size.
        """
        experiments, _ = self._pages("experiments", {}, 10_000)
        ids = [str(e["experiment_id"]) for e in experiments
               if isinstance(e, dict) and isinstance(e.get("experiment_id"), (str, int))]
        runs: list[Run] = []
        more = False
        for eid in ids:
            raw, more = self._pages("runs", {"experiment_ids": [eid], "filter": CELL_FILTER},
                                    MAX_RUNS - len(runs))
            runs += [r for r in (_run(x, eid) for x in raw) if r is not None]
            if more or len(runs) >= MAX_RUNS:
                return len(ids), runs, True
        return len(ids), runs, more

    def artifact(self, run_id: str, name: str) -> bytes | None:
        """One run artifact's bytes through the server's own ``get-artifact`` route (the server
        reads it where it keeps it), None when the run has no such artifact.

        Raises:
            OSError: not answered whole in time, larger than a cell file may be, or an error.
        """
        q = urllib.parse.urlencode({"run_uuid": run_id, "path": name})
        status, data = self.request("GET", f"/get-artifact?{q}", limit=MAX_FILE_BYTES)
        if status == 200:
            return data
        if status in (400, 404) or (status == 500 and (b"RESOURCE_DOES_NOT_EXIST" in data
                                                       or b"No such file" in data)):
            return None
        raise OSError(f"{name}: HTTP {status}")


def _run(x: Any, experiment_id: str) -> Run | None:
    """A :class:`Run` from one search answer item (None: not a run)."""
    if not isinstance(x, dict):
        return None
    info, data = x.get("info"), x.get("data") or {}
    if not isinstance(info, dict) or not isinstance(data, dict):
        return None
    rid = info.get("run_id") or info.get("run_uuid")
    if not isinstance(rid, str):
        return None
    tags = data.get("tags") or []
    pairs = {t.get("key"): t.get("value") for t in tags if isinstance(t, dict)} \
        if isinstance(tags, list) else {}
    return Run(RunInfo(rid, str(info.get("status", "")), str(info.get("artifact_uri") or ""),
                       str(info.get("experiment_id", experiment_id))),
               RunData({k: v for k, v in pairs.items()
                        if isinstance(k, str) and isinstance(v, str)}))
