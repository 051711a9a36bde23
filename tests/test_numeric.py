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
with n.torch_threads(1):
    torch.ones(3).sum()
print(json.dumps(n.platform()))
"""

_BARE_TORCH = """
import json
import bench, bench.numeric as n
import torch
torch.ones(3).sum()
print(json.dumps(n.platform()))
"""


def _probe(env: dict[str, str], before: str = "", code: str = _PROBE) -> dict:
    """The platform record of a fresh Python process (``before`` runs ahead of `import bench`)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in numeric.PINNED_SETTINGS and k not in (numeric.MODE_ENV, numeric.PIN_ENV,
                                                               numeric.NUMPY_CONFLICT)}
    out = subprocess.run([sys.executable, "-c", before + code], env=clean | env,
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_pins_every_setting_and_the_libraries_report_it_back():
    rec = _probe({})
    assert rec["mode"] == "pinned" and rec["pinned"] is True and rec["problems"] == []
    assert rec["settings"] == numeric.PINNED_SETTINGS
    assert rec["openblas"] == [numeric.PINNED_OPENBLAS_CORE]
    assert rec["torch_cpu_capability"] == numeric.PINNED_TORCH_CAPABILITY
    assert rec["numpy_simd"] == numeric.PINNED_NUMPY_SIMD  # no AVX-512 loops, even on AVX-512
    assert rec["torch_onednn"] is False and rec["pin"] == numeric.PIN == 4  # on for LSTMs only
    assert rec["settings"]["MKL_CBWR"] == "COMPATIBLE"  # the one MKL branch AMD CPUs honour too
    assert rec["id"].startswith("cpu-pinned-")
    assert rec["versions"]["numpy"] and rec["versions"]["torch"]
    assert rec["host"]["machine"] and rec["host"]["isa"] in ("avx2", "avx512")
    assert rec["host"]["vendor"] != "unknown"


def test_torch_is_configured_when_imported_and_oneDNN_switched_back_on_is_caught():
    """torch's oneDNN (on by default) is switched off as soon as torch is imported, outside
    torch_threads too (a plugin's own torch code), under every pin version; a process that
    switched it back on is not recorded as pinned (pin v4 runs the LSTM on oneDNN inside
    `lstm_kernels` only: its GELU, for one, differs from ATen's)."""
    rec = _probe({}, code=_BARE_TORCH)
    assert rec["torch_onednn"] is False and rec["pinned"] is True, rec["problems"]
    v3 = _probe({"BENCH_PIN": "3"}, code=_BARE_TORCH)
    assert v3["torch_onednn"] is False and v3["pinned"] is True and v3["pin"] == 3
    assert v3["id"] == "cpu-pinned-1cc01654" != rec["id"]  # pin v3's id as its cells record it
    before = _probe({}, before="import torch\n", code=_BARE_TORCH)  # torch loaded before bench
    assert before["torch_onednn"] is False
    on = _probe({}, code=_BARE_TORCH.replace("torch.ones(3).sum()",
                                             "torch.backends.mkldnn.enabled = True"))
    assert on["torch_onednn"] is True and on["pinned"] is False
    assert any("oneDNN is on outside an LSTM" in p for p in on["problems"]), on["problems"]
    native = _probe({"BENCH_NUMERIC": "native"}, code=_BARE_TORCH)
    assert native["torch_onednn"] is True and native["pin"] is None


def test_lstm_kernels_switch_onednn_for_the_lstm_only_as_the_pin_says():
    """Inside `lstm_kernels` torch's LSTM runs on oneDNN under pin v4 and on ATen under pin v3,
    and the switch is restored after the block, also when the block raises; the backward pass
    follows the forward's choice (the probe's training digest with the forward alone inside
    is pin v4's)."""
    import torch

    with numeric.lstm_kernels():
        assert torch.backends.mkldnn.enabled is True
    assert torch.backends.mkldnn.enabled is False
    with numeric.as_pin(3), numeric.lstm_kernels():
        assert torch.backends.mkldnn.enabled is False
    with pytest.raises(RuntimeError), numeric.lstm_kernels():
        raise RuntimeError("inside")
    assert torch.backends.mkldnn.enabled is False
    from bench.tools.numeric_probe import probe_lstm, probe_lstm_pin3

    assert probe_lstm() != probe_lstm_pin3()  # the two pins' LSTMs differ in the last bits


def test_pin_versions_and_recomputing_under_an_older_pin(monkeypatch):
    """`as_pin` switches torch and the platform record to another pin version and back; ids map
    back to their pin versions; a made-up pinned id is no pin; an unknown version is refused
    with the versions there are."""
    import torch

    assert numeric.pin_of(numeric.pinned_id(3)) == 3 and numeric.pin_of(numeric.pinned_id(4)) == 4
    assert numeric.pin_of("cpu-pinned-1cc01654") == 3
    assert numeric.pin_of("cpu-pinned-deadbeef") is None
    assert numeric.pin_of(None) is None and numeric.known_pinned(numeric.pinned_id(3))
    assert set(numeric.RELEASED_PINS.values()) == set(numeric.PINS)
    with numeric.as_pin(3):
        rec = numeric.platform()
        assert rec["pinned"] and rec["pin"] == 3 and rec["id"] == numeric.pinned_id(3)
        assert "(pin v3)" in numeric.describe(rec)
    assert torch.backends.mkldnn.enabled is False and numeric.platform()["pin"] == 4
    with numeric.as_pin(None):
        assert numeric.platform()["pin"] == 4
    with pytest.raises(ValueError, match="expected one of"):
        with numeric.as_pin(2):
            pass
    monkeypatch.setenv("BENCH_PIN", "2")
    with pytest.raises(ValueError, match="BENCH_PIN='2': expected one of 3, 4"):
        numeric.pin_version()
    assert "BENCH_PIN='2'" in numeric.mode_error()
    assert main(["platform"]) == 2


def test_a_users_numpy_feature_setting_neither_breaks_import_nor_the_pin():
    """NumPy refuses to import with both NPY_DISABLE_CPU_FEATURES and NPY_ENABLE_CPU_FEATURES
    set: the pin drops the user's."""
    rec = _probe({numeric.NUMPY_CONFLICT: "X86_V3"})
    assert rec["pinned"] is True and rec["numpy_simd"] == numeric.PINNED_NUMPY_SIMD


def test_the_numpy_setting_is_left_out_where_numpy_would_refuse_it(monkeypatch):
    """On a CPU without the x86-64-v3 features (or not x86 at all) NumPy would not import with
    NPY_ENABLE_CPU_FEATURES=X86_V3: the pin leaves it out and the record says so."""
    monkeypatch.setattr(numeric, "_cpuinfo", lambda: {"flags": frozenset({"sse2", "avx"}),
                                                      "vendor": "GenuineIntel"})
    assert numeric.numpy_pin_applies() is False
    monkeypatch.delenv(numeric.NUMPY_SETTING, raising=False)
    assert numeric.NUMPY_SETTING not in numeric.worker_environment()
    numeric.pin()
    assert numeric.NUMPY_SETTING not in os.environ
    rec = numeric.platform()
    assert rec["pinned"] is False
    assert any(p.startswith(numeric.NUMPY_SETTING) for p in rec["problems"]), rec["problems"]


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


def test_native_record_loads_torch_so_that_a_gpu_is_named():
    """Natively a cell's platform id names the GPU (``cuda-…``) where torch sees one, so the
    record loads torch even in a process that used none (a cell without a torch model, `bench
    platform`): otherwise such a cell said ``cpu-native-…`` beside its run's ``cuda-…`` cells."""
    code = "import json, sys\nimport bench.numeric as n\nrec = n.platform()\n" \
           "print(json.dumps(dict(rec, loaded='torch' in sys.modules)))\n"
    rec = _probe({"BENCH_NUMERIC": "native"}, code=code)
    assert rec["loaded"] and rec["torch_cpu_capability"] is not None
    pinned = _probe({}, code=code)  # the pinned id does not depend on torch: not loaded there
    assert not pinned["loaded"] and pinned["id"].startswith("cpu-pinned-")


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
    other_host = dict(rec, host={"machine": "x86_64", "isa": "avx512", "vendor": "AuthenticAMD"})
    assert numeric.platform_id(other_host) == rec["id"]
    newer = dict(rec, versions=dict(rec["versions"], numpy="99.0"))
    assert numeric.platform_id(newer) != rec["id"]
    native = dict(rec, pinned=False, mode="native")
    assert numeric.platform_id(native) != numeric.platform_id(dict(native, host={"isa": "x"}))


def test_pinned_cells_compute_on_the_cpu_and_workers_inherit_the_pin(monkeypatch):
    import torch  # noqa: F401  (imported while pinned, as in a cell: the hook configures it)

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


PROBE_DIGESTS = {
    "cpu-pinned-aca3ad18": {"mkl_sgemm": "63373df5da3459a6", "lstm": "7dec24a825a4c322",
                            "lstm_inference": "5a56d4f2f55d2548",
                            "lstm_pin3": "69b40ec363f8cfa9",
                            "torch_math": "5d09a03a939d4751",
                            "numpy_loops": "4827011563747271",
                            "openblas_dgemm": "8d1a2f835db8b37e"},
}
"""`bench platform --probe` in the pinned environment, by platform id (the id changes with the
settings, the pin version, VML routing and library versions), as computed on the AVX-512 AMD
EPYC (Zen 5) that recorded pins v3 and v4 (`lstm` is pin v4's LSTM on oneDNN, `lstm_pin3` pin
v3's, the same digest as its `lstm`, 69b40ec363f8cfa9, under `cpu-pinned-1cc01654`). The pin
promises these digests on every x86-64 CPU with AVX2: a machine that
gives others names the library whose kernels differ (docs/reference.md). Under pin v2
(`cpu-pinned-76cac3dd`) the Intel Xeon that made the references gave `lstm` f9dc453c3887c182
and this AMD machine c6d877e83c51d398 (the other probes agreed): MKL's vector math (VML),
which `MKL_CBWR` does not govern, computed torch's tanh and sqrt along another path there.
Under pin v3 an AVX-512 Intel Xeon gave this machine's digests, oneDNN's LSTM (7dec24a825a4c322)
included, which pin v4 rests on."""

_VML_SHIM = r"""
#include <stdlib.h>
/* MKL's vector math library (VML), statically linked into torch's CPU library, asks this
   exported function which code path to run; LD_PRELOAD interposes it, so one machine can run
   the paths other CPUs would take. */
long mkl_serv_vml_cpu_detect(void) {
  const char *v = getenv("BENCH_TEST_VML_PATH");
  return v ? atol(v) : 2;
}
"""

_VML_PROBES = """
import json
import bench
from bench.tools.numeric_probe import probe_lstm, probe_torch_math
print(json.dumps({"lstm": probe_lstm(), "torch_math": probe_torch_math()}))
"""


@pytest.fixture(scope="module")
def vml_shim(tmp_path_factory):
    """The shim compiled into a shared library (needs a C compiler: gcc is on these machines)."""
    import shutil

    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("needs a C compiler (gcc) to build the VML shim")
    folder = tmp_path_factory.mktemp("vml")
    (folder / "shim.c").write_text(_VML_SHIM)
    lib = folder / "libvmlshim.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(folder / "shim.c")], check=True,
                   capture_output=True, timeout=60)
    return lib


