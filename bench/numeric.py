"""One numeric environment for every process that computes a cell, and the record of it.

torch (ATen's vectorised kernels, oneDNN for the LSTM, MKL for BLAS) and NumPy/SciPy's OpenBLAS
choose their kernels by the CPU's instruction set, and the kernels round differently: the last
bits of a sum differ between an AVX2 and an AVX-512 CPU, and an LSTM trained on a few hundred
documents turns those bits into a different model (measured: the quickstart's tem ε = 10 cell,
utility macro-F1 0.920 on an AVX2-only CPU, 0.865 on an AVX-512 one). The *pinned* environment
makes every x86-64 CPU with AVX2 run the same kernels, whatever else it supports:

=====================  ===========  ==================================================
variable               value        read by
=====================  ===========  ==================================================
``ATEN_CPU_CAPABILITY``  ``avx2``    torch's ATen, at its first vectorised kernel
``ONEDNN_MAX_CPU_ISA``   ``AVX2``    oneDNN (torch's CPU LSTM), at its first primitive
``MKL_CBWR``             ``AVX2``    MKL (torch's BLAS), conditional numerical
                                     reproducibility; needs a fixed thread count, which
                                     cells have (one thread each)
``OPENBLAS_CORETYPE``    ``Haswell`` OpenBLAS (NumPy, SciPy), when the library is loaded
=====================  ===========  ==================================================

``OPENBLAS_CORETYPE`` acts only if it is set before NumPy is imported, so :func:`pin` runs
when ``bench`` is imported (``bench/__init__.py``), before any of its modules loads NumPy, and
sets the variables in ``os.environ``: every process started from there (joblib's loky
workers, a Dask ``LocalCluster``) inherits them. A Dask worker on another machine is started
with ``bench dask-worker`` (:func:`worker_environment`), which starts ``dask worker`` with the
same variables. In the pinned environment torch computes on the CPU even where CUDA is
present (:func:`torch_device`): the reference is a CPU reference.

``BENCH_NUMERIC=native`` turns the pin off (a GPU run, a speed test): the libraries then choose
their kernels themselves, and every cell says so. Each cell records the environment it was
computed in (:func:`platform`, in its provenance): the mode, the settings in force, what the
libraries report back (torch's CPU capability, each OpenBLAS's core type), the host CPU and the
versions of the numeric libraries. :func:`platform` also checks that the pin took: a process
that loaded NumPy before ``bench`` (so OpenBLAS chose its own kernels) is recorded as *not*
pinned, with the reason, never as pinned.

Example:
    >>> import bench.numeric as numeric
    >>> numeric.platform()["mode"]
    'pinned'
"""

from __future__ import annotations

import hashlib
import json
import os
import platform as _platform
import sys
from functools import lru_cache
from importlib import metadata
from typing import Any

MODE_ENV = "BENCH_NUMERIC"
"""Environment variable choosing the numeric environment: ``pinned`` (default) or ``native``."""
MODES = ("pinned", "native")
"""The values :data:`MODE_ENV` may take."""

PINNED_SETTINGS: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
}
"""The kernel settings of the pinned environment (see the module docstring)."""

PINNED_OPENBLAS_CORE = "Haswell"
"""The core type every loaded OpenBLAS reports back in the pinned environment."""
PINNED_TORCH_CAPABILITY = "AVX2"
"""The CPU capability torch reports back in the pinned environment."""

LIBRARIES = ("numpy", "scipy", "scikit-learn", "torch", "transformers")
"""The libraries whose versions decide a cell's last bits (recorded, and part of the platform
id: bit-exactness holds for one set of versions)."""

_state: dict[str, Any] = {"pinned_at_import": None, "loaded_before": [], "error": None}


def mode() -> str:
    """The numeric environment asked for: ``$BENCH_NUMERIC``, default ``pinned``.

    Raises:
        ValueError: ``$BENCH_NUMERIC`` is set to something else than ``pinned`` or ``native``.
    """
    value = os.environ.get(MODE_ENV, "").strip().lower() or "pinned"
    if value not in MODES:
        raise ValueError(f"{MODE_ENV}={os.environ.get(MODE_ENV)!r}: expected one of "
                         f"{', '.join(MODES)} (pinned is the default)")
    return value


def mode_error() -> str | None:
    """Why ``$BENCH_NUMERIC`` could not be read when ``bench`` was imported, or None."""
    return _state["error"]


def pin() -> None:
    """Put the pinned settings into ``os.environ`` (unless ``BENCH_NUMERIC=native``).

    Called once, by ``import bench``, before any ``bench`` module imports NumPy or torch. It
    remembers which of the numeric libraries were already loaded by then: for those the pin may
    come too late, which :func:`platform` checks and records. An invalid ``BENCH_NUMERIC`` pins
    (the safe choice) and is reported by the CLI (:func:`mode_error`).
    """
    try:
        wanted = mode()
    except ValueError as e:
        _state["error"] = str(e)
        wanted = "pinned"
    if wanted != "pinned":
        _state["pinned_at_import"] = False
        return
    os.environ.update(PINNED_SETTINGS)
    _state["pinned_at_import"] = True
    _state["loaded_before"] = [m for m in ("numpy", "torch", "scipy") if m in sys.modules]


def torch_device() -> str:
    """The torch device cells compute on: ``cpu`` in the pinned environment, else ``cuda``
    when torch sees a GPU."""
    if _effective_mode() == "pinned":
        return "cpu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def worker_environment() -> dict[str, str]:
    """The environment for a process that computes cells (e.g. ``dask worker``): this one's,
    with the pinned settings unless ``BENCH_NUMERIC=native``."""
    env = dict(os.environ)
    if _effective_mode() == "pinned":
        env.update(PINNED_SETTINGS)
        env[MODE_ENV] = "pinned"
    return env


