"""The scans' native kernels (csrc/scan.c), beside ops/scan.py's NumPy ones.

cumsum and cumprod of float32 / float64 (their carry a double, or the input's dtype with
`own`, as the NumPy kernels carry it) and cummax / cummin's values and indices, the NumPy
kernels' bits, in one pass where those take several (a cast, the scan, a cast back; or
the running extremum, a comparison, a running index and a gather). Another dtype, a 0-d
input or native kernels off: the NumPy kernel (NotImplemented here).
"""

from __future__ import annotations

import math

import numpy as np

from ..native import calls

P, I64, INT = calls.P, calls.I64, calls.INT


def _split(a: np.ndarray, dim: int):
    """(suffix, `a` row-major, outer, n, inner) of a scan along `dim`, or None where the
    NumPy kernel runs."""
    sfx = calls.SUFFIX.get(a.dtype)
    if sfx is None or a.ndim == 0:
        return None
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    shape = a.shape
    dim %= a.ndim  # (a negative dim, as NumPy's axis= takes it)
    return sfx, a, math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


def _running(lib, a, dim: int, product: bool, reverse: bool, own: bool):
    got = _split(a, dim)
    if got is None:
        return NotImplemented
    sfx, a, outer, n, inner = got
    out = np.empty(a.shape, a.dtype)
    calls.entry(lib, f"ember_scan_{sfx}", [P, P, I64, I64, I64, INT, INT, INT])(
        calls.ptr(a), calls.ptr(out), outer, n, inner, int(product), int(reverse), int(own))
    return out


def cumsum_native(lib, a, *, dim, reverse=False, own=False):
    return _running(lib, a, dim, False, reverse, own)


def cumprod_native(lib, a, *, dim, own=False):
    return _running(lib, a, dim, True, False, own)


def extreme_native(largest: bool):
    """cummax's (largest) or cummin's native kernel: (values, int64 indices)."""
    def kernel(lib, a, *, dim, in_shape=None):
        got = _split(a, dim)
        if got is None:
            return NotImplemented
        sfx, a, outer, n, inner = got
        out = np.empty(a.shape, a.dtype)
        idx = np.empty(a.shape, np.int64)
        calls.entry(lib, f"ember_scan_extreme_{sfx}", [P, P, P, I64, I64, I64, INT])(
            calls.ptr(a), calls.ptr(out), calls.ptr(idx), outer, n, inner, int(largest))
        return out, idx

    kernel.__name__ = "cummax_native" if largest else "cummin_native"
    return kernel
