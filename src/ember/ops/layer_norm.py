"""Layer normalisation as one fused primitive, and its backward.

# NOTE: a listed exception (`_core/fused.py`): one kernel normalises the rows (the
# composite took nine ops and as many fresh buffers) and returns, beside the result, the
# normalised rows and their 1/std for the backward (PyTorch's native_layer_norm keeps mean
# and 1/std). The backward is one fused kernel when no graph of it is wanted, the same
# formula in ember ops otherwise; both take the gradients that double backward sends to
# those two outputs. float16 / bfloat16 inputs run PyTorch's reduced-precision kernels
# instead (`layer_norm_low.py`: statistics in the weight's dtype, low-precision sums).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from ..native import calls
from ._batching import batch_size, batched, front
from ._common import row_sums
from ._fma import fma
from ._norm_tangent import centred
from ._norm_tangent import plus as _plus
from ._norm_tangent import times as _times
from .creation import zeros_like
from .layer_norm_low import is_low, low_backward, low_forward, low_vjp_graph
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    defjvp,
    defvjp_joint,
)

_grad_mode = grad_mode.state

def _rows(a, k: int):
    """`a` as a matrix with its trailing k dims flattened into each row."""
    lead, row = a.shape[:a.ndim - k], a.shape[a.ndim - k:]
    return a.reshape(math.prod(lead), math.prod(row))


def _layer_norm_kernel(x, weight, bias, *, k, eps):
    if is_low(x):  # float16 / bfloat16: PyTorch's reduced-precision kernel (layer_norm_low)
        return low_forward(_layer_norm_kernel, x, weight, bias, k=k, eps=eps)
    rows = _rows(x, k)
    n = rows.shape[1]
    mean = row_sums(rows)
    np.divide(mean, n, out=mean)
    xhat = np.subtract(rows, mean)
    var = row_sums(np.square(xhat))
    np.divide(var, n, out=var)
    rstd = np.divide(1, np.sqrt(np.add(var, eps, out=var), out=var), out=var)
    np.multiply(xhat, rstd, out=xhat)
    if weight is not None and bias is not None:  # (one rounding, as PyTorch's kernel)
        out = fma(xhat, weight.reshape(-1), bias.reshape(-1))
    else:
        out = xhat if weight is None else np.multiply(xhat, weight.reshape(-1))
        out = np.add(out, bias.reshape(-1), out=None if out is xhat else out) \
            if bias is not None else (out.copy() if out is xhat else out)
    stat = x.shape[:x.ndim - k] + (1,) * k
    return out.reshape(x.shape), xhat.reshape(x.shape), rstd.reshape(stat)


def _layer_norm_meta(x, weight, bias, *, k, eps):
    stat = tuple(x._shape[:len(x._shape) - k]) + (1,) * k
    stat_t = weight._dtype if weight is not None and x._dtype.itemsize == 2 and \
        weight._dtype is dt.float32 else x._dtype  # (layer_norm_low.stat_dtype)
    return (x._shape, x._dtype), (x._shape, x._dtype), (stat, stat_t)


def _layer_norm_backward_kernel(g, xhat, rstd, weight, *, k, low=False):
    """(dx, dweight, dbias): dx = rstd (gw - mean(gw) - xhat mean(gw xhat)) per row with
    gw = g * weight; dweight and dbias sum g * xhat and g over the rows. With `low`, the
    second argument is the float16 / bfloat16 input itself (layer_norm_low)."""
    if low:
        return low_backward(g, xhat, rstd, weight, k=k)
    rows, g_rows = _rows(xhat, k), _rows(g, k)
    n = rows.shape[1]
    gx = np.multiply(g_rows, rows)
    dweight = np.add.reduce(gx, axis=0).reshape(xhat.shape[xhat.ndim - k:])
    dbias = np.add.reduce(g_rows, axis=0).reshape(dweight.shape)
    if weight is not None:
        gw = np.multiply(g_rows, weight.reshape(-1))
        np.multiply(gx, weight.reshape(-1), out=gx)  # now gw * xhat
    else:
        gw = np.array(g_rows)
    a = row_sums(gw) / n
    b = row_sums(gx) / n
    np.multiply(rows, b, out=gx)
    np.subtract(gw, a, out=gw)
    np.subtract(gw, gx, out=gw)
    np.multiply(gw, rstd.reshape(-1, 1), out=gw)
    return gw.reshape(xhat.shape), dweight, dbias


def _layer_norm_native(lib, x, weight, bias, *, k, eps):
    """The forward in C (csrc/layer_norm.c): one task per block of rows, the statistics
    summed in double. float16 / bfloat16 stay with NumPy (F.layer_norm computes them in
    float32 before they get here)."""
    rows = _rows(x, k) if x.size else None
    sfx = None if rows is None else calls.suffix(x, weight, bias)
    if sfx is None:
        return NotImplemented
    rows = np.ascontiguousarray(rows)
    w, b = (None if v is None else np.ascontiguousarray(v) for v in (weight, bias))
    out, xhat = np.empty_like(rows), np.empty_like(rows)
    rstd = np.empty(rows.shape[0], rows.dtype)
    P, I64 = calls.P, calls.I64
    calls.entry(lib, f"ln_forward_{sfx}", [P] * 6 + [I64, I64, calls.F64])(
        calls.ptr(rows), calls.ptr(w), calls.ptr(b), calls.ptr(out), calls.ptr(xhat),
        calls.ptr(rstd), rows.shape[0], rows.shape[1], eps)
    stat = x.shape[:x.ndim - k] + (1,) * k
    return out.reshape(x.shape), xhat.reshape(x.shape), rstd.reshape(stat)


def _layer_norm_backward_native(lib, g, xhat, rstd, weight, *, k, low=False):
    """The backward in C: dx per row; dweight and dbias per block of columns over all rows."""
    sfx = calls.suffix(g, xhat, rstd, weight) if xhat.size and not low else None
    if sfx is None:
        return NotImplemented
    g2, x2 = (np.ascontiguousarray(_rows(a, k)) for a in (g, xhat))
    r, w = np.ascontiguousarray(rstd), None if weight is None else np.ascontiguousarray(weight)
    dx = np.empty_like(x2)
    tail = xhat.shape[xhat.ndim - k:]
    dweight, dbias = np.empty(tail, x2.dtype), np.empty(tail, x2.dtype)
    P, I64 = calls.P, calls.I64
    calls.entry(lib, f"ln_backward_{sfx}", [P] * 7 + [I64, I64])(
        calls.ptr(g2), calls.ptr(x2), calls.ptr(r), calls.ptr(w), calls.ptr(dx),
        calls.ptr(dweight), calls.ptr(dbias), x2.shape[0], x2.shape[1])
    return dx.reshape(xhat.shape), dweight, dbias


layer_norm_p = Primitive("native_layer_norm", _layer_norm_kernel, _layer_norm_meta,
                         grad_name="NativeLayerNormBackward0", n_outputs=3)
layer_norm_backward_p = Primitive(
    "native_layer_norm_backward", _layer_norm_backward_kernel,
    lambda g, xhat, rstd, weight, *, k, low=False: ((xhat._shape, xhat._dtype),) + (
        (tuple(xhat._shape[len(xhat._shape) - k:]), rstd._dtype),) * 2, n_outputs=3)
native.register(layer_norm_p, "layer_norm", _layer_norm_native)
native.register(layer_norm_backward_p, "layer_norm", _layer_norm_backward_native)
# Used when no graph of the backward is built, which forward over reverse (`jvp(grad(f))`)
# does too: so it has derivatives of its own (below), in each input, xhat and 1/std taken as
# given (they carry the forward's tangents and gradients).


def _layer_norm_vjp(g_all, out, x, weight, bias, *, needs, k, eps):
    g, g_xhat, g_rstd = g_all
    _, xhat, rstd = out
    if g is None:  # (under double backward only xhat or 1/std may have been reached)
        g = zeros_like(xhat)
    # xhat and 1/std get cotangents only under double backward, where this rule's own
    # graph used them; otherwise they arrive as None.
    twice = g_xhat is not None or g_rstd is not None
    if x.dtype.itemsize == 2 and x.dtype.is_floating_point and not twice:
        # float16 / bfloat16: PyTorch's kernel, reading x (layer_norm_low)
        if not _grad_mode.enabled:
            return apply(layer_norm_backward_p, g, x, rstd, weight, k=k, low=True)
        with grad_mode.no_grad():
            values = apply(layer_norm_backward_p, g, x, rstd, weight, k=k, low=True)
        return low_vjp_graph(values, g, x, weight, bias, k=k, eps=eps)
    if not _grad_mode.enabled and not twice:
        dx, dweight, dbias = apply(layer_norm_backward_p, g, xhat, rstd, weight, k=k)
        return dx, dweight, dbias
    dweight, dbias = g * xhat, g  # (the engine sums them down to the parameters' shape)
    if twice:  # x also reaches xhat and 1/std directly
        g = g * weight if weight is not None else g
        g = g if g_xhat is None else g + g_xhat
        weight = None
    dims = tuple(range(xhat.ndim - k, xhat.ndim))
    gw = g if weight is None else g * weight
    dx = rstd * (gw - gw.mean(dims, keepdim=True) - xhat * (gw * xhat).mean(dims, keepdim=True))
    if g_rstd is not None:  # d rstd / dx = -rstd^2 xhat / n
        dx = dx - g_rstd * rstd * rstd * xhat / (xhat.numel() // max(rstd.numel(), 1))
    return dx, dweight, dbias


# The node keeps xhat and 1/std, not the output (LayerNorm then an in-place op trains), and,
# as PyTorch's native_layer_norm saves them, the input, weight and bias (an in-place op on
# one of them before backward raises there too; the rule reads only the weight).
defvjp_joint(layer_norm_p, _layer_norm_vjp, (True, True, True), reads=((0, 1, 2),) * 3,
             save_output=(1, 2))


def check_affine(x: Tensor, weight, bias, k: int) -> None:
    """As native_layer_norm checks: the weight and bias, when given, have exactly the shape
    of the normalised dims (a flat weight of as many elements is refused too)."""
    shape = list(x._shape[len(x._shape) - k:])
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t._shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(t._shape)} and normalized_shape = "
                               f"{shape}")


def layer_norm_prim(x: Tensor, weight, bias, k: int, eps: float) -> Tensor:
    """Normalise `x` over its trailing `k` dims, then scale and shift."""
    check_affine(x, weight, bias, k)
    return apply(layer_norm_p, x, weight, bias, k=k, eps=float(eps))[0]


# --- forward mode and vmap ------------------------------------------------------------------

def _layer_norm_jvp(primals, tangents, out, *, k, eps):
    """With means over the normalised dims: d xhat = rstd (dx - mean(dx) - xhat mean(xhat dx)),
    d rstd = -rstd^2 mean(xhat dx), and the affine's product rule on top."""
    x, weight, _ = primals
    tx, tw, tb = tangents
    _, xhat, rstd = out
    t_out = t_xhat = t_rstd = None
    if tx is not None:
        dims = tuple(range(x.ndim - k, x.ndim))
        m = (xhat * tx).mean(dims, keepdim=True)
        t_xhat = rstd * (tx - tx.mean(dims, keepdim=True) - xhat * m)
        t_rstd = -(rstd * rstd) * m
        t_out = t_xhat if weight is None else t_xhat * weight
    for t in (None if tw is None else xhat * tw, tb):
        if t is not None:
            t_out = t if t_out is None else t_out + t
    if t_out._shape != x._shape:
        t_out = t_out.expand(x._shape)
    return t_out, t_xhat, t_rstd