def _effective_mode() -> str:
    try:
        return mode()
    except ValueError:
        return "pinned"


@lru_cache(maxsize=1)
def host_cpu() -> dict[str, str]:
    """The host: architecture (``x86_64``) and the widest vector extension it has (``avx512``,
    ``avx2``, ``avx``, ``sse``; ``unknown`` where ``/proc/cpuinfo`` cannot be read)."""
    isa = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            flags: set[str] = set()
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
        for name, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("avx", "avx"),
                           ("sse", "sse2")):
            if flag in flags:
                isa = name
                break
    except OSError:
        pass
    return {"machine": _platform.machine() or "unknown", "isa": isa}


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str | None]:
    """Installed versions of :data:`LIBRARIES` (None where one is not installed)."""
    out: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _openblas_cores() -> list[str]:
    """The core type of every OpenBLAS loaded in this process (NumPy's, SciPy's)."""
    if "numpy" not in sys.modules:
        return []
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return []
    return sorted({str(i.get("architecture")) for i in threadpool_info()
                   if i.get("internal_api") == "openblas"})


def _torch_readback() -> dict[str, Any]:
    """torch's CPU capability and GPU, if torch is loaded (querying never loads it)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {"torch_cpu_capability": None, "cuda": None}
    cap = torch.backends.cpu.get_cpu_capability()
    cuda = None
    if torch.cuda.is_available():
        cuda = torch.cuda.get_device_name(0)
    return {"torch_cpu_capability": str(cap), "cuda": cuda}


def _problems(settings: dict[str, str | None], cores: list[str], torch_rb: dict) -> list[str]:
    """Why a process that asked for the pinned environment does not have it."""
    out = []
    if not _state["pinned_at_import"]:
        out.append("bench was imported with BENCH_NUMERIC=native and pinned later")
    for var, want in PINNED_SETTINGS.items():
        if settings.get(var) != want:
            out.append(f"{var}={settings.get(var)!r} in force, the pin is {want!r}")
    wrong = [c for c in cores if c != PINNED_OPENBLAS_CORE]
    if wrong:
        late = " (NumPy was loaded before bench)" if "numpy" in _state["loaded_before"] else ""
        out.append(f"OpenBLAS uses the {', '.join(wrong)} kernels, not "
                   f"{PINNED_OPENBLAS_CORE}{late}")
    cap = torch_rb["torch_cpu_capability"]
    if cap is not None and cap != PINNED_TORCH_CAPABILITY:
        out.append(f"torch uses its {cap} kernels, not {PINNED_TORCH_CAPABILITY}"
                   + (" (the CPU lacks AVX2)" if host_cpu()["isa"] not in ("avx2", "avx512")
                      else ""))
    return out


def platform() -> dict[str, Any]:
    """The numeric platform of this process, as a cell records it (``provenance.numeric``).

    Keys: ``mode`` (asked for), ``pinned`` (asked for *and* in force: every setting as pinned,
    every loaded OpenBLAS and torch reporting the pinned kernels), ``problems`` (why not, when
    pinned was asked for), ``settings`` (the four variables as in force), ``openblas``
    (core types reported back), ``torch_cpu_capability`` and ``cuda`` (None where torch is not
    loaded / sees no GPU), ``host`` (:func:`host_cpu`), ``versions`` (:func:`library_versions`)
    and ``id``: cells with the same id were computed with the same kernels and library versions,
    so copies of one cell with the same id must agree bit for bit.
    """
    asked = _effective_mode()
    settings = {var: os.environ.get(var) for var in PINNED_SETTINGS}
    cores = _openblas_cores()
    torch_rb = _torch_readback()
    problems = _problems(settings, cores, torch_rb) if asked == "pinned" else []
    rec: dict[str, Any] = {
        "mode": asked, "pinned": asked == "pinned" and not problems, "problems": problems,
        "settings": settings, "openblas": cores, **torch_rb, "host": host_cpu(),
        "versions": library_versions(),
    }
    rec["id"] = platform_id(rec)
    return rec


def platform_id(rec: dict[str, Any]) -> str:
    """A short name for a platform record: ``cpu-pinned-<digest>`` for the pinned environment
    (the host CPU is not part of it: that is the point of the pin), else ``cpu-native-<isa>-`` or
    ``cuda-`` plus a digest of what the kernels depend on. Library versions are in every digest."""
    versions = rec.get("versions") or {}
    if rec.get("pinned"):
        key = {"settings": PINNED_SETTINGS, "versions": versions}
        prefix = "cpu-pinned"
    elif rec.get("cuda") and rec.get("mode") == "native":
        key = {"cuda": rec.get("cuda"), "versions": versions}
        prefix = "cuda"
    else:
        host = rec.get("host") or {}
        key = {"settings": rec.get("settings"), "openblas": rec.get("openblas"),
               "torch": rec.get("torch_cpu_capability"), "host": host, "versions": versions}
        prefix = f"cpu-native-{host.get('isa', 'unknown')}"
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:8]
    return f"{prefix}-{digest}"


def describe(rec: dict[str, Any] | None) -> str:
    """One line for a platform record (``bench verify``, ``bench reference check``)."""
    if not isinstance(rec, dict):
        return "numeric platform not recorded (computed before bench 0.4.0)"
    versions = rec.get("versions") or {}
    libs = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    host = rec.get("host") or {}
    where = f"host {host.get('machine', '?')}/{host.get('isa', '?')}"
    if rec.get("pinned"):
        return f"{rec.get('id')}: pinned AVX2 kernels, {where}; {libs}"
    why = "; ".join(rec.get("problems") or []) or "BENCH_NUMERIC=native"
    return f"{rec.get('id')}: NOT pinned ({why}), {where}; {libs}"
