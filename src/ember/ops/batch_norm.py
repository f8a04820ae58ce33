"""Batch normalisation with batch statistics as one fused primitive, and its backward.

# NOTE: a listed exception to "compose everything" (`_core/fused.py`): composed, a
# training-mode BatchNorm is about ten passes over the activation forward and fifteen
# backward. Here the forward is three passes (channel sums; centre and square; scale
# and shift) and the backward three, each over cache-sized chunks of the batch shared
# out to the kernel threads. PyTorch's node is NativeBatchNormBackward0. Evaluation
# mode (running statistics) stays composed: it is one scale and one shift per channel.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from ..native import calls
from . import _batch_norm_grad as G
from ._batching import batch_size, batched
from ._common import row_sums
from ._fma import fma
from ._norm_tangent import centred
from ._norm_tangent import plus as _plus
from ._norm_tangent import times as _times
from ._parallel import over_batch, workers
from .creation import zeros_like
from .registry import (
    Primitive,
    UpdatePrimitive,
    apply,
    bind,
    defbatch,
    defjvp,
    defvjp_joint,
)

_grad_mode = grad_mode.state
_LOW = (np.dtype(np.float16), dt.bfloat16.np)


def _channel_sums(a3: np.ndarray) -> np.ndarray:
    """Per-channel sums of an (n, C, L) array: (C,)."""
    n, c, length = a3.shape
    if length == 1:
        return np.add.reduce(a3[:, :, 0], axis=0)
    return np.add.reduce(row_sums(a3.reshape(n * c, length)).reshape(n, c), axis=0)


def _chunked_sums(n: int, sample_bytes: int, body) -> np.ndarray:
    """The sum over batch chunks of `body(lo, hi)` (per-channel partial sums)."""
    parts = over_batch(n, sample_bytes, 4 * sample_bytes * n,
                       lambda lo, hi, buf, acc: body(lo, hi) if acc is None
                       else np.add(acc, body(lo, hi), out=acc))
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def _row_statistics(x2, sq_rows=None):
    """(mean, variance sum) of an (N, C) float array as PyTorch's kernel for such inputs
    computes them (it reduces across rows, vectorised over channels): the rows split in as
    many chunks as threads (ember.get_num_threads(), standing for torch's), each summed row
    after row in the array's dtype (NumPy's reduction along axis 0 of a C-ordered array
    adds rows in order), the chunks added in double; then the squares the same way, each
    row's one fused multiply-add: fma(d, d, acc). `sq_rows(x, mean, acc)` does those rows in
    C; without it, a Python loop over rows does them in NumPy (the same bits)."""
    n = x2.shape[0]
    chunk = -(-n // max(1, min(workers(), n)))
    parts = range(0, n, chunk)
    total = sum(np.add.reduce(x2[lo:lo + chunk], axis=0).astype(np.float64) for lo in parts)
    mean = (total / n).astype(x2.dtype)
    var_sum = np.zeros(x2.shape[1], np.float64)
    for lo in parts:
        acc = np.zeros(x2.shape[1], x2.dtype)
        if sq_rows is not None:
            sq_rows(np.ascontiguousarray(x2[lo:lo + chunk]), mean, acc)
        else:
            for row in x2[lo:lo + chunk]:
                d = row - mean
                acc = fma(d, d, acc)
        var_sum += acc
    return mean, var_sum.astype(x2.dtype)


def _channels_last(x: np.ndarray) -> bool:
    """Whether PyTorch reads this 4-d (5-d) array as channels-last: its channels innermost
    and not also contiguous (`suggest_memory_format()`); its statistics then take the row
    kernel, over (N * H * W, C)."""
    return x.ndim in (4, 5) and not x.flags.c_contiguous and \
        np.moveaxis(x, 1, -1).flags.c_contiguous


def _batch_norm_kernel(x, weight, bias, *, eps, mixed=False, sq_rows=None, apply_rows=None):
    """(out, xhat, mean, var_sum, rstd) over dims (0, 2, ...); var_sum is the sum of the
    squared deviations, as PyTorch keeps it (the running variance divides it by count - 1).

    As PyTorch's CPU kernel: the sums in double, mean = sum / count rounded; the squares of
    d = x - mean each rounded, summed in double, var_sum = that sum rounded; rstd =
    1 / sqrt(var_sum / count + eps) (the quotient rounded) in double, rounded; out =
    fma(x, alpha, fma(-mean, alpha, bias)) with alpha = rstd * weight (csrc/batch_norm.c
    computes the same). (N, C) and channels-last inputs take PyTorch's row kernel
    (`_row_statistics`), and a channels-last input gets channels-last results; there
    `apply_rows(rows, alpha, beta, mean, rstd)` gives (out, xhat) in C, where given.

    A 16-bit input works in float. With `mixed` (float parameters or buffers beside it),
    mean and var_sum stay float; otherwise they and rstd are rounded to the input's type
    before use, as PyTorch's kernel holds them (and its beta is not fused). Either way rstd
    is float's."""
    dtype = x.dtype
    low = dtype in _LOW
    work = x.astype(np.float32) if low else x
    n, c = x.shape[:2]
    rows = None
    if x.size == n * c:
        rows = work.reshape(n, c)
    elif _channels_last(x):
        rows = np.moveaxis(work, 1, -1).reshape(-1, c)
    count = x.size // max(c, 1)
    t = work.dtype.type
    wide = lambda a: a.astype(np.float64)  # noqa: E731
    if rows is not None:  # PyTorch's other statistics kernel
        mean, var_sum = _row_statistics(rows, sq_rows)
    else:
        x3 = work.reshape(n, c, -1)
        per = x3[:1].nbytes
        mean = (_chunked_sums(n, 2 * per, lambda lo, hi: _channel_sums(wide(x3[lo:hi])))
                / count).astype(x3.dtype)
        m3 = mean.reshape(1, c, 1)
        xhat = np.empty(x3.shape, x3.dtype)

        def centre(lo, hi):
            np.subtract(x3[lo:hi], m3, out=xhat[lo:hi])
            return _channel_sums(wide(np.square(xhat[lo:hi])))

        var_sum = _chunked_sums(n, 3 * per, centre).astype(x3.dtype)
    w = None if weight is None else weight.astype(work.dtype, copy=False)
    half = low and not mixed and dtype == np.float16
    if half:  # (float16 keeps float statistics; only the normalisation reads them rounded)
        var = var_sum / t(count)
    elif low and not mixed:
        mean, var_sum = mean.astype(dtype).astype(t), var_sum.astype(dtype)
        var = (var_sum / dtype.type(count)).astype(t)
    else:
        var = var_sum / t(count)
    if low:
        rstd = t(1) / np.sqrt(var + t(eps))
    else:
        rstd = (1.0 / np.sqrt(var.astype(np.float64) + eps)).astype(work.dtype)
    alpha = rstd if w is None else rstd * w
    b = t(0) if bias is None else bias.astype(work.dtype, copy=False)
    if low and not mixed:  # from the rounded statistics, and beta not fused
        rstd = rstd.astype(dtype).astype(t)
        alpha = rstd if w is None else rstd * w
        beta = b - (mean.astype(dtype).astype(t) if half else mean) * alpha
    else:
        beta = fma(-mean, alpha, b)
    if rows is not None:
        out, xhat = apply_rows(rows, alpha, beta, mean, rstd) if apply_rows is not None \
            else (fma(rows, alpha, beta), (rows - mean) * rstd)
        out, xhat = _rows_back(out, work.shape), _rows_back(xhat, work.shape)
    else:
        a3, b3, r3 = alpha.reshape(1, c, 1), beta.reshape(1, c, 1), rstd.reshape(1, c, 1)
        out = np.empty(x3.shape, x3.dtype)

        def normalise(lo, hi, buf, acc):
            out[lo:hi] = fma(x3[lo:hi], a3, b3)
            np.multiply(xhat[lo:hi], r3, out=xhat[lo:hi])

        over_batch(n, 2 * per, 4 * per * n, normalise)
        out, xhat = out.reshape(x.shape), xhat.reshape(x.shape)
    stats = np.float32 if mixed or half else dtype
    return (out.astype(dtype, copy=False), xhat.astype(dtype, copy=False),
            mean.astype(stats, copy=False), var_sum.astype(stats, copy=False),
            rstd.astype(dtype, copy=False))


