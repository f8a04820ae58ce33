"""Kernels computed in float64 and rounded once to their input's dtype: the special
functions NumPy lacks (erf family, gamma family, ...), built from float64 NumPy passes."""

from __future__ import annotations

import numpy as np

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _via64(fn):
    """Kernel computing `fn` in float64 and rounding to the input's dtype (float16 and
    bfloat16 through float32, as PyTorch computes them in float32 and rounds once).

    A kernel whose PyTorch counterpart runs its own float32 algorithm carries it as
    `fn.float32` (see `_special_float32`); that one serves the float32, float16 and
    bfloat16 inputs instead, so they round as PyTorch's do (it is told the input's dtype,
    for PyTorch's 16-bit intermediate roundings)."""
    fn32 = getattr(fn, "float32", None)

    def kernel(*arrays, **params):
        d = arrays[0].dtype
        # At least 1-d inside: NumPy turns 0-d arithmetic into scalars, which the kernels'
        # masked assignments cannot write into.
        shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
        # float32, float16 and bfloat16 (whose NumPy kind is "V", from ml_dtypes)
        if fn32 is not None and (d == _F32 or (d.itemsize == 2 and d.kind in "fV")):
            args32 = (np.atleast_1d(np.asarray(a, _F32)) for a in arrays)
            return np.asarray(fn32(*args32, dtype=d, **params)).reshape(shape).astype(d)
        args = (np.atleast_1d(np.asarray(a, _F64)) for a in arrays)
        out = np.asarray(fn(*args, **params)).reshape(shape)
        if d.itemsize == 2:
            out = out.astype(_F32)
        return out.astype(d)

    kernel.__name__ = fn.__name__
    return kernel
