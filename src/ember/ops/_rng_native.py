"""The generator's draws in C (csrc/random.c): words, float and double uniforms, and
bernoulli's 0/1 (or dropout's 0/scale) values made straight from the words, for large draws.

The words are NumPy's MT19937 stream, the one `Generator._words` reads: the C code moves
the generator's own state (in place where NumPy's struct is as expected, else taken out and
put back), so the native and the NumPy paths continue each other's stream and give the same
numbers. Each function answers None (the caller then draws with NumPy) where native kernels
are off or the draw is too small to pay for the call.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..native import calls
from ..random import mt_struct_readable

# fewer values than this: NumPy's path (set when each C draw paid a round trip of the state)
MIN_DRAWS = 256


def _lib(n: int):
    if n < max(MIN_DRAWS, 1):
        return None
    from .. import native

    return native.library("random")


_MT_WORDS = 624
_in_place: list = []  # [bool] once checked: NumPy's MT19937 struct is (uint32 key[624], int pos)


def _struct_readable() -> bool:
    """Whether a bit generator's state can be read and written in place at its
    `ctypes.state_address` (`random.mt_struct_readable`, checked once); where it cannot,
    every draw takes the state out and puts it back through `state` (slower)."""
    if not _in_place:
        _in_place.append(mt_struct_readable())
    return _in_place[0]


def _run(g, fn, out: np.ndarray, *args) -> np.ndarray:
    """Call `fn(key, &pos, out, *args)` on the generator's state, which moves on."""
    bg = g._rs._bit_generator
    with bg.lock:  # NumPy's own draws hold it: no other thread draws from the state meanwhile
        if _struct_readable():
            addr = bg.ctypes.state_address
            index = ctypes.c_int.from_address(addr + 4 * _MT_WORDS)
            pos = np.array([index.value], np.int64)
            fn(addr, calls.ptr(pos), calls.ptr(out), *args)
            index.value = int(pos[0])
        else:
            state = bg.state["state"]
            key = state["key"]
            pos = np.array([state["pos"]], np.int64)
            fn(calls.ptr(key), calls.ptr(pos), calls.ptr(out), *args)
            bg.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": int(pos[0])}}
    g._fresh = False
    return out


def _draw(g, n: int, name: str, dtype) -> np.ndarray | None:
    lib = _lib(n)
    if lib is None:
        return None
    fn = calls.entry(lib, name, [calls.P] * 3 + [calls.I64])
    return _run(g, fn, np.empty(n, dtype), n)


def words(g, n: int) -> np.ndarray | None:
    """The next `n` 32-bit words (as `Generator._words`), or None."""
    return _draw(g, n, "ember_mt_words", np.uint32)


def floats(g, n: int) -> np.ndarray | None:
    """`n` float32 uniforms in [0, 1) (as `Generator._floats`), or None."""
    return _draw(g, n, "ember_mt_floats", np.float32)


def randperm(g, n: int) -> np.ndarray | None:
    """A permutation of 0..n-1 as int64 (`_rng_kernels.randperm`'s swaps, for n - 1 words
    and n below its small-n bound), or None."""
    lib = _lib(n - 1)
    if lib is None:
        return None
    fn = calls.entry(lib, "ember_mt_randperm", [calls.P] * 3 + [calls.I64])
    return _run(g, fn, np.empty(n, np.int64), n)


def doubles(g, n: int) -> np.ndarray | None:
    """`n` double uniforms in [0, 1) (as `Generator._doubles`), or None."""
    return _draw(g, n, "ember_mt_doubles", np.float64)


def bernoulli(g, n: int, p: float, one, zero, dtype) -> np.ndarray | None:
    """`n` values of `dtype` (float32 or float64): `one` where the next double uniform is
    below p, else `zero`; None for other dtypes or where NumPy draws."""
    dtype = np.dtype(dtype)
    sfx = calls.SUFFIX.get(dtype)
    lib = None if sfx is None else _lib(n)
    if lib is None:
        return None
    c = calls.F64 if sfx == "f64" else ctypes.c_float
    fn = calls.entry(lib, f"mt_bernoulli_{sfx}",
                     [calls.P] * 3 + [calls.I64, calls.F64, c, c])
    return _run(g, fn, np.empty(n, dtype), n, float(p), float(one), float(zero))


# --- normal: Box-Muller and the affine step (csrc/normal.c) -------------------------------

def _normal_lib():
    """The normal draws' library, for any count of values: the transforms read uniforms
    already drawn, with no generator state to move, so the C call has no round trip to
    pay for and beats NumPy's emulation of the vector code from one block of 16 (randn of
    32 values: ~100 -> ~25 us, most of it Python)."""
    from .. import native

    return native.library("normal")


def box_muller(u: np.ndarray) -> np.ndarray | None:
    """`_rng_math.box_muller_f32_avx2` (float32 blocks) or `_rng_kernels.box_muller_f64`
    (float64) of a C-contiguous (blocks, 16) array of uniforms, in C; None where NumPy
    computes it (native kernels off, another dtype)."""
    if u.dtype not in (np.float32, np.float64) or not u.flags.c_contiguous:
        return None
    lib = _normal_lib()
    if lib is None:
        return None
    name = "ember_normal16_float" if u.dtype == np.float32 else "ember_normal16_double"
    out = np.empty(u.shape, u.dtype)
    calls.entry(lib, name, [calls.P, calls.P, calls.I64])(
        calls.ptr(u), calls.ptr(out), u.shape[0])
    return out


def affine(v: np.ndarray, s, m, fused: bool) -> np.ndarray | None:
    """v * s + m in place on a contiguous float32 / float64 `v` (one rounding where
    `fused`), in C; None where NumPy computes it."""
    if v.dtype not in (np.float32, np.float64) or not v.flags.c_contiguous:
        return None
    lib = _normal_lib()
    if lib is None:
        return None
    if v.dtype == np.float32:
        c, name = ctypes.c_float, "ember_affine_float"
    else:
        c, name = calls.F64, "ember_affine_double"
    calls.entry(lib, name, [calls.P, calls.I64, c, c, calls.INT])(
        calls.ptr(v), v.size, float(s), float(m), int(fused))
    return v