def _under_vml_path(lib, path: int, mode: str) -> dict | None:
    """The LSTM and torch-math probes in a fresh process whose VML takes code path ``path``
    (None: that path does not run on this CPU, e.g. instructions it lacks)."""
    clean = {k: v for k, v in os.environ.items()
             if k not in numeric.PINNED_SETTINGS and k != numeric.MODE_ENV}
    env = clean | {"LD_PRELOAD": str(lib), "BENCH_TEST_VML_PATH": str(path),
                   numeric.MODE_ENV: mode}
    out = subprocess.run([sys.executable, "-c", _VML_PROBES], env=env, capture_output=True,
                         text=True, timeout=180)
    if out.returncode < 0:  # killed by a signal: the path's instructions are not on this CPU
        return None
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_pinned_torch_math_does_not_depend_on_mkls_vector_math_path(vml_shim):
    """The failure that pin v2 hid: MKL's vector math library picks its code path by its own
    CPU detection (MKL_CBWR does not govern it), so an Intel and an AMD CPU computed torch's
    tanh and sqrt differently and LSTM cells did not rerun bit for bit across them. Here VML is
    made to take the paths of other CPUs: natively the probes change with the path (so the
    shim reaches MKL and the test can fail); pinned, where NumPy computes those ops, they do
    not."""
    # 2: an AMD EPYC's own; 1 rounds sqrt differently, 7 and 11 exp/log/tanh/sqrt too (a path
    # whose instructions the CPU lacks dies of a signal and is left out: at least two must run)
    paths = (1, 2, 7, 11)
    native = {p: _under_vml_path(vml_shim, p, "native") for p in paths}
    ran = {p: d for p, d in native.items() if d is not None}
    assert len(ran) >= 2, f"fewer than two VML paths run on this CPU: {native}"
    assert len({d["torch_math"] for d in ran.values()}) > 1, (
        "the VML paths gave the same torch math natively: the shim no longer reaches MKL "
        f"(torch's build changed?), so this test proves nothing: {ran}")
    pinned = {p: _under_vml_path(vml_shim, p, "pinned") for p in ran}
    assert len({json.dumps(d, sort_keys=True) for d in pinned.values()}) == 1, pinned


