"""Layer normalisation of float16 / bfloat16 inputs, as PyTorch's CPU kernel computes it: the
kernels `ops/layer_norm.py`'s primitives run for those dtypes.

# NOTE: the float32 layer norm rounded at the end gives PyTorch's forward, but not its
# backward, which users see in the weights of a model trained with `.to(torch.bfloat16)`
# (and in layer norms under CPU autocast, which runs them in the low dtype). PyTorch's
# kernel, on one thread (the compat programs' setting):
# - keeps the mean and 1/std in the dtype of the weight (the input's when there is none);
# - sums dweight and dbias row by row into a buffer of the input's low dtype, each add done
#   in float32 and rounded back (so the sums drift as the low dtype's precision allows);
# - takes dx per row in float32 from those rounded statistics, rounded once.
# The forward's second output holds xhat rounded to the input's dtype (for the generic
# rules: forward mode, vmap, double backward), the third 1/std in the statistics' dtype;
# the backward reads the input itself and takes its mean again, as the forward took it.
"""

from __future__ import annotations

import numpy as np

from ._common import row_sums

_F32 = np.float32


def is_low(a) -> bool:
    """Whether array `a` is float16 / bfloat16 (the dtypes this module's kernels are for)."""
    return a.dtype.name in ("float16", "bfloat16")


def stat_dtype(x, weight):
    """The dtype of PyTorch's mean and 1/std: the weight's if float32, else the input's."""
    return weight.dtype if weight is not None and weight.dtype == _F32 else x.dtype


def _rows(a, k: int):
    lead, row = a.shape[:a.ndim - k], a.shape[a.ndim - k:]
    return a.reshape(int(np.prod(lead)), int(np.prod(row)))


def _mean(rows32):
    mean = row_sums(rows32)
    np.divide(mean, _F32(rows32.shape[1]), out=mean)
    return mean


def low_forward(kernel, x, weight, bias, *, k, eps):
    """(out, xhat, 1/std) for low-precision `x`: `kernel` (the float32 layer-norm kernel) on
    float32 copies, out and xhat rounded to x's dtype, 1/std to the statistics' dtype."""
    f = [None if a is None else a.astype(_F32) for a in (x, weight, bias)]
    out, xhat, rstd = kernel(*f, k=k, eps=eps)
    return out.astype(x.dtype), xhat.astype(x.dtype), rstd.astype(stat_dtype(x, weight))


def low_backward(g, x, rstd, weight, *, k):
    """(dx, dweight, dbias) of PyTorch's reduced-precision kernel (see the module note)."""
    low = x.dtype
    xs, gs = _rows(x, k).astype(_F32), _rows(g, k).astype(_F32)
    n = xs.shape[1]
    stat_t = rstd.dtype
    m = _mean(xs).astype(stat_t).astype(_F32)  # the forward's mean, as PyTorch keeps it
    a = rstd.reshape(-1, 1).astype(_F32)
    w = None if weight is None else weight.reshape(-1).astype(_F32)
    gw = gs if w is None else gs * w
    ds = np.add.reduce(gw * xs, axis=1, keepdims=True, dtype=np.float64).astype(_F32)
    db = np.add.reduce(gw, axis=1, keepdims=True, dtype=np.float64).astype(_F32)
    scale = _F32(1) / _F32(n)
    b = (db * m - ds) * a * a * a * scale
    c = -b * m - db * a * scale
    dx = ((a * gs if w is None else a * gs * w) + b * xs + c).astype(low)
    terms = gs * (a * xs + (-a * m))
    wbuf, bbuf = np.zeros(n, low), np.zeros(n, low)
    for i in range(xs.shape[0]):  # row by row, rounded to the low dtype after each add
        wbuf = (wbuf.astype(_F32) + terms[i]).astype(low)
        bbuf = (bbuf.astype(_F32) + gs[i]).astype(low)
    tail = x.shape[x.ndim - k:]
    return (dx.reshape(x.shape), wbuf.astype(stat_t).reshape(tail),
            bbuf.astype(stat_t).reshape(tail))


def low_vjp_graph(values, g, x, weight, bias, *, k, eps):
    """Under create_graph: the kernel's `values`, carrying the derivative of its formula in
    float32 ember ops (the statistics taken again from x, so a second derivative reaches
    x). The second derivative is then float32's, not PyTorch's chain of low-precision ops."""
    xs, gs = x.float(), g.float()
    dims = tuple(range(x.ndim - k, x.ndim))
    m = xs.mean(dims, keepdim=True)
    a = ((xs - m) * (xs - m)).mean(dims, keepdim=True).add(eps).rsqrt()
    gw = gs if weight is None else gs * weight.float()
    n = xs.numel() // max(a.numel(), 1)
    ds, db = (gw * xs).sum(dims, keepdim=True), gw.sum(dims, keepdim=True)
    b = (db * m - ds) * a * a * a / n
    rows = tuple(range(x.ndim - k))
    grads = (a * gw + b * xs - b * m - db * a / n,
             None if weight is None else (gs * (a * xs - a * m)).sum(rows),
             None if bias is None else gs.sum(rows))
    return tuple(None if f is None else v + (f - f.detach()).to(v.dtype)
                 for v, f in zip(values, grads))