def _affine_batched(t, d, lead: int):
    """A batched weight or bias, batch in front, broadcastable over `lead` leading dims."""
    if t is None or d is None:
        return t
    t = front(t, d)
    return t.reshape((t._shape[0],) + (1,) * lead + tuple(t._shape[1:]))


def _layer_norm_batch(args, dims, *, k, eps):
    """The batch is one more leading dim of x; a batched weight or bias is applied after
    normalising without them."""
    x, weight, bias = args
    dx, dw, db = dims
    x = front(x, dx)
    if dw is None and db is None:
        return bind(layer_norm_p, x, weight, bias, k=k, eps=eps), (0, 0, 0)
    _, xhat, rstd = bind(layer_norm_p, x, None, None, k=k, eps=eps)
    lead = x.ndim - (dx is not None) - k
    out = xhat
    if weight is not None:
        out = out * _affine_batched(weight, dw, lead)
    if bias is not None:
        out = out + _affine_batched(bias, db, lead)
    xd = None if dx is None else 0
    return (out, xhat, rstd), (0, xd, xd)


def _layer_norm_backward_batch(args, dims, *, k, low=False):
    """The fused kernel sums dweight and dbias over every row, the batch's too, so the
    batched form is its formula in ember ops, summing per batch element (for float16 /
    bfloat16, whose sums round row by row, the kernel once per batch element)."""
    g, xhat, rstd, weight = args
    size = batch_size(args, dims)
    if low:
        from .join import stack

        each = [bind(layer_norm_backward_p, *(a if d is None else a.select(d, i)
                                              for a, d in zip(args, dims)), k=k, low=True)
                for i in range(size)]
        return tuple(stack(list(parts)) for parts in zip(*each)), (0, 0, 0)
    g, xhat, rstd = (batched(a, d, size) for a, d in zip(args[:3], dims[:3]))
    norm = tuple(range(xhat.ndim - k, xhat.ndim))
    rows = tuple(range(1, xhat.ndim - k))
    if weight is not None:
        weight = _affine_batched(weight, dims[3], len(rows))
    gw = g if weight is None else g * weight
    dx = rstd * (gw - gw.mean(norm, keepdim=True)
                 - xhat * (gw * xhat).mean(norm, keepdim=True))
    dweight, dbias = g * xhat, g
    if rows:
        dweight, dbias = dweight.sum(rows), dbias.sum(rows)
    return (dx, dweight, dbias), (0, 0, 0)


