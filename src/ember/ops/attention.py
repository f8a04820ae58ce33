"""Scaled dot-product attention as one fused primitive, and its backward.

# NOTE: a listed exception (`_core/fused.py`), for 4-D inputs without dropout, where
# PyTorch's CPU build runs its flash kernel (ScaledDotProductFlashAttentionForCpuBackward0;
# other calls are the composite in nn.functional). One kernel: scores, mask, a row
# softmax (zero weights for a row with every score masked), the weighted sum; it keeps the
# attention weights for the backward, one kernel too (ember ops under create_graph).
"""

from __future__ import annotations

import numpy as np

from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from ._batching import batch_size, batched, front
from .creation import zeros_like
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    defjvp,
    defvjp_joint,
)

_grad_mode = grad_mode.state

_CAUSAL: dict = {}


def _causal_bias(n_rows: int, n_cols: int, dtype):
    """0 on and below the diagonal, -inf above it (PyTorch's top-left causal mask)."""
    key = (n_rows, n_cols, dtype)
    bias = _CAUSAL.get(key)
    if bias is None:
        bias = np.where(np.tri(n_rows, n_cols, dtype=bool), 0, -np.inf).astype(dtype)
        _CAUSAL[key] = bias
    return bias


def _attention_kernel(q, k, v, mask, *, scale, causal):
    from ._parallel import blas
    from .softmax import softmax_p

    scores = blas(np.matmul, q, k.swapaxes(-1, -2), 2 * q.shape[-2] * q.shape[-1] * k.shape[-2])
    np.multiply(scores, scores.dtype.type(scale), out=scores)
    if causal:  # (with a mask too, both apply)
        np.add(scores, _causal_bias(q.shape[-2], k.shape[-2], scores.dtype), out=scores)
    if mask is not None and mask.dtype == np.bool_:
        scores = np.where(mask, scores, -np.inf).astype(scores.dtype, copy=False)
    elif mask is not None:
        np.add(scores, mask, out=scores, casting="unsafe")
    weights = softmax_p.kernel(scores, dim=scores.ndim - 1)
    # NOTE: a row whose every score is masked (-inf) attends to nothing: PyTorch's kernels
    # give it zero weights, so a zero output and zero gradients, where a softmax gives NaN.
    masked = np.max(scores, axis=-1, keepdims=True) == -np.inf
    if masked.any():
        weights = np.where(masked, 0, weights).astype(weights.dtype, copy=False)
    out = blas(np.matmul, weights, v, 2 * q.shape[-2] * k.shape[-2] * v.shape[-1])
    return out, weights


def _attention_meta(q, k, v, mask, *, scale, causal):
    lead = tuple(q._shape[:-1])
    return (lead + (v._shape[-1],), q._dtype), (lead + (k._shape[-2],), q._dtype)


def _attention_backward_kernel(g, g_weights, q, k, v, weights, *, scale):
    from ._parallel import blas
    from .softmax import softmax_backward_p

    L, S, E, Ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    dv = blas(np.matmul, weights.swapaxes(-1, -2), g, 2 * S * L * Ev)
    dw = blas(np.matmul, g, v.swapaxes(-1, -2), 2 * L * Ev * S)
    if g_weights is not None:
        np.add(dw, g_weights, out=dw)
    ds = softmax_backward_p.kernel(dw, weights, dim=dw.ndim - 1)
    np.multiply(ds, ds.dtype.type(scale), out=ds)
    dq = blas(np.matmul, ds, k, 2 * L * S * E)
    dk = blas(np.matmul, ds.swapaxes(-1, -2), q, 2 * S * L * E)
    return dq, dk, dv


attention_p = Primitive("scaled_dot_product_attention", _attention_kernel, _attention_meta,
                        grad_name="ScaledDotProductFlashAttentionForCpuBackward0", n_outputs=2)
attention_backward_p = Primitive(
    "scaled_dot_product_attention_backward", _attention_backward_kernel,
    lambda g, gw, q, k, v, w, *, scale: ((q._shape, q._dtype), (k._shape, k._dtype),
                                         (v._shape, v._dtype)), n_outputs=3)
# Used when no graph of the backward is built, which forward over reverse (`jvp(grad(f))`)
# does too: so it has derivatives of its own (below), in each input, the weights taken as
# given (they carry the forward's tangents and gradients).


def _attention_vjp(g, out, q, k, v, mask, *, needs, scale, causal):
    g_out, g_weights = g  # (g_weights is None but under double backward)
    weights = out[1]
    if g_out is None:
        g_out = zeros_like(out[0])
    if not _grad_mode.enabled:
        return (*apply(attention_backward_p, g_out, g_weights, q, k, v, weights, scale=scale),
                None)
    dw = g_out @ v.mT
    if g_weights is not None:
        dw = dw + g_weights
    ds = weights * (dw - (dw * weights).sum(-1, keepdim=True)) * scale
    return ds @ k, ds.mT @ q, weights.mT @ g_out, None


defvjp_joint(attention_p, _attention_vjp, (True, True, True, False),
             reads=((0, 1, 2),) * 3 + ((),), save_output=True)


