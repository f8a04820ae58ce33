"""Kernels of the ops PyTorch computes as fused multiply-adds: add / sub with `alpha=`,
addcmul and lerp, each rounded once where the result is a float (`_fma` says why and how),
and their native twins (csrc/multiply_add.c). The twins run at every size: NumPy's exact
emulation costs about ten passes (10 us at 128 float32 elements, 3 us in C; 750 against
10 us at 64K, one thread).

Integers, bools and complex numbers have no fused form: they multiply, then add, as
PyTorch's kernels do for them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..native import calls
from ._common import laid_out
from ._fma import fma
from ._inplace_kernel import disjoint_or_same

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def fused(*xs) -> np.dtype | None:
    """The real float dtype (float32, float64, or 16-bit) every array operand shares, or
    None (integers, bools, complex numbers, mixed dtypes)."""
    d = None
    for x in xs:
        if isinstance(x, np.ndarray | np.generic):
            if d is None:
                d = x.dtype
            elif x.dtype != d:
                return None
    return d if d is not None and (d.kind == "f" or d.kind == "V" and d.itemsize == 2) \
        else None


def scaled_add(a, b, k):
    """a + k b for float arrays (add's `alpha=`; sub passes -k): fma(b, k, a), k read at
    the arrays' dtype."""
    return fma(b, k, a)


def _exact_product(b, k, d: np.dtype):
    """The number b k at dtype `d` (each read at `d`) where that product is exact there, so
    that a + b k, one rounding, is the fused result; None otherwise."""
    if d not in (_F32, _F64) or not isinstance(b, int | float | np.floating) or \
            not isinstance(k, int | float | np.floating):
        return None
    x, y = float(d.type(b)), float(d.type(k))
    p = x * y  # (exact in float64 for float32 x, y)
    if not math.isfinite(p):
        return None
    if d == _F32:
        return np.float32(p) if float(np.float32(p)) == p else None
    return p if Fraction(x) * Fraction(y) == Fraction(p) else None


def alpha_kernel(negate: bool):
    """add's (sub's with `negate`) kernel with `alpha=`: a + alpha b, one fused multiply-add
    for floats (16-bit floats reach it as float32: the caller's `lowp2`); a number `b` whose
    product with alpha is exact adds it, the same one rounding."""
    def kernel(a, b, alpha):
        if (d := fused(a, b)) is not None:
            k = -alpha if negate else alpha
            if not isinstance(b, np.ndarray) and (p := _exact_product(b, k, d)) is not None:
                return np.add(a, p)
            return scaled_add(a, b, k)
        return (np.subtract if negate else np.add)(a, np.multiply(b, alpha))

    return kernel


def alpha_into(dst, b, alpha, negate: bool = False) -> bool:
    """`dst += alpha * b` (-= with `negate`) in place, for a C-ordered dst (not a 16-bit
    float: those compute in float32) that `b` does not partly overlap and whose dtype holds
    the result's kind (uint8 -= int32 computes in int32 and wraps, as PyTorch, through the
    copy); False (nothing written) otherwise."""
    if dst.dtype.itemsize == 2 and dst.dtype.kind in "fV" or not dst.flags.c_contiguous or (
            isinstance(b, np.ndarray) and b is not dst and np.shares_memory(b, dst)) or \
            not np.can_cast(np.result_type(dst, b), dst.dtype, "same_kind"):
        return False
    if fused(dst, b) is not None:
        np.copyto(dst, scaled_add(dst, b, -alpha if negate else alpha))
    else:
        (np.subtract if negate else np.add)(dst, np.multiply(b, alpha), out=dst)
    return True


def addcmul(x, t1, t2, value):
    """x + value t1 t2 for float arrays of one dtype: fma(value t1, t2, x) (value t1 rounded
    first, as PyTorch's kernel; 16-bit floats in float32, value read at float32)."""
    d = x.dtype
    if d.itemsize == 2:
        x, t1, t2 = (v.astype(_F32) for v in (x, t1, t2))
        return fma(np.multiply(t1, np.float32(value)), t2, x).astype(d)
    return fma(np.multiply(t1, d.type(value)), t2, x)


def lerp(start, end, weight):
    """start + weight (end - start) by PyTorch's two-sided formula (from `start` where
    |weight| < 0.5, from `end` otherwise, so lerp(a, b, 1) == b), each side one rounding
    (16-bit floats reach it as float32). Complex numbers multiply, then add."""
    d = fused(start, end, weight if isinstance(weight, np.ndarray) else None)
    if d is None:
        diff = end - start
        return np.where(np.abs(weight) < 0.5, start + weight * diff, end - diff * (1 - weight))
    w = weight if isinstance(weight, np.ndarray) else d.type(weight)
    diff = end - start
    if w.ndim == 0:
        return fma(w, diff, start) if abs(w) < 0.5 else fma(-diff, 1 - w, end)
    return np.where(np.abs(w) < 0.5, fma(w, diff, start), fma(-diff, 1 - w, end))


# --- native twins: contiguous float32 / float64 arrays of one shape ----------------------------

def _native(lib, name: str, a, b, c, k, out=None) -> np.ndarray:
    if out is None:
        out = np.empty_like(a)
    calls.entry(lib, f"{name}_{calls.SUFFIX[a.dtype]}", [calls.P] * 4 + [calls.I64, calls.F64])(
        calls.ptr(a), calls.ptr(b), calls.ptr(c), calls.ptr(out), a.size, k)
    return out


def _plain(*arrays) -> bool:
    """Whether the native kernels take these as they are: ndarrays of one float32/float64
    dtype and one shape, C-contiguous."""
    a0 = arrays[0]
    if a0.__class__ is not np.ndarray or a0.dtype not in calls.SUFFIX:
        return False
    return all(a.__class__ is np.ndarray and a.dtype == a0.dtype and a.shape == a0.shape
               and a.flags.c_contiguous for a in arrays)


def _dense(*arrays) -> list | None:
    """The arrays broadcast to one shape and made C-contiguous (a per-channel scale beside
    an activation, a strided view), for the native kernels; None unless all are ndarrays of
    one float32/float64 dtype."""
    if _plain(*arrays):
        return list(arrays)
    a0 = arrays[0]
    if any(a.__class__ is not np.ndarray or a.dtype != a0.dtype for a in arrays) or \
            a0.dtype not in calls.SUFFIX:
        return None
    try:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        return None  # (NumPy's kernel raises the error)
    return [np.ascontiguousarray(np.broadcast_to(a, shape)) for a in arrays]


def _laid_as_numpy(originals, dense, res):
    """`res` of the C kernel laid out as the NumPy twin (and PyTorch's TensorIterator) lay
    it out, where `_dense` had to broadcast or copy the operands: the C kernel writes
    row-major, where `bias + x` of a channels-last or transposed `x` keeps x's layout."""
    if all(d is o for d, o in zip(dense, originals)):
        return res
    return laid_out([(a.shape, a.strides) for a in originals if a.__class__ is np.ndarray], res)


def _spread(b, like):
    """A number `b` (add's `other` beside `alpha=`) as an array of `like`'s dtype and shape,
    so the C kernel takes it as it takes a tensor; arrays as they are."""
    if isinstance(b, np.ndarray) or not isinstance(like, np.ndarray) or like.dtype not in \
            calls.SUFFIX or isinstance(b, complex):
        return b
    return np.full(like.shape, b, like.dtype)


def scaled_add_native(lib, a, b, alpha, negate: bool = False):
    """a + alpha b (a - alpha b with `negate`) in C, or NotImplemented."""
    if not isinstance(b, np.ndarray) and isinstance(a, np.ndarray) and \
            (p := _exact_product(b, -alpha if negate else alpha, a.dtype)) is not None:
        return np.add(a, p)  # (one rounding, as the fused form: no C call needed)
    ops = (a, _spread(b, a))
    dense = _dense(*ops)
    if dense is None:
        return NotImplemented
    return _laid_as_numpy(ops, dense, _native(lib, "scaled_add", *dense, None,
                                              -alpha if negate else alpha))


def scaled_add_into_native(lib, dst, b, alpha, negate: bool = False) -> bool:
    """dst += alpha b (-= with `negate`) in C; False (nothing written) where it does not
    apply, or where `b` overlaps `dst` other than as the same elements."""
    if not isinstance(b, np.ndarray) and dst.__class__ is np.ndarray and dst.flags.c_contiguous \
            and (p := _exact_product(b, -alpha if negate else alpha, dst.dtype)) is not None:
        np.add(dst, p, out=dst)
        return True
    b = _spread(b, dst)
    if not _plain(dst, b) or not disjoint_or_same(b, dst):
        return False
    _native(lib, "scaled_add", dst, b, None, -alpha if negate else alpha, out=dst)
    return True


def addcmul_native(lib, x, t1, t2, value=1):
    """x + value t1 t2 in C, or NotImplemented."""
    dense = _dense(x, t1, t2)
    if dense is None or isinstance(value, complex):
        return NotImplemented
    return _laid_as_numpy((x, t1, t2), dense, _native(lib, "addcmul", *dense, value))


def addcdiv_native(lib, x, t1, t2, value=1):
    """x + (value t1) / t2 in C, each op rounding as the NumPy twin's, or NotImplemented."""
    dense = _dense(x, t1, t2)
    if dense is None or isinstance(value, complex) or \
            (value.__class__ is int and abs(value) > 1 << 53):  # (k: a double, exactly)
        return NotImplemented
    return _laid_as_numpy((x, t1, t2), dense, _native(lib, "addcdiv", *dense, value))


def lerp_native(lib, start, end, weight):
    """lerp in C (a number weight, or an array), or NotImplemented."""
    if isinstance(weight, np.ndarray):
        dense = _dense(start, end, weight)
        if dense is None:
            return NotImplemented
        return _laid_as_numpy((start, end, weight), dense, _native(lib, "lerp", *dense, 0.0))
    dense = _dense(start, end)
    if dense is None or isinstance(weight, complex):
        return NotImplemented
    return _laid_as_numpy((start, end), dense, _native(lib, "lerp", *dense, None, float(weight)))
