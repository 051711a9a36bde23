"""Test-wide fixtures."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

# first, before any test module loads NumPy: `import bench` pins the numeric environment
# (bench.numeric), which OpenBLAS reads when it is loaded
import bench  # noqa: F401, I001

LONGEST_FIRST = (
    "tests/run/test_runner.py",
    "tests/test_reference.py::test_committed_cells_rerun_bit_exactly[thesis_reference]",
    "tests/test_reference.py::test_committed_cells_rerun_bit_exactly[trlaplace_rewrite]",
    "tests/test_reference.py::test_committed_cells_rerun_bit_exactly[lm_comparison]",
    "tests/test_reference.py::test_committed_cells_rerun_bit_exactly[thesis_100d]",
    "tests/leaderboard/test_sources.py",
    "tests/test_reference.py::test_reference_cells_rerun_bit_exactly_with_their_channel_",
    "tests/report/test_dvc_pipeline.py",
    "tests/test_reference.py::test_committed_cells_rerun_bit_exactly[trlaplace]",
    "tests/test_faults.py",
    "tests/mechanisms/test_dp_prompt.py",
    "tests/test_reference.py::test_committed_cells_rerun_bit_exactly[",
    "tests/test_numeric.py",
    "tests/measures/test_perplexity.py",
    "tests/tools/test_findings.py",
)
"""Work units `make test` hands out first, longest first (seconds measured on the 2-core
machine, 2026-12-01: 150-200 s for each of the first five, 50-150 s for the next ones): the
workers start on them and the many short modules fill in behind, so neither worker is left
with a long test at the end. A scheduling hint only: a test not named here runs too."""


UNIT = pytest.StashKey[str]()
"""The work unit :func:`pytest_collection_modifyitems` gave a test."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks into the node ids
def pytest_collection_modifyitems(config, items):
    """`make test` runs on pytest-xdist workers with ``--dist loadgroup``: each test module is
    one work unit (its module fixtures are set up once, on one worker), except the reference
    reruns, each a unit of its own; the units of :data:`LONGEST_FIRST` go first."""
    def unit(item) -> str:
        if item.nodeid.startswith("tests/test_reference.py::test_committed_cells_rerun_"):
            return item.nodeid
        return item.nodeid.split("::")[0]

    def rank(item) -> int:
        return next((i for i, p in enumerate(LONGEST_FIRST) if item.nodeid.startswith(p)),
                    len(LONGEST_FIRST))

    for item in items:
        item.stash[UNIT] = unit(item)
        item.add_marker(pytest.mark.xdist_group(item.stash[UNIT]))
    items.sort(key=rank)  # stable: the collection order within a rank


def pytest_runtest_setup(item):
    """On a ``--dist loadgroup`` worker, every test carries its work unit in its node id
    (``...@unit``), or the groups are silently ignored: with pytest 9.2, pytest-xdist 3.8 no
    longer can write it (pytest-dev/pytest-xdist#1386), the module fixtures were set up on both
    workers and the suite took minutes longer. constraints.txt pins a pytest that works."""
    if getattr(item.config.option, "loadgroup", False) \
            and not item.nodeid.endswith("@" + item.stash.get(UNIT, "")):
        pytest.fail(f"--dist loadgroup ignores the test groups here ({item.nodeid} has none): "
                    "install the pinned pytest (pip install -c constraints.txt -e '.[test]'; "
                    "pytest-xdist#1386)", pytrace=False)


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    """The shipped SmolLM2, converted into a fresh cache folder (the conversion is tested by
    tests/measures/test_perplexity.py).

    The folder is the test session's, not the fixture's: pytest-xdist tears module fixtures
    down between the batches it hands a worker, and a second setup then reads the converted
    copy instead of converting again (about 35 s)."""
    from bench import lm as lm_mod

    old = os.environ.get(lm_mod.CACHE_ENV)
    cache = os.environ.get("BENCH_TEST_LM_CACHE")  # a session's converted copy, if kept
    if not cache:
        folder = tmp_path_factory.getbasetemp() / "lm-cache"
        folder.mkdir(exist_ok=True)
        cache = str(folder)
    os.environ[lm_mod.CACHE_ENV] = cache
    try:
        yield lm_mod.load_causal_lm()
    finally:
        if old is None:
            os.environ.pop(lm_mod.CACHE_ENV, None)
        else:
            os.environ[lm_mod.CACHE_ENV] = old


@pytest.fixture(autouse=True)
def _isolated_mlflow_uri():
    """mlflow.set_tracking_uri() exports MLFLOW_TRACKING_URI, which the runner honours and
    subprocesses inherit: clear it around every test so no test logs into another's store."""
    saved = os.environ.pop("MLFLOW_TRACKING_URI", None)
    yield
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    if saved is not None:
        os.environ["MLFLOW_TRACKING_URI"] = saved


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def mlflow_server(tmp_path):
    """The URI of an `mlflow server` on 127.0.0.1 (SQLite store under ``tmp_path``, artifacts
    served through its own proxy, as a shared server is set up), started for the test and
    stopped after it."""
    yield from _serve(["server", "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
                       "--artifacts-destination", str(tmp_path / "artifacts"),
                       "--workers", "1"])


@pytest.fixture
def mlflow_ui(tmp_path):
    """``(uri, results)``: `mlflow ui --backend-store-uri sqlite:///results/mlflow.db` on
    127.0.0.1, as docs/usage.md has a user browse a results folder (runs logged there by
    bench's mirror keep their artifacts as file: paths under ``results/mlartifacts``)."""
    results = tmp_path / "results"
    results.mkdir()
    for uri in _serve(["ui", "--backend-store-uri", f"sqlite:///{results / 'mlflow.db'}"]):
        yield uri, results


def _serve(args: list[str]):
    """Start ``mlflow ARGS`` on a free port of 127.0.0.1, yield its URI once it answers, stop
    it after."""
    port = free_port()
    exe = shutil.which("mlflow", path=str(Path(sys.executable).parent))
    server = subprocess.Popen(
        [exe, *args, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)  # its own process group: its workers are stopped with it
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"{uri}/health", timeout=2)
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise AssertionError("mlflow server did not start") from None
                time.sleep(0.5)
        yield uri
    finally:
        _stop_group(server)


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group, SIGKILL if it has not exited 30 s later (a loaded machine
    once needed more than 30 s to stop the server's workers, and the test errored)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            continue