def _refuse_low(low: bool) -> None:
    if low:
        raise RuntimeError("the derivative of a float16 / bfloat16 layer_norm's backward "
                           "without create_graph is not supported; backward with "
                           "create_graph=True")


def _layer_norm_backward_jvp(primals, tangents, out, *, k, low=False):
    """The kernel's formula differentiated in each of its inputs (g, xhat, 1/std, weight;
    xhat and 1/std carry the forward's tangents): with gw = g * weight and means over the
    normalised dims, dx = rstd (gw - mean(gw) - xhat mean(gw xhat)), dweight = sum(g xhat),
    dbias = sum(g) over the rows."""
    _refuse_low(low)
    g, xhat, rstd, weight = primals
    tg, txhat, trstd, tw = tangents
    norm = tuple(range(xhat.ndim - k, xhat.ndim))
    rows = tuple(range(xhat.ndim - k))
    gw = g if weight is None else g * weight
    tgw = tg if weight is None else _plus(_times(tg, weight), _times(g, tw))
    value, inner = centred(gw, tgw, xhat, txhat, norm)
    t_dx = None if trstd is None else trstd * value
    if inner is not None:
        t_dx = _plus(t_dx, rstd * inner)
    t_dw = _plus(_times(tg, xhat), _times(g, txhat))
    t_dw = t_dw.sum(rows) if t_dw is not None and rows else t_dw
    t_db = tg.sum(rows) if tg is not None and rows else tg
    return t_dx, t_dw, t_db


