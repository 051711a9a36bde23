"""``bench platform --probe``: digests of small computations whose last bits depend on the CPU
kernels, one per library on a cell's path, so two machines can be compared without rerunning
a grid.

Each probe computes something a cell computes (a float32 GEMM through torch's BLAS, a few
training steps of a small LSTM, torch's transcendental ops, NumPy's transcendental loops, a
float64 GEMM through OpenBLAS) on inputs built from integers (no random-number code, whose own
arithmetic would be part of what is compared), and prints the first 16 hex digits of the
sha256 of the result's bytes. In the pinned environment every probe is meant to give the same
digest on every x86-64 CPU with AVX2; ``docs/reference.md`` records the digests of the machine
that made the references. ``lstm`` runs the LSTM as the pin in force does (pin v4: on oneDNN),
``lstm_pin3`` as pin v3 did (oneDNN off: ATen and MKL), which the cells of pin v3 are
recomputed with (:func:`bench.numeric.as_pin`).

Example:
    $ bench platform --probe
    cpu-pinned-76cac3dd: pinned kernels, host x86_64/avx512/GenuineIntel; ...
    probe         digest
    mkl_sgemm     3f0c...
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable

import numpy as np


def _grid(rows: int, cols: int, mult: int, mod: int = 2003) -> np.ndarray:
    """A deterministic float32 matrix in [-1, 1) built from integers only."""
    i = np.arange(rows * cols, dtype=np.int64)
    return (((i * mult + 7) % mod).astype(np.float32) / np.float32(mod / 2) - 1).reshape(rows,
                                                                                         cols)


def _digest(*arrays: Any) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def probe_mkl_sgemm() -> str:
    """float32 GEMM through torch (MKL), shapes of an LSTM gate and a MiniLM projection."""
    from bench.numeric import torch_threads

    with torch_threads(1) as torch:
        a = torch.from_numpy(_grid(257, 131, 31))
        b = torch.from_numpy(_grid(131, 389, 17))
        c = torch.from_numpy(_grid(128, 384, 13))
        d = torch.from_numpy(_grid(384, 1536, 11))
        return _digest((a @ b).numpy(), (c @ d).numpy())


def _lstm(pin: int | None, inference: bool = False) -> str:
    """The LSTM steps, the LSTM's forward in :func:`bench.numeric.lstm_kernels` under pin
    ``pin`` (None: the one in force); ``inference``: then a forward pass under
    ``torch.no_grad()`` (oneDNN's inference kernels differ from its training ones), whose
    output is digested instead of the weights."""
    from bench.numeric import as_pin, lstm_kernels, torch_threads

    with as_pin(pin), torch_threads(1) as torch:
        lstm = torch.nn.LSTM(50, 64, batch_first=True)
        head = torch.nn.Linear(64, 5)
        params = list(lstm.parameters()) + list(head.parameters())
        with torch.no_grad():
            for k, p in enumerate(params):  # deterministic initial weights
                p.copy_(torch.from_numpy(_grid(1, p.numel(), 37 + 2 * k)
                                         .reshape(p.shape) * np.float32(0.2)))
        opt = torch.optim.Adam(params, lr=1e-2)
        x = torch.from_numpy(_grid(16 * 30, 50, 29).reshape(16, 30, 50))
        y = torch.from_numpy(np.arange(16, dtype=np.int64) % 5)
        for _ in range(3):
            opt.zero_grad()
            with lstm_kernels():
                out, _ = lstm(x)
            loss = torch.nn.functional.cross_entropy(head(out[:, -1]), y)
            loss.backward()
            opt.step()
        if inference:
            with torch.no_grad(), lstm_kernels():
                out, _ = lstm(x)
            return _digest(out.numpy())
        return _digest(*(p.detach().numpy() for p in params))


def probe_lstm() -> str:
    """Three Adam steps of a 50 -> 64 LSTM with a linear head, as the pin in force runs it."""
    return _lstm(pin=None)


def probe_lstm_inference() -> str:
    """The trained LSTM's output on its batch under ``torch.no_grad()``, as the pin in force
    runs it (how models predict)."""
    return _lstm(pin=None, inference=True)


def probe_lstm_pin3() -> str:
    """The training steps as pin v3 runs them: torch's oneDNN off (see the module)."""
    return _lstm(pin=3)


def probe_torch_math() -> str:
    """torch's transcendental ops that torch's build hands to MKL's vector math library
    (:data:`bench.numeric.VML_OPS`), float32 and float64: in the pinned environment NumPy and
    SciPy compute them, so VML's CPU-dependent code path never shows."""
    from bench.numeric import VML_OPS, torch_threads

    x = _grid(1, 20_011, 43).ravel() * np.float32(0.99)  # inside every op's domain: (-1, 1)
    with torch_threads(1) as torch:
        outs = []
        for dtype in (torch.float32, torch.float64):
            t = torch.from_numpy(x).to(dtype)
            for op in VML_OPS:
                arg = t.abs() + 0.01 if op in ("log", "log10", "log2", "sqrt") else t
                outs.append(getattr(torch, op)(arg).numpy())
        return _digest(*outs)


def probe_numpy_loops() -> str:
    """NumPy's SIMD loops: exp, log, tanh in float64 and float32, and a pairwise sum."""
    x = _grid(1, 100_003, 41).ravel()
    x64 = x.astype(np.float64) * 3
    return _digest(np.exp(x64), np.log1p(np.abs(x64)), np.tanh(x64), np.exp(x * 3),
                   np.log(np.abs(x) + np.float32(0.5)), np.tanh(x), np.sum(x64 * x64))


def probe_openblas_dgemm() -> str:
    """float64 GEMM and GEMV through NumPy's OpenBLAS, one thread (as in a cell)."""
    from threadpoolctl import threadpool_limits

    a = _grid(301, 257, 23).astype(np.float64)
    b = _grid(257, 199, 19).astype(np.float64)
    with threadpool_limits(limits=1):
        return _digest(a @ b, a @ b[:, 0])


PROBES: dict[str, Callable[[], str]] = {
    "mkl_sgemm": probe_mkl_sgemm,
    "lstm": probe_lstm,
    "lstm_inference": probe_lstm_inference,
    "lstm_pin3": probe_lstm_pin3,
    "torch_math": probe_torch_math,
    "numpy_loops": probe_numpy_loops,
    "openblas_dgemm": probe_openblas_dgemm,
}
"""The probes, in the order printed."""


def run_probes() -> dict[str, str]:
    """Every probe's digest, by name."""
    return {name: fn() for name, fn in PROBES.items()}


def probe_text() -> str:
    """The platform line and the probes' digests, as ``bench platform --probe`` prints them."""
    from bench.numeric import describe, platform

    digests = run_probes()
    lines = [describe(platform()), "probe           digest"]
    lines += [f"{name:<15} {d}" for name, d in digests.items()]
    return "\n".join(lines) + "\n"
