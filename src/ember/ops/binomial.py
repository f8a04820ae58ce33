"""torch.binomial: successes in `count` trials of probability `prob`, drawn as PyTorch's CPU
kernel (`sample_binomial`) draws them, draw for draw.

Each element takes double uniforms from the generator, one after another in row-major
order of the broadcast shape: inversion (counting geometric waiting times) while
count * p < 10, else Hormann's BTRS transformed rejection (1993), always on the smaller of
p and 1 - p (a p above 1/2 is drawn as count minus a draw at 1 - p). For a float32 tensor
the kernel's scalar type is float, so its products of count and p, the sqrt and log1p
round to float32; the rest runs in double.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import warnings
from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from .. import native
from .._core import derivative_not_implemented
from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from .._view import broadcast_shapes
from ..native import calls
from ._arg_parser_text import need_tensors
from ._common import type_name
from ._rng_kernels import DoublesAhead
from .random_ops import _gen, sample_p
from .registry import Member, apply

if TYPE_CHECKING:
    from ..random import Generator

# log k! - (log sqrt(2 pi) + (k + 1/2) log(k + 1) - (k + 1)) for k = 0..9 (the table the
# kernel uses below k = 10, where the series takes over)
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _uniform(g: DoublesAhead) -> float:
    return g.take()


@functools.cache
def _libm_log1pf():
    name = ctypes.util.find_library("m")
    try:
        fn = ctypes.CDLL(name).log1pf
    except (OSError, AttributeError, TypeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


def _log1p(x: float, single: bool) -> float:
    """log1p as the kernel calls it: libm's log1pf on a float, log1p on a double."""
    if not single:
        return math.log1p(x)
    fn = _libm_log1pf()
    return float(fn(x)) if fn is not None else float(np.float32(math.log1p(x)))


def _inversion(g, count: float, prob: float, r) -> float:
    logprob = _log1p(-prob, r is not float)
    geom_sum, num_geom = 0.0, 0.0
    while True:
        u = _uniform(g)
        geom = math.ceil((math.log(u) if u > 0 else -math.inf) / logprob)
        geom_sum += geom
        if geom_sum > count:
            return num_geom
        num_geom += 1


def _floor(v: float) -> float:
    """C's floor: inf and NaN pass through (math.floor raises on them)."""
    return float(math.floor(v)) if math.isfinite(v) else v


