"""Fused multiply-add in NumPy: x * y + z rounded once, as a C `fma` computes it.

PyTorch's CPU kernels are compiled with multiply-add contraction, so where a kernel
multiplies and then adds (`add(a, b, alpha=k)` is fma(b, k, a), `addcmul` fma(v t1, t2, x),
`lerp` fma(w, end - start, start)), its float32 and float64 results are rounded once, and a
product rounded before the sum differs from them in the last bit of 10-30% of elements.
NumPy has no fused multiply-add, so it is built from exact pieces:

- float32: the product of two float32 numbers is exact in float64. The float64 sum is
  rounded *to odd* (when inexact, the neighbour whose last bit is 1; its error is exact by
  TwoSum), and rounding that to float32 gives the correctly rounded result: a float64
  carries the 29 extra bits that rule needs (Boldo and Melquiond, "Emulation of FMA and
  correctly rounded sums: proved algorithms using rounding to odd", 2008). The nearest
  float64 differs from its round-to-odd twin in float32 only where it falls exactly
  halfway between two float32 numbers, so only those elements pay for it.
- float64: the product is split exactly into a sum of two doubles (Dekker's product with
  Veltkamp's split), the larger part added to z exactly (TwoSum), the two small parts added
  rounded to odd and the result added last: the same paper's algorithm, exact while the
  product stays between 2^-969 and 2^995 in magnitude (where the split's pieces neither
  underflow nor overflow). Outside that range, or where an input is not finite, the
  product and the sum are each rounded (IEEE's inf and NaN, as `fma` gives them).
- float16 / bfloat16: as PyTorch computes them, in float32 (each 16-bit product is exact
  there), rounded once to float32 and then to the 16-bit dtype.

The native kernels (csrc/multiply_add.c) call C's `fma`: these are their NumPy twins, the
same bits. Where native kernels are on, `fma` itself runs C's (`_fma_native`) on the
layouts it takes; the emulation is then the reference its tests hold it to.
"""

from __future__ import annotations

import numpy as np

from ._fma_native import fma_native

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's constant for float64
_SAFE_LO, _SAFE_HI = 2.0 ** -969, 2.0 ** 995
_LOW29, _HALF29 = np.uint64((1 << 29) - 1), np.uint64(1 << 28)
_F32_TINY = float(np.finfo(np.float32).tiny)  # 2^-126


def _two_sum_error(a: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The exact rounding error of s = a + b (Knuth's TwoSum: a + b == s + error)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """s + err (s the rounded sum, err its exact error) rounded to odd: s where exact or where
    s's last bit is 1, else s's neighbour towards err."""
    even = (s.view(np.uint64) & 1) == 0
    nudge = ((err > 0) | (err < 0)) & even  # (False for a NaN error: s not finite)
    if nudge.any():
        s = np.where(nudge, np.nextafter(s, np.copysign(np.inf, err)), s)
    return s


def _fma32(x, y, z) -> np.ndarray:
    x, y, z = (np.asarray(v, _F64) for v in (x, y, z))
    with np.errstate(all="ignore"):
        p = x * y  # exact
        s = p + z
        # Rounding s again to float32 can only go wrong where s is exactly halfway between
        # two float32 numbers (its 29 low bits 1000...0), or in float32's subnormal range
        # (other halfway points): only there is s replaced by its round-to-odd twin.
        bits = s.view(np.uint64) if s.ndim else np.asarray(s).view(np.uint64)
        risky = ((bits & _LOW29) == _HALF29) | (np.abs(s) < _F32_TINY)
        if risky.any():
            s = np.where(risky, _to_odd(s, _two_sum_error(p, z, s)), s)
        return s.astype(_F32)


def _split(a: np.ndarray):
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def _fma64(x, y, z) -> np.ndarray:
    x, y, z = (np.asarray(v, _F64) for v in (x, y, z))
    with np.errstate(all="ignore"):
        uh = x * y
        xh, xl = _split(x)
        yh, yl = _split(y)
        ul = ((xh * yh - uh) + xh * yl + xl * yh) + xl * yl  # uh + ul == x * y exactly
        th = z + uh
        tl = _two_sum_error(z, uh, th)
        v = tl + ul
        v = _to_odd(v, _two_sum_error(tl, ul, v))
        out = th + v
        mag = np.abs(uh)
        plain = ~((mag >= _SAFE_LO) & (mag <= _SAFE_HI) & np.isfinite(z))
        if plain.any():  # (a zero product among them: z + 0 is exact)
            # (an infinite z stays itself beside a finite product, even one past the range)
            out = np.where(plain, np.where(np.isinf(z) & np.isfinite(x) & np.isfinite(y), z,
                                           uh + z), out)
    return out


def fma(x, y, z) -> np.ndarray:
    """x * y + z with one rounding, broadcast, in the dtype of the array operands (float32,
    float64, or a 16-bit float through float32); numbers are read at that dtype."""
    d = next((v.dtype for v in (x, y, z) if isinstance(v, np.ndarray)), _F64)
    if d == _F64 or d == _F32:
        out = fma_native(x, y, z, d)
        if out is not None:
            return out
    if d == _F64:
        return _fma64(x, y, z)
    if d == _F32:
        return _fma32(*(np.asarray(v, _F32) for v in (x, y, z)))
    if d.itemsize == 2 and d.kind in "fV":
        return _fma32(*(np.asarray(v, d).astype(_F32) for v in (x, y, z))).astype(d)
    raise TypeError(f"fma: no fused multiply-add for {d}")
