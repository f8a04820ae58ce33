"""Gradient clipping by total norm or by value (in place on `.grad`)."""

from __future__ import annotations

import math
import warnings

import ember as E

from ..._tensor import Tensor
from ..._user_warnings import user_stacklevel

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _grads(parameters) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def _vector_norm(x: Tensor, p: float) -> Tensor:
    if hasattr(E, "linalg") and hasattr(E.linalg, "vector_norm"):
        return E.linalg.vector_norm(x, p)
    a = x.abs()
    if p == math.inf:
        return a.max()
    return a.pow(p).sum().pow(1.0 / p)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The norm of all `tensors` together, as if concatenated into one vector."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return E.tensor(0.0)
    with E.no_grad():
        norms = [_vector_norm(t, norm_type) for t in tensors]
        total = _vector_norm(E.stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale gradients by min(1, max_norm / (total_norm + 1e-6))."""
    grads = _grads(parameters)
    if not grads:
        return
    with E.no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Rescale gradients so that their total `norm_type` norm is at most `max_norm`.

    Returns the total norm before clipping.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    grads = _grads(parameters)
    if not grads:
        return E.tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    grads = _grads(parameters)
    if not grads:
        # NOTE: PyTorch groups the gradients by device before clamping, and its grouping
        # refuses an empty list (clip_grad_norm_ instead returns a zero norm)
        raise RuntimeError("Expected !nested_tensorlist[0].empty() to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    with E.no_grad():
        for g in grads:
            g.clamp_(min=-clip_value, max=clip_value)


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The old name of `clip_grad_norm_`: PyTorch still answers to it, with a FutureWarning
    (in its words, which a program catching the warning prints)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=user_stacklevel())
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
