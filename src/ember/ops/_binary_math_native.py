"""fmod, remainder, floor division, hypot and nextafter of float32 / float64 arrays in C
(csrc/binary_math.c): the bits of their NumPy kernels (np.fmod; np.remainder with PyTorch's
zero; np.floor_divide; np.hypot; np.nextafter), vectorised, where NumPy calls the C library
per element (some 10x slower: fmod, hypotf, nextafter). Of int32 / int64 arrays: fmod,
remainder, floor and truncating division in one pass each (NumPy's truncating division,
ops/binary._trunc_div_kernel, takes five).

`modulo_native(op)` and `pair_native(name)` are the native twins `native.register` puts beside
such kernels: each takes a float32 / float64 array and an array of its dtype or a number
(read at that dtype, as NumPy reads a Python float), broadcast against each other, and
declines anything else.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..native import calls

FMOD, REMAINDER, FLOOR_DIVIDE, TRUNC_DIVIDE = 0, 1, 2, 3
_INTS = {np.dtype(np.int32): "i32", np.dtype(np.int64): "i64"}
MIN_SIZE = 256  # (fewer elements: NumPy's loop costs less than the call into C)


def _operand(x, d: np.dtype) -> np.ndarray | None:
    """`x` as an array of dtype `d`, or None where the kernel does not take it."""
    if x.__class__ is np.ndarray:
        return x if x.dtype == d else None
    if d.kind == "i":
        info = np.iinfo(d)
        if (x.__class__ is int and info.min <= x <= info.max) or \
                (isinstance(x, np.generic) and x.dtype == d):
            return np.asarray(x, d)
        return None
    if x.__class__ is float or (isinstance(x, np.generic) and x.dtype == d) or \
            (x.__class__ is int and -(1 << 24) <= x <= 1 << 24):  # (an int exactly)
        return np.asarray(x, d)
    return None


def _read(x: np.ndarray, shape: tuple) -> tuple[np.ndarray, int]:
    """(array, step): one element read for all (step 0), or the whole result's shape in C
    order (step 1, broadcast and copied where it is not)."""
    if x.size == 1:
        return x, 0
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    return (x if x.flags.c_contiguous else np.ascontiguousarray(x)), 1


def _prepared(a, b) -> tuple | None:
    """(a, a's step, b, b's step, out, dtype suffix) for a kernel of this file, or None where
    it does not take the operands (out empty: nothing to compute)."""
    if a.__class__ is not np.ndarray:
        return None
    sfx = calls.SUFFIX.get(a.dtype) or _INTS.get(a.dtype)
    b = _operand(b, a.dtype) if sfx is not None else None
    if b is None:
        return None
    shape = a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape)
    out = np.empty(shape, a.dtype)
    if out.size == 0:
        return None, 0, None, 0, out, sfx
    (a, sa), (b, sb) = _read(a, shape), _read(b, shape)
    return a, sa, b, sb, out, sfx


_ARGS = [calls.P, calls.I64, calls.P, calls.I64, calls.P, calls.I64]


def modulo_native(op: int) -> Callable:
    """The native kernel of fmod (FMOD), remainder (REMAINDER), floor division
    (FLOOR_DIVIDE) or, of integers only, truncating division (TRUNC_DIVIDE): `run(lib, a,
    b)`, or NotImplemented for what it does not take (and for an integer zero divisor,
    which the NumPy kernel reports)."""
    def run(lib, a, b, **params):
        got = None if params else _prepared(a, b)
        if got is None:
            return NotImplemented
        a, sa, b, sb, out, sfx = got
        if sfx[0] == "i":
            if out.size and calls.entry(lib, f"int_division_{sfx}", _ARGS + [calls.INT],
                                        calls.I64)(calls.ptr(a), sa, calls.ptr(b), sb,
                                                   calls.ptr(out), out.size, op):
                return NotImplemented  # (a zero divisor)
        elif op == TRUNC_DIVIDE:
            return NotImplemented
        elif out.size:
            calls.entry(lib, f"modulo_{sfx}", _ARGS + [calls.INT])(
                calls.ptr(a), sa, calls.ptr(b), sb, calls.ptr(out), out.size, op)
        return out

    run.__name__ = ("_fmod_native", "_remainder_native", "_floor_divide_native",
                    "_trunc_divide_native")[op]
    return run


def pair_native(name: str) -> Callable:
    """The native kernel `name` of this file taking two operands (hypot: float32 as the C
    library's hypotf, in double, vectorised; float64 by its hypot over the kernel threads.
    nextafter: a step of the bit pattern): `run(lib, a, b)`, or NotImplemented for what it
    does not take."""
    def run(lib, a, b, **params):
        got = None if params else _prepared(a, b)
        if got is None or got[5][0] == "i":
            return NotImplemented
        a, sa, b, sb, out, sfx = got
        if out.size:
            calls.entry(lib, f"{name}_{sfx}", _ARGS)(calls.ptr(a), sa, calls.ptr(b), sb,
                                                     calls.ptr(out), out.size)
        return out

    run.__name__ = f"_{name}_native"
    return run
