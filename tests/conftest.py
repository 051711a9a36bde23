"""Test-wide fixtures."""

import os

import pytest


@pytest.fixture(autouse=True)
def _isolated_mlflow_uri():
    """mlflow.set_tracking_uri() exports MLFLOW_TRACKING_URI, which the runner honours and
    subprocesses inherit: clear it around every test so no test logs into another's store."""
    saved = os.environ.pop("MLFLOW_TRACKING_URI", None)
    yield
    os.environ.pop("MLFLOW_TRACKING_URI", None)
    if saved is not None:
        os.environ["MLFLOW_TRACKING_URI"] = saved