def test_the_probes_give_the_recorded_digests_on_this_cpu():
    """The portability claim itself, per library: the same bits here as where the references
    were made. A library upgrade changes the platform id; record the new digests with it."""
    from bench.tools.numeric_probe import run_probes

    rec = numeric.platform()
    assert rec["pinned"] is True, rec["problems"]
    assert rec["id"] in PROBE_DIGESTS, (
        f"no recorded probe digests for platform {rec['id']} (library versions or pin settings "
        "changed): record `bench platform --probe` here, with the references regenerated")
    got = run_probes()
    assert numeric.platform()["pinned"] is True  # oneDNN is off again after the LSTM probes
    differ = {k: (v, got[k]) for k, v in PROBE_DIGESTS[rec["id"]].items() if got[k] != v}
    assert not differ, (f"kernels that differ from the reference machine's on "
                        f"{numeric.describe(rec)}: {differ}")
    assert run_probes() == got  # and the same twice in one process


def test_cli_platform(capsys):
    assert main(["platform"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cpu-pinned-") and '"numpy_simd"' in out
    assert main(["platform", "--probe"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["probe", "digest"]
    assert [line.split()[0] for line in out[2:]] == [
        "mkl_sgemm", "lstm", "lstm_inference", "lstm_pin3", "torch_math", "numpy_loops",
        "openblas_dgemm"]


def test_vml_ops_are_numpys_in_every_form():
    """In the pinned environment torch's VML ops are NumPy's (SciPy's for the error functions)
    bit for bit, in the functional, in-place and out= forms, on strided views, with torch's
    dtype rules (half computed in float32, integers promoted, in-place on integers refused) and
    autograd intact."""
    import numpy as np
    import scipy.special
    import torch

    assert numeric.platform()["torch_vml"] == numeric.VML_ROUTE
    base = torch.linspace(-0.9, 0.9, 63, dtype=torch.float64).reshape(3, 21)[:, ::2]
    for op, path in numeric.VML_OPS.items():
        mod, _, name = path.rpartition(".")
        ref_fn = getattr(scipy.special if mod == "scipy.special" else np, name)
        x = base.abs() + 0.05 if op in ("log", "log10", "log2", "sqrt") else base
        for dtype in (torch.float32, torch.float64):
            t = x.to(dtype)
            want = ref_fn(t.contiguous().numpy())
            assert np.array_equal(getattr(torch, op)(t).numpy(), want), (op, dtype)
            inplace = t.clone()
            getattr(inplace, f"{op}_")()
            assert np.array_equal(inplace.numpy(), want), (op, dtype)
            out = torch.empty(0, dtype=dtype)
            getattr(torch, op)(t, out=out)
            assert out.shape == t.shape and np.array_equal(out.numpy(), want), (op, dtype)
    half = torch.tanh(base.to(torch.float16))
    assert half.dtype == torch.float16
    assert torch.sqrt(torch.arange(4)).dtype == torch.get_default_dtype()
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.arange(4).sqrt_()
    a = base.clone().requires_grad_(True)
    (torch.tanh(a).sum() + torch.exp(a).sum()).backward()
    expect = (1 - np.tanh(base.numpy()) ** 2) + np.exp(base.numpy())
    np.testing.assert_allclose(a.grad.numpy(), expect, rtol=1e-12)
