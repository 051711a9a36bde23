"""One numeric environment for every process that computes a cell, and the record of it.

torch (ATen's vectorised kernels, oneDNN for the LSTM, MKL for BLAS) and NumPy (its own SIMD
loops, OpenBLAS) choose their kernels at run time, by the CPU's instruction set *and vendor*,
and the kernels round differently: an LSTM trained on a few hundred documents turns last-bit
differences into a different model (measured: the quickstart's tem ε = 10 cell, utility
macro-F1 0.920 on an AVX2-only AMD EPYC, 0.865 on an AVX-512 Intel Xeon). The *pinned*
environment makes every x86-64 CPU with AVX2 run the same kernels, whatever its vendor and
whatever else it supports:

===========================  ==============  ================================================
setting                      value           acts on
===========================  ==============  ================================================
``ATEN_CPU_CAPABILITY``      ``avx2``        torch's ATen, at its first vectorised kernel
``MKL_CBWR``                 ``COMPATIBLE``  MKL (torch's BLAS): its conditional numerical
                                             reproducibility branch that is the same on Intel
                                             and non-Intel CPUs (``AVX2`` is honoured on Intel
                                             CPUs only: MKL falls back to its AUTO branch on
                                             AMD, which is how the first pin failed); needs
                                             a fixed thread count, which cells have
``OPENBLAS_CORETYPE``        ``Haswell``     OpenBLAS (NumPy, SciPy), when it is loaded
``NPY_ENABLE_CPU_FEATURES``  ``X86_V3``      NumPy's own SIMD loops (AVX2 + FMA), not its
                                             AVX-512 ones; set on x86-64 hosts with AVX2 and
                                             NumPy >= 2.4 only (elsewhere NumPy would refuse
                                             to import), recorded as a problem otherwise
``ONEDNN_MAX_CPU_ISA``       ``AVX2``        oneDNN (torch's LSTM): its AVX2 + FMA kernels on
                                             every CPU, whatever else the CPU has
torch's oneDNN               LSTM only       off as soon as torch is imported (an import
                             (pin v4)        hook :func:`pin` installs), on inside
                                             :func:`lstm_kernels` around bench's ``nn.LSTM``
                                             calls (pin v3: off, 3x slower); oneDNN's GELU,
                                             which MiniLM uses, differs from ATen's
torch's VML math             NumPy           ``tanh``, ``sqrt``, ``exp``, ``log``, the
                                             trigonometric and error functions
                                             (:data:`VML_OPS`): torch's build hands them to
                                             MKL's vector math library, whose code path follows
                                             the CPU whatever ``MKL_CBWR`` says; the pin
                                             registers NumPy/SciPy kernels for them on torch's
                                             CPU dispatch key when torch is imported
===========================  ==============  ================================================

Pin v3 (platform id ``cpu-pinned-1cc01654``): pin v2 lacked the last row, and its LSTM cells
made on an AVX-512 Intel Xeon did not rerun bit for bit on an AVX-512 AMD EPYC (Zen 5),
although every probe but the LSTM's agreed; VML was found by making it take other CPUs' code
paths on one machine (``tests/test_numeric.py``).

Pin v4 (the default; :data:`PIN`) runs torch's LSTM, and nothing else, on oneDNN capped at
AVX2: the same on every x86-64 CPU with AVX2 by measurement (under pin v3 an AVX-512 Intel Xeon
gave the AMD EPYC's ``lstm_onednn`` probe digest) and by oneDNN's source (docs/reference.md,
"Pin v4"). The backward pass follows the forward's choice, so :func:`lstm_kernels` surrounds
the forward call only. Cells record their pin; :func:`as_pin` recomputes a cell under the pin
it was made with (``bench reference check``, ``bench leaderboard --verify``).

The variables act only if set before NumPy and torch are loaded, so :func:`pin` runs when
``bench`` is imported (``bench/__init__.py``), before any of its modules loads NumPy, and sets
them in ``os.environ``: every process started from there (joblib's loky workers, a Dask
``LocalCluster``) inherits them. A Dask worker on another machine is started with
``bench dask-worker`` (:func:`worker_environment`), which starts ``dask worker`` with the same
variables. torch is configured when it is imported, whoever imports it (a plugin's model
too), and bench's own torch computations run in :func:`torch_threads` (a fixed thread
count). In the pinned environment torch computes on the CPU even where CUDA is present
(:func:`torch_device`): the reference is a CPU reference.

``BENCH_NUMERIC=native`` turns the pin off (a GPU run, a speed test): the libraries then choose
their kernels themselves, and every cell says so. Each cell records the environment it was
computed in (:func:`platform`, in its provenance): the mode, the settings in force, what the
libraries report back (torch's CPU capability and oneDNN switch, each OpenBLAS's core type,
NumPy's dispatched SIMD targets), the host CPU and the versions of the numeric libraries.
:func:`platform` also checks that the pin took: a process that loaded NumPy before ``bench``
(so OpenBLAS chose its own kernels) is recorded as *not* pinned, with the reason, never as
pinned.

Example:
    >>> import bench.numeric as numeric
    >>> numeric.platform()["mode"]
    'pinned'
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.util
import json
import os
import platform as _platform
import sys
from functools import lru_cache
from importlib import metadata
from typing import Any, Iterator

from bench.numeric_vml import VML_OPS as VML_OPS  # re-exported: the pin's routed ops
from bench.numeric_vml import VML_ROUTE
from bench.numeric_vml import route as route_vml_ops
from bench.numeric_vml import routed as vml_routed

MODE_ENV = "BENCH_NUMERIC"
"""Environment variable choosing the numeric environment: ``pinned`` (default) or ``native``."""
MODES = ("pinned", "native")
"""The values :data:`MODE_ENV` may take."""

PIN_ENV = "BENCH_PIN"
"""Environment variable choosing the version of the pinned environment (:data:`PINS`): unset
means :data:`PIN`. Set by :func:`as_pin` to recompute a cell made under an older pin."""
PINS: dict[int, dict[str, bool]] = {3: {"onednn_lstm": False}, 4: {"onednn_lstm": True}}
"""What differs between the pin versions that can compute cells: whether torch's LSTM runs on
oneDNN (:func:`lstm_kernels`)."""
PIN = 4
"""The pin version new cells are computed with."""

PINNED_SETTINGS: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "COMPATIBLE",
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_ENABLE_CPU_FEATURES": "X86_V3",
}
"""The kernel settings of the pinned environment (see the module docstring)."""

NUMPY_SETTING = "NPY_ENABLE_CPU_FEATURES"
"""The one pinned variable that can stop NumPy from importing where it does not apply (a CPU
without the ``X86_V3`` features, a NumPy that does not know the name): :func:`pin` sets it
only where :func:`numpy_pin_applies`."""
NUMPY_CONFLICT = "NPY_DISABLE_CPU_FEATURES"
"""NumPy refuses to import with both this and :data:`NUMPY_SETTING` set: the pin removes it."""
PINNED_NUMPY_SIMD = ["X86_V3"]
"""NumPy's dispatched SIMD targets in force in the pinned environment (read back)."""
X86_V3_FLAGS = ("avx2", "fma", "bmi1", "bmi2", "f16c", "abm", "movbe")
"""``/proc/cpuinfo`` flags of the x86-64-v3 level (NumPy's ``X86_V3`` target; ``abm`` is how
Linux names LZCNT)."""

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


