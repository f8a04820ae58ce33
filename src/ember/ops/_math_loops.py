"""The elementwise functions composite kernels call: NumPy's, or csrc/math_maps.c's loops.

Without AVX-512, NumPy's expm1 and log1p (and its float64 tanh) are one C-library call
per element: 12-14 ns an element on an AMD EPYC Zen 3, where its exp takes 1.7. Where they
are, a kernel built on them (elu, softplus, mish, log_sigmoid, and the losses on them)
spends most of its time there, 4-6x PyTorch's. Such a kernel is written once over a
`Loops` (`m.expm1(a)`, ...): its NumPy kernel passes `NUMPY`, its native twin (`twin`)
the loops of ember_math.h, each within the ulps tests/native/test_ember_math.py states.

Where NumPy runs its AVX-512 loops (X86_V4, as `numpy.show_runtime()` lists them) those
are the faster, so the twins are not tried: `NATIVE_MIN` is then beyond any size.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import numpy as np

from .. import _cpu
from ..native import calls

NUMPY = SimpleNamespace(expm1=np.expm1, log1p=np.log1p, tanh=np.tanh)

# The fewest elements a twin is tried for (read on each call, so that a test may raise it):
# every non-empty array, so that a tensor's values do not depend on its size
NATIVE_MIN = {"n": 1 << 62 if _cpu.numpy_vector_math() else 1}


def map_kernel(entry: str, dtypes=(np.float32, np.float64)) -> Callable:
    """A native kernel `(lib, a)` running csrc/math_maps.c's `<entry>_<f32|f64>` (a loop
    over ember_math.h's function, split over the kernel threads) for arrays of `dtypes`,
    else NotImplemented; any layout gives a contiguous copy's numbers."""
    suffixes = {np.dtype(d): calls.SUFFIX[np.dtype(d)] for d in dtypes}

    def kernel(lib, a, out=None):
        sfx = suffixes.get(a.dtype)
        if sfx is None:
            return NotImplemented
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        if out is None or not (out.flags.c_contiguous and out.dtype == a.dtype
                               and out.shape == a.shape):
            out = np.empty_like(a)
        calls.entry(lib, f"{entry}_{sfx}", [calls.P, calls.P, calls.I64])(
            calls.ptr(a), calls.ptr(out), a.size)
        return out

    kernel.__name__ = f"_{entry}_native"
    return kernel


_EXPM1, _LOG1P, _TANH64 = map_kernel("map_expm1"), map_kernel("map_log1p"), \
    map_kernel("map_tanh", (np.float64,))


def _looped(kernel: Callable, ufunc, lib) -> Callable:
    """`ufunc(a, out=)` through `kernel` where it takes `a` (an out it cannot write into is
    filled by a copy), else through NumPy's."""
    def f(a, out=None):
        a = np.asarray(a)
        got = kernel(lib, a, out)
        if got is NotImplemented:
            return ufunc(a, out=out)
        if out is not None and got is not out:
            np.copyto(out, got)
            return out
        return got

    return f


_loops_of: dict = {}


def native_loops(lib) -> SimpleNamespace:
    """The `Loops` of csrc/math_maps.c (`lib`): expm1, log1p, and float64 tanh (NumPy's
    float32 tanh is vectorised on every CPU met)."""
    loops = _loops_of.get(lib)
    if loops is None:
        loops = _loops_of[lib] = SimpleNamespace(
            expm1=_looped(_EXPM1, np.expm1, lib), log1p=_looped(_LOG1P, np.log1p, lib),
            tanh=_looped(_TANH64, np.tanh, lib))
    return loops


def _named(kernel: Callable, body: Callable, suffix: str) -> Callable:
    name = body.__name__.removesuffix("_body").lstrip("_")
    kernel.__name__ = kernel.__qualname__ = f"_{name}_{suffix}"
    kernel.__module__ = body.__module__
    return kernel


def on_numpy(body: Callable) -> Callable:
    """The NumPy kernel `(a, *rest, **params)` of a kernel `body(m, a, ...)` written over a
    `Loops`."""
    def kernel(a, *rest, **params):
        return body(NUMPY, a, *rest, **params)

    return _named(kernel, body, "kernel")


def twin(body: Callable, dtypes=(np.float32, np.float64)) -> Callable:
    """The native twin `(lib, a, *rest, **params)` of a kernel `body(m, a, *rest, **params)`
    written over a `Loops`, for `a` of `dtypes` (16-bit floats stay on NumPy's kernel,
    which computes them in float32)."""
    dtypes = tuple(np.dtype(d) for d in dtypes)

    def kernel(lib, a, *rest, **params):
        if a.dtype not in dtypes:
            return NotImplemented
        return body(native_loops(lib), a, *rest, **params)

    return _named(kernel, body, "native")
