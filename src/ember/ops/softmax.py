"""The softmax family: softmax, log_softmax and logsumexp.

NOTE: these are fused on purpose (the listed exceptions to "compose everything"): one
kernel subtracts the running max for numerical stability and reuses its buffers in
place, which makes them several times faster than the composition, and their VJPs are
short formulas in ember ops (so double backward works). float16 / bfloat16 compute in
float32 and round once, except where torch's CPU kernels round in between or sum in a
fixed float32 order (`_low_kernel`): there ember repeats their steps. (16-bit logsumexp
stays one rounding: the MLX face composes its own on it.)

softmax and log_softmax are one primitive, `softmax_p`, told apart by `log` (node names
SoftmaxBackward0 / LogSoftmaxBackward0); their backward kernels are one primitive too,
`softmax_backward_p`. logsumexp is a member of the `reduce` family.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype as dt
from .. import native
from .._cpu import torch_vector_bytes
from .._tensor import Tensor
from .._view import wrap_dim
from ..native import calls
from . import reduce as _reduce
from ._arg_parser_text import method_aware, need_dims, need_dtype, need_int, wrong_type
from ._batching import front
from ._common import along, row_sums, to_float, type_name, write_exact, write_out
from ._parallel import one_blas_thread, quiet, thread_pool
from .reduce import (
    _LOW,
    _reduce_native,
    expand_back,
    norm_dims,
    reduce_lines,
    reduce_p,
    reduced_shape,
    reduction,
)
from .registry import Primitive, apply, bind, defbatch, defjvp, defvjp, keep_given


def _work(a):
    """`a` as the array a kernel computes in: float32 for float16 / bfloat16."""
    return a.astype(np.float32) if a.dtype in _LOW else a


_BLOCK_BYTES = 1 << 19  # a block of rows that stays in cache through a kernel's passes


def _rows(a, n: int):
    return a if a.ndim == 2 else a.reshape(-1, n)


def _rowwise(inputs, dim: int, body):
    """A fresh C-order result of `body(*srcs, dst, axis, scratch)` run over `inputs`.

    Over the last dim of a large array, rows go through in cache-sized blocks, so the
    kernel's several passes (max, subtract, exp, sum, ...) touch main memory about once,
    and the blocks are shared out to a few threads (NumPy releases the GIL in its loops;
    PyTorch's CPU kernels are multi-threaded too). float16 / bfloat16 compute in float32
    and round once at the end.
    """
    first = inputs[0]
    ws = [_work(a) for a in inputs]
    out = np.empty(first.shape, ws[0].dtype)
    n = first.shape[dim]
    if dim == first.ndim - 1 and out.nbytes > 4 * _BLOCK_BYTES:
        srcs, dst = [_rows(w, n) for w in ws], out.reshape(-1, n)
        rows = max(1, _BLOCK_BYTES // (n * out.itemsize))

        def run(span):
            scratch = np.empty((rows, n), out.dtype)
            for i in range(span[0], span[1], rows):
                k = min(rows, span[1] - i)
                body(*(s[i:i + k] for s in srcs), dst[i:i + k], 1, scratch[:k])

        pool, workers = thread_pool()
        total = dst.shape[0]
        if pool is None or out.nbytes < _THREADED_BYTES:
            run((0, total))
        else:
            step = -(-total // (workers * rows)) * rows
            with one_blas_thread:
                list(pool.map(quiet(run),
                              [(i, min(i + step, total)) for i in range(0, total, step)]))
    elif dim == first.ndim - 1 and first.ndim > 2:  # as rows: their sums are BLAS products
        dst = out.reshape(-1, n)
        body(*(_rows(w, n) for w in ws), dst, 1, np.empty_like(dst))
    else:
        body(*ws, out, dim, np.empty_like(out))
    return out.astype(first.dtype) if first.dtype in _LOW else out


_THREADED_BYTES = 1 << 20  # below this, threads cost more than they save


def _fused(bodies):
    """A softmax-family kernel: `bodies[log]` over rows (softmax, or with `log` its log
    form), with the 0-d and empty cases; the result is fresh and row-major."""
    def kernel(*arrays, dim, log=False):
        a = arrays[0]
        if a.itemsize == 2 and (r := _low_kernel(arrays, dim, log, bodies is not _FORWARD)) \
                is not None:
            return r
        if a.ndim == 0:  # (a row of one: 1 / 0 for a finite x, NaN for inf or NaN, as torch)
            return _rowwise(tuple(x.reshape(1) for x in arrays), 0, bodies[log]).reshape(())
        if a.size == 0:
            return np.empty(a.shape, a.dtype)
        return _rowwise(arrays, dim, bodies[log])

    return kernel


def _softmax_meta(x, *more, dim, log=False):
    return x._shape, x._dtype


# --- softmax ----------------------------------------------------------------------------

# The reductions as ufunc methods (NumPy's np.max / np.sum wrappers cost more than the
# reduction itself on a classifier head's small rows), short rows column-wise (`along`),
# row sums as BLAS products.


def _max(a, axis: int):
    """The max along `axis`, kept as a dim of size 1."""
    return along(np.maximum.reduce, a, axis, True)


def _sum(a, axis: int, keepdims: bool):
    if a.ndim == 2 and axis % 2 == 1 and keepdims:
        return row_sums(a)
    return along(np.add.reduce, a, axis, keepdims)


def _softmax_body(src, dst, axis, scratch):
    np.subtract(src, _max(src, axis), out=dst)
    np.exp(dst, out=dst)
    np.divide(dst, _sum(dst, axis=axis, keepdims=True), out=dst)


def _softmax_backward_body(g, out, dst, axis, scratch):
    # out * (g - sum(g * out))
    np.multiply(g, out, out=dst)
    total = _sum(dst, axis=axis, keepdims=True)
    np.subtract(dst, np.multiply(out, total, out=scratch), out=dst)


# --- log_softmax ------------------------------------------------------------------------

def _log_softmax_body(src, dst, axis, scratch):
    np.subtract(src, _max(src, axis), out=dst)
    e = np.exp(dst, out=scratch)
    total = _sum(e, axis=axis, keepdims=True)
    np.subtract(dst, np.log(total, out=total), out=dst)


def _log_softmax_backward_body(g, out, dst, axis, scratch):
    # g - exp(out) * sum(g)
    np.exp(out, out=dst)
    np.multiply(dst, _sum(g, axis=axis, keepdims=True), out=dst)
    np.subtract(g, dst, out=dst)


# --- the two primitives: softmax (`log`: log_softmax) and its backward ---------------------

def _low_kernel(arrays, dim: int, log: bool, backward: bool):
    """The result with torch's 16-bit rounding for the cases that differ from rounding
    once from float32 (log_softmax over the last dim, softmax over the others, softmax's
    backward), or None for the plain path."""
    a = arrays[0]
    if a.dtype not in _LOW or a.ndim == 0 or a.size == 0:
        return None
    last = dim == a.ndim - 1
    if not backward:
        if log and last:
            return _log_softmax_low_lastdim(a)
        return None if log or last else _softmax_low_inner(a, dim)
    if not log and arrays[1].dtype == a.dtype:
        return _softmax_backward_low(arrays[0], arrays[1], dim)
    return None


def _log_softmax_low_lastdim(a):
    """log_softmax over the last dim of a float16 / bfloat16 array, rounded where torch's
    CPU kernel rounds.

    NOTE: torch's last-dim kernel keeps each row's exp-sum and its log in buffers of the
    input's 16-bit type, so both are rounded to 16 bits before `(x - max) - log(sum)` is
    taken in float32 and rounded once more (other dims compute in float32 throughout and
    round once, as `_rowwise` does). Matching these points gives torch's bits, where the
    correctly rounded result differs from torch's by up to a few 16-bit ulps.
    """
    low = a.dtype
    w = a.astype(np.float32)
    d = w - w.max(axis=-1, keepdims=True)  # (exact: both are 16-bit values)
    total = np.exp(d).sum(axis=-1, keepdims=True, dtype=np.float32)
    lse = np.log(total.astype(low).astype(np.float32)).astype(low).astype(np.float32)
    return (d - lse).astype(low)


def _softmax_low_inner(a, dim: int):
    """softmax over a dim that is not the last, of a float16 / bfloat16 array, rounded
    where torch's CPU kernel rounds.

    NOTE: torch views the input as (outer, n, inner), shares the outer * inner columns
    out to its threads in equal spans and walks each span in steps of one 16-bit vector
    (32 columns in its AVX512 build, 16 in its AVX2 one). A step
    that fits in its span and its row of `inner` keeps exp(x - max) in float32 and rounds
    the quotient once; any other column stores exp(x - max) in the 16-bit output first and
    divides that rounded value by the float32 sum. Repeating those spans gives its bits.
    """
    from ._parallel import workers as get_num_threads

    low = a.dtype
    outer, n = math.prod(a.shape[:dim]), a.shape[dim]
    inner = math.prod(a.shape[dim + 1:])
    w = np.ascontiguousarray(a, np.float32).reshape(outer, n, inner)
    e = np.exp(w - w.max(axis=1, keepdims=True))  # (C order: the sum below runs along n)
    total = np.add.reduce(e, axis=1, keepdims=True)  # (in order along n, as torch)
    fast = _vector_columns(outer * inner, inner, get_num_threads(),
                           torch_vector_bytes() // 2).reshape(outer, 1, inner)
    rounded = e.astype(low).astype(np.float32)
    out = np.where(fast, e, rounded) / total
    return out.astype(low).reshape(a.shape)


def _vector_columns(total: int, inner: int, threads: int, step: int):
    """Which of `total` columns torch's `_vec_softmax` takes in full vector steps: each
    piece of a thread's span within one row, from its start, in whole steps."""
    span = -(-total // min(max(threads, 1), total))
    bounds = np.union1d(np.arange(0, total, inner), np.arange(0, total, span))
    lengths = np.diff(np.append(bounds, total))
    offset = np.arange(total) - np.repeat(bounds, lengths)
    return offset < np.repeat(lengths // step * step, lengths)


def _softmax_backward_low(g, out, dim: int):
    """softmax's backward in float16 / bfloat16, its sums of g * out added in the order
    torch's CPU kernels add them.

    NOTE: torch takes (g - s) * out in float32 and rounds once, as ember does, but its
    float32 sum s has a fixed order. Along another dim than the last, one after another.
    Along the last, with L the float32 lanes of its vectors (16 in its AVX512 build, 8 in
    its AVX2 one), a row shorter than 2L is folded onto L lanes (element j + L into lane
    j) and the lanes added one after another; a longer row is added 2L at a time into 2L
    lanes (the row's tail into the first lanes), which are then halved pairwise down to
    one. The products are exact in float32, so matching the order gives torch's
    bits where a float64 sum is off by a 16-bit ulp now and then.
    """
    low = g.dtype
    gw, y = g.astype(np.float32), out.astype(np.float32)
    p = gw * y
    n, w = p.shape[-1], torch_vector_bytes() // 4
    if dim != p.ndim - 1:
        c = np.ascontiguousarray(p).reshape(math.prod(p.shape[:dim]), p.shape[dim], -1)
        total = np.add.reduce(c, axis=1, keepdims=True)  # (row by row: in order along dim)
        shape = list(p.shape)
        shape[dim] = 1
        total = total.reshape(shape)
    elif n < 2 * w:
        lanes = p[..., :w].copy()
        lanes[..., :max(n - w, 0)] += p[..., w:]
        total = lanes[..., :1].copy()
        for j in range(1, min(n, w)):
            total += lanes[..., j:j + 1]
    else:
        k = n // (2 * w) * (2 * w)
        lanes = p[..., :2 * w].copy()
        for j in range(2 * w, k, 2 * w):
            lanes += p[..., j:j + 2 * w]
        lanes[..., :n - k] += p[..., k:]
        while lanes.shape[-1] > 1:
            half = lanes.shape[-1] // 2
            lanes = lanes[..., :half] + lanes[..., half:]
        total = lanes
    return ((gw - total) * y).astype(low)


_FORWARD = (_softmax_body, _log_softmax_body)
_softmax_kernel = _fused(_FORWARD)
_softmax_backward_kernel = _fused((_softmax_backward_body, _log_softmax_backward_body))


# --- the native kernels (csrc/softmax.c) ------------------------------------------------------

_NATIVE_MIN = 1  # (every size: a 64 x 10 log_softmax takes 13 us as NumPy calls, 5.6 in C)


def _native_layout(a, dim: int):
    """(contiguous work array, outer, n, inner, low) for a kernel over `dim`, or None when
    the C kernel does not take it (0-d, small, not floating)."""
    if a.ndim == 0 or a.size < _NATIVE_MIN:
        return None
    low = a.dtype in _LOW
    w = np.ascontiguousarray(a, np.float32 if low else None)
    if calls.suffix(w) is None:
        return None
    return (w, math.prod(a.shape[:dim]), a.shape[dim], math.prod(a.shape[dim + 1:]), low)


def _softmax_native(lib, x, *, dim, log=False):
    """softmax / log_softmax in C: per row (or block of columns) max, exp-sum in double and
    one writing pass; float16 / bfloat16 in float32, rounded once."""
    if x.itemsize == 2 and (r := _low_kernel((x,), dim, log, False)) is not None:
        return r
    lay = _native_layout(x, dim)
    if lay is None:
        return NotImplemented
    w, outer, n, inner, low = lay
    out = np.empty_like(w)
    P, I64 = calls.P, calls.I64
    calls.entry(lib, f"softmax_forward_{calls.suffix(w)}", [P, P, I64, I64, I64, calls.INT])(
        calls.ptr(w), calls.ptr(out), outer, n, inner, int(log))
    return out.astype(x.dtype) if low else out


def _softmax_backward_native(lib, g, out, *, dim, log=False):
    """The backward in C: the row's sum (of g, or of g * out) in double, then dx."""
    if g.itemsize == 2 and (r := _low_kernel((g, out), dim, log, True)) is not None:
        return r
    lay = _native_layout(g, dim)
    if lay is None or out.dtype != g.dtype:
        return NotImplemented
    gw, outer, n, inner, low = lay
    y = np.ascontiguousarray(out, gw.dtype)
    dx = np.empty_like(gw)
    P, I64 = calls.P, calls.I64
    calls.entry(lib, f"softmax_backward_{calls.suffix(gw)}", [P, P, P, I64, I64, I64, calls.INT])(
        calls.ptr(gw), calls.ptr(y), calls.ptr(dx), outer, n, inner, int(log))
    return dx.astype(g.dtype) if low else dx


_NAMES = ("SoftmaxBackward0", "LogSoftmaxBackward0")
_BACKWARD_NAMES = ("SoftmaxBackwardDataBackward0", "LogSoftmaxBackwardDataBackward0")
softmax_p = Primitive("softmax", _softmax_kernel, _softmax_meta,
                      grad_name=lambda args, params: _NAMES[params.get("log", False)])
softmax_backward_p = Primitive(
    "softmax_backward_data", _softmax_backward_kernel, _softmax_meta,
    grad_name=lambda args, params: _BACKWARD_NAMES[params.get("log", False)])


native.register(softmax_p, "softmax", _softmax_native, min_size=(globals(), "_NATIVE_MIN"))
native.register(softmax_backward_p, "softmax", _softmax_backward_native,
                min_size=(globals(), "_NATIVE_MIN"))


def _softmax_vjp(g, out, x, *, dim, log=False):
    if log:
        return apply(softmax_backward_p, g, out, dim=dim, log=True)
    return apply(softmax_backward_p, g, out, dim=dim)


defvjp(softmax_p, _softmax_vjp, reads=((),), save_output=True)


# The backward is a primitive too (one fused pass), differentiable again for double
# backward. softmax: h = out * (g - s) with s = sum(g * out); log_softmax:
# h = g - exp(out) * sum(g).
def _backward_vjp_g(v, h, g, out, *, dim, log=False):
    if log:
        return v - (v * out.exp()).sum(dim, keepdim=True)
    return apply(softmax_backward_p, v, out, dim=dim)


def _backward_vjp_out(v, h, g, out, *, dim, log=False):
    if log:
        return -v * out.exp() * g.sum(dim, keepdim=True)
    return v * (g - (g * out).sum(dim, keepdim=True)) - g * (v * out).sum(dim, keepdim=True)


defvjp(softmax_backward_p, _backward_vjp_g, _backward_vjp_out)


def _softmax_jvp(primals, tangents, out, *, dim, log=False):
    # softmax: y * (t - sum(y t)), which is the backward kernel applied to t;
    # log_softmax: t - sum(softmax * t)
    t = tangents[0]
    if log:
        return t - (t * out.exp()).sum(dim, keepdim=True)
    return apply(softmax_backward_p, t, out, dim=dim)


def _softmax_backward_jvp(primals, tangents, out, *, dim, log=False):
    g, y = primals
    tg, ty = tangents
    parts = []
    if log:  # h = g - exp(y) sum(g)
        if tg is not None:
            parts.append(tg - y.exp() * tg.sum(dim, keepdim=True))
        if ty is not None:
            parts.append(-(ty * y.exp()) * g.sum(dim, keepdim=True))
    else:  # h = y (g - sum(g y))
        if tg is not None:
            parts.append(apply(softmax_backward_p, tg, y, dim=dim))
        if ty is not None:
            parts.append(ty * (g - (g * y).sum(dim, keepdim=True))
                         - y * (g * ty).sum(dim, keepdim=True))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


defjvp(softmax_p, _softmax_jvp)
defjvp(softmax_backward_p, _softmax_backward_jvp)


def _along_batch(prim):
    """vmap of an op along `dim` whose tensor inputs share one shape: every input with the
    batch first (an unbatched one expanded), `dim` shifted past it."""
    def rule(args, bdims, **params):
        size = next(a._shape[d] for a, d in zip(args, bdims) if d is not None)
        moved = [front(a, d) if d is not None else a.unsqueeze(0).expand(
            (size,) + a._shape) for a, d in zip(args, bdims)]
        if moved[0].ndim == 1:  # 0-d inputs: rows of one
            return bind(prim, *[m.unsqueeze(1) for m in moved],
                        **{**params, "dim": 1}).reshape(size), 0
        return bind(prim, *moved, **{**params, "dim": params["dim"] + 1}), 0

    return rule


defbatch(softmax_p, _along_batch(softmax_p))
defbatch(softmax_backward_p, _along_batch(softmax_backward_p))


def implicit_softmax_dim(name: str, ndim: int, stacklevel: int = 3) -> int:
    """PyTorch's legacy choice of dim when `dim=None` (with its deprecation warning, at the
    frame `stacklevel` says, as F.softmax's `_stacklevel`)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_like(log: bool, name, kernel_name):
    def op(input: Tensor, dim: int, dtype=None, *, out=None, _stacklevel: int = 3) -> Tensor:
        if dim.__class__ is not int:
            if dim is None or isinstance(dim, (tuple, list)):
                # NOTE: nn.functional.softmax picks the legacy implicit dim before calling this.
                raise wrong_type(name, "dim", None, "int", dim)
            dim = need_int(dim, name, "dim", 2)
        if dtype is not None and dtype.__class__ is not dt.dtype:
            dtype = need_dtype(dtype, name)
        d = wrap_dim(dim, max(input.ndim, 1))
        x = input if dtype is None or input._dtype is dtype else input.to(dtype)
        if out is not None and out._dtype is not x._dtype:
            write_exact(x, out)  # raises PyTorch's out= dtype error, before the kernel's check
        if x._dtype._kind != 2 and x.numel():
            suffix = "_lastdim" if x.ndim == 0 or d == x.ndim - 1 else ""
            raise NotImplementedError(
                f'"{kernel_name}{suffix}_kernel_impl" not implemented for '
                f"'{type_name(x._dtype)}'")
        r = apply(softmax_p, x, dim=d, log=True) if log else apply(softmax_p, x, dim=d)
        if r._grad_fn is not None:
            keep_given(r, dim=dim)
        return write_exact(r, out)

    op.__name__ = name
    return method_aware(op)


softmax = _softmax_like(False, "softmax", "softmax")
softmax.__doc__ = "exp(x) / sum(exp(x)) along `dim`, stable (the max is subtracted first)."
log_softmax = _softmax_like(True, "log_softmax", "log_softmax")
log_softmax.__doc__ = "x - logsumexp(x) along `dim`, stable; `dtype=` casts the input first."


# --- logsumexp ---------------------------------------------------------------------------

def _logsumexp_kernel(a, *, dims, keepdim):
    if a.ndim == 0:
        return _logsumexp_kernel(a.reshape(1), dims=(0,), keepdim=False).reshape(())
    axis = dims
    w = _work(a)
    if w.size == 0:
        with np.errstate(divide="ignore"):
            r = np.log(np.sum(np.exp(w), axis=axis, keepdims=keepdim))
        return np.asarray(r, dtype=a.dtype)
    real = w.real if w.dtype.kind == "c" else w
    m = along(np.max, real, axis, True)
    # NOTE: an infinite max is not subtracted (inf - inf would be NaN), as in PyTorch.
    m = np.where(np.isfinite(m), m, 0).astype(real.dtype)
    shifted = np.subtract(w, m)
    np.exp(shifted, out=shifted)
    total = along(np.add.reduce, shifted, axis, True)
    np.log(total, out=total)
    total += m
    if not keepdim:
        total = total.reshape([n for i, n in enumerate(a.shape) if i not in dims])
    return total.astype(a.dtype) if a.dtype in _LOW else total


def _logsumexp_vjp(g, out, x, *, dims, keepdim):
    shape = x._shape
    w = (x - expand_back(out, shape, dims, keepdim)).exp()
    return expand_back(g, shape, dims, keepdim) * (w.conj() if x._dtype.is_complex else w)


def _logsumexp_jvp(primals, tangents, out, *, dims, keepdim):
    x, t = primals[0], tangents[0]
    w = (x - expand_back(out, x._shape, dims, keepdim)).exp()
    return (t * w).sum(dims, keepdim=keepdim)


_sum_lines = _reduce_native("sum")


def _logsumexp_native(lib, a, *, dims, keepdim):
    """logsumexp with its two reductions, the max and the sum of the exponentials, in C
    (csrc/reduce.c) and the NumPy kernel's subtract, exp and log between them: that
    kernel's bits (a max is exact, and the sign of a zero max cannot reach the result).
    C-order inputs only: for others NumPy's sum comes out strided, and np.log of a strided
    array runs another loop than of a contiguous one, with other bits."""
    if a.dtype not in calls.SUFFIX or not a.flags.c_contiguous:
        return NotImplemented
    m = reduce_lines(lib, a, dims, True, "max")
    if m is NotImplemented:
        return NotImplemented
    m = np.where(np.isfinite(m), m, 0).astype(a.dtype)
    shifted = np.subtract(a, m)
    np.exp(shifted, out=shifted)
    total = _sum_lines(lib, shifted, dims=dims, keepdim=True)
    if total is NotImplemented:  # (the short rows `along` sums down columns)
        total = along(np.add.reduce, shifted, dims, True)
    np.log(total, out=total)
    total += m
    return total if keepdim else total.reshape(reduced_shape(a.shape, dims, False))


LOGSUMEXP = reduction("logsumexp", _logsumexp_kernel)
native.register(LOGSUMEXP, "reduce", _logsumexp_native,
                min_size=(vars(_reduce), "_NATIVE_MIN"))
defvjp(LOGSUMEXP, _logsumexp_vjp, save_output=True)
defjvp(LOGSUMEXP, _logsumexp_jvp)


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:
    """log(sum(exp(x))) over `dim`, stable; integer inputs compute in the default dtype."""
    if dim.__class__ is not int and dim.__class__ is not tuple:
        need_dims(dim, "logsumexp", none=False)
    if isinstance(dim, (tuple, list)) and not dim and not keepdim and input.numel() and \
            input.ndim:
        # NOTE: PyTorch reduces every dim for `dim=[]` but then adds the kept-dim maximum back
        # into the reduced result, which fails for a non-empty input
        raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                           f"{[1] * input.ndim}")
    if out is not None and out._dtype._kind < 2:
        raise RuntimeError("logsumexp(): Expected floating point type for result tensor, but "
                           f"got: {type_name(out._dtype)}")
    x = to_float(input)
    dims = norm_dims(dim, x.ndim)
    if out is not None and out._dtype is not x._dtype and not x._dtype.is_complex:
        return write_out(_logsumexp_into(x, dims, keepdim, out._dtype), out)
    r = apply(reduce_p, x, fn=LOGSUMEXP, dims=dims, keepdim=keepdim)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return write_out(r, out)


def _logsumexp_into(x: Tensor, dims, keepdim: bool, dtype) -> Tensor:
    """logsumexp into an `out` of another dtype, as PyTorch computes it: exp(x - max) in
    x's dtype, then the sum, its log and the max added back in `out`'s dtype (so a float64
    `out` gets a float64 sum of float32 exponentials, not a widened float32 result)."""
    m = x.amax(dims, keepdim=True) if x.numel() else x.sum(dims, keepdim=True)
    m = m.masked_fill(m.abs() == float("inf"), 0)
    total = (x - m).exp().to(dtype).sum(dims, keepdim=keepdim).log()
    return total + (m if keepdim else m.squeeze(dims)).to(dtype)


TENSOR_METHODS = {"softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp}

__all__ = ["softmax", "log_softmax", "logsumexp"]
