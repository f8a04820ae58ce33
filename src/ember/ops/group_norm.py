"""Group normalisation as one fused primitive, and its backward.

# NOTE: a listed exception like `layer_norm.py` (`_core/fused.py`): the composite ran layer
# norm over each (sample, group) row and then `* weight` and `+ bias` as two more passes, and
# its backward three more per-channel reductions. Here the forward is PyTorch's
# native_group_norm (out, mean, 1/std with the statistics shaped (N, groups)): the statistics
# in one pass, then out = x * scale + shift with scale = rstd w[c], shift = b[c] - mean scale
# per (sample, channel), as PyTorch's kernel does. The backward sums g and g x per (sample,
# channel) in one pass and writes dx = c1 g + c2 x + c3 in another (PyTorch's formula); the
# small coefficient arrays are computed here, in double, for both the NumPy kernels and the
# C ones (csrc/group_norm.c), which then agree but for the statistics' summation order.
# float16 / bfloat16 do not come here (F.group_norm computes them in float32).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from ..native import calls
from ._batching import batch_size, front
from .registry import Primitive, apply, bind, defbatch, defjvp, defvjp_joint

_grad_mode = grad_mode.state
_LANES = 16  # (csrc/reduce.h's EMBER_LANES)


def _lane_sums(v):
    """Row sums of a 2-D float64 array in reduce.h's order: element j into lane j % 16,
    each lane summed in order, the lanes totalled pairwise (so NumPy and C agree)."""
    rows, n = v.shape
    if n == 1:  # (0.0 + x: one lane's total, -0.0 made +0.0 as the C sum makes it)
        return np.add(v[:, 0], 0.0)
    m = -(-n // _LANES)
    t = np.zeros((rows, m * _LANES))
    t[:, :n] = v
    acc = np.add.reduce(t.reshape(rows, m, _LANES), axis=1)  # (sequential along axis 1)
    w = _LANES // 2
    while w:
        acc[:, :w] += acc[:, w:2 * w]
        w //= 2
    return acc[:, 0]


def _shape3(x, groups: int):
    n, c = x.shape[:2]
    return n, c, math.prod(x.shape[2:])


def _stats(rows, eps: float):
    """(mean, rstd) of each row, as csrc/group_norm.c's gn_stats rounds them."""
    t = rows.dtype.type
    n = rows.shape[1]
    x64 = rows.astype(np.float64)
    mean = (_lane_sums(x64) / n).astype(t)
    d = x64 - mean.astype(np.float64)[:, None]
    var = (_lane_sums(np.multiply(d, d, out=d)) / n).astype(t)
    rstd = t(1) / np.sqrt(np.add(var, t(eps)).astype(np.float64)).astype(t)
    return mean, rstd


def _scale_shift(mean, rstd, weight, bias, c: int):
    """Per (sample, channel): scale = rstd w[c], shift = b[c] - mean scale, flat (N * C)."""
    n, groups = mean.shape
    d = c // groups
    r3, m3 = rstd.reshape(n, groups, 1), mean.reshape(n, groups, 1)
    scale = np.broadcast_to(r3, (n, groups, d)) if weight is None else \
        np.multiply(r3, weight.reshape(groups, d))
    ms = np.multiply(m3, scale)
    shift = np.negative(ms, out=ms) if bias is None else \
        np.subtract(bias.reshape(groups, d), ms, out=ms)
    return np.ascontiguousarray(scale).reshape(-1), shift.reshape(-1)


def _group_norm_kernel(x, weight, bias, *, groups, eps):
    n, c, hw = _shape3(x, groups)
    if not x.size:
        z = np.zeros((n, groups), x.dtype)
        return np.empty(x.shape, x.dtype), z, z.copy()
    rows = x.reshape(n * groups, -1)
    mean, rstd = _stats(rows, eps)
    mean, rstd = mean.reshape(n, groups), rstd.reshape(n, groups)
    scale, shift = _scale_shift(mean, rstd, weight, bias, c)
    x3 = x.reshape(n * c, hw)
    out = np.add(np.multiply(x3, scale[:, None]), shift[:, None])
    return out.reshape(x.shape), mean, rstd


def _group_norm_native(lib, x, weight, bias, *, groups, eps):
    """The two passes in C (csrc/group_norm.c); the (N, C) coefficients as the NumPy kernel."""
    sfx = calls.suffix(x, weight, bias) if x.size else None
    if sfx is None:
        return NotImplemented
    n, c, hw = _shape3(x, groups)
    xc = np.ascontiguousarray(x)
    mean, rstd = np.empty((n, groups), x.dtype), np.empty((n, groups), x.dtype)
    P, I64 = calls.P, calls.I64
    calls.entry(lib, f"gn_stats_{sfx}", [P] * 3 + [I64, I64, calls.F64])(
        calls.ptr(xc), calls.ptr(mean), calls.ptr(rstd), n * groups, xc.size // (n * groups),
        eps)
    scale, shift = _scale_shift(mean, rstd, weight, bias, c)
    out = np.empty(x.shape, x.dtype)
    calls.entry(lib, f"gn_affine_{sfx}", [P] * 4 + [I64, I64])(
        calls.ptr(xc), calls.ptr(scale), calls.ptr(shift), calls.ptr(out), n * c, hw)
    return out, mean, rstd


