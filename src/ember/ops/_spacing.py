"""The values of evenly spaced sequences (`linspace`, `arange`), computed on NumPy arrays as
PyTorch's CPU kernels round them, per dtype."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from .. import _dtype as dt
from ._fma import fma
from ._rounding import in_16
from ._scalar_value import scalar_value


def linspace_float(start, end, steps: int, t) -> np.ndarray:
    """linspace in float32 / float64 as PyTorch's CPU kernel computes it, value for value:
    the step in the dtype, the first half counted up from `start` and the second half down
    from `end`, each point one fused multiply-add."""
    start, end = np.asarray(start, t), np.asarray(end, t)
    step = np.asarray((end - start) / t(steps - 1))
    half = steps // 2
    out = np.empty(steps, t)
    out[:half] = fma(step, np.arange(half, dtype=t), start)
    out[half:] = fma(-step, np.arange(steps - 1 - half, -1, -1, dtype=t), end)
    return out


def linspace_real(start, end, steps: int, d) -> np.ndarray:
    """linspace (`steps` >= 2) in a real dtype `d` as PyTorch's CPU kernel computes it. The
    bounds are first converted to `d` (refused where they overflow it, as PyTorch's Scalar
    conversion refuses); the step is taken in `d` itself for floating dtypes and in double
    for integer ones, and each point is `start + step * i` in the first half and
    `end - step * (steps - 1 - i)` in the second: one fused multiply-add in float32 /
    float64 and double (then truncated) for integers, while float16 / bfloat16 round to
    the dtype after each of the step's and the point's operations, as their C++ operators do."""
    if d.name not in _LINSPACE_KERNEL:
        raise NotImplementedError(
            f"\"linspace_cpu\" not implemented for '{dt.SCALAR_TYPE_NAMES[d.name]}'")
    lo, hi = scalar_value(start, d), scalar_value(end, d)
    with np.errstate(invalid="ignore", over="ignore"):  # (inf bounds give NaNs, as there)
        if d in (dt.float32, dt.float64):
            return linspace_float(lo, hi, steps, d.np.type)
        return (_integer_points if d._kind == 1 else _half_points)(lo, hi, steps, d)


def _integer_points(lo, hi, steps: int, d) -> np.ndarray:
    f64 = np.float64
    lo, hi, i = f64(lo), f64(hi), np.arange(steps)
    step = np.full(steps, (hi - lo) / (steps - 1))
    vals = np.where(i < steps // 2, fma(step, i.astype(f64), np.full(steps, lo)),
                    fma(-step, (steps - 1 - i).astype(f64), np.full(steps, hi)))
    return np.trunc(vals).astype(d.np)


def _half_points(lo, hi, steps: int, d) -> np.ndarray:
    f32, t = np.float32, d.np
    lo, hi, i = f32(lo), f32(hi), np.arange(steps)
    up = i < steps // 2
    step = in_16(in_16(hi - lo, t) / in_16(steps - 1, t), t)
    moved = in_16(step * in_16(np.where(up, i, steps - 1 - i).astype(f32), t), t)
    return np.where(up, lo + moved, hi - moved).astype(d.np)


_LINSPACE_KERNEL = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                    "float32", "float64")


def linspace_complex(start: complex, end: complex, steps: int, t) -> np.ndarray:
    """complex64 / complex128 linspace (`t` the real part's NumPy type): PyTorch's step is
    the complex difference over a real count, and each point adds a real multiple of it, so
    the real and imaginary parts are each the real linspace of their bounds."""
    if steps <= 1:
        return np.array([start] * steps, dtype=np.result_type(t, np.complex64))
    out = linspace_float(start.real, end.real, steps, t).astype(np.result_type(t, np.complex64))
    out.imag = linspace_float(start.imag, end.imag, steps, t)
    return out


_GRAIN = 32768  # (at::internal::GRAIN_SIZE: PyTorch splits a range among threads past it)


def _whole_values(start, step, n: int, d: np.dtype) -> bool:
    """Whether every value of the range is a whole number the dtype holds exactly
    (`arange(100, dtype=torch.float)`, `arange(0, d, 2.0)`): then each rounding of the
    kernel's is exact, and the values are the range's own."""
    start, step = float(start), float(step)
    if not (start.is_integer() and step.is_integer()):
        return False
    return max(abs(start), abs(start + step * (n - 1))) <= 2.0 ** (ml_dtypes.finfo(d).nmant + 1)


def _products_exact(step, n: int) -> bool:
    """Whether `step * i` is exact in double for every 0 <= i < n: then a fused multiply-add
    `step * i + start` rounds once either way, and NumPy's plain one (tens of times faster
    than the emulated fma) gives the same bits. True for the usual integer and binary
    fraction steps (1, 0.5, 0.25 ...) with any count that fits in the rest of the bits."""
    step = float(step)
    if step == 0.0:
        return True
    if not math.isfinite(step) or abs(step) < 2.0 ** -900:  # (products near the subnormals)
        return False
    significand = int(math.frexp(abs(step))[0] * 2.0 ** 53)
    significand >>= (significand & -significand).bit_length() - 1  # (its trailing zeros)
    return significand.bit_length() + max(n - 1, 1).bit_length() <= 53


def arange_float(start, step, n: int, t, threads: int = 1, fused: bool = True) -> np.ndarray:
    """arange in a floating dtype as PyTorch's CPU kernel rounds it, value for value.

    The kernel computes `start + step * i` in its accumulate type (double; float for
    float16 / bfloat16), one fused multiply-add. Its vectorized loop goes two 256-bit vectors
    at a time (8 floats, 4 doubles or 16 halves each): each vector rounds its first value to
    the dtype and adds `j * step` (j < width) to it, again fused; the remainder of a thread's
    chunk takes the scalar path. So arange(0, 1, 0.05)[9] is 0.45 rounded from
    float32(0.4) + 0.05, one float32 ulp above the nearest float to 0.45.
    `fused=False` is PyTorch's build for CPUs without AVX2, compiled without FMA.
    """
    if _whole_values(start, step, n, np.dtype(t)):  # (every rounding below is exact)
        return (start + step * np.arange(n, dtype=np.float64)).astype(t)
    with np.errstate(over="ignore"):  # (past float16's range: inf, as there)
        plain = not fused or np.dtype(t).itemsize >= 4 and _products_exact(step, n)
        mul_add = (lambda a, b, c: a * b + c) if plain else fma
        width = 32 // np.dtype(t).itemsize
        i = np.arange(n)
        f64 = np.float64 if np.dtype(t).itemsize >= 4 else np.float32
        steps = np.full(n, f64(step))
        out = mul_add(steps, i.astype(f64), np.full(n, f64(start))).astype(t)
        n_chunks = min(threads, -(-n // _GRAIN)) if n > _GRAIN and threads > 1 else 1
        size = max(1, -(-n // n_chunks))
        for lo in range(0, n, size):
            hi = min(n, lo + size)
            vec_end = hi - (hi - lo) % (2 * width)
            if vec_end <= lo:
                continue
            k = i[lo:vec_end]
            first = lo + (k - lo) // width * width  # (each vector's first index)
            base = out[first].astype(f64)
            out[lo:vec_end] = mul_add(steps[lo:vec_end], (k - first).astype(f64), base).astype(t)
        return out