def pin_version() -> int:
    """The pin version in force: ``$BENCH_PIN`` (a key of :data:`PINS`), else :data:`PIN`.

    Raises:
        ValueError: ``$BENCH_PIN`` names no pin version.
    """
    value = os.environ.get(PIN_ENV, "").strip()
    if not value:
        return PIN
    if not value.isdigit() or int(value) not in PINS:
        raise ValueError(f"{PIN_ENV}={value!r}: expected one of "
                         f"{', '.join(str(v) for v in PINS)} (unset: {PIN})")
    return int(value)


@contextlib.contextmanager
def as_pin(version: int | None) -> Iterator[None]:
    """Compute under pin ``version`` (None: the one in force) inside the block: to recompute a
    cell made under an older pin. A loaded torch is reconfigured on entry and exit (and every
    torch computation goes through :func:`torch_threads`, which configures it again);
    processes started inside inherit the version."""
    if version is None:
        yield
        return
    if version not in PINS:
        raise ValueError(f"pin version {version!r}: expected one of {sorted(PINS)}")
    old = os.environ.get(PIN_ENV)
    os.environ[PIN_ENV] = str(version)
    _reconfigure_torch()
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(PIN_ENV, None)
        else:
            os.environ[PIN_ENV] = old
        _reconfigure_torch()


def _reconfigure_torch() -> None:
    if (torch := sys.modules.get("torch")) is not None:
        configure_torch(torch)


