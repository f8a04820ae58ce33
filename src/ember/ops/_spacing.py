"""The values of evenly spaced sequences (`linspace`), computed on NumPy arrays as PyTorch's
CPU kernel rounds them (each point one fused multiply-add, `_fma.fma`)."""

from __future__ import annotations

import numpy as np

from ._fma import fma


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
