"""A hostile tracking server (issue 48, trial 10): one that trickles its answers a byte at a
time, or sends a search answer without end, is cut off by the reader's bounds in bytes and in
time -- per request and over the whole server. The server is a small HTTP server on
127.0.0.1, started and stopped by each test."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.leaderboard import server as srv
from bench.leaderboard.sources import LeaderboardError, read_mlflow


def _runs(n: int) -> dict:
    return {"runs": [{"info": {"run_id": f"{i:032x}", "status": "FINISHED",
                               "artifact_uri": f"mlflow-artifacts:/1/{i:032x}/artifacts",
                               "experiment_id": "1"},
                      "data": {"tags": [{"key": "bench.kind", "value": "cell"},
                                        {"key": "bench.cell_hash", "value": f"{i:016x}"}]}}
                     for i in range(n)]}


class _Hostile:
    """What the fake server does: ``trickle`` names the routes answered a byte per 50 ms;
    ``endless`` the routes whose answer never ends; ``runs`` how many cell runs it lists."""

    def __init__(self, trickle=(), endless=(), runs=1):
        self.trickle, self.endless, self.runs = set(trickle), set(endless), runs
        self.requests: list[str] = []


@pytest.fixture
def hostile():
    """``start(behaviour) -> uri``: a fake tracking server on 127.0.0.1, stopped after."""
    servers = []

    def start(how: _Hostile) -> str:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, route: str, body: bytes) -> None:
                how.requests.append(route)
                try:
                    if route in how.trickle:
                        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                        for _ in range(600):  # 30 s at most, a byte each 50 ms
                            self.wfile.write(b"X-Slow: y\r\n")
                            self.wfile.flush()
                            time.sleep(0.05)
                        return
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if route in how.endless:
                        self.end_headers()
                        self.wfile.write(b'{"runs": [')
                        chunk = json.dumps(_runs(1)["runs"][0]).encode() + b","
                        for _ in range(200_000):
                            self.wfile.write(chunk)
                        return
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # the reader hung up: what the bound is for
                    pass

            def do_GET(self):  # noqa: N802 (http.server's name)
                route = self.path.split("?")[0].strip("/")
                self._answer(route, b"OK" if route == "health" else b"{}")

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                route = self.path.strip("/").rsplit("/", 2)[-2]  # experiments / runs
                body = {"experiments": [{"experiment_id": "1"}]} if route == "experiments" \
                    else _runs(how.runs)
                self._answer(route, json.dumps(body).encode())

        s = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
        servers.append(s)
        return f"http://127.0.0.1:{s.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_a_trickled_artifact_is_cut_off_per_request_and_per_server(hostile, monkeypatch):
    """Each artifact trickled a byte at a time (before: 75 s per artifact, no total limit):
    one request ends after REQUEST_SECONDS, the whole server after SERVER_SECONDS; every run
    is left out with one line saying which bound it met."""
    monkeypatch.setattr(srv, "REQUEST_SECONDS", 0.5)
    monkeypatch.setattr(srv, "SERVER_SECONDS", 1.8)
    how = _Hostile(trickle={"get-artifact"}, runs=6)
    uri = hostile(how)
    t0 = time.monotonic()
    with pytest.raises(LeaderboardError, match="none of its 6 cell run") as e:
        read_mlflow(uri, "s0")
    took = time.monotonic() - t0
    assert took < 4.0, took  # 6 runs x 5 artifacts x 30 s before
    assert "a tracking server may take are spent" in str(e.value)
    assert how.requests.count("get-artifact") <= 5  # the rest never asked


def test_a_trickled_health_check_is_a_one_line_error_in_time(hostile, monkeypatch):
    monkeypatch.setattr(srv, "REQUEST_SECONDS", 0.5)
    uri = hostile(_Hostile(trickle={"health"}))
    t0 = time.monotonic()
    with pytest.raises(LeaderboardError, match=r"not reachable \(no whole answer within 0.5 s\)"):
        read_mlflow(uri, "s0")
    assert time.monotonic() - t0 < 2.0


def test_an_endless_search_answer_is_read_up_to_its_bound(hostile, monkeypatch):
    """A search answer without end (before: a 300 MB answer took 1.46 GB): read up to
    MAX_ANSWER_BYTES, then one line."""
    monkeypatch.setattr(srv, "MAX_ANSWER_BYTES", 2**20)
    uri = hostile(_Hostile(endless={"runs"}))
    with pytest.raises(LeaderboardError, match=r"cannot read the MLflow store \(an answer of "
                                               r"more than 1,048,576 bytes\)"):
        read_mlflow(uri, "s0")


def test_more_runs_than_the_bound_are_listed_up_to_it(hostile, monkeypatch):
    """At most MAX_RUNS cell runs are listed; the source says the others were not read. The
    fake server's artifacts are empty, so every listed run is left out with its line."""
    monkeypatch.setattr(srv, "MAX_RUNS", 3)
    how = _Hostile(runs=5)
    uri = hostile(how)
    with pytest.raises(LeaderboardError, match="none of its 3 cell run"):
        read_mlflow(uri, "s0")
    assert how.requests.count("get-artifact") == 3 * 5  # spec, metrics, provenance, ...


def test_the_server_reader_refuses_what_is_not_an_http_uri():
    with pytest.raises(ValueError, match="is not an http"):
        srv.Server("ftp://127.0.0.1/x")
