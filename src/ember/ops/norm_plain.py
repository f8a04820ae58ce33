"""Normalisations run as their kernels on arrays for a plain call (batch norm in evaluation,
group norm's fused kernel, rms norm, F.normalize's division): one where no
graph, transform or saved-tensor hook could see the composite's ops (nothing wants a
gradient, no interpreter is pushed), with a row-major float32 / float64 input on the CPU
and operands of its dtype. A frozen batch norm (only the input wants a gradient) gets its
per-channel scale and shift that way, and records its one op on the input.

Each function calls the kernels the composite's ops call, in its order and with its
arguments, so its results are the composite's bits and layout; the composite's ~10 op
dispatches are its per-call cost at small sizes (batch norm in evaluation: ~95 -> ~25 us).
None means: run the composite.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import _cpu, run_quiet
from .._tensor import Tensor, _wrap
from .binary import add_fn, div_fn, mul_fn
from .group_norm import group_norm_p
from .layer_norm import layer_norm_p
from .one_node import plain_call, plain_eager
from .reduce import MEAN_DIMS, reduce_p
from .ternary import addcmul_fn, clamp_min_fn
from .unary_math import rsqrt_p

_grad_mode = grad_mode.state
_PLAIN = (dt.float32, dt.float64)


def _arrays(x: Tensor, *others: Tensor | None) -> list | None:
    """The operands' arrays for a plain call, or None where the composite runs."""
    d = x._dtype
    if d not in _PLAIN or any(t is not None and t._dtype is not d for t in others) or \
            not plain_call(x, *others) or not plain_eager() or not x.is_contiguous():
        return None
    return [None if t is None else t._np if t._np is not None else t._array()
            for t in (x,) + others]


def _binary(fn, a, b):
    return fn.kernel(a, b)  # (as eager evaluation calls a member without other params)


def _mean(a, dims: tuple):
    return _cpu[reduce_p](a, fn=MEAN_DIMS, dims=dims, keepdim=True)


def _vectors(eps, *stats: Tensor | None) -> bool:
    """A float eps and one-dimensional statistics and affine (the shapes the composite's
    per-channel ops keep as they are)."""
    return eps.__class__ is float and all(t is None or len(t._shape) == 1 for t in stats)


def _scale_shift(mean, var, weight, bias, eps: float):
    """scale = rsqrt(var + eps) [* weight], shift = fma(-mean, scale, bias) (or -mean *
    scale): batch norm's per-channel affine from running statistics
    (nn/_functional/layers.batch_norm)."""
    scale = rsqrt_p.kernel(add_fn.kernel(var, eps))
    if weight is not None:
        scale = mul_fn.kernel(scale, weight)
    shift = mul_fn.kernel(np.negative(mean), scale) if bias is None else \
        _cpu[addcmul_fn.family](bias, mean, scale, fn=addcmul_fn, value=-1)
    return scale, shift


def _batch_norm_eval(x, mean, var, weight, bias, eps: float):
    """out = fma(x, scale, shift) per channel."""
    scale, shift = _scale_shift(mean, var, weight, bias, eps)
    x3 = x.reshape(x.shape[0], x.shape[1], -1)
    # (the per-channel operands as dense as x: the C kernel's plain case, and the same
    # fused multiply-adds as on broadcast operands)
    full, by = np.empty(x3.shape, x.dtype), np.empty(x3.shape, x.dtype)
    full[...] = shift[:, None]
    by[...] = scale[:, None]
    return _cpu[addcmul_fn.family](full, x3, by, fn=addcmul_fn, value=1).reshape(x.shape)


def batch_norm_eval(x: Tensor, mean: Tensor, var: Tensor, weight: Tensor | None,
                    bias: Tensor | None, eps: float) -> Tensor | None:
    """Evaluation-mode batch norm (checked arguments) for a plain call, or None."""
    arrays = _arrays(x, mean, var, weight, bias) if _vectors(eps, mean, var, weight, bias) \
        else None
    if arrays is None:
        return None
    return _wrap(run_quiet(_batch_norm_eval, *arrays, eps))