def _rows_back(a: np.ndarray, shape: tuple) -> np.ndarray:
    """(rows, C) results back in `shape`: channels-last strides for a 4-d (5-d) shape,
    row-major for (N, C) (as PyTorch's result, whatever the input's layout)."""
    if len(shape) <= 2:
        return np.ascontiguousarray(a.reshape(shape))
    return np.moveaxis(a.reshape((shape[0],) + shape[2:] + (shape[1],)), -1, 1)


def _batch_norm_meta(x, weight, bias, *, eps, mixed=False):
    stat = ((x._shape[1],), dt.float32 if mixed or x._dtype is dt.float16 else x._dtype)
    return (x._shape, x._dtype), (x._shape, x._dtype), stat, stat, ((x._shape[1],), x._dtype)


def _batch_norm_backward_kernel(g, xhat, rstd, weight, x, mean, dot_rows=None, dx_rows=None):
    """(dx, dweight, dbias): dx = weight rstd (g - mean(g) - xhat mean(g xhat)) per channel,
    dweight = sum(g xhat), dbias = sum(g), computed from x and mean in PyTorch's order
    (`_batch_norm_grad`); xhat is what the derivative rules read."""
    dtype = g.dtype
    work = np.float32 if dtype in _LOW else dtype
    g, x, mean, rstd = (a.astype(work, copy=False) for a in (g, x, mean, rstd))
    w = None if weight is None else weight.astype(work, copy=False)
    n, c = x.shape[:2]
    if x.size == n * c or _channels_last(x):
        dx, dweight, dbias = G.rows_backward(
            np.moveaxis(g, 1, -1).reshape(-1, c), np.moveaxis(x, 1, -1).reshape(-1, c),
            mean, rstd, w, dot_rows, dx_rows)
        dx = _rows_back(dx, x.shape)
    else:
        dx, dweight, dbias = G.planes_backward(g.reshape(n, c, -1), x.reshape(n, c, -1), mean,
                                               rstd, w)
        dx = dx.reshape(x.shape)
    return (dx.astype(dtype, copy=False), dweight.astype(dtype, copy=False),
            dbias.astype(dtype, copy=False))


