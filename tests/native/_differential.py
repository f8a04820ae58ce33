"""Inputs for native-against-NumPy tests: every layout and special value a kernel meets.

- `layouts(a)`: the same values as a contiguous array, a transposed copy read back through
  a transposed view (non-contiguous), an expanded (broadcast, stride 0) view where the
  values allow, and a negative-stride view;
- `with_specials(a)`: NaN, +inf, -inf and -0.0 planted at fixed positions;
- `threads(n)`: run a block with n kernel threads.
"""

from __future__ import annotations

from contextlib import contextmanager

import ml_dtypes
import numpy as np

import ember

DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16]


def layouts(a: np.ndarray) -> dict[str, np.ndarray]:
    """Equal-valued views of `a` in different memory layouts (name -> array)."""
    out = {"contiguous": np.ascontiguousarray(a)}
    if a.ndim >= 2:
        t = np.ascontiguousarray(np.swapaxes(a, 0, 1))
        out["transposed"] = np.swapaxes(t, 0, 1)
    flipped = np.ascontiguousarray(a[::-1])
    out["negative-stride"] = flipped[::-1]
    if a.ndim >= 1 and a.shape[0] > 0 and np.all(a == a[:1]):
        out["broadcast"] = np.broadcast_to(a[:1], a.shape)
    return out


def broadcast_rows(a: np.ndarray) -> np.ndarray:
    """`a` with every entry of dim 0 equal to the first (so `layouts` adds a broadcast view)."""
    return np.broadcast_to(a[:1], a.shape).copy()


def with_specials(a: np.ndarray) -> np.ndarray:
    """A copy of `a` with NaN, inf, -inf and -0.0 in its first four flat positions."""
    b = a.copy()
    flat = b.reshape(-1)
    for i, v in enumerate([np.nan, np.inf, -np.inf, -0.0][: flat.size]):
        flat[i] = v
    return b


@contextmanager
def threads(n: int):
    old = ember.get_num_threads()
    ember.set_num_threads(n)
    try:
        yield
    finally:
        ember.set_num_threads(old)


def assert_bits(a: np.ndarray, b: np.ndarray) -> None:
    """Equal bit for bit (NaN payloads aside): same shape, dtype, values and zero signs."""
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    same = (a == b) | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))
    same &= (np.signbit(a) == np.signbit(b)) | np.isnan(a.astype(np.float64))
    assert same.all(), f"{(~same).sum()} of {a.size} differ; first at {np.argwhere(~same)[0]}"