def batch_norm_eval_affine(x: Tensor, mean: Tensor, var: Tensor, weight: Tensor | None,
                           bias: Tensor | None, eps: float) -> tuple | None:
    """(shift, scale) of evaluation-mode batch norm as constant tensors shaped (1, C, 1, ...)
    where only the input wants a gradient (a frozen batch norm in a network being trained):
    the composite then records its one op on the input, addcmul(shift, input, scale). None
    where the per-channel ops must run as ops."""
    if not _vectors(eps, mean, var, weight, bias) or x._dtype is not mean._dtype:
        return None
    arrays = _arrays(mean, var, weight, bias)
    if arrays is None:
        return None
    view = (1, -1) + (1,) * (x.ndim - 2)
    scale, shift = run_quiet(_scale_shift, *arrays, eps)
    return _wrap(shift.reshape(view)), _wrap(scale.reshape(view))


def _group_norm(x, num_groups: int, weight, bias, eps: float):
    """Group norm's fused kernel (ops/group_norm.py), or for one value per channel and
    sample its groups as rows of layer norm's kernel, then * weight and + bias: the kernels
    of nn/_functional/layers._group_norm's two paths, the same bits."""
    if x.size == x.shape[0] * x.shape[1]:
        g = x.reshape(x.shape[0], num_groups, -1)
        out = _cpu[layer_norm_p](g, None, None, k=1, eps=eps)[0].reshape(x.shape)
        view = (-1,) + (1,) * (x.ndim - 2)
        if weight is not None:
            out = _binary(mul_fn, out, weight.reshape(view))
        if bias is not None:
            out = _binary(add_fn, out, bias.reshape(view))
        return out
    return _cpu[group_norm_p](x, weight, bias, groups=num_groups, eps=eps)[0]


def group_norm(x: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None,
               eps: float) -> Tensor | None:
    """Group norm (checked arguments) for a plain call of a non-empty input, or None."""
    arrays = _arrays(x, weight, bias) if x.numel() and num_groups.__class__ is int and \
        eps.__class__ is float else None
    if arrays is None:
        return None
    a, w, b = arrays
    return _wrap(run_quiet(_group_norm, a, num_groups, w, b, eps))


def _rms_norm(x, k: int, weight, eps: float):
    """x * rsqrt(mean(x^2 over the trailing k dims) + eps) [* weight]
    (nn/_functional/layers._rms_norm)."""
    ms = _mean(_binary(mul_fn, x, x), tuple(range(x.ndim - k, x.ndim)))
    out = _binary(mul_fn, x, rsqrt_p.kernel(add_fn.kernel(ms, eps)))
    return out if weight is None else _binary(mul_fn, out, weight)


def rms_norm(x: Tensor, k: int, weight: Tensor | None, eps: float) -> Tensor | None:
    """rms norm over the trailing `k` dims (checked arguments; `eps` given, or the dtype's)
    for a plain call of a non-empty input, or None."""
    arrays = _arrays(x, weight) if x.numel() and eps.__class__ is float else None
    if arrays is None:
        return None
    return _wrap(run_quiet(_rms_norm, arrays[0], k, arrays[1], eps))


def normalized(x: Tensor, norm: Tensor, eps: float) -> Tensor | None:
    """x / max(norm, eps), `norm` broadcast along its kept dim: F.normalize's steps after
    the norm for a plain call of a non-empty input, or None."""
    arrays = _arrays(x, norm) if x.numel() and eps.__class__ is float else None
    if arrays is None:
        return None
    return _wrap(run_quiet(_normalized, arrays[0], arrays[1], eps))


def _normalized(x, norm, eps: float):
    denom = clamp_min_fn.kernel(norm, eps, None)
    return _binary(div_fn, x, np.broadcast_to(denom, x.shape))  # (expand_as: a view)
