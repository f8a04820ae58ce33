"""Complex kernels on NumPy arrays where NumPy's answer differs from PyTorch's CPU kernels.

NumPy and PyTorch agree on complex values almost everywhere, but not on how they reach
some of them: NumPy's reciprocal is conj(z) / |z|^2 and its integer powers multiply
repeatedly, while PyTorch divides by Smith's algorithm and takes other powers as
exp(e * log(z)) (C's cpow). The results differ in the signs of zeros, at zero and infinite
inputs, and in the last bits of integer powers; these kernels follow PyTorch.

Where PyTorch's AVX2 loop body and its scalar loop (small tensors, and the tail of large
ones) disagree on the sign of a zero, these follow the scalar loop: small tensors are the
ones that get printed.
"""

from __future__ import annotations

import numpy as np

from ._fma import fma
from ._rng_kernels import avx2


def _fused() -> bool:
    """Does the reproduced PyTorch build contract a * b + c into one FMA (its AVX2 build
    does, its scalar 'default' build does not)?"""
    return avx2()


def _mul_add(x: np.ndarray, y: np.ndarray, z: np.ndarray, fused: bool) -> np.ndarray:
    """x * y + z, rounded once when `fused` (as the C compiler contracts it)."""
    return fma(x, y, z) if fused else x * y + z


def reciprocal(a: np.ndarray) -> np.ndarray:
    """1 / a for complex `a` by Smith's scaled division of 1 + 0j, as PyTorch computes it.

    NOTE: NumPy gives 1 / (1+0j) = 1-0j and 1 / (-1j) = +0+1j; Smith's algorithm (scale by
    the larger of |re|, |im|) gives 1+0j and -0+1j, and 1 / 0j is inf+nanj.
    """
    return divide(np.ones((), a.dtype), a)


def divide(n, d) -> np.ndarray:
    """n / d for complex arrays by Smith's algorithm, as PyTorch's c10::complex division
    (with the multiply-adds its AVX2 build fuses)."""
    dtype = np.result_type(n, d)
    n, d = np.asarray(n, dtype), np.asarray(d, dtype)
    a, b, c, e = n.real, n.imag, d.real, d.imag
    fused = _fused()
    with np.errstate(all="ignore"):
        wide = np.abs(c) >= np.abs(e)
        rat = np.where(wide, e / c, c / e)
        scl = 1 / np.where(wide, _mul_add(e, rat, c, fused), _mul_add(c, rat, e, fused))
        re = np.where(wide, _mul_add(b, rat, a, fused), _mul_add(a, rat, b, fused)) * scl
        im = np.where(wide, _mul_add(-a, rat, b, fused), _mul_add(b, rat, -a, fused)) * scl
        both_zero = (c == 0) & (e == 0)
        if both_zero.any():  # (a zero divisor: each part over |0|, inf or nan)
            re = np.where(both_zero, a / np.abs(c), re)
            im = np.where(both_zero, b / np.abs(e), im)
    return _parts(re, im, dtype)


def multiply(x, y, fused: bool | None = None) -> np.ndarray:
    """x * y for complex arrays as PyTorch's scalar loop: (ac - bd) + (ad + bc)i, where its
    AVX2 build fuses ac (and ad) into the sum with the rounded bd (and bc). NumPy's SIMD
    loop fuses others and PyTorch's vectorized body none; `fused=False` rounds every
    product, as C's complex `*` in the C library's cpow."""
    dtype = np.result_type(x, y)
    x, y = np.asarray(x, dtype), np.asarray(y, dtype)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    fused = _fused() if fused is None else fused
    with np.errstate(all="ignore"):
        return _parts(_mul_add(a, c, -(b * d), fused), _mul_add(a, d, b * c, fused), dtype)


def cpow(a, b, dtype=None) -> np.ndarray:
    """a ** b for complex operands as C's cpow: exp(b * log(a)), with no integer shortcut.

    NOTE: NumPy multiplies repeatedly for small integer exponents and returns 0 for a zero
    base; PyTorch calls std::pow, so (-1+0j) ** 4 in complex64 is 1+3.5e-07j there and
    0j ** 4 is 0-0j.
    """
    dtype = np.result_type(a, b) if dtype is None else np.dtype(dtype)
    a = np.asarray(a).astype(dtype, copy=False)
    b = np.asarray(b, dtype)
    with np.errstate(all="ignore"):
        return np.exp(multiply(b, np.log(a), fused=False)).astype(dtype, copy=False)


