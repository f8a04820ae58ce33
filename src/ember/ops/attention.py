"""Scaled dot-product attention as one fused primitive, and its backward.

# NOTE: a listed exception (`_core/fused.py`), for 4-D inputs without dropout, where
# PyTorch's CPU build runs its flash kernel (ScaledDotProductFlashAttentionForCpuBackward0;
# other calls are the composite in nn.functional). One kernel: scores, mask, a row
# softmax, the weighted sum; it keeps the attention weights for the backward, one kernel
# too (ember ops under create_graph).
"""

from __future__ import annotations

import numpy as np

from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from .creation import zeros_like
from .registry import Primitive, apply, defvjp_joint, nondifferentiable

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
    if causal:
        np.add(scores, _causal_bias(q.shape[-2], k.shape[-2], scores.dtype), out=scores)
    elif mask is not None and mask.dtype == np.bool_:
        scores = np.where(mask, scores, -np.inf).astype(scores.dtype, copy=False)
    elif mask is not None:
        np.add(scores, mask, out=scores, casting="unsafe")
    weights = softmax_p.kernel(scores, dim=scores.ndim - 1)
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
nondifferentiable(attention_backward_p)  # used only when no graph of the backward is built


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