def _backward_finish(sg, sgx, mean, rstd, weight, dtype, count: int):
    """From the (N, C) sums of g and g x in double: dx's (c1, c2, c3) per (sample, channel),
    flat, in the data's dtype, and dweight, dbias (PyTorch's formula, here in double;
    `count` values per group)."""
    n, c = sg.shape
    groups = mean.shape[1]
    d = c // groups
    m64, r64 = mean.astype(np.float64), rstd.astype(np.float64)
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    ds = (sgx * w).reshape(n, groups, d).sum(-1)
    db = (sg * w).reshape(n, groups, d).sum(-1)
    c2 = (db * m64 - ds) * r64 * r64 * r64 / count
    c3 = -c2 * m64 - db * r64 / count
    m3, r3 = m64.reshape(n, groups, 1), r64.reshape(n, groups, 1)
    c1 = (r3 * w.reshape(groups, d)).reshape(-1).astype(dtype)

    def each(a):  # (N, G) -> flat (N * C), each group's value for its channels
        return np.broadcast_to(a.reshape(n, groups, 1), (n, groups, d)).reshape(-1).astype(dtype)

    sg3 = sg.reshape(n, groups, d)
    dweight = ((sgx.reshape(n, groups, d) - m3 * sg3) * r3).reshape(n, c).sum(0).astype(dtype)
    dbias = sg.sum(0).astype(dtype)
    return c1, each(c2), each(c3), dweight, dbias


