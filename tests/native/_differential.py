"""Inputs for native-against-NumPy tests: every layout and special value a kernel meets.

- `layouts(a)`: the same values as a contiguous array, a transposed copy read back through
  a transposed view (non-contiguous), an expanded (broadcast, stride 0) view where the
  values allow, and a negative-stride view;
- `with_specials(a)`: NaN, +inf, -inf and -0.0 planted at fixed positions;
- `threads(n)`: run a block with n kernel threads;
- `ulps(a, b)`, `assert_bits(a, b)`: distances and equality of results;
- `numpy_float32_excess()`: how far this CPU's NumPy float32 log1p / expm1 stray.
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


ONE_VALUES = [1.5, -0.0, np.nan, -np.inf]


def one_value(value: float, shape: tuple, dtype) -> np.ndarray:
    """`value` broadcast over `shape`, every stride 0 (as the gradient of a sum or a mean
    reaches the derivative kernels)."""
    return np.broadcast_to(np.array(value, dtype), shape)


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


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units in the last place, where neither is NaN (both NaN: 0)."""
    bits = np.int64 if a.dtype == np.float64 else np.int32
    gap = np.abs(a.view(bits).astype(np.int64) - b.view(bits).astype(np.int64))
    return np.where(np.isnan(a) & np.isnan(b), 0, gap)


_excess: list = []


def numpy_float32_excess() -> int:
    """The ulps beyond one by which NumPy's own float32 log1p and expm1 miss the correctly
    rounded value on this CPU: NumPy runs its AVX-512 loops where the CPU has them (within
    2 ulps: measured 2 on the Intel Xeon), the C library's elsewhere (within 1: 0 here).
    A twin compared with a NumPy kernel over those loops allows this much more."""
    if not _excess:
        rng = np.random.default_rng(0)
        x = np.concatenate([rng.uniform(-0.99, 3, 100_000),
                            np.exp(rng.uniform(-60, 4, 100_000))]).astype(np.float32)
        worst = 0
        for f in (np.log1p, np.expm1):
            with np.errstate(all="ignore"):
                ref = f(x.astype(np.float64)).astype(np.float32)
                worst = max(worst, int(ulps(f(x), ref).max()))
        _excess.append(max(worst - 1, 0))
    return _excess[0]
