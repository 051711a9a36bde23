"""torch's VML math in the pinned environment: the ATen CPU kernels that call MKL's vector math
library, registered to NumPy/SciPy kernels instead (:func:`route`, called by
:func:`bench.numeric.configure_torch`). Kept apart from :mod:`bench.numeric`, which imports it,
so that each stays a readable size; it imports nothing of bench's.
"""

from __future__ import annotations

from typing import Any

VML_OPS: dict[str, str] = {
    "acos": "numpy.arccos", "asin": "numpy.arcsin", "atan": "numpy.arctan",
    "cos": "numpy.cos", "sin": "numpy.sin", "tan": "numpy.tan", "tanh": "numpy.tanh",
    "exp": "numpy.exp", "log": "numpy.log", "log10": "numpy.log10", "log2": "numpy.log2",
    "sqrt": "numpy.sqrt", "erf": "scipy.special.erf", "erfc": "scipy.special.erfc",
    "erfinv": "scipy.special.erfinv",
}
"""ATen's CPU kernels that call MKL's vector math library (VML) in torch's PyPI build, and what
computes them in the pinned environment instead.

VML picks its code path by its own CPU detection, which ``MKL_CBWR`` does not govern, and
``tanh`` (every LSTM step), ``sqrt`` (every Adam step) and ``exp``/``log`` round differently on
different paths. Pin v2's LSTM cells made on an Intel Xeon did not rerun bit for bit on an AMD
EPYC (Zen 5, VML path 2; the Xeon's path was not recorded), while every other library on the
LSTM's path gave the same bits on both machines. Found by making VML believe it runs on other
CPUs (``tests/test_numeric.py``: a shim for its CPU detection, loaded
with ``LD_PRELOAD``): these are the ops whose results change with VML's path, and with them
routed to NumPy (its own SIMD loops, pinned to ``X86_V3``; SciPy's for the error functions)
nothing in the LSTM probe does. Only the CPU kernels (dispatch key ``CPU``) are replaced, for
the functional, in-place and ``out=`` forms; autograd is untouched (the derivatives call these
ops again, or none of them). Composite ops that reach them through the dispatcher (``logsumexp``,
``special.ndtr``, the BCE-with-logits loss) follow; two kernels call VML inside themselves and
are not routed: ``pow`` with the exponent ±0.5 and ``logit``. bench's own torch code uses
neither (a plugin that does is not portable across CPUs)."""

VML_ROUTE = "numpy-1"
"""What :data:`VML_OPS` computes with, and its version: part of the pinned platform id."""

_library: list[Any] = []  # the torch.library registration, kept alive for the process


def route(torch: Any) -> None:
    """Register NumPy/SciPy kernels for :data:`VML_OPS` on torch's CPU dispatch key (once per
    process). Inputs are made contiguous first (NumPy's SIMD loops then always run the same
    way); half precision is computed in float32 and rounded back, integer inputs promoted to
    the default dtype as torch does."""
    if _library:
        return
    import importlib
    import warnings

    import numpy as np

    lib = torch.library.Library("aten", "IMPL")

    def numpy_fn(path: str) -> Any:
        mod, _, name = path.rpartition(".")
        return getattr(importlib.import_module(mod), name)

    def compute(fn: Any, x: Any, dtype: Any) -> Any:
        work = x.detach().resolve_conj().resolve_neg()
        if work.dtype in (torch.float16, torch.bfloat16):
            work = work.to(torch.float32)
        elif not (work.is_floating_point() or work.is_complex()):
            work = work.to(torch.get_default_dtype())
        res = np.asarray(fn(work.contiguous().numpy()))
        return torch.from_numpy(np.ascontiguousarray(res)).to(dtype)

    def kernels(path: str) -> tuple[Any, Any, Any]:
        resolved: list[Any] = []  # imported on first use: SciPy only if an erf is computed

        def fn(a: Any) -> Any:
            if not resolved:
                resolved.append(numpy_fn(path))
            return resolved[0](a)

        def functional(x: Any) -> Any:
            dtype = x.dtype if (x.is_floating_point() or x.is_complex()) \
                else torch.get_default_dtype()
            return compute(fn, x, dtype)

        def inplace(x: Any) -> Any:
            if not (x.is_floating_point() or x.is_complex()):  # as torch's own kernels refuse
                raise RuntimeError(f"result type Float can't be cast to the desired output "
                                   f"type {str(x.dtype).removeprefix('torch.').title()}")
            x.detach().copy_(compute(fn, x, x.dtype))
            return x

        def out_form(x: Any, *, out: Any) -> Any:
            res = compute(fn, x, out.dtype)
            out.resize_(res.shape)
            out.copy_(res)
            return out

        return functional, inplace, out_form

    with warnings.catch_warnings():  # "overriding a previously registered kernel": intended
        warnings.simplefilter("ignore")
        for op, path in VML_OPS.items():
            functional, inplace, out_form = kernels(path)
            lib.impl(op, functional, "CPU")
            lib.impl(f"{op}_", inplace, "CPU")
            lib.impl(f"{op}.out", out_form, "CPU")
    _library.append(lib)


def routed() -> bool:
    """Whether this process's torch computes :data:`VML_OPS` with NumPy/SciPy."""
    return bool(_library)
