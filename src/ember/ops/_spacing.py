"""The values of evenly spaced sequences (`linspace`), computed on NumPy arrays as PyTorch's
CPU kernel rounds them, and the fused multiply-add they need."""

from __future__ import annotations

import numpy as np


def fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, as a fused multiply-add (float32 or float64 arrays)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    # float64: the exact product as a sum of two doubles (Dekker), then two error-free sums
    p = a * b
    split = np.float64(134217729.0)  # 2**27 + 1

    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi

    ah, al = halves(a)
    bh, bl = halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    return s + (t + e)


def linspace_float(start, end, steps: int, t) -> np.ndarray:
    """linspace in float32 / float64 as PyTorch's CPU kernel computes it, value for value:
    the step in the dtype, the first half counted up from `start` and the second half down
    from `end`, each point one fused multiply-add."""
    start, end = t(start), t(end)
    step = np.asarray((end - start) / t(steps - 1))
    i = np.arange(steps)
    n = len(i)
    up = fma(np.broadcast_to(step, (n,)), i.astype(t), np.full(n, start))
    down = fma(np.broadcast_to(-step, (n,)), (steps - 1 - i).astype(t), np.full(n, end))
    return np.where(i < steps // 2, up, down)


def linspace_complex(start: complex, end: complex, steps: int, t) -> np.ndarray:
    """complex64 / complex128 linspace (`t` the real part's NumPy type): PyTorch's step is
    the complex difference over a real count, and each point adds a real multiple of it, so
    the real and imaginary parts are each the real linspace of their bounds."""
    if steps <= 1:
        return np.array([start] * steps, dtype=np.result_type(t, np.complex64))
    out = linspace_float(start.real, end.real, steps, t).astype(np.result_type(t, np.complex64))
    out.imag = linspace_float(start.imag, end.imag, steps, t)
    return out
