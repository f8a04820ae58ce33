"""The softmax family: softmax, log_softmax and logsumexp.

NOTE: these are fused primitives on purpose (the listed exceptions to "compose
everything"): one kernel subtracts the running max for numerical stability and
reuses its buffers in place, which makes them several times faster than the
composition, and their VJPs are short formulas in ember ops (so double backward
works). float16 / bfloat16 compute in float32 and round once.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor
from .._view import wrap_dim
from ._common import to_float, type_name, write_out
from .reduce import _LOW, _reduce_meta, c_order, expand_back, norm_dims
from .registry import Primitive, apply, defvjp


def _work(a):
    """`a` as the array a kernel computes in: float32 for float16 / bfloat16."""
    return a.astype(np.float32) if a.dtype in _LOW else a


def _shifted(a, dim):
    """A fresh `a - max(a, dim)`, computed in float32 for low precision inputs."""
    w = _work(a)
    m = np.max(w, axis=dim, keepdims=True)
    return np.subtract(w, m, dtype=w.dtype, order="C")


# --- softmax / log_softmax -------------------------------------------------------------

def _softmax_kernel(a, *, dim):
    if a.ndim == 0:
        return np.ones_like(a)
    if a.shape[dim] == 0:
        return np.empty_like(a)
    out = _shifted(a, dim)
    np.exp(out, out=out)
    total = np.sum(out, axis=dim, keepdims=True)
    np.divide(out, total, out=out)
    return out.astype(a.dtype) if a.dtype in _LOW else out


def _log_softmax_kernel(a, *, dim):
    if a.ndim == 0:
        return np.zeros_like(a)
    if a.shape[dim] == 0:
        return np.empty_like(a)
    out = _shifted(a, dim)
    tmp = np.exp(out)
    total = np.sum(tmp, axis=dim, keepdims=True)
    np.log(total, out=total)
    np.subtract(out, total, out=out)
    return out.astype(a.dtype) if a.dtype in _LOW else out


def _softmax_meta(x, *, dim):
    return x._shape, x._dtype


softmax_p = Primitive("softmax", c_order(_softmax_kernel), _softmax_meta,
                      grad_name="SoftmaxBackward0")
defvjp(softmax_p, lambda g, out, x, *, dim:
       out * (g - (g * out).sum(dim, keepdim=True)), reads=((),), save_output=True)

log_softmax_p = Primitive("log_softmax", c_order(_log_softmax_kernel), _softmax_meta,
                          grad_name="LogSoftmaxBackward0")
defvjp(log_softmax_p, lambda g, out, x, *, dim:
       g - out.exp() * g.sum(dim, keepdim=True), reads=((),), save_output=True)


def implicit_softmax_dim(name: str, ndim: int) -> int:
    """PyTorch's legacy choice of dim when `dim=None` (with its deprecation warning)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_like(prim, name, kernel_name):
    def op(input: Tensor, dim: int | None = None, dtype=None, *, out=None,
           _stacklevel: int = 3) -> Tensor:
        if dim is None:
            dim = implicit_softmax_dim(name, input.ndim)
        x = input if dtype is None or input._dtype is dtype else input.to(dtype)
        if x._dtype._kind != 2:
            suffix = "_lastdim" if x.ndim == 0 or wrap_dim(dim, max(x.ndim, 1)) == x.ndim - 1 \
                else ""
            raise NotImplementedError(
                f'"{kernel_name}{suffix}_kernel_impl" not implemented for '
                f"'{type_name(x._dtype)}'")
        d = wrap_dim(dim, max(x.ndim, 1))
        return write_out(apply(prim, x, dim=d), out)

    op.__name__ = name
    return op


softmax = _softmax_like(softmax_p, "softmax", "softmax")
softmax.__doc__ = "exp(x) / sum(exp(x)) along `dim`, stable (the max is subtracted first)."
log_softmax = _softmax_like(log_softmax_p, "log_softmax", "log_softmax")
log_softmax.__doc__ = "x - logsumexp(x) along `dim`, stable; `dtype=` casts the input first."


# --- logsumexp ---------------------------------------------------------------------------

def _logsumexp_kernel(a, *, dims, keepdim):
    if a.ndim == 0:
        return _logsumexp_kernel(a.reshape(1), dims=(0,), keepdim=False).reshape(())
    axis = dims
    w = _work(a)
    if w.size == 0:
        with np.errstate(divide="ignore"):
            r = np.log(np.sum(np.exp(w), axis=axis, keepdims=keepdim))
        return np.asarray(r, dtype=a.dtype)
    real = w.real if w.dtype.kind == "c" else w
    m = np.max(real, axis=axis, keepdims=True)
    # NOTE: an infinite max is not subtracted (inf - inf would be NaN), as in PyTorch.
    m = np.where(np.isfinite(m), m, 0).astype(real.dtype)
    shifted = np.subtract(w, m)
    np.exp(shifted, out=shifted)
    total = np.sum(shifted, axis=axis, keepdims=True)
    np.log(total, out=total)
    total += m
    if not keepdim:
        total = total.reshape([n for i, n in enumerate(a.shape) if i not in dims])
    return total.astype(a.dtype) if a.dtype in _LOW else total


def _logsumexp_vjp(g, out, x, *, dims, keepdim):
    shape = x._shape
    w = (x - expand_back(out, shape, dims, keepdim)).exp()
    return expand_back(g, shape, dims, keepdim) * (w.conj() if x._dtype.is_complex else w)


logsumexp_p = Primitive("logsumexp", c_order(_logsumexp_kernel), _reduce_meta)
defvjp(logsumexp_p, _logsumexp_vjp, save_output=True)


def logsumexp(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    """log(sum(exp(x))) over `dim`, stable; integer inputs compute in the default dtype."""
    x = to_float(input)
    return write_out(apply(logsumexp_p, x, dims=norm_dims(dim, x.ndim), keepdim=keepdim), out)


TENSOR_METHODS = {"softmax": softmax, "log_softmax": log_softmax, "logsumexp": logsumexp}

__all__ = ["softmax", "log_softmax", "logsumexp"]
