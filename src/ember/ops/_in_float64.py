"""Kernels computed in float64 and rounded once to their input's dtype: the special
functions NumPy lacks (erf family, gamma family, ...), built from float64 NumPy passes."""

from __future__ import annotations

import numpy as np

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _via64(fn):
    """Kernel computing `fn` in float64 and rounding to the input's dtype (float16 and
    bfloat16 through float32, as PyTorch computes them in float32 and rounds once)."""
    def kernel(*arrays, **params):
        d = arrays[0].dtype
        # At least 1-d inside: NumPy turns 0-d arithmetic into scalars, which the kernels'
        # masked assignments cannot write into.
        shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
        args = (np.atleast_1d(np.asarray(a, _F64)) for a in arrays)
        out = np.asarray(fn(*args, **params)).reshape(shape)
        if d.itemsize == 2:
            out = out.astype(_F32)
        return out.astype(d)

    kernel.__name__ = fn.__name__
    return kernel
