"""The pinned numeric environment: set at `import bench`, read back, recorded honestly."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bench import numeric
from bench.cli import main

_PROBE = """
import json, sys
import bench, bench.numeric as n
import numpy, torch
torch.ones(3).sum()
print(json.dumps(n.platform()))
"""


def _probe(env: dict[str, str], before: str = "") -> dict:
    """The platform record of a fresh Python process (``before`` runs ahead of `import bench`)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in numeric.PINNED_SETTINGS and k != numeric.MODE_ENV}
    out = subprocess.run([sys.executable, "-c", before + _PROBE], env=clean | env,
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_pins_every_setting_and_the_libraries_report_it_back():
    rec = _probe({})
    assert rec["mode"] == "pinned" and rec["pinned"] is True and rec["problems"] == []
    assert rec["settings"] == numeric.PINNED_SETTINGS
    assert rec["openblas"] == [numeric.PINNED_OPENBLAS_CORE]
    assert rec["torch_cpu_capability"] == numeric.PINNED_TORCH_CAPABILITY
    assert rec["id"].startswith("cpu-pinned-")
    assert rec["versions"]["numpy"] and rec["versions"]["torch"]
    assert rec["host"]["machine"] and rec["host"]["isa"] in ("avx2", "avx512")


def test_the_pin_overrides_a_users_shell():
    """A shell that asks for other kernels does not change a pinned cell."""
    rec = _probe({"ATEN_CPU_CAPABILITY": "default", "OPENBLAS_CORETYPE": "Sandybridge"})
    assert rec["pinned"] is True and rec["torch_cpu_capability"] == "AVX2"
    assert rec["openblas"] == ["Haswell"]


def test_native_mode_is_recorded_as_not_pinned():
    rec = _probe({"BENCH_NUMERIC": "native", "ATEN_CPU_CAPABILITY": "default"})
    assert rec["mode"] == "native" and rec["pinned"] is False
    assert rec["torch_cpu_capability"] == "DEFAULT"  # the shell's choice, not the pin
    assert rec["id"].startswith("cpu-native-")
    assert rec["id"] != _probe({})["id"]


def test_numpy_loaded_before_bench_is_caught_not_recorded_as_pinned():
    """OPENBLAS_CORETYPE acts when OpenBLAS loads: a process that loaded NumPy with other
    kernels before `import bench` says so instead of claiming the pin."""
    rec = _probe({"OPENBLAS_CORETYPE": "Sandybridge"}, before="import numpy\n")
    assert rec["mode"] == "pinned" and rec["pinned"] is False
    assert rec["openblas"] == ["Sandybridge"]
    assert any("NumPy was loaded before bench" in p for p in rec["problems"]), rec["problems"]
    assert rec["id"].startswith("cpu-native-")
    assert "NOT pinned" in numeric.describe(rec)


def test_platform_id_names_kernels_and_versions_not_the_host():
    rec = numeric.platform()
    assert rec["pinned"] is True  # this test process imported bench first (conftest)
    other_host = dict(rec, host={"machine": "x86_64", "isa": "avx512"})
    assert numeric.platform_id(other_host) == rec["id"]
    newer = dict(rec, versions=dict(rec["versions"], numpy="99.0"))
    assert numeric.platform_id(newer) != rec["id"]
    native = dict(rec, pinned=False, mode="native")
    assert numeric.platform_id(native) != numeric.platform_id(dict(native, host={"isa": "x"}))


def test_pinned_cells_compute_on_the_cpu_and_workers_inherit_the_pin(monkeypatch):
    assert numeric.torch_device() == "cpu"
    env = numeric.worker_environment()
    assert all(env[k] == v for k, v in numeric.PINNED_SETTINGS.items())
    monkeypatch.setenv("BENCH_NUMERIC", "native")
    assert numeric.torch_device() in ("cpu", "cuda")
    assert numeric.worker_environment()["BENCH_NUMERIC"] == "native"


def test_describe_without_a_record():
    assert "not recorded" in numeric.describe(None)


def test_bad_mode_is_one_clear_error():
    env = {k: v for k, v in os.environ.items()} | {"BENCH_NUMERIC": "fast"}
    out = subprocess.run([sys.executable, "-m", "bench.cli", "ls", "mechanisms"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out
    assert out.stderr.strip().splitlines() == [
        "bench: error: BENCH_NUMERIC='fast': expected one of pinned, native (pinned is the "
        "default)"]
    assert out.stdout == ""


def test_mode_reads_the_variable(monkeypatch):
    monkeypatch.setenv("BENCH_NUMERIC", " Native ")
    assert numeric.mode() == "native"
    monkeypatch.setenv("BENCH_NUMERIC", "x")
    with pytest.raises(ValueError, match="expected one of pinned, native"):
        numeric.mode()


def test_dask_worker_refuses_clearly_without_dask(monkeypatch, capsys):
    import shutil

    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    assert main(["dask-worker", "tcp://127.0.0.1:1"]) == 2
    assert "`dask` command is not installed" in capsys.readouterr().err
