"""The MLflow mirror (bench.results.mirror): a cell is logged once even when two runners on one
results folder both see it finished."""

from bench.results.mirror import Tracker, default_uri


def _runs(results, cell_hash):
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=default_uri(results))
    exp = client.get_experiment_by_name("bench")
    return client.search_runs([exp.experiment_id], f"tags.`bench.cell_hash` = '{cell_hash}'")


def test_a_cell_logged_by_another_runner_is_not_logged_again(tmp_path):
    """Runner B started before runner A logged the cell (so B's start-up list lacks it); B
    asks MLflow again before logging, as the runner does under its per-cell lock."""
    results = tmp_path / "r"
    results.mkdir()
    spec, metrics = {"name": "c", "seed": 0}, {"utility": {"macro_f1": 0.5}}
    a = Tracker(default_uri(results), "a", results)
    assert a.log_cell("abc", spec, metrics)
    a.finish({})
    b = Tracker(default_uri(results), "b", results)  # one active run per process: in turn
    b.logged.discard("abc")  # as if b had started before a logged the cell
    assert b.is_logged("abc") and "abc" in b.logged
    b.logged.discard("abc")
    assert not b.log_cell("abc", spec, metrics, recheck=True)
    assert not b.is_logged("zzz")
    b.finish({})
    assert len(_runs(results, "abc")) == 1


def test_a_tracker_does_not_leak_its_store_to_later_runs(tmp_path, monkeypatch):
    """mlflow.set_tracking_uri exports MLFLOW_TRACKING_URI; a second results folder (in this
    process or in a `bench run` it starts) must get its own store, not the first one's."""
    import os

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    Tracker(default_uri(tmp_path / "a"), "a", tmp_path / "a").finish({})
    assert "MLFLOW_TRACKING_URI" not in os.environ
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///user-set.db")
    Tracker(default_uri(tmp_path / "b"), "b", tmp_path / "b").finish({})
    assert os.environ["MLFLOW_TRACKING_URI"] == "sqlite:///user-set.db"


def test_a_killed_store_creation_leaves_nothing_the_next_run_keeps(tmp_path):
    """A process killed while it created the SQLite store leaves its temporary store
    (``.mlflow.db.<host>.<pid>.creating``); the next creation deletes those whose process is
    gone and keeps one a live process is still writing, or another host's."""
    import os
    import socket
    import subprocess
    import sys

    from bench.results.mirror import _create_sqlite_store

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    host = socket.gethostname()
    left = tmp_path / f".mlflow.db.{host}.{dead}.creating"
    live = tmp_path / f".mlflow.db.{host}.{os.getppid()}.creating"
    other = tmp_path / f".mlflow.db.elsewhere.{dead}.creating"
    for f in (left, live, other):
        f.write_bytes(b"half a store")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    _create_sqlite_store(uri, tmp_path)
    assert (tmp_path / "mlflow.db").is_file()
    assert not left.exists() and live.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.glob(".mlflow.db.*")) == sorted([live.name, other.name])
    left.write_bytes(b"killed after another process created the store")
    _create_sqlite_store(uri, tmp_path)  # the store exists now: leftovers still go
    assert not left.exists() and live.exists()