def _batch_norm_native(lib, x, weight, bias, *, eps, mixed=False):
    """The forward in C (csrc/batch_norm.c): one task per channel, two statistics passes
    summed in double and one pass writing out and xhat. (N, C) and channels-last inputs
    take the NumPy kernel with its squares in C; 16-bit inputs (whose statistics PyTorch
    rounds in float) the NumPy kernel."""
    if x.dtype in _LOW:
        return NotImplemented
    work = x
    sfx = calls.suffix(work)
    if sfx is None or x.ndim < 2:
        return NotImplemented
    if x.size == x.shape[0] * x.shape[1] or _channels_last(x):
        fn = calls.entry(lib, f"bn_rows_sq_{sfx}", [calls.P] * 3 + [calls.I64] * 2)
        apply = calls.entry(lib, f"bn_rows_apply_{sfx}", [calls.P] * 7 + [calls.I64] * 2)

        def apply_rows(rows, *per_channel):
            rows = np.ascontiguousarray(rows)
            vecs = [np.ascontiguousarray(v, rows.dtype) for v in per_channel]
            out, xhat = np.empty_like(rows), np.empty_like(rows)
            apply(calls.ptr(rows), *map(calls.ptr, vecs), calls.ptr(out), calls.ptr(xhat),
                  rows.shape[0], rows.shape[1])
            return out, xhat

        return _batch_norm_kernel(x, weight, bias, eps=eps, sq_rows=lambda a, m, acc: fn(
            calls.ptr(a), calls.ptr(m), calls.ptr(acc), a.shape[0], a.shape[1]),
            apply_rows=apply_rows)
    work = np.ascontiguousarray(work)
    n, c = x.shape[:2]
    w, b = (None if v is None else np.ascontiguousarray(v, work.dtype) for v in (weight, bias))
    out, xhat = np.empty_like(work), np.empty_like(work)
    mean, var_sum, rstd = (np.empty(c, work.dtype) for _ in range(3))
    P, I64 = calls.P, calls.I64
    calls.entry(lib, f"bn_forward_{sfx}", [P] * 8 + [I64] * 3 + [calls.F64])(
        calls.ptr(work), calls.ptr(w), calls.ptr(b),
        calls.ptr(out), calls.ptr(xhat), calls.ptr(mean), calls.ptr(var_sum), calls.ptr(rstd),
        n, c, work.size // max(n * c, 1), eps)
    return out, xhat, mean, var_sum, rstd


def _batch_norm_backward_native(lib, g, xhat, rstd, weight, x, mean):
    """The backward in C (csrc/batch_norm.c), PyTorch's planes kernel: per channel, both
    sums plane by plane, then dx. Rows layouts take the NumPy kernel with its fused
    products in C; 16-bit inputs the NumPy kernel."""
    if g.dtype in _LOW:
        return NotImplemented
    g3, x3, r, w, m = (None if v is None else np.ascontiguousarray(v, g.dtype)
                       for v in (g, x, rstd, weight, mean))
    sfx = calls.suffix(g3, x3, r, w, m)
    if sfx is None or g.ndim < 2:
        return NotImplemented
    n, c = g.shape[:2]
    P, I64 = calls.P, calls.I64
    if x.size == n * c or _channels_last(x):
        fn = calls.entry(lib, f"bn_rows_dot_{sfx}", [P] * 4 + [I64] * 2)
        dx_fn = calls.entry(lib, f"bn_rows_dx_{sfx}", [P] * 8 + [I64] * 3)

        def dx_rows(x2, dy2, *per_channel_and_full):
            *vecs, full = per_channel_and_full
            x2, dy2 = np.ascontiguousarray(x2), np.ascontiguousarray(dy2, x2.dtype)
            vecs = [None if v is None else np.ascontiguousarray(v, x2.dtype) for v in vecs]
            dx = np.empty_like(x2)
            dx_fn(calls.ptr(x2), calls.ptr(dy2), *map(calls.ptr, vecs), calls.ptr(dx),
                  x2.shape[0], x2.shape[1], full)
            return dx

        return _batch_norm_backward_kernel(g, xhat, rstd, weight, x, mean, dot_rows=(
            lambda a, b, mm, acc: fn(calls.ptr(a), calls.ptr(b), calls.ptr(mm), calls.ptr(acc),
                                     a.shape[0], a.shape[1])), dx_rows=dx_rows)
    dx, dweight, dbias = np.empty_like(g3), np.empty(c, g3.dtype), np.empty(c, g3.dtype)
    calls.entry(lib, f"bn_backward_{sfx}", [P] * 8 + [I64] * 3)(
        calls.ptr(g3), calls.ptr(x3), calls.ptr(m), calls.ptr(r), calls.ptr(w),
        calls.ptr(dx), calls.ptr(dweight), calls.ptr(dbias), n, c, g3.size // max(n * c, 1))
    return dx, dweight, dbias


batch_norm_p = Primitive("native_batch_norm", _batch_norm_kernel, _batch_norm_meta,
                         grad_name="NativeBatchNormBackward0", n_outputs=5)
batch_norm_backward_p = Primitive(
    "native_batch_norm_backward", _batch_norm_backward_kernel,
    lambda g, xhat, rstd, weight, x, mean: ((xhat._shape, xhat._dtype),) + (
        ((xhat._shape[1],), xhat._dtype),) * 2, n_outputs=3)
native.register(batch_norm_p, "batch_norm", _batch_norm_native)
native.register(batch_norm_backward_p, "batch_norm", _batch_norm_backward_native)
# Used when no graph of the backward is built, which forward over reverse (`jvp(grad(f))`)
# does too: so it has derivatives of its own (below), in each input, xhat and 1/std taken as
# given (they carry the forward's tangents and gradients). x and the mean are the same
# values as xhat, given only so that the kernel rounds as PyTorch's: no derivative of theirs.


def _batch_norm_vjp(g_all, out, x, weight, bias, *, needs, eps, mixed=False):
    # Cotangents of the outputs the node did not save (the output, the batch statistics)
    # arrive as None when no path reached them.
    g, g_xhat, g_mean, g_var_sum, g_rstd = g_all
    _, xhat, mean, _, rstd = out
    if not mixed and mean._dtype is not x._dtype:  # (float16's mean, as its kernel saves it)
        mean = mean.to(x._dtype)
    if g is None:
        g = zeros_like(xhat)
    # The statistics reach the caller only detached (running averages); xhat and rstd
    # get cotangents under double backward, where this rule's own graph used them.
    twice = any(t is not None for t in (g_xhat, g_mean, g_var_sum, g_rstd))
    if not _grad_mode.enabled and not twice:
        return apply(batch_norm_backward_p, g, xhat, rstd, weight, x, mean)
    dims = (0,) + tuple(range(2, xhat.ndim))
    view = (1, -1) + (1,) * (xhat.ndim - 2)
    count = xhat.numel() // max(xhat.shape[1], 1)
    dweight, dbias = (g * xhat).sum(dims), g.sum(dims)
    gw = g if weight is None else g * weight.reshape(view)
    if g_xhat is not None:
        gw = gw + g_xhat
    r = rstd.reshape(view)
    dx = r * (gw - gw.mean(dims, keepdim=True) - xhat * (gw * xhat).mean(dims, keepdim=True))
    # d rstd / dx = -rstd^2 xhat / count; d mean / dx = 1 / count;
    # d var_sum / dx = 2 (x - mean) = 2 xhat / rstd
    if g_rstd is not None:
        dx = dx - g_rstd.reshape(view) * r * r * xhat / count
    if g_mean is not None:
        dx = dx + g_mean.reshape(view) / count
    if g_var_sum is not None:
        dx = dx + g_var_sum.reshape(view) * 2 * xhat / r
    if dx._dtype is not xhat._dtype:  # (float statistics of a 16-bit input)
        dx = dx.to(xhat._dtype)
    return dx, dweight, dbias


# xhat and rstd only: the normalised output itself may be overwritten (BatchNorm then an
# in-place ReLU), as PyTorch allows. PyTorch's native_batch_norm also saves the input and
# the weight (not the bias), so an in-place op on them before backward raises as there (the
# rule reads only the weight).
defvjp_joint(batch_norm_p, _batch_norm_vjp, (True, True, True), reads=((0, 1),) * 3,
             save_output=(1, 2, 4))


def _batch_norm_jvp(primals, tangents, out, *, eps, mixed=False):
    """Through the batch statistics, with means over all but the channel dim:
    d mean = mean(dx), d rstd = -rstd^2 mean(xhat dx), d var_sum = 2 sum(xhat dx) / rstd,
    d xhat = rstd (dx - mean(dx)) + xhat d rstd / rstd, and the affine's product rule."""
    x, weight, _ = primals
    tx, tw, tb = tangents
    _, xhat, _, _, rstd = out
    view = (1, -1) + (1,) * (x.ndim - 2)
    t_out = t_xhat = t_mean = t_var_sum = t_rstd = None
    if tx is not None:
        dims = (0,) + tuple(range(2, x.ndim))
        t_mean = tx.mean(dims).to(out[2]._dtype)
        m = (xhat * tx).mean(dims)
        t_rstd = -(rstd * rstd) * m
        t_var_sum = (2 * (x.numel() // max(x.shape[1], 1)) * m / rstd).to(out[3]._dtype)
        t_xhat = rstd.reshape(view) * (tx - t_mean.reshape(view) - xhat * m.reshape(view))
        t_out = t_xhat if weight is None else t_xhat * weight.reshape(view)
    for t in (None if tw is None else xhat * tw.reshape(view),
              None if tb is None else tb.reshape(view)):
        if t is not None:
            t_out = t if t_out is None else t_out + t
    if t_out._shape != x._shape:
        t_out = t_out.expand(x._shape)
    return t_out, t_xhat, t_mean, t_var_sum, t_rstd


def _channels(x, d, size: int):
    """(B, N, C, ...) as (N, B C, ...): each element's channels normalised on their own."""
    x = batched(x, d, size).movedim(0, 1)
    return x.reshape((x._shape[0], -1) + tuple(x._shape[3:]))


def _per_channel(v, d, size: int):
    """A (C,) argument as (B C,), or None."""
    return None if v is None else batched(v, d, size).reshape(-1)


def _unfold(outs, size: int, n_full: int):
    """The first `n_full` results (N, B C, ...) as (N, B, C, ...); the rest (B C,) as (B, C)."""
    return tuple(o.reshape((o._shape[0], size, -1) + tuple(o._shape[2:])) if i < n_full
                 else o.reshape(size, -1) for i, o in enumerate(outs))


def _batch_norm_batch(args, dims, *, eps, mixed=False):
    """Statistics are per channel, so the batch folds into the channels."""
    x, weight, bias = args
    size = batch_size(args, dims)
    outs = bind(batch_norm_p, _channels(x, dims[0], size), _per_channel(weight, dims[1], size),
                _per_channel(bias, dims[2], size), eps=eps, mixed=mixed)
    return _unfold(outs, size, 2), (1, 1, 0, 0, 0)


def _batch_norm_backward_batch(args, dims):
    g, xhat, rstd, weight, x, mean = args
    size = batch_size(args, dims)
    outs = bind(batch_norm_backward_p, _channels(g, dims[0], size),
                _channels(xhat, dims[1], size), _per_channel(rstd, dims[2], size),
                _per_channel(weight, dims[3], size), _channels(x, dims[4], size),
                _per_channel(mean, dims[5], size))
    return _unfold(outs, size, 1), (1, 0, 0)


def _normalised(x, mean, rstd, tx=None, tmean=None, trstd=None):
    """(x - mean) rstd per channel (the xhat the kernel's x and mean stand for), the
    centred x, and the tangent of the first (None for zero)."""
    view = (1, -1) + (1,) * (x.ndim - 2)
    xm = x - mean.reshape(view)
    r = rstd.reshape(view)
    t = tx if tmean is None else (-tmean.reshape(view) if tx is None else
                                  tx - tmean.reshape(view))
    t = _times(t, r)
    if trstd is not None:
        t = _plus(t, xm * trstd.reshape(view))
    return xm * r, xm, t


def _batch_norm_backward_jvp(primals, tangents, out):
    """The kernel's formula differentiated in each of its inputs (g, 1/std, weight, x and
    the mean, which carry the forward's tangents; it reads no xhat): with xhat = (x - mean)
    rstd, s = rstd weight per channel and means over all but the channel dim,
    dx = s (g - mean(g) - xhat mean(g xhat)), dweight = sum(g xhat), dbias = sum(g)."""
    g, _, rstd, weight, x, mean = primals
    tg, _, trstd, tw, tx, tmean = tangents
    xhat, _, txhat = _normalised(x, mean, rstd, tx, tmean, trstd)
    dims = (0,) + tuple(range(2, xhat.ndim))
    view = (1, -1) + (1,) * (xhat.ndim - 2)
    r = rstd.reshape(view)
    w = None if weight is None else weight.reshape(view)
    s = r if w is None else r * w
    ts = _times(trstd, 1) if w is None else _plus(_times(trstd, weight), _times(rstd, tw))
    value, inner = centred(g, tg, xhat, txhat, dims)
    t_dx = None if ts is None else ts.reshape(view) * value
    if inner is not None:
        t_dx = _plus(t_dx, s * inner)
    t_dw = _plus(_times(tg, xhat), _times(g, txhat))
    return (t_dx, None if t_dw is None else t_dw.sum(dims),
            None if tg is None else tg.sum(dims))


defjvp(batch_norm_p, _batch_norm_jvp)
defjvp(batch_norm_backward_p, _batch_norm_backward_jvp)


def _batch_norm_backward_vjp(h_all, out, g, _, rstd, weight, x, mean, *, needs):
    """The transpose of `_batch_norm_backward_jvp`: with P(v) = v - mean(v) - xhat mean(v xhat)
    per channel (symmetric), dx = s P(g) gives g the gradient s P(h_dx), s = rstd weight;
    xhat's gradient then goes to x, the mean and 1/std through xhat = (x - mean) rstd."""
    xhat, xm, _ = _normalised(x, mean, rstd)
    h_dx, h_dw, h_db = h_all
    dims = (0,) + tuple(range(2, xhat.ndim))
    view = (1, -1) + (1,) * (xhat.ndim - 2)
    r = rstd.reshape(view)
    s = r if weight is None else r * weight.reshape(view)
    d_g = d_xhat = d_rstd = d_w = None
    if h_dx is not None:
        b = s * h_dx
        bx = (b * xhat).mean(dims, keepdim=True)
        d_g = b - b.mean(dims, keepdim=True) - xhat * bx
        m = (g * xhat).mean(dims, keepdim=True)
        d_s = (h_dx * (g - g.mean(dims, keepdim=True) - xhat * m)).sum(dims)
        d_rstd = d_s if weight is None else d_s * weight
        d_w = None if weight is None else d_s * rstd
        d_xhat = -(b * m + g * bx)
    if h_dw is not None:
        hw = h_dw.reshape(view)
        d_g, d_xhat = _plus(d_g, xhat * hw), _plus(d_xhat, g * hw)
    if h_db is not None:
        d_g = _plus(d_g, h_db.reshape(view).expand(g._shape))
    d_x = d_mean = None
    if d_xhat is not None:
        d_x = d_xhat * r
        d_mean = -d_x.sum(dims)
        d_rstd = _plus(d_rstd, (d_xhat * xm).sum(dims))
    return d_g, None, d_rstd, d_w, d_x, d_mean


defvjp_joint(batch_norm_backward_p, _batch_norm_backward_vjp, (True,) * 6)
defbatch(batch_norm_p, _batch_norm_batch)
defbatch(batch_norm_backward_p, _batch_norm_backward_batch)


def batch_norm_stats(x: Tensor, weight: Tensor | None, bias: Tensor | None,
                     eps: float, mixed: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """Normalise `x` by its own per-channel (dim 1) statistics, then scale and shift:
    (out, batch mean, sum of squared deviations from it). `mixed`: a 16-bit `x` beside
    float parameters or buffers, whose statistics PyTorch keeps in float."""
    out, _, mean, var_sum, _ = apply(batch_norm_p, x, weight, bias, eps=float(eps),
                                     mixed=bool(mixed))
    return out, mean, var_sum


def _update_stats_kernel(running, stat, *, momentum, count, wide=True):
    """PyTorch's update of a running statistic, in its roundings, in `running`'s memory.

    count == 0, the mean: running = m stat + (1 - m) running, each operation rounded to the
    buffer's dtype (m is the momentum at that dtype), or to the statistic's where it is
    wider (a float16 input's float statistics in float16 buffers). Otherwise the variance
    from its sum of squared deviations: unbiased = stat / (count - 1) at the buffer's dtype, then
    m unbiased + (1 - m) running with that first product and the sum in the accumulating type
    (double with `wide`, PyTorch's for float and double inputs; float for 16-bit ones)."""
    wider = stat.dtype.itemsize > running.dtype.itemsize  # (float16's float statistics)
    t = stat.dtype.type if wider else running.dtype.type
    m = t(momentum)
    keep = t(1) - m
    stat = stat.astype(t, copy=False)
    if count == 0:
        new = m * stat + keep * running.astype(t, copy=False)
    else:
        acc = np.float64 if wide else np.float32
        unbiased = (stat / t(count - 1)).astype(acc)
        new = acc(m) * unbiased + (keep * running).astype(acc)
    np.copyto(running, new, casting="unsafe")


# A running statistic's update, written as PyTorch's batch_norm kernel writes it: in place
# and without a version bump (`silent`, not `writes`). The node of an earlier forward saved
# the buffer (as PyTorch's does), so a second forward before backward (two batches, a GAN's
# real and fake pass) must leave its version alone; an in-place op of the user's refuses.
update_stats_p = UpdatePrimitive("batch_norm_update_stats", _update_stats_kernel, writes=(),
                                silent=(0,))

# PyTorch's words when vmap batches the statistics but not the buffers they update
_UNBATCHED_RUNNING = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which "
    "will be updated in place, were not batched.\nIf you are using a module and do not need "
    "eval mode, please set `track_running_stats` to be False.If you are using a prebuilt "
    "module and do not need eval mode, please see the functorch website for resources on "
    "how to patch your module to work with vmap")


def _update_stats_batch(args, dims, *, momentum, count, wide=True):
    """Each example updates its own slice of a batched buffer; an unbatched buffer cannot
    take one update per example, and vmap refuses (as PyTorch's batch norm rule does)."""
    running, stat = args
    if dims[0] is None:
        raise RuntimeError(_UNBATCHED_RUNNING)
    # NOTE: PyTorch's rule updates the buffer laid out batch-first and made contiguous: when
    # that layout is not the buffer's own memory, it updates a copy and the buffer keeps
    # its values. Matched, so the same programs end with the same statistics.
    if not running.movedim(dims[0], 0).is_contiguous():
        return None, None
    if dims[1] is None:
        stat = stat.unsqueeze(dims[0]).expand(*running.shape)
    else:
        stat = stat.movedim(dims[1], dims[0])
    apply(update_stats_p, running, stat, momentum=momentum, count=count, wide=wide)
    return None, None


defbatch(update_stats_p, _update_stats_batch)


def update_running(running: Tensor, momentum: float, stat: Tensor, count: int = 0,
                   wide: bool = True) -> None:
    """Move `running` towards `stat` by `momentum` (under no_grad): the batch mean, or with
    `count` the variance from `stat`, its sum of squared deviations over `count` values.
    In PyTorch's roundings (`wide`: the input was not 16-bit), leaving the buffer's version
    as is on the CPU (composed, and bumping it, on another device)."""
    if running.device.type == "cpu" and stat.device.type == "cpu":
        apply(update_stats_p, running, stat, momentum=float(momentum), count=int(count),
              wide=bool(wide))
    else:
        step = stat if count == 0 else stat / (count - 1)
        running.mul_(1 - momentum).add_(step * momentum)


TENSOR_METHODS: dict = {}

__all__: list = []
