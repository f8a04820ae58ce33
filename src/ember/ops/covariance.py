"""Covariance and correlation of the rows of a 2-D input: cov (with frequency and analytic
weights and a correction) and corrcoef, composed from other ops as PyTorch's Correlation.cpp
composes them, with its checks and its warning in its words."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from ._arg_parser_text import need_tensor, need_tensors, wrong_type
from ._common import type_name
from .composite import complex as _complex


def _floating(x: Tensor) -> Tensor:
    """`x`, or `x` in the default float dtype when it holds integers or bools."""
    return x if x.dtype._kind >= 2 else x.to(dt.get_default_dtype())


def _check_cov_weights(kind: str, w: Tensor, n_obs: int) -> None:
    """PyTorch's checks of cov()'s frequency / analytic weights, in its order and words."""
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got "
                           f"{kind} with {w.ndim} dimensions")
    if kind == "fweights" and (w._dtype._kind != 1 or w._dtype is dt.bool_):
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights "
                           f"with {type_name(w._dtype)} dtype")
    if kind == "aweights" and not w._dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                           f"aweights with {type_name(w._dtype)} dtype")
    if w.numel() != n_obs:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n_obs}")
    if n_obs and not bool((w >= 0).all()):  # (NaN fails too)
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def _warn_cov_dof() -> None:
    warn_at_user("cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                 "the number of observations.")


def _cov_arg_types(input, correction, fweights, aweights) -> None:
    """PyTorch's parser words for cov's arguments: correction an int (no bool or float), the
    weights tensors (a list or an ndarray is refused, not converted)."""
    need_tensor(input, "cov")
    if isinstance(correction, bool) or not (hasattr(correction, "__index__") or (
            isinstance(correction, Tensor) and correction.numel() == 1
            and correction._dtype._kind == 1)):
        raise wrong_type("cov", "correction", None, "int", correction)
    need_tensors("cov", ("fweights", None, fweights), ("aweights", None, aweights),
                 optional=("fweights", "aweights"))


def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """Covariance of the rows (variables) of `input` over its columns (observations)."""
    _cov_arg_types(input, correction, fweights, aweights)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                         f"input with {input.ndim} dimensions")
    if input.dtype is dt.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    n_obs = input.numel() if input.ndim < 2 else input._shape[1]
    for kind, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is not None:
            _check_cov_weights(kind, wt, n_obs)
    x = _floating(input)
    if isinstance(aweights, Tensor):  # (float weights widen a narrower input)
        x = x.to(dt.promote_types(x.dtype, aweights.dtype))
    x = x.reshape(1, -1) if x.ndim < 2 else x
    w = None
    for weights in (fweights, aweights):
        if weights is not None:
            w = weights if w is None else w * weights
    if w is None:
        # (PyTorch sums the observations in the input's dtype, exactly for integers, and
        # divides by their count: not the mean of a float copy)
        rows = input.reshape(1, -1) if input.ndim < 2 else input
        avg = (rows.sum(1, keepdim=True) / n_obs).to(x.dtype)
        norm = n_obs - correction
    else:
        # (the weights keep their own dtype, as in PyTorch: an integer sum stays exact)
        w_sum = w.sum()
        if float(w_sum.detach().abs()) == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = (x * w).sum(1, keepdim=True) / w_sum
        if correction == 0 or aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
        # (too few observations: PyTorch divides by 0, never by a negative number)
        norm = norm.real if norm.dtype.is_complex else norm
        if bool(norm <= 0):
            _warn_cov_dof()
        norm = norm.clamp(min=0)
    if isinstance(norm, (int, float)) and norm <= 0:
        _warn_cov_dof()
    # NOTE: PyTorch's shortcut for one observation with one kind of weights zeroes the
    # caller's input in place; ember computes the same zeros without touching the input
    xm = x - avg
    c = (xm * w if w is not None else xm) @ xm.mT.conj()
    c = c / (norm if not isinstance(norm, (int, float)) else float(max(norm, 0)))
    return c.squeeze()  # (as PyTorch: one variable gives a 0-d result, SqueezeBackward0)


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of `input`."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = d.real.sqrt() if d.dtype.is_complex else d.sqrt()
    c = c / std[:, None] / std[None, :]
    if c.dtype.is_complex:  # (each part clipped on its own, as NumPy and PyTorch do)
        return _complex(c.real.clamp(-1, 1), c.imag.clamp(-1, 1))
    return c.clamp(-1, 1)


TENSOR_METHODS = {"cov": cov, "corrcoef": corrcoef}

__all__ = ["cov", "corrcoef"]
