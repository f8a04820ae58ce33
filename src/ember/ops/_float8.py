"""Rounding to the float8 formats as PyTorch's c10 conversions do (`cast_array`, scalar
writes): through float32, e4m3fn saturating (it has no infinity), NaN with every bit set."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt

E4M3_MAX = 448.0


def to_float8(a: np.ndarray, d: dt.dtype) -> np.ndarray:
    """Real array `a` rounded to float8 dtype `d` (a new array in `a`'s layout)."""
    a = np.asarray(a).astype(np.float32)
    if d is dt.float8_e4m3fn:
        # NOTE: PyTorch saturates every value beyond e4m3fn's largest finite one, infinities
        # included, to +-448 (NaN stays NaN)
        a = np.asarray(np.clip(a, -E4M3_MAX, E4M3_MAX))  # (clip makes a 0-d array a scalar)
    out = a.astype(d.np, order="K")
    nan = np.isnan(a)
    if nan.any():  # NOTE: c10 writes every NaN as all exponent and mantissa bits set
        np.copyto(out.view(np.uint8), np.where(np.signbit(a), 0xFF, 0x7F), casting="unsafe",
                  where=nan)
    return out