defjvp(layer_norm_p, _layer_norm_jvp)
defjvp(layer_norm_backward_p, _layer_norm_backward_jvp)


def _layer_norm_backward_vjp(h_all, out, g, xhat, rstd, weight, *, needs, k, low=False):
    """The transpose of `_layer_norm_backward_jvp`: with P(v) = v - mean(v) - xhat mean(v xhat)
    (symmetric), dx = rstd P(gw) gives gw the gradient rstd P(h_dx)."""
    _refuse_low(low)
    h_dx, h_dw, h_db = h_all
    norm = tuple(range(xhat.ndim - k, xhat.ndim))
    gw = g if weight is None else g * weight
    d_g = d_xhat = d_rstd = d_w = None
    if h_dx is not None:
        b = rstd * h_dx
        bx = (b * xhat).mean(norm, keepdim=True)
        d_gw = b - b.mean(norm, keepdim=True) - xhat * bx
        d_g = d_gw if weight is None else d_gw * weight
        d_w = None if weight is None else d_gw * g  # (the engine sums it to weight's shape)
        m = (gw * xhat).mean(norm, keepdim=True)
        d_rstd = (h_dx * (gw - gw.mean(norm, keepdim=True) - xhat * m)).sum(norm, keepdim=True)
        d_xhat = -(b * m + gw * bx)
    if h_dw is not None:
        d_g, d_xhat = _plus(d_g, xhat * h_dw), _plus(d_xhat, g * h_dw)
    if h_db is not None:
        d_g = _plus(d_g, h_db.expand(g._shape))
    return d_g, d_xhat, d_rstd, d_w


defvjp_joint(layer_norm_backward_p, _layer_norm_backward_vjp, (True, True, True, True))
defbatch(layer_norm_p, _layer_norm_batch)
defbatch(layer_norm_backward_p, _layer_norm_backward_batch)