def _btrs(g, count: float, prob: float, r) -> float:
    stddev = float(np.sqrt(r(r(count * prob) * r(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = r(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    ratio = r(prob / r(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = _floor(r(r(count + 1) * prob))
    while True:
        u = _uniform(g) - 0.5
        v = _uniform(g)
        us = 0.5 - abs(u)
        k = r(_floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * math.log((m + 1) / (ratio * (count - m + 1)))
                 + (count + 1) * math.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * math.log(ratio * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        if v <= bound:
            return k


def binomial_one(g: DoublesAhead, count: float, prob: float, single: bool) -> float:
    """One draw, reading uniforms from `g`; `single`: the kernel's scalar_t is float
    (products rounded to float32). A NaN probability gives NaN without drawing. A NaN count
    with 0 < p < 1 never ends in PyTorch (its inversion waits for a sum to exceed it): here
    it gives NaN. An infinite count runs BTRS as PyTorch's does, whose tries then give inf
    or NaN (inf - inf) after drawing as many doubles as its."""
    r = (lambda v: float(np.float32(v))) if single else float
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if count != count and prob == prob:
        return math.nan
    if prob <= 0.5:
        if r(count * prob) >= 10.0:
            return _btrs(g, count, prob, r)
        return _inversion(g, count, prob, r)
    if prob > 0.5:
        q = r(1.0 - prob)
        draw = _btrs(g, count, q, r) if r(count * q) >= 10.0 else _inversion(g, count, q, r)
        return r(count - draw)
    return math.nan


def _binomial_kernel(count, prob, *, generator, shape):
    # NOTE: PyTorch's result is zeros(count.sizes()), resized to the broadcast shape: always
    # contiguous, so elements are drawn in row-major order whatever the inputs' layouts.
    single = count.dtype == np.float32
    lib = native.library("rejection")
    if lib is not None:
        return _binomial_native(lib, count, prob, generator, shape, single)
    n = np.broadcast_to(count, shape).reshape(-1).tolist()
    p = np.broadcast_to(prob, shape).reshape(-1).tolist()
    ahead = DoublesAhead(generator, 4 * len(n) + 64)  # drawn ahead; the generator moves on
    try:
        vals = [binomial_one(ahead, a, b, single) for a, b in zip(n, p)]  # by what they used
    finally:
        ahead.finish()
    return np.array(vals, np.float64).astype(count.dtype).reshape(shape)


def _binomial_native(lib, count, prob, generator, shape, single: bool):
    """`binomial_one` over every element in C (csrc/rejection.c: the same steps, roundings
    and C library functions), over doubles drawn ahead, grown where they run out."""
    fn = calls.entry(lib, "binomial_tries", [calls.P, calls.P, calls.I64, calls.I64,
                                             calls.INT, calls.P, calls.I64, calls.P, calls.P],
                     calls.I64)
    counts, probs = (np.ascontiguousarray(np.broadcast_to(a, shape).reshape(-1), np.float64)
                     for a in (count, prob))
    n = counts.size
    out = np.empty(n, np.float64)
    ahead = DoublesAhead(generator, 4 * n + 64, arrays=True)
    used, i = np.zeros(1, np.int64), 0
    try:
        while True:
            i = fn(calls.ptr(counts), calls.ptr(probs), n, i, int(single), calls.ptr(ahead.u),
                   len(ahead.u), calls.ptr(used), calls.ptr(out))
            if i == n:
                break
            ahead.grow(4 * (n - i) + 64)
    finally:  # (the generator moves on by the doubles the finished draws used)
        ahead.finish(int(used[0]))
    return out.astype(count.dtype).reshape(shape)


# How many words each element takes depends on its parameters (rejection sampling), so the
# draws cannot be made before the op: the generator is the kernel's param.
BINOMIAL = Member(sample_p, "binomial", _binomial_kernel,
                  lambda count, prob, *, generator, shape: (shape, count._dtype))
# (PyTorch's derivatives.yaml says "not_implemented" for both inputs)
derivative_not_implemented(BINOMIAL, "binomial", (True, True))


def _check_args(count, prob, generator) -> None:
    need_tensors("binomial", ("count", 1, count), ("prob", 2, prob))
    for name, t in (("count", count), ("prob", prob)):
        if not t._dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{type_name(t._dtype)}")
    if prob._dtype is not count._dtype:
        raise RuntimeError(f"Found dtype {type_name(prob._dtype)} but expected "
                           f"{type_name(count._dtype)}")
    if count._dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(
            f"\"binomial_cpu\" not implemented for '{type_name(count._dtype)}'")
    if count.device.type == "meta" or prob.device.type == "meta":
        raise NotImplementedError(
            "aten::binomial: attempted to run this operator with Meta tensors, but there was "
            "no fake impl or Meta kernel registered.")


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Binomial(count, prob) samples elementwise (broadcast), as float counts of count's
    dtype; same seed, same counts as PyTorch."""
    _check_args(count, prob, generator)
    g = _gen(generator, "binomial")
    shape = broadcast_shapes(count._shape, prob._shape)
    if shape != count._shape and count.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(count._shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
            "outputs will not be resized unless they have zero elements. You can explicitly "
            "reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).", UserWarning, stacklevel=user_stacklevel())
    return apply(sample_p, count, prob, fn=BINOMIAL, generator=g, shape=shape)


TENSOR_METHODS: dict = {}

__all__ = ["binomial"]
