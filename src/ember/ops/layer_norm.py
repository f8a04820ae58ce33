"""Layer normalisation as one fused primitive, and its backward.

# NOTE: a listed exception (`_core/fused.py`): one kernel normalises the rows (the
# composite took nine ops and as many fresh buffers) and returns, beside the result, the
# normalised rows and their 1/std for the backward (PyTorch's native_layer_norm keeps mean
# and 1/std). The backward is one fused kernel when no graph of it is wanted, the same
# formula in ember ops otherwise; both take the gradients that double backward sends to
# those two outputs.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from ._common import row_sums
from .creation import zeros_like
from .registry import Primitive, apply, defvjp_joint, nondifferentiable

_grad_mode = grad_mode.state

def _rows(a, k: int):
    """`a` as a matrix with its trailing k dims flattened into each row."""
    lead, row = a.shape[:a.ndim - k], a.shape[a.ndim - k:]
    return a.reshape(math.prod(lead), math.prod(row))


def _layer_norm_kernel(x, weight, bias, *, k, eps):
    rows = _rows(x, k)
    n = rows.shape[1]
    mean = row_sums(rows)
    np.divide(mean, n, out=mean)
    xhat = np.subtract(rows, mean)
    var = row_sums(np.square(xhat))
    np.divide(var, n, out=var)
    rstd = np.divide(1, np.sqrt(np.add(var, eps, out=var), out=var), out=var)
    np.multiply(xhat, rstd, out=xhat)
    out = xhat if weight is None else np.multiply(xhat, weight.reshape(-1))
    out = np.add(out, bias.reshape(-1), out=None if out is xhat else out) \
        if bias is not None else (out.copy() if out is xhat else out)
    stat = x.shape[:x.ndim - k] + (1,) * k
    return out.reshape(x.shape), xhat.reshape(x.shape), rstd.reshape(stat)


def _layer_norm_meta(x, weight, bias, *, k, eps):
    stat = tuple(x._shape[:len(x._shape) - k]) + (1,) * k
    return (x._shape, x._dtype), (x._shape, x._dtype), (stat, x._dtype)


def _layer_norm_backward_kernel(g, xhat, rstd, weight, *, k):
    """(dx, dweight, dbias): dx = rstd (gw - mean(gw) - xhat mean(gw xhat)) per row with
    gw = g * weight; dweight and dbias sum g * xhat and g over the rows."""
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


layer_norm_p = Primitive("native_layer_norm", _layer_norm_kernel, _layer_norm_meta,
                         grad_name="NativeLayerNormBackward0", n_outputs=3)
layer_norm_backward_p = Primitive(
    "native_layer_norm_backward", _layer_norm_backward_kernel,
    lambda g, xhat, rstd, weight, *, k: ((xhat._shape, xhat._dtype),) + (
        (tuple(xhat._shape[len(xhat._shape) - k:]), xhat._dtype),) * 2, n_outputs=3)
nondifferentiable(layer_norm_backward_p)  # used only when no graph of the backward is built


def _layer_norm_vjp(g_all, out, x, weight, bias, *, needs, k, eps):
    g, g_xhat, g_rstd = g_all
    _, xhat, rstd = out
    if g is None:  # (under double backward only xhat or 1/std may have been reached)
        g = zeros_like(xhat)
    # xhat and 1/std get cotangents only under double backward, where this rule's own
    # graph used them; otherwise they arrive as None.
    twice = g_xhat is not None or g_rstd is not None
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


defvjp_joint(layer_norm_p, _layer_norm_vjp, (True, True, True), reads=((1,), (), ()),
             save_output=True)


def layer_norm_prim(x: Tensor, weight, bias, k: int, eps: float) -> Tensor:
    """Normalise `x` over its trailing `k` dims, then scale and shift."""
    return apply(layer_norm_p, x, weight, bias, k=k, eps=float(eps))[0]
