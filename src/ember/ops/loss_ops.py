"""Pointwise losses as fused primitives: mse, smooth L1, Huber, BCE, BCE with logits,
soft margin.

# NOTE: these are listed exceptions to "composites get no VJP": one primitive per loss
# computes the elementwise loss and its reduction in one pass (no chain of temporaries
# and graph nodes), and the result's grad_fn is the node PyTorch shows
# (`MseLossBackward0` ...), which programs print with every loss.

Each kernel returns the reduced loss for reduction "mean" / "sum", or the elementwise
loss for "none"; each VJP is written with ember ops, so double backward works.
"""

from __future__ import annotations

import numpy as np

from .._view import broadcast_shapes, numel
from ._common import broadcast_errors
from .registry import Primitive, apply, defvjp


def _reduce_array(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return loss
    total = loss.sum(dtype=np.float32 if loss.dtype.itemsize == 2 else loss.dtype)
    if reduction == "mean":
        total = total / max(loss.size, 1) if loss.size else np.array(np.nan, loss.dtype)
    return np.asarray(total).astype(loss.dtype)


def _loss_meta(a, b, *, reduction, **_):
    shape = broadcast_shapes(a._shape, b._shape)
    return (() if reduction != "none" else shape), a._dtype


def _scale(g, a, b, reduction: str):
    """The incoming gradient spread over the elements the loss reduced."""
    if reduction == "mean":
        n = numel(broadcast_shapes(a._shape, b._shape))
        return g / n if n else g
    return g


def _loss_primitive(name: str, elementwise, grad_name: str) -> Primitive:
    @broadcast_errors
    def kernel(a, b, *, reduction, **params):
        return _reduce_array(np.asarray(elementwise(a, b, **params)), reduction)

    return Primitive(name, kernel, _loss_meta, grad_name=grad_name)


# --- mse -----------------------------------------------------------------------------

def _mse(a, b):
    # NOTE: asarray: NumPy returns a scalar, not an array, for two 0-d operands
    d = np.asarray(np.subtract(a, b))
    np.multiply(d, d, out=d)
    return d


mse_loss_p = _loss_primitive("mse_loss", _mse, "MseLossBackward0")


def _mse_grad(g, out, a, b, *, reduction):
    return 2 * _scale(g, a, b, reduction) * (a - b)


defvjp(mse_loss_p, _mse_grad, lambda g, out, a, b, *, reduction: -_mse_grad(g, out, a, b,
                                                                           reduction=reduction))


# --- smooth L1 and Huber ----------------------------------------------------------------

def _smooth_l1(a, b, *, beta):
    d = np.abs(np.subtract(a, b))
    return np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta).astype(d.dtype)


def _smooth_l1_grad(g, out, a, b, *, reduction, beta):
    from .ternary import where

    d = a - b
    slope = where(d.abs() < beta, d / beta, d.sign())
    return _scale(g, a, b, reduction) * slope


smooth_l1_loss_p = _loss_primitive("smooth_l1_loss", _smooth_l1, "SmoothL1LossBackward0")
defvjp(smooth_l1_loss_p, _smooth_l1_grad,
       lambda g, out, a, b, **kw: -_smooth_l1_grad(g, out, a, b, **kw))


def _huber(a, b, *, delta):
    d = np.abs(np.subtract(a, b))
    return np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)).astype(d.dtype)


def _huber_grad(g, out, a, b, *, reduction, delta):
    d = a - b
    return _scale(g, a, b, reduction) * d.clamp(-delta, delta)


huber_loss_p = _loss_primitive("huber_loss", _huber, "HuberLossBackward0")
defvjp(huber_loss_p, _huber_grad, lambda g, out, a, b, **kw: -_huber_grad(g, out, a, b, **kw))


# --- binary cross-entropy -------------------------------------------------------------------

def _bce(x, t):
    # NOTE: each log is clamped at -100, as PyTorch does, so x = 0 or 1 stays finite.
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(x), -100)
        log_1mx = np.maximum(np.log1p(-x), -100)
    return -(t * log_x + (1 - t) * log_1mx)


def _bce_grad_input(g, out, x, t, *, reduction):
    # d/dx = (x - t) / (x (1 - x)), with x(1-x) floored like PyTorch's EPSILON (1e-12)
    denom = (x * (1 - x)).clamp_min(1e-12)
    return _scale(g, x, t, reduction) * (x - t) / denom


def _bce_grad_target(g, out, x, t, *, reduction):
    log_x = x.log().clamp_min(-100)
    log_1mx = (1 - x).log().clamp_min(-100)
    return _scale(g, x, t, reduction) * (log_1mx - log_x)


bce_p = _loss_primitive("binary_cross_entropy", _bce, "BinaryCrossEntropyBackward0")
defvjp(bce_p, _bce_grad_input, _bce_grad_target)


def _bce_logits(x, t):
    # (1 - t) x + log(1 + exp(-x)), written so exp never overflows
    return (1 - t) * x + np.logaddexp(0, -x)


def _bce_logits_grad_input(g, out, x, t, *, reduction):
    return _scale(g, x, t, reduction) * (x.sigmoid() - t)


def _bce_logits_grad_target(g, out, x, t, *, reduction):
    return -_scale(g, x, t, reduction) * x


bce_logits_p = _loss_primitive("binary_cross_entropy_with_logits", _bce_logits,
                               "BinaryCrossEntropyWithLogitsBackward0")
defvjp(bce_logits_p, _bce_logits_grad_input, _bce_logits_grad_target)


def _soft_margin(x, t):
    return np.logaddexp(0, -t * x)


def _soft_margin_grad_input(g, out, x, t, *, reduction):
    return _scale(g, x, t, reduction) * -t * (-t * x).sigmoid()


soft_margin_p = _loss_primitive("soft_margin_loss", _soft_margin, "SoftMarginLossBackward0")
# NOTE: not differentiable in the target, as in PyTorch.
defvjp(soft_margin_p, _soft_margin_grad_input, None)


def pointwise_loss(prim: Primitive, input, target, reduction: str, **params):
    """Run one of the loss primitives above (the public functions live in nn.functional)."""
    return apply(prim, input, target, reduction=reduction, **params)


TENSOR_METHODS: dict = {}

__all__: list = []