def mode_error() -> str | None:
    """Why ``$BENCH_NUMERIC`` could not be read when ``bench`` was imported, or ``$BENCH_PIN``
    now, or None."""
    if _state["error"]:
        return _state["error"]
    try:
        pin_version()
    except ValueError as e:
        return str(e)
    return None


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
    os.environ.pop(NUMPY_CONFLICT, None)
    os.environ.update(_settings_to_set())
    _state["pinned_at_import"] = True
    _state["loaded_before"] = [m for m in ("numpy", "torch", "scipy") if m in sys.modules]
    if "torch" in sys.modules:
        configure_torch(sys.modules["torch"])
    elif not any(isinstance(f, _TorchImportHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchImportHook())


class _TorchImportHook(importlib.abc.MetaPathFinder):
    """Finds ``torch`` with the other finders and wraps its loader so that
    :func:`configure_torch` runs right after torch is imported (then removes itself)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            configure_torch(module)

        loader.exec_module = exec_module
        return spec


def _settings_to_set() -> dict[str, str]:
    """:data:`PINNED_SETTINGS` as :func:`pin` and :func:`worker_environment` set them: without
    :data:`NUMPY_SETTING` where NumPy would refuse it (:func:`numpy_pin_applies`)."""
    if numpy_pin_applies():
        return dict(PINNED_SETTINGS)
    return {k: v for k, v in PINNED_SETTINGS.items() if k != NUMPY_SETTING}


def numpy_pin_applies() -> bool:
    """Whether :data:`NUMPY_SETTING` can be set without stopping NumPy's import: an x86-64 host
    with every :data:`X86_V3_FLAGS` flag, and a NumPy (>= 2.4) that names its targets
    ``X86_V3`` (read from its metadata: NumPy is not imported)."""
    if host_cpu()["machine"] not in ("x86_64", "AMD64") or not set(X86_V3_FLAGS) <= _cpu_flags():
        return False
    try:
        major, minor = (int(x) for x in metadata.version("numpy").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (2, 4)


def configure_torch(torch: Any) -> None:
    """Apply the pinned environment's torch settings to a loaded torch: oneDNN off (on for
    the LSTM inside :func:`lstm_kernels` only), and ATen's
    MKL-VML math computed by NumPy (:func:`bench.numeric_vml.route`); a no-op with
    ``BENCH_NUMERIC=native``. Idempotent; called when torch is imported (:func:`pin`'s hook)
    and again by :func:`torch_threads`."""
    if _effective_mode() == "pinned":
        torch.backends.mkldnn.enabled = False
        route_vml_ops(torch)


@contextlib.contextmanager
def lstm_kernels() -> Iterator[None]:
    """Run the ``nn.LSTM`` calls inside on the pin's LSTM kernels: oneDNN under pin v4, ATen
    under pin v3 (:data:`PINS`); natively the libraries' own choice (nothing changes). Every
    LSTM forward of bench's models goes through here; its backward pass follows."""
    torch = sys.modules.get("torch")
    if torch is None or _effective_mode() != "pinned":
        yield
        return
    before = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = PINS[_effective_pin()]["onednn_lstm"]
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = before


@contextlib.contextmanager
def torch_threads(num_threads: int) -> Iterator[Any]:
    """Run torch computations with ``num_threads`` CPU threads and the pinned torch settings
    (:func:`configure_torch`); yields the torch module. Every torch computation of a cell goes
    through here: torch's default thread count is the machine's core count, and the order of a
    parallel reduction depends on it."""
    import torch

    configure_torch(torch)
    old = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    try:
        yield torch
    finally:
        torch.set_num_threads(old)


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
        env.pop(NUMPY_CONFLICT, None)
        env.update(_settings_to_set())
        env[MODE_ENV] = "pinned"
    return env


def _effective_mode() -> str:
    try:
        return mode()
    except ValueError:
        return "pinned"


def _effective_pin() -> int:
    """:func:`pin_version`, or :data:`PIN` where ``$BENCH_PIN`` is invalid (reported as a
    problem by :func:`platform`)."""
    try:
        return pin_version()
    except ValueError:
        return PIN


@lru_cache(maxsize=1)
def _cpuinfo() -> dict[str, Any]:
    """The first CPU's ``flags`` and ``vendor_id`` in ``/proc/cpuinfo`` (empty where it cannot
    be read)."""
    out: dict[str, Any] = {"flags": frozenset(), "vendor": "unknown"}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags") and not out["flags"]:
                    out["flags"] = frozenset(line.split(":", 1)[1].split())
                elif line.startswith("vendor_id") and out["vendor"] == "unknown":
                    out["vendor"] = line.split(":", 1)[1].strip() or "unknown"
                if out["flags"] and out["vendor"] != "unknown":
                    break
    except OSError:
        pass
    return out


def _cpu_flags() -> frozenset[str]:
    return _cpuinfo()["flags"]


@lru_cache(maxsize=1)
def host_cpu() -> dict[str, str]:
    """The host: architecture (``x86_64``), the widest vector extension it has (``avx512``,
    ``avx2``, ``avx``, ``sse``; ``unknown`` where ``/proc/cpuinfo`` cannot be read) and the CPU
    vendor (``GenuineIntel``, ``AuthenticAMD``; MKL dispatches on it)."""
    isa = "unknown"
    flags = _cpu_flags()
    for name, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("avx", "avx"),
                       ("sse", "sse2")):
        if flag in flags:
            isa = name
            break
    return {"machine": _platform.machine() or "unknown", "isa": isa,
            "vendor": _cpuinfo()["vendor"]}


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