def pow_scalar(a: np.ndarray, e) -> np.ndarray:
    """`a` to the number `e` (one of them complex), with PyTorch's shortcuts for common
    exponents, in `a`'s precision."""
    a = a.astype(np.result_type(a.dtype, np.complex64), copy=False)
    if e == 0.5:
        return np.sqrt(a)
    if e == -0.5:
        with np.errstate(all="ignore"):
            return 1 / np.sqrt(a)
    if e == -1:
        return reciprocal(a)
    if e == 1:
        return a.copy()
    if e == 2:
        return multiply(a, a)
    if e == 3:
        return multiply(multiply(a, a), a)
    if e == -2:
        return reciprocal(multiply(a, a))
    if e == 0:
        return np.ones_like(a)
    return cpow(a, e, a.dtype)


def _parts(re: np.ndarray, im: np.ndarray, dtype) -> np.ndarray:
    """A complex array of `dtype` from its real and imaginary parts."""
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def _real_of(dtype) -> np.dtype:
    return np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)


def modulus(a: np.ndarray) -> np.ndarray:
    """|z| as C's hypot(re, im), which PyTorch's abs calls.

    NOTE: NumPy's complex absolute runs its own SIMD loop, an ulp from hypot in about a
    third of the elements; np.hypot gives the C library's (correctly rounded) bits.
    """
    return np.hypot(a.real, a.imag)


def sgn(a: np.ndarray) -> np.ndarray:
    """z / |z| (0 at 0): PyTorch's scalar kernel divides by |z| + 0j with Smith's algorithm.

    NOTE: PyTorch's AVX2 loop body divides each part by |z| instead, so in tensors of 16 or
    more elements sgn(-2-0j) may be -1-0j there (-1+0j here and in small tensors).
    """
    mag = modulus(a)
    return np.where(mag == 0, np.zeros((), a.dtype), divide(a, mag.astype(a.dtype)))


def exp2(a: np.ndarray) -> np.ndarray:
    """2 ** z as exp(ln 2 * z), the real ln 2 scaling each part (PyTorch's identity)."""
    ln2 = _real_of(a.dtype).type(np.log(2.0))
    with np.errstate(all="ignore"):
        return np.exp(_parts(a.real * ln2, a.imag * ln2, a.dtype))


def log_base(a: np.ndarray, base: float) -> np.ndarray:
    """log(z) / ln(base), each part divided by the real constant (PyTorch's vectorized
    log2 and both of its log10 kernels; its scalar log2 multiplies by 1 / ln 2, an ulp
    away at most)."""
    ln = _real_of(a.dtype).type(np.log(base))
    with np.errstate(all="ignore"):
        w = np.log(a)
    return _parts(w.real / ln, w.imag / ln, a.dtype)


def _in64(fn, x: np.ndarray, *more: np.ndarray) -> np.ndarray:
    """`fn` of float32 arguments computed in float64 and rounded once, as a correctly
    rounded C float function would give; float64 arguments directly."""
    if x.dtype == np.float32:
        return fn(x.astype(np.float64), *(m.astype(np.float64) for m in more)).astype(np.float32)
    return fn(x, *more)


def log1p(a: np.ndarray) -> np.ndarray:
    """log(1 + z) accurate near 0, by the rounding-error correction PyTorch's CPU uses.

    u = 1 + z is rounded; log(u) * z / (u - 1) rescales log(u) by how far the rounded u
    moved from 1 + z (Kahan's trick, as in NumPy PR 22611). u == 1 gives z itself.
    """
    with np.errstate(all="ignore"):
        # (real-only +1 and -1, as C++'s z + T(1): an imaginary -0 keeps its sign)
        u = _parts(a.real + 1, a.imag, a.dtype)
        du = _parts(u.real - 1, u.imag, a.dtype)
        log_u = np.log(u)
        scaled = log_u * divide(a, du)
        out = np.where(du == a, log_u, scaled)
        return np.where(u == 1, a, out).astype(a.dtype, copy=False)


def expm1(a: np.ndarray) -> np.ndarray:
    """exp(z) - 1 accurate near 0: expm1(x) cos(y) - 2 sin(y/2)^2 + i e^x sin(y)."""
    x, y = a.real, a.imag
    two = x.dtype.type(2)
    with np.errstate(all="ignore"):
        s = _in64(np.sin, y / two)
        re = _in64(np.expm1, x) * _in64(np.cos, y) - two * s * s
        im = _in64(np.exp, x) * _in64(np.sin, y)
    return _parts(re, im, a.dtype)
