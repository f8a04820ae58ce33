"""The convolution primitives' native kernels (csrc/conv.c), beside the NumPy ones.

Each takes the arrays its NumPy twin takes and answers NotImplemented where the NumPy
kernel should run instead: a dtype other than float32/float64 (float16 and bfloat16 are
computed in float32, as the NumPy kernels do), more than three spatial dims, an empty
operand, or no BLAS to call (only the depthwise kernels do without). What each shape runs
is decided once per shape, dtype and layout (`_plan`), not per call.

Algorithms: im2col/col2im with BLAS products (2-d strides 1 and 2 through each plane
copied once inside zero margins; the weight gradient of a kernel with many taps per output
channel computed transposed, which BLAS packs faster: see conv.c); Winograd's F(2x2, 3x3)
where the NumPy kernels would take it too (`_winograd.applies`: 3x3, stride 1, enough
channels; not under deterministic algorithms), its input gradient as the flipped kernel's
full convolution; a direct kernel for depthwise layers. Every choice is a function of the
shape, dtype and layout alone.

Rounding: products go through NumPy's own BLAS, so they round as NumPy's products of the
same sizes do, or, where the machine's rule says (`_own_product`: OpenBLAS runs kernels
narrower than the CPU's AVX-512), float32 ones through ember's own (csrc/gemm.c); the sums
are grouped differently from the NumPy kernel's (chunks of the batch side by side, or
Winograd's transforms, or gemm.c's runs), so results agree with it within the usual bound
of a sum of products, a few units of the last place of the sum of the products'
magnitudes. The depthwise forward is the NumPy kernel's products and sums in its order
(the same bits); the depthwise weight gradient sums in double. Chunks and partial sums are
fixed by the shape, so one thread and two give the same bits. Non-finite values: the
im2col paths multiply a padded tap's zero by the weight, as the NumPy kernel does (a NaN
or inf weight turns a padded tap into NaN); the depthwise kernels never read a padded tap,
as PyTorch's depthwise kernel does not; a Winograd result that is not finite is redone by
im2col (a tile's transform can turn inf into NaN; each task checks its chunk's outputs
while they are in cache).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._algorithms import deterministic_only
from ..native import blas, calls, kernels
from . import _conv_kernels as K
from . import _winograd
from ._parallel import one_blas_thread

_LOW = (np.dtype(np.float16), dt.bfloat16.np)
COLUMNS = 512  # product columns per call: from this many, BLAS runs near its peak
# From this many output positions a forward product is one sample's, written in place,
# rather than a chunk's copied out (measured, 32 -> 64 3x3 stride 2 at 32x32, one
# thread: 3.6-3.8 ms against 3.9-4.1)
OWN_COLUMNS = 256
CHUNK_BYTES = 4 << 20  # at most this much im2col scratch per thread
PARTS = 4  # partial weight gradients (a fixed count: results do not depend on threads)
TILES = 256  # Winograd tiles per product
WINO_BYTES = 8 << 20  # at most this much Winograd scratch (inputs' and products' transforms)
FIRST_MIN_TILES = 14  # tiles per row from which Winograd's transforms run along tile rows
MIN_CHUNKS = 4  # a batch that allows it is cut in at least this many chunks (for threads)
PACKED_ROWS = 24  # output channels (two of gemm.c's micro-kernel heights) and
PACKED_DEPTH = 128  # terms a sum from which a forward's columns are packed: `_packed_product`
_plans: dict = {}


def _plan(x_shape, w_shape, geo: K.Geometry, itemsize: int) -> tuple[int, int]:
    """(samples per product, partial weight gradients) for one convolution's shape."""
    key = (tuple(x_shape), tuple(w_shape), geo, itemsize)
    got = _plans.get(key)
    if got is None:
        n, c = x_shape[:2]
        rows = (c // geo.groups) * geo.taps
        L = max(geo.positions, 1)
        if geo.pointwise:
            chunk = 1  # x's own rows are the columns: nothing to copy
        else:
            chunk = -(-COLUMNS // L)
            chunk = min(chunk, max(1, CHUNK_BYTES // max(rows * L * itemsize, 1)))
        chunk = max(1, min(chunk, -(-n // MIN_CHUNKS)))
        got = _plans[key] = (chunk, min(-(-n // chunk), PARTS))
    return got


def _wino_plan(x_shape, o: int, geo: K.Geometry, itemsize: int) -> tuple | None:
    """(samples per product, partial weight gradients, layout) of Winograd's F(2x2, 3x3)
    for this shape, or None where im2col serves it (`_winograd.applies`: a 3x3, stride-1,
    undilated, ungrouped 2-d convolution on enough channels, deterministic algorithms
    off). The layout is "first" (transforms along rows of tiles) for planes of at least
    FIRST_MIN_TILES tiles a row, else "last" (along each tile's channels). Measured (one
    thread, CPU ms of forward / input grad / weight grad, batch 32, 64 for MNIST; im2col
    -> Winograd): 32 -> 32 at 32x32 8.2/7.3/11.4 -> 4.7/4.8/5.6; 64 -> 64 at 16x16
    6.7/5.5/8.1 -> 4.7/4.6/5.2; 128 -> 128 at 8x8 6.5/5.4/6.7 -> 4.1/4.4/3.5; MNIST's
    unpadded 32 -> 64 at 26x26 12.6/11.4/16.8 -> 13.4/11.8/13.6 (its input gradient stays
    with col2im: see `input_grad_native`)."""
    key = ("winograd", tuple(x_shape), o, geo, itemsize, deterministic_only())
    if key not in _plans:
        n, c = x_shape[:2]
        got = None
        if _winograd.applies(geo, c, o, np.float32):
            th, tw = -(-geo.out[0] // 2), -(-geo.out[1] // 2)
            first = tw >= FIRST_MIN_TILES
            per = 16 * (c + o) * th * tw  # transforms
            if not first:  # and the channels-last copies in and out
                per += (2 * th + 2) * (2 * tw + 2) * c + 4 * th * tw * o
            chunk = min(-(-TILES // (th * tw)), max(1, WINO_BYTES // (per * itemsize)))
            chunk = max(1, min(chunk, -(-n // MIN_CHUNKS)))
            got = (chunk, min(-(-n // chunk), PARTS), "first" if first else "last")
        _plans[key] = got
    return _plans[key]


_PARAMS_MOST = 4096  # geometry arrays kept (a program's convolutions have a few shapes)
_param_arrays: dict = {}


def _params(x: np.ndarray, geo: K.Geometry, n: int, c: int, o: int, x_shape, chunk: int,
            parts: int, itemsize: int) -> np.ndarray:
    """The int64 geometry array conv.c reads (see its G_* names): spatial dims padded in
    front to three, then the plan (chunk, parts, whether float32 products are ember's
    own: `_own_product`). Built once per geometry, layout and plan and kept (conv.c only
    reads it): building it costs more than a small convolution's other Python (measured
    10-20 us a call, two or three calls a convolution)."""
    own = itemsize == 4 and _own_product()
    packed = itemsize == 4 and _packed_product(geo, c, o)
    key = (None if x is None else x.strides, itemsize, geo, n, c, o, tuple(x_shape), chunk,
           parts, own, packed)
    got = _param_arrays.get(key)
    if got is None:
        if len(_param_arrays) >= _PARAMS_MOST:
            _param_arrays.clear()
        got = _param_arrays[key] = _build_params(x, geo, n, c, o, x_shape, chunk, parts,
                                                 (own, packed))
        got.flags.writeable = False
    return got


def _own_product() -> bool:
    """Whether float32 products run ember's own (the machine's rule, `blas.own_product`):
    not under deterministic algorithms, which pin BLAS's, the reference."""
    return kernels.own_product() and not deterministic_only()


def _packed_product(geo: K.Geometry, c: int, o: int) -> bool:
    """Whether a float32 forward packs its columns from the input straight into ember's own
    product (G_PACKED, csrc/conv_columns.c), saving im2col's pass: where that product was
    compiled in (whichever product serves whole matrices), for a product of at least
    PACKED_ROWS output channels by PACKED_DEPTH terms a sum, where gemm.c runs at BLAS's
    speed; not under deterministic algorithms, which pin BLAS's. Measured on the Intel Xeon
    (one thread, batch 32, BLAS's time -> packed): 64 -> 128 3x3 stride 2 at 16x16 2.73 ->
    2.36 ms, 64 -> 32 1.13 -> 0.92, 16 -> 24 0.23 -> 0.19, 128 -> 256 at 16x16 9.8 -> 9.1,
    32 -> 64 at 32x32 (one sample a product) 2.93 -> 2.91; below the line 16 -> 8 0.13 ->
    0.14, 3 -> 32 (27 terms) 0.61 -> 0.72, 1 -> 32 (MNIST's first, 9 terms) 0.43 -> 0.60."""
    return kernels.own_built() and not deterministic_only() and \
        o // geo.groups >= PACKED_ROWS and c // geo.groups * geo.taps >= PACKED_DEPTH


def _build_params(x, geo: K.Geometry, n: int, c: int, o: int, x_shape, chunk: int,
                  parts: int, own: tuple[bool, bool]) -> np.ndarray:
    lead = 3 - geo.nd
    one = (1,) * lead
    spatial = tuple(x_shape[2:])
    if x is not None:
        xs = tuple(s // x.itemsize for s in x.strides)
        xs = xs[:2] + (0,) * lead + xs[2:]
    else:
        xs = (0,) * 5
    return np.array((n, c, o, geo.groups) + one + spatial + one + geo.k + one + geo.out
                    + one + geo.stride + one + geo.dilation
                    + (0,) * lead + tuple(lo for lo, _ in geo.padding)
                    + xs + (chunk, parts) + tuple(map(int, own)), np.int64)


def _operand(a: np.ndarray) -> np.ndarray:
    """`a` in float32 when it is a 16-bit float (as the NumPy kernels compute)."""
    return a.astype(np.float32) if a.dtype in _LOW else a


def _strided(a: np.ndarray) -> np.ndarray:
    """`a` itself when its strides are whole elements (any sign, zero), else a copy."""
    if all(s % a.itemsize == 0 for s in a.strides):
        return a
    return np.ascontiguousarray(a)


def _usable(x: np.ndarray, w: np.ndarray, geo: K.Geometry) -> str | None:
    """conv.c's suffix for these operands, or None where the NumPy kernel runs."""
    if geo.nd > 3 or x.size == 0 or w.size == 0:
        return None
    return calls.suffix(x, w)


def _depthwise(geo: K.Geometry, c: int, o: int) -> bool:
    return geo.groups == c == o and c > 1


P = calls.P


def _call(lib, name: str, sfx: str, *arrays) -> None:
    """conv.c's `name` for dtype `sfx` on these arrays (and the geometry, last); it answers
    nonzero where a thread could not have its scratch memory."""
    fn = calls.entry(lib, f"{name}_{sfx}", [P] * len(arrays), calls.INT)
    if fn(*(calls.ptr(a) for a in arrays)):
        raise MemoryError(f"ember: no memory for a convolution's scratch ({name})")


def conv_native(lib, x, w, b=None, *, stride, padding, dilation, groups):
    dtype = x.dtype
    x, w = _strided(_operand(x)), np.ascontiguousarray(_operand(w))
    # (a 16-bit convolution's bias is added in float32, before the one rounding)
    bias = None if b is None else np.ascontiguousarray(_operand(b))
    geo = K.geometry(x.shape, w.shape[2:], stride, padding, dilation, groups)
    sfx = _usable(x, w, geo)
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    if sfx is None or geo.positions == 0 or (bias is not None and bias.dtype != x.dtype):
        return NotImplemented
    out = np.empty((n, o) + geo.out, x.dtype)
    if _depthwise(geo, c, o):
        if dtype == np.float64 and not np.isfinite(w).all():
            # PyTorch's float64 path multiplies a padded tap's zero by the weight (NaN for
            # an inf weight), unlike its float32 depthwise kernel: im2col does the same
            return NotImplemented
        p = _params(x, geo, n, c, o, x.shape, 1, 1, x.itemsize)
        _call(lib, "depthwise_forward", sfx, x, w, bias, out, p)
    else:
        if blas.gemm() is None:
            return NotImplemented
        wino = _wino_plan(x.shape, o, geo, x.itemsize)
        if wino is None or not _winograd_forward(lib, sfx, x, w, bias, out, geo, wino):
            chunk, parts = _plan(x.shape, w.shape, geo, x.itemsize)
            if geo.positions >= OWN_COLUMNS:
                chunk = 1  # a product per sample, straight into its output: no copy out
            p = _params(x, geo, n, c, o, x.shape, chunk, parts, x.itemsize)
            with one_blas_thread:
                _call(lib, "conv_forward", sfx, x, w, bias, out, p)
    return out.astype(dtype, copy=False)


def _winograd_forward(lib, sfx, x, w, bias, out, geo, plan, flipped=False) -> bool:
    """out = conv(x, w) (+ bias) by Winograd; False (out to be redone by im2col) where a
    result is not finite: a tile's transform can turn an inf input into NaN where the
    direct sum gives inf. `flipped`: the convolution is with `K._flipped(w, 1)` (an input
    gradient), whose transform conv.c reads from w itself."""
    n, c, o = x.shape[0], x.shape[1], w.shape[1 if flipped else 0]
    u = np.empty((16, o, c), x.dtype)
    calls.entry(lib, f"wino_kernel{'_flipped' if flipped else ''}_{sfx}",
                [P, P, calls.I64, calls.I64])(calls.ptr(w), calls.ptr(u), *w.shape[:2])
    chunk, parts, layout = plan
    p = _params(x, geo, n, c, o, x.shape, chunk, parts, x.itemsize)
    name = "wino_forward" if layout == "first" else "wino_last_forward"
    fn = calls.entry(lib, f"{name}_{sfx}", [P] * 5, calls.INT)
    with one_blas_thread:  # (each task checks its chunk's results while they are in cache)
        got = fn(*(calls.ptr(a) for a in (x, u, bias, out, p)))
    if got & 1:
        raise MemoryError(f"ember: no memory for a convolution's scratch ({name})")
    return not got & 2


def input_grad_native(lib, g, w, b=None, *, stride, padding, dilation, groups, x_shape,
                      transposed=False):
    dtype = g.dtype
    out = _input_grad(lib, g, w, stride, padding, dilation, groups, x_shape)
    if out is NotImplemented:
        return out
    # (a transposed convolution's bias: one pass after, before a 16-bit result's rounding)
    return (out if b is None else K.add_channel_bias(out, b)).astype(dtype, copy=False)


def _input_grad(lib, g, w, stride, padding, dilation, groups, x_shape):
    """The input gradient in the dtype it is computed in (float32 for 16-bit operands)."""
    g, w = np.ascontiguousarray(_operand(g)), np.ascontiguousarray(_operand(w))
    geo = K.geometry(x_shape, w.shape[2:], stride, padding, dilation, groups)
    geo = K.with_out(geo, g.shape[2:])
    sfx = _usable(g, w, geo)
    n, c, o = x_shape[0], x_shape[1], w.shape[0]
    if sfx is None or any(s == 0 for s in x_shape):
        return NotImplemented
    dx = np.empty(tuple(x_shape), g.dtype)
    if _depthwise(geo, c, o):
        p = _params(None, geo, n, c, o, x_shape, 1, 1, g.itemsize)
        _call(lib, "depthwise_input_grad", sfx, g, w, dx, p)
    else:
        if blas.gemm() is None:
            return NotImplemented
        full = K._as_full_convolution(geo, x_shape, o, g.dtype)
        # (a non-finite weight takes col2im, which never multiplies it by the full
        # convolution's padding, as PyTorch's input gradient never does)
        if full is not None and math.prod(x_shape[2:]) <= 1.1 * geo.positions and \
                _wino_plan(g.shape, c, full, g.itemsize) is not None and np.isfinite(w).all():
            # At stride 1 the input gradient is the flipped kernel's full convolution, by
            # Winograd where x is about the output's size ("same" padding). Where x is
            # larger (unpadded), col2im computes fewer sums: measured on the MNIST CNN's
            # 32 -> 64 at 26x26, 13.3 ms against 15.3 (one thread, batch 64, a loaded machine).
            return _winograd_input_grad(lib, sfx, g, w, full)
        chunk, parts = _plan(x_shape, w.shape, geo, g.itemsize)
        p = _params(None, geo, n, c, o, x_shape, chunk, parts, g.itemsize)
        with one_blas_thread:
            _call(lib, "conv_input_grad", sfx, g, w, dx, p)
    return dx


def _winograd_input_grad(lib, sfx, g, w, full: K.Geometry) -> np.ndarray:
    """The stride-1 ungrouped input gradient as the full convolution of g with the flipped
    kernel, by Winograd, its transform read from w (no flipped copy: measured 40 us a call
    for 64 -> 64 channels, one thread); where a result is not finite, `conv_native` on the flipped
    copy (its own im2col fallback)."""
    out = np.empty((g.shape[0], w.shape[1]) + full.out, g.dtype)
    plan = _wino_plan(g.shape, w.shape[1], full, g.itemsize)
    if _winograd_forward(lib, sfx, g, w, None, out, full, plan, flipped=True):
        return out
    return conv_native(lib, g, K._flipped(w, 1), stride=full.stride, padding=full.padding,
                       dilation=full.dilation, groups=1)


def weight_grad_native(lib, x, g, *, stride, padding, dilation, groups, w_shape):
    dtype = x.dtype
    x, g = _strided(_operand(x)), np.ascontiguousarray(_operand(g))
    geo = K.geometry(x.shape, w_shape[2:], stride, padding, dilation, groups)
    geo = K.with_out(geo, g.shape[2:])
    sfx = _usable(x, g, geo)
    n, c, o = x.shape[0], x.shape[1], w_shape[0]
    if sfx is None or any(s == 0 for s in w_shape):
        return NotImplemented
    dw = np.empty(tuple(w_shape), x.dtype)
    if _depthwise(geo, c, o):
        p = _params(x, geo, n, c, o, x.shape, 1, 1, x.itemsize)
        _call(lib, "depthwise_weight_grad", sfx, x, g, dw, p)
    else:
        if blas.gemm() is None:
            return NotImplemented
        wino = _wino_plan(x.shape, o, geo, x.itemsize)
        if wino is not None:
            chunk, parts, layout = wino
            p = _params(x, geo, n, c, o, x.shape, chunk, parts, x.itemsize)
            acc = np.empty(parts * 16 * o * c, x.dtype)
            name = "wino_weight_grad" if layout == "first" else "wino_last_weight_grad"
            with one_blas_thread:
                _call(lib, name, sfx, x, g, acc, p)
            calls.entry(lib, f"wino_weight_finish_{sfx}", [P] * 3)(
                calls.ptr(acc), calls.ptr(dw), calls.ptr(p))
            if K._finite(dw):
                return dw.astype(dtype, copy=False)
        chunk, parts = _plan(x.shape, w_shape, geo, x.itemsize)
        p = _params(x, geo, n, c, o, x.shape, chunk, parts, x.itemsize)
        acc = np.empty(parts * dw.size, x.dtype)
        with one_blas_thread:
            _call(lib, "conv_weight_grad", sfx, x, g, dw, acc, p)
    return dw.astype(dtype, copy=False)