def _group_norm_backward_kernel(g, x, mean, rstd, weight, *, groups):
    """(dx, dweight, dbias) of group norm: with per-(sample, channel) sums of g and g x,
    dx = c1 g + c2 x + c3 (PyTorch's coefficients), dweight = sum (g x - mean g) rstd,
    dbias = sum g over the samples."""
    n, c, hw = _shape3(x, groups)
    t = x.dtype
    if not x.size:
        return np.zeros(x.shape, t), np.zeros(c, t), np.zeros(c, t)
    g3, x3 = g.reshape(n * c, hw), x.reshape(n * c, hw)
    g64 = g3.astype(np.float64)
    sg = _lane_sums(g64).reshape(n, c)
    sgx = _lane_sums(g64 * x3.astype(np.float64)).reshape(n, c)
    c1, c2, c3, dweight, dbias = _backward_finish(sg, sgx, mean, rstd, weight, t,
                                                  (c // groups) * hw)
    dx = np.add(np.add(np.multiply(c1[:, None], g3), np.multiply(c2[:, None], x3)), c3[:, None])
    return dx.reshape(x.shape), dweight, dbias


def _group_norm_backward_native(lib, g, x, mean, rstd, weight, *, groups):
    """The backward's two passes in C (sums, then dx); the coefficients as NumPy's."""
    sfx = calls.suffix(g, x, mean, rstd, weight) if x.size else None
    if sfx is None:
        return NotImplemented
    n, c, hw = _shape3(x, groups)
    gc, xc = np.ascontiguousarray(g), np.ascontiguousarray(x)
    P, I64 = calls.P, calls.I64
    if hw == 1:  # (a row of one: the sums are the values, where C's per-row cost is not)
        g64 = gc.reshape(n, c).astype(np.float64)
        sg, sgx = np.add(g64, 0.0), np.add(g64 * xc.reshape(n, c), 0.0)
    else:
        sg, sgx = np.empty((n, c)), np.empty((n, c))
        calls.entry(lib, f"gn_sums_{sfx}", [P] * 4 + [I64, I64])(
            calls.ptr(gc), calls.ptr(xc), calls.ptr(sg), calls.ptr(sgx), n * c, hw)
    c1, c2, c3, dweight, dbias = _backward_finish(sg, sgx, mean, rstd, weight, x.dtype,
                                                  (c // groups) * hw)
    dx = np.empty(x.shape, x.dtype)
    calls.entry(lib, f"gn_dx_{sfx}", [P] * 6 + [I64, I64])(
        calls.ptr(gc), calls.ptr(xc), calls.ptr(c1), calls.ptr(c2), calls.ptr(c3),
        calls.ptr(dx), n * c, hw)
    return dx, dweight, dbias


def _group_norm_meta(x, weight, bias, *, groups, eps):
    stat = (x._shape[0], groups)
    return (x._shape, x._dtype), (stat, x._dtype), (stat, x._dtype)


group_norm_p = Primitive("native_group_norm", _group_norm_kernel, _group_norm_meta,
                         grad_name="NativeGroupNormBackward0", n_outputs=3)
group_norm_backward_p = Primitive(
    "native_group_norm_backward", _group_norm_backward_kernel,
    lambda g, x, mean, rstd, weight, *, groups: ((x._shape, x._dtype),) + (
        ((x._shape[1],), x._dtype),) * 2, n_outputs=3)
native.register(group_norm_p, "group_norm", _group_norm_native)
native.register(group_norm_backward_p, "group_norm", _group_norm_backward_native)


def _composite(x, groups: int, eps: float):
    """(xhat as (N, G, rest), rstd as (N, G, 1)) recomputed in ember ops, differentiable."""
    n = x.shape[0]
    xr = x.reshape(n, groups, -1)
    mu = xr.mean(-1, keepdim=True)
    dev = xr - mu
    r = ((dev * dev).mean(-1, keepdim=True) + eps).rsqrt()
    return (dev * r), r


def _channel(t, ndim: int):
    """A per-channel (C,) tensor shaped to broadcast against an (N, C, ...) one."""
    return t.reshape((-1,) + (1,) * (ndim - 2))


def _group_norm_vjp(g_all, out, x, weight, bias, *, needs, groups, eps):
    """The fused backward kernel without a graph; with one (create_graph, forward over
    reverse), the same formula in ember ops on statistics recomputed from x, so that it is
    differentiable again."""
    g, g_mean, g_rstd = g_all
    _, mean, rstd = out
    if g is None:
        g = x.new_zeros(x.shape)
    plain = g_mean is None and g_rstd is None
    if plain and not _grad_mode.enabled:
        dx, dweight, dbias = apply(group_norm_backward_p, g, x, mean, rstd, weight,
                                   groups=groups)
        return dx, dweight if needs[1] else None, dbias if needs[2] else None
    n = x.shape[0]
    xhat3, r = _composite(x, groups, eps)
    xhat = xhat3.reshape(x.shape)
    dims = (0,) + tuple(range(2, x.ndim))
    dweight = (g * xhat).sum(dims) if needs[1] and dims else None
    dbias = g.sum(dims) if needs[2] and dims else None
    gw = g if weight is None else g * _channel(weight, x.ndim)
    gw = gw.reshape(n, groups, -1)
    dx = r * (gw - gw.mean(-1, keepdim=True) - xhat3 * (gw * xhat3).mean(-1, keepdim=True))
    count = xhat3.shape[-1]
    if g_mean is not None:
        dx = dx + g_mean.reshape(n, groups, 1) / count
    if g_rstd is not None:  # d rstd / dx = -rstd^2 xhat / count
        dx = dx - g_rstd.reshape(n, groups, 1) * r * r * xhat3 / count
    return dx.reshape(x.shape), dweight, dbias


# (PyTorch's native_group_norm node keeps the input and the weight, not the bias: an
# in-place op on the bias after it leaves backward alone)
defvjp_joint(group_norm_p, _group_norm_vjp, (True, True, True), reads=((0, 1),) * 3,
             save_output=(1, 2))


def _group_norm_backward_vjp(h_all, out, g, x, mean, rstd, weight, *, needs, groups):
    """The kernel runs only where no graph of the backward is wanted (with one, the rule
    above builds the formula in ember ops), so reaching this is refused."""
    raise RuntimeError("the derivative of group_norm's fused backward is not supported "
                       "without a graph of the first backward; backward with "
                       "create_graph=True")


def group_norm_prim(x: Tensor, weight, bias, groups: int, eps: float) -> Tensor:
    """Group norm of an (N, C, *) input (checked arguments): one fused node."""
    return apply(group_norm_p, x, weight, bias, groups=groups, eps=float(eps))[0]


# --- forward mode and vmap ------------------------------------------------------------------

def _group_norm_jvp(primals, tangents, out, *, groups, eps):
    """With means over each (sample, group): d xhat = rstd (dx - mean(dx) - xhat mean(xhat
    dx)), d mean = mean(dx), d rstd = -rstd^2 mean(xhat dx); the affine's product rule on top."""
    x, weight, _ = primals
    tx, tw, tb = tangents
    n = x.shape[0]
    xhat3, r = _composite(x, groups, eps)
    xhat = xhat3.reshape(x.shape)
    t_out = t_mean = t_rstd = None
    if tx is not None:
        t3 = tx.reshape(n, groups, -1)
        m = (xhat3 * t3).mean(-1, keepdim=True)
        mt = t3.mean(-1, keepdim=True)
        t_out = (r * (t3 - mt - xhat3 * m)).reshape(x.shape)
        if weight is not None:
            t_out = t_out * _channel(weight, x.ndim)
        t_mean, t_rstd = mt.reshape(n, groups), (-(r * r) * m).reshape(n, groups)
    for t in (None if tw is None else xhat * _channel(tw, x.ndim),
              None if tb is None else _channel(tb, x.ndim)):
        if t is not None:
            t_out = t if t_out is None else t_out + t
    if t_out._shape != x._shape:
        t_out = t_out.expand(x._shape)
    return t_out, t_mean, t_rstd


def _group_norm_batch(args, dims, *, groups, eps):
    """The batch folds into the samples; a batched weight or bias is applied after
    normalising without them."""
    x, weight, bias = args
    dx, dw, db = dims
    size = batch_size(args, dims)
    if dx is None:
        x = x.expand((size,) + tuple(x.shape))
    else:
        x = front(x, dx)
    flat = x.reshape((size * x.shape[1],) + tuple(x.shape[2:]))
    inner = (weight, bias) if dw is None and db is None else (None, None)
    out, mean, rstd = bind(group_norm_p, flat, *inner, groups=groups, eps=eps)
    out = out.reshape(x.shape)
    if inner[0] is None and inner[1] is None and (weight is not None or bias is not None):
        lead = (1,) * (x.ndim - 3)  # (the spatial dims: x holds the batch, N and C)
        for t, d, op in ((weight, dw, "mul"), (bias, db, "add")):
            if t is None:
                continue
            t = front(t, d).reshape((size, 1, -1) + lead) if d is not None else \
                _channel(t, x.ndim - 1)
            out = out * t if op == "mul" else out + t
    stat = (size, x.shape[1], groups)
    return (out, mean.reshape(stat), rstd.reshape(stat)), (0, 0, 0)


def _group_norm_backward_batch(args, dims, *, groups):
    """Once per batch element (dweight and dbias sum over every sample)."""
    from .join import stack

    size = batch_size(args, dims)
    each = [bind(group_norm_backward_p, *(a if d is None else a.select(d, i)
                                          for a, d in zip(args, dims)), groups=groups)
            for i in range(size)]
    return tuple(stack(list(parts)) for parts in zip(*each)), (0, 0, 0)


def _group_norm_backward_jvp(primals, tangents, out, *, groups):
    """The kernel's formula differentiated (forward over reverse): with xhat, 1/std and P(v)
    = v - mean(v) - xhat mean(v xhat) per (sample, group), dx = rstd P(g w). The statistics'
    own tangents are those of x's, so they are derived from x's tangent here."""
    g, x, mean, rstd, weight = primals
    tg, tx, _, _, tw = tangents
    n = x.shape[0]
    view = (n, groups, -1)
    r = rstd.reshape(n, groups, 1)
    xh = (x.reshape(view) - mean.reshape(n, groups, 1)) * r
    w = None if weight is None else _channel(weight, x.ndim)
    gw = (g if w is None else g * w).reshape(view)
    tgw = None
    for t in (None if tg is None else (tg if w is None else tg * w),
              None if tw is None else g * _channel(tw, x.ndim)):
        if t is not None:
            tgw = t.reshape(view) if tgw is None else tgw + t.reshape(view)
    m = (gw * xh).mean(-1, keepdim=True)
    t_dx = t_xh = None
    if tx is not None:
        t3 = tx.reshape(view)
        mx = (xh * t3).mean(-1, keepdim=True)
        t_xh = r * (t3 - t3.mean(-1, keepdim=True) - xh * mx)
        t_r = -(r * r) * mx
        t_dx = t_r * (gw - gw.mean(-1, keepdim=True) - xh * m) \
            - r * (t_xh * m + xh * (gw * t_xh).mean(-1, keepdim=True))
    if tgw is not None:
        part = r * (tgw - tgw.mean(-1, keepdim=True) - xh * (tgw * xh).mean(-1, keepdim=True))
        t_dx = part if t_dx is None else t_dx + part
    dims = (0,) + tuple(range(2, x.ndim))
    t_dw = None
    xhat = xh.reshape(x.shape)
    for t in (None if tg is None else tg * xhat,
              None if t_xh is None else g * t_xh.reshape(x.shape)):
        if t is not None:
            t_dw = t if t_dw is None else t_dw + t
    t_dw = t_dw.sum(dims) if t_dw is not None else None
    t_db = tg.sum(dims) if tg is not None else None
    return (None if t_dx is None else t_dx.reshape(x.shape)), t_dw, t_db


defjvp(group_norm_p, _group_norm_jvp)
defjvp(group_norm_backward_p, _group_norm_backward_jvp)
defvjp_joint(group_norm_backward_p, _group_norm_backward_vjp, (True, True, True, True, True))
defbatch(group_norm_p, _group_norm_batch)
defbatch(group_norm_backward_p, _group_norm_backward_batch)