def attention_prim(q: Tensor, k: Tensor, v: Tensor, mask, scale: float, causal: bool):
    """softmax(q k^T * scale + mask) v for 4-D q, k, v (no dropout)."""
    return apply(attention_p, q, k, v, mask, scale=float(scale), causal=bool(causal))[0]


# --- forward mode and vmap ------------------------------------------------------------------

def _attention_jvp(primals, tangents, out, *, scale, causal):
    """d scores = scale (dq k^T + q dk^T) + d mask; d weights = w (ds - sum(w ds));
    d out = d weights v + w dv."""
    q, k, v, _ = primals
    tq, tk, tv, tm = tangents
    _, weights = out
    ts = None
    for t in (None if tq is None else tq @ k.mT * scale,
              None if tk is None else q @ tk.mT * scale, tm):
        if t is not None:
            ts = t if ts is None else ts + t
    t_out = t_weights = None
    if ts is not None:
        t_weights = weights * (ts - (weights * ts).sum(-1, keepdim=True))
        t_out = t_weights @ v
    if tv is not None:
        u = weights @ tv
        t_out = u if t_out is None else t_out + u
    return t_out, t_weights


def _attention_batch(args, dims, *, scale, causal):
    """One more leading dim: the kernel's products and softmax run over any leading dims,
    so q, k and v get the batch in front (an unbatched one expanded) and a batched mask
    size-1 dims up to rank 4 after it."""
    q, k, v, mask = args
    size = batch_size(args, dims)
    q, k, v = (batched(a, d, size) for a, d in zip(args[:3], dims[:3]))
    if dims[3] is not None:
        mask = front(mask, dims[3])
        mask = mask.reshape((size,) + (1,) * (5 - mask.ndim) + tuple(mask._shape[1:]))
    return bind(attention_p, q, k, v, mask, scale=scale, causal=causal), (0, 0)


def _attention_backward_batch(args, dims, *, scale):
    size = batch_size(args, dims)
    full = [a if a is None else batched(a, d, size) for a, d in zip(args, dims)]
    return bind(attention_backward_p, *full, scale=scale), (0, 0, 0)


def _plus(a, b):
    return b if a is None else a if b is None else a + b


def _softmax_back(w, d):
    """w (d - rowsum(w d)): softmax's backward, and (being symmetric) its transpose."""
    return w * (d - (w * d).sum(-1, keepdim=True))


def _attention_backward_jvp(primals, tangents, out, *, scale):
    """The kernel's formula differentiated in each input: with w the weights,
    dw = g v^T + g_w, ds = scale w (dw - rowsum(w dw)), dq = ds k, dk = ds^T q, dv = w^T g."""
    g, gw, q, k, v, w = primals
    tg, tgw, tq, tk, tv, tw = tangents
    dq, dk, dv = out
    dw = g @ v.mT if gw is None else g @ v.mT + gw
    ds = _softmax_back(w, dw) * scale
    t_dw = _plus(_plus(None if tg is None else tg @ v.mT, None if tv is None else g @ tv.mT),
                 tgw)
    t_ds = None if t_dw is None else _softmax_back(w, t_dw)
    if tw is not None:  # the weights' own tangent, through w (dw - rowsum(w dw))
        t_ds = _plus(t_ds, tw * (dw - (w * dw).sum(-1, keepdim=True))
                     - w * (tw * dw).sum(-1, keepdim=True))
    t_ds = None if t_ds is None else t_ds * scale
    t_dq = _plus(None if t_ds is None else t_ds @ k, None if tk is None else ds @ tk)
    t_dk = _plus(None if t_ds is None else t_ds.mT @ q, None if tq is None else ds.mT @ tq)
    t_dv = _plus(None if tw is None else tw.mT @ g, None if tg is None else w.mT @ tg)
    return t_dq, t_dk, t_dv


def _attention_backward_vjp(h, out, g, gw, q, k, v, w, *, needs, scale):
    """The transpose of `_attention_backward_jvp`, for cotangents (hq, hk, hv)."""
    hq, hk, hv = h
    dw = g @ v.mT if gw is None else g @ v.mT + gw
    ds = _softmax_back(w, dw) * scale
    d_ds = _plus(None if hq is None else hq @ k.mT, None if hk is None else q @ hk.mT)
    d_g = d_w = d_q = d_k = d_v = d_dw = None
    if hv is not None:  # dv = w^T g
        d_w, d_g = g @ hv.mT, w @ hv
    if d_ds is not None:
        hs = d_ds * scale
        d_dw = _softmax_back(w, hs)
        d_w = _plus(d_w, hs * (dw - (w * dw).sum(-1, keepdim=True))
                    - dw * (hs * w).sum(-1, keepdim=True))
        d_g = _plus(d_g, d_dw @ v)
        d_v = d_dw.mT @ g
    if hq is not None:
        d_k = ds.mT @ hq
    if hk is not None:
        d_q = ds @ hk
    return d_g, (None if gw is None else d_dw), d_q, d_k, d_v, d_w


defjvp(attention_p, _attention_jvp)
defjvp(attention_backward_p, _attention_backward_jvp)
defvjp_joint(attention_backward_p, _attention_backward_vjp, (True,) * 6)
defbatch(attention_p, _attention_batch)
defbatch(attention_backward_p, _attention_backward_batch)