def _numpy_simd() -> list[str] | None:
    """NumPy's dispatched SIMD targets in force (None where NumPy is not loaded)."""
    if "numpy" not in sys.modules:
        return None
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # pragma: no cover - NumPy < 2
        return None
    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]


def _torch_readback() -> dict[str, Any]:
    """torch's CPU capability, oneDNN switch and GPU, if torch is loaded (querying never loads
    it)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {"torch_cpu_capability": None, "torch_onednn": None, "torch_vml": None,
                "cuda": None}
    cap = torch.backends.cpu.get_cpu_capability()
    cuda = None
    if torch.cuda.is_available():
        cuda = torch.cuda.get_device_name(0)
    return {"torch_cpu_capability": str(cap), "torch_onednn": bool(torch.backends.mkldnn.enabled),
            "torch_vml": VML_ROUTE if vml_routed() else "mkl", "cuda": cuda}


def _problems(settings: dict[str, str | None], cores: list[str], torch_rb: dict,
              simd: list[str] | None) -> list[str]:
    """Why a process that asked for the pinned environment does not have it."""
    out = []
    if not _state["pinned_at_import"]:
        out.append("bench was imported with BENCH_NUMERIC=native and pinned later")
    for var, want in PINNED_SETTINGS.items():
        if settings.get(var) != want:
            out.append(f"{var}={settings.get(var)!r} in force, the pin is {want!r}")
    late = " (NumPy was loaded before bench)" if "numpy" in _state["loaded_before"] else ""
    wrong = [c for c in cores if c != PINNED_OPENBLAS_CORE]
    if wrong:
        out.append(f"OpenBLAS uses the {', '.join(wrong)} kernels, not "
                   f"{PINNED_OPENBLAS_CORE}{late}")
    if simd is not None and simd != PINNED_NUMPY_SIMD:
        out.append(f"NumPy dispatches to {', '.join(simd) or 'its baseline only'}, not "
                   f"{', '.join(PINNED_NUMPY_SIMD)}{late}")
    try:
        pin_version()
    except ValueError as e:
        out.append(str(e))
    if torch_rb.get("torch_onednn"):
        out.append("torch's oneDNN is on outside an LSTM (switched on after bench configured "
                   "torch)")
    if torch_rb.get("torch_vml") not in (None, VML_ROUTE):
        out.append("torch's VML math runs on MKL's CPU-dependent path (torch was configured "
                   "with BENCH_NUMERIC=native)")
    cap = torch_rb["torch_cpu_capability"]
    if cap is not None and cap != PINNED_TORCH_CAPABILITY:
        out.append(f"torch uses its {cap} kernels, not {PINNED_TORCH_CAPABILITY}"
                   + (" (the CPU lacks AVX2)" if host_cpu()["isa"] not in ("avx2", "avx512")
                      else ""))
    return out


def platform() -> dict[str, Any]:
    """The numeric platform of this process, as a cell records it (``provenance.numeric``).

    Keys: ``mode`` (asked for), ``pinned`` (asked for *and* in force: every setting as pinned,
    every loaded OpenBLAS, NumPy and torch reporting the pinned kernels), ``problems`` (why not,
    when pinned was asked for), ``settings`` (the variables of :data:`PINNED_SETTINGS` as in
    force), ``openblas`` (core types reported back), ``numpy_simd`` (NumPy's dispatched targets),
    ``torch_cpu_capability``, ``torch_onednn``, ``torch_vml`` (:data:`VML_ROUTE` where torch's
    VML ops are routed to NumPy, ``mkl`` where not) and ``cuda`` (None where torch is not
    loaded / sees no GPU), ``host`` (:func:`host_cpu`), ``versions`` (:func:`library_versions`)
    and ``id``: cells with the same id were computed with the same kernels and library versions,
    so copies of one cell with the same id must agree bit for bit.
    """
    asked = _effective_mode()
    if asked == "native" and "torch" not in sys.modules:
        # natively the id names the GPU (``cuda-…``) where torch sees one: load torch, so that a
        # cell that used no torch model and `bench platform` record the platform the model
        # cells of the same run record (found on an H100: `bench platform` said cpu-native-…)
        try:
            import torch  # noqa: F401
        except ImportError:
            pass
    settings = {var: os.environ.get(var) for var in PINNED_SETTINGS}
    cores = _openblas_cores()
    simd = _numpy_simd()
    torch_rb = _torch_readback()
    problems = _problems(settings, cores, torch_rb, simd) if asked == "pinned" else []
    rec: dict[str, Any] = {
        "mode": asked, "pinned": asked == "pinned" and not problems, "problems": problems,
        "pin": _effective_pin() if asked == "pinned" else None,
        "settings": settings, "openblas": cores, "numpy_simd": simd, **torch_rb,
        "host": host_cpu(),
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
        key = {"settings": PINNED_SETTINGS, "torch_vml": VML_ROUTE, "versions": versions}
        if (rec.get("pin") or 3) != 3:  # pin v3's records have no "pin": their ids stay
            key["pin"] = rec["pin"]
        prefix = "cpu-pinned"
    elif rec.get("cuda") and rec.get("mode") == "native":
        key = {"cuda": rec.get("cuda"), "versions": versions}
        prefix = "cuda"
    else:
        host = rec.get("host") or {}
        key = {"settings": rec.get("settings"), "openblas": rec.get("openblas"),
               "numpy_simd": rec.get("numpy_simd"), "torch": rec.get("torch_cpu_capability"),
               "onednn": rec.get("torch_onednn"), "host": host, "versions": versions}
        prefix = f"cpu-native-{host.get('isa', 'unknown')}"
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()[:8]
    return f"{prefix}-{digest}"


RELEASED_PINS: dict[str, int] = {"cpu-pinned-1cc01654": 3, "cpu-pinned-aca3ad18": 4}
"""The pinned platform ids of released pins and their pin versions: pin v3 and pin v4 with the
constraints of suite 0.4.0 on (every committed reference cell records one of them). A new pin
or new pinned library versions add their id here."""
RELEASED_PINNED_IDS = frozenset(RELEASED_PINS)
"""The ids of :data:`RELEASED_PINS`."""


def pinned_id(version: int | None = None) -> str:
    """The pinned platform id this installation gives under pin ``version`` (None: the one in
    force), whether or not this process is pinned."""
    return platform_id({"pinned": True, "pin": version or _effective_pin(),
                        "versions": library_versions()})


def known_pinned(pid: str) -> bool:
    """Whether ``pid`` is a pinned platform id the suite knows (:data:`RELEASED_PINS`, or
    this installation's own under any pin version): a copy claiming any other
    ``cpu-pinned-…`` id is a claim, not a pin (issue 48: a made-up ``cpu-pinned-deadbeef``
    was ranked over the honest pinned copy)."""
    return pin_of(pid) is not None


def pin_of(pid: str | None) -> int | None:
    """The pin version a pinned platform id was computed under (:data:`RELEASED_PINS`, or this
    installation's own ids), None for any other id: the version :func:`as_pin` recomputes a
    cell of that platform with."""
    if not pid:
        return None
    if pid in RELEASED_PINS:
        return RELEASED_PINS[pid]
    for version in PINS:
        if pid == pinned_id(version):
            return version
    return None


def describe(rec: dict[str, Any] | None) -> str:
    """One line for a platform record (``bench verify``, ``bench reference check``)."""
    if not isinstance(rec, dict):
        return "numeric platform not recorded (computed before bench 0.4.0)"
    versions = rec.get("versions") or {}
    libs = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    host = rec.get("host") or {}
    where = f"host {host.get('machine', '?')}/{host.get('isa', '?')}"
    if host.get("vendor"):
        where += f"/{host['vendor']}"
    if rec.get("pinned"):
        return f"{rec.get('id')}: pinned kernels (pin v{rec.get('pin') or 3}), {where}; {libs}"
    why = "; ".join(rec.get("problems") or []) or "BENCH_NUMERIC=native"
    return f"{rec.get('id')}: NOT pinned ({why}), {where}; {libs}"
