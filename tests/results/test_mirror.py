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
