"""Spread: var and std (members of the `reduce` family) and var_mean / std_mean (one
primitive with two outputs, one node: VarMeanBackward0 / StdMeanBackward0, as PyTorch).

PyTorch's CPU kernel accumulates float32 (and float16 / bfloat16) in double and rounds once
(Welford's update, the square root taken in double), so the kernels here work in float64 for
those dtypes: the float32 variance of a handful of values is then PyTorch's to the bit, where
a float32 two-pass sum differs in the last bit for about half of them. A complex input's
variance is the variance of its real part plus that of its imaginary part, each rounded to
the real dtype first, as PyTorch composes it.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from ._arg_parser_text import (
    OVERLOADS,
    invalid_combination,
    is_dims_arg,
    method_aware,
    no_overload,
)
from ._batching import front
from ._common import write_out
from .reduce import expand_back, norm_dims, reduce_p, reduced_shape, reduction
from .registry import Primitive, apply, bind, defbatch, defjvp, defvjp, keep_given

_WIDEN = (np.dtype(np.float32), np.dtype(np.float16), dt.bfloat16.np)


def _dof(shape, dims, correction) -> float:
    n = math.prod(shape[d] for d in dims) if shape else 1
    return builtins.max(n - correction, 0)


def _real_moments(a: np.ndarray, axis, keepdim: bool, dof: float, root: bool):
    """(var or std, mean) of a real array over `axis`, in a's dtype (accumulated in double
    for float32 and lower, then rounded once)."""
    w = a.astype(np.float64) if a.dtype in _WIDEN else a
    if w.size:
        mean = np.mean(w, axis=axis, keepdims=True)
        dev = w - mean
    else:
        mean = np.full(reduced_shape(w.shape, axis, True), np.nan, w.dtype)
        dev = w.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sum(np.multiply(dev, dev, out=dev), axis=axis, keepdims=keepdim) / dof
        if root:
            r = np.sqrt(r)
    mean = mean if keepdim else mean.reshape(reduced_shape(w.shape, axis, False))
    return np.asarray(r).astype(a.dtype), np.asarray(mean).astype(a.dtype)


def _moments(a: np.ndarray, dims, keepdim: bool, correction, root: bool):
    """(var or std, mean) of `a` over `dims`; a 0-d input is a row of one."""
    if a.ndim == 0:
        r, m = _moments(a.reshape(1), (0,), False, correction, root)
        return r.reshape(()), m.reshape(())
    dof = _dof(a.shape, dims, correction)
    if a.dtype.kind != "c":
        return _real_moments(a, tuple(dims), keepdim, dof, root)
    vr, mr = _real_moments(np.asarray(a.real, order="C"), tuple(dims), keepdim, dof, False)
    vi, mi = _real_moments(np.asarray(a.imag, order="C"), tuple(dims), keepdim, dof, False)
    v = vr + vi
    with np.errstate(invalid="ignore"):
        v = np.sqrt(v) if root else v
    return np.asarray(v, order="C"), np.asarray((mr + 1j * mi).astype(a.dtype), order="C")


def _var_kernel(a, *, dims, keepdim, correction, root=False):
    return np.asarray(_moments(a, dims, keepdim, correction, root)[0], order="C")


def _real_meta(x, *, dims, keepdim, **_):
    return reduced_shape(x._shape, dims, keepdim), x._dtype.to_real()


def _var_grad(g, x, dims, keepdim, correction):
    dof = _dof(x._shape, dims if x.ndim else (), correction)
    scale = 2.0 / dof if dof > 0 else math.inf
    centred = x - x.mean(dims, keepdim=True)
    return expand_back(g, x._shape, dims, keepdim) * scale * centred


def _var_vjp(g, out, x, *, dims, keepdim, correction, root):
    from .ternary import where

    if not root:
        return _var_grad(g, x, dims, keepdim, correction)
    # NOTE: where the std is 0 the gradient is 0 (not NaN), as in PyTorch's std_backward.
    zero = out == 0
    half = where(zero, 0, g / (2 * where(zero, 1, out)))
    return _var_grad(half, x, dims, keepdim, correction)


def _var_jvp(primals, tangents, out, *, dims, keepdim, correction, root):
    # d var = 2 / dof * sum(Re(conj(x - mean) t)); d std = d var / (2 std), 0 where std is 0
    from .ternary import where

    x, t = primals[0], tangents[0]
    dof = _dof(x._shape, dims if x.ndim else (), correction)
    scale = 2.0 / dof if dof > 0 else math.inf
    centred = x - x.mean(dims, keepdim=True)
    prod = (centred.conj() * t).real if x._dtype.is_complex else centred * t
    d = prod.sum(dims, keepdim=keepdim) * scale
    if not root:
        return d
    zero = out == 0
    return where(zero, 0, d / (2 * where(zero, 1, out)))


def _var_member(name: str, root: bool):
    def kernel(a, *, dims, keepdim, correction):
        return _var_kernel(a, dims=dims, keepdim=keepdim, correction=correction, root=root)

    m = reduction(name, kernel, _real_meta)
    # (as PyTorch: var's node keeps its input only, std's its result as well)
    defvjp(m, lambda g, out, x, **p: _var_vjp(g, out, x, root=root, **p), save_output=root)
    defjvp(m, lambda primals, tangents, out, **p: _var_jvp(primals, tangents, out, root=root,
                                                           **p))
    return m


# var and std (its square root); std's VJP reads the output
VAR = _var_member("var", False)
STD = _var_member("std", True)


# --- var_mean / std_mean: one kernel, two outputs ------------------------------------------

def _moments_kernel(a, *, dims, keepdim, correction, root):
    r, m = _moments(a, dims, keepdim, correction, root)
    return np.asarray(r, order="C"), np.asarray(m, order="C")


def _moments_meta(x, *, dims, keepdim, **_):
    shape = reduced_shape(x._shape, dims, keepdim)
    return (shape, x._dtype.to_real()), (shape, x._dtype)


def _moments_vjp(g, out, x, *, dims, keepdim, correction, root):
    gs, gm = g
    std = out[0] if root else None  # (var_mean's node keeps no output)
    grad = None if gs is None else _var_vjp(gs, std, x, dims=dims, keepdim=keepdim,
                                            correction=correction, root=root)
    if gm is not None:
        n = math.prod(x._shape[d] for d in dims) if x.ndim else 1
        share = expand_back(gm, x._shape, dims, keepdim) / n
        grad = share if grad is None else grad + share
    return grad


def _moments_jvp(primals, tangents, out, *, dims, keepdim, correction, root):
    t = tangents[0]
    ds = _var_jvp(primals, tangents, out[0], dims=dims, keepdim=keepdim,
                  correction=correction, root=root)
    return ds, t.mean(dims, keepdim=keepdim) if t.ndim else t


def _moments_batch(prim):
    def rule(args, bdims, **params):
        """vmap: the batch axis first and the reduced dims shifted past it (a 0-d example
        is a row of one)."""
        x, bd = args[0], bdims[0]
        if bd is None:
            return bind(prim, x, **params), (None, None)
        x = front(x, bd)
        if x.ndim == 1:
            return bind(prim, x.unsqueeze(1), **{**params, "dims": (1,), "keepdim": False}), \
                (0, 0)
        return bind(prim, x, **{**params, "dims": tuple(d + 1 for d in params["dims"])}), (0, 0)

    return rule


def _moments_primitive(name: str, root: bool) -> Primitive:
    """(var or, with `root`, std; mean) over `dims` in one pass, one node for both. As in
    PyTorch, std_mean's node keeps its std (its gradient divides by it), var_mean's does not."""
    prim = Primitive(name, _moments_kernel, _moments_meta, n_outputs=2)
    defvjp(prim, _moments_vjp, save_output=(0,) if root else False)
    defjvp(prim, _moments_jvp)
    defbatch(prim, _moments_batch(prim))
    return prim


var_mean_p = _moments_primitive("var_mean", False)
std_mean_p = _moments_primitive("std_mean", True)


# --- the public functions ------------------------------------------------------------------

def _spread_signatures(name: str) -> tuple[str, ...]:
    return OVERLOADS[name]


def _correction(name: str, input: Tensor, dim, unbiased, correction, keepdim=False):
    if isinstance(dim, bool):  # var(x, False): the legacy positional `unbiased`
        dim, unbiased = None, dim
    elif not is_dims_arg(dim, head=True):
        given = () if unbiased is _NOT_GIVEN else (unbiased,)
        raise no_overload(name, (input, dim, *given), {"correction": correction})
    correction = dt.py_number(correction)  # (a NumPy bool is the number 1.0 / 0.0)
    bad = correction is not None and not isinstance(correction, (int, float, complex)) and \
        not (isinstance(correction, Tensor) and correction.ndim == 0)
    # `unbiased`, when passed, must be a Python bool: `std(x, -1, None)` matches no overload
    bad = bad or unbiased is not _NOT_GIVEN and unbiased.__class__ is not bool
    if bad or (unbiased is not _NOT_GIVEN and correction is not None):
        # (PyTorch's parser: no overload takes both, nor a correction that is no number;
        # ember names `dim`, when given, as a keyword)
        if correction is None and dim is not None:  # (the usual `std(x, -1, None)`)
            args = (input, dim, unbiased) + ((True,) if keepdim is True else ())
            raise invalid_combination(name, _spread_signatures(name), args, {})
        given = {} if dim is None else {"dim": dim}
        if unbiased is not _NOT_GIVEN:
            given["unbiased"] = unbiased
        if correction is not None:
            given["correction"] = correction
        raise invalid_combination(name, _spread_signatures(name), (input,), given)
    if correction is None:
        correction = 0 if unbiased is False else 1
    elif isinstance(correction, complex):  # (a Scalar read as the kernel's double)
        if correction.imag:
            raise RuntimeError("value cannot be converted to type double without overflow")
        correction = correction.real
    return dim, correction


def _require_floating(input: Tensor, name: str) -> None:
    if input._dtype._kind < 2:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


def _checked(input: Tensor, dim, unbiased, correction, name: str, keepdim=False):
    """(dims, correction) of a spread call, warning as PyTorch does when the degrees of
    freedom are <= 0 (naming the op the user called: var_mean's says "var_mean()")."""
    dim, c = _correction(name, input, dim, unbiased, correction, keepdim)
    _require_floating(input, "std and var")
    dims = norm_dims(dim, input.ndim)
    if _dof(input._shape, dims if input.ndim else (), c) <= 0:
        warn_at_user(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
            "than the reduction factor (input numel divided by output numel).")
    return dims, c


class _NotGiven:
    """The default of `dim` and `correction`: PyTorch's parser picks an overload by which
    arguments are passed (even as None), and its node shows the correction that overload
    got (`_as_called`)."""

    def __repr__(self) -> str:
        return "<not given>"


_NOT_GIVEN = _NotGiven()


def _plain(dim, unbiased, correction) -> tuple:
    """The arguments with `dim` or `correction` not given read as None (`unbiased` stays
    as given, so that an explicit None is refused)."""
    return (None if dim is _NOT_GIVEN else dim, unbiased,
            None if correction is _NOT_GIVEN else correction)


def _as_called(dim, unbiased, correction) -> dict:
    """`dim` and `correction` as PyTorch's node shows them: the correction as given, else
    1 or 0 from `unbiased` (or from a legacy bool in `dim`'s place), else 1 where a dim was
    passed (the dim overload's default) and None where nothing was (the correction
    overload's)."""
    legacy = isinstance(dim, bool)
    if correction is _NOT_GIVEN:
        if legacy or unbiased is not _NOT_GIVEN:
            correction = int(bool(dim if legacy else unbiased))
        else:
            correction = None if dim is _NOT_GIVEN else 1
    return {"dim": None if dim is _NOT_GIVEN or legacy else dim, "correction": correction}


def _var_like(name: str, root: bool):
    def op(input: Tensor, dim=_NOT_GIVEN, unbiased=_NOT_GIVEN, keepdim: bool = False, *,
           correction=_NOT_GIVEN, out=None) -> Tensor:
        dims, c = _checked(input, *_plain(dim, unbiased, correction), name, keepdim)
        r = apply(reduce_p, input, fn=STD if root else VAR, dims=dims, keepdim=keepdim,
                  correction=c)
        if r._grad_fn is not None:
            keep_given(r, **_as_called(dim, unbiased, correction))
        return write_out(r, out)

    op.__name__ = name
    return method_aware(op)


var = _var_like("var", False)
var.__doc__ = "Variance over `dim` with Bessel's `correction` (1 unless unbiased=False)."
std = _var_like("std", True)
std.__doc__ = "Standard deviation over `dim` (sqrt of `var`)."


def _moments_like(name: str, root: bool):
    def op(input: Tensor, dim=_NOT_GIVEN, unbiased=_NOT_GIVEN, keepdim: bool = False, *,
           correction=_NOT_GIVEN, out=None):
        _require_floating(input, name)
        dims, c = _checked(input, *_plain(dim, unbiased, correction), name, keepdim)
        res = apply(std_mean_p if root else var_mean_p, input, dims=dims, keepdim=keepdim,
                    correction=c, root=root)
        if res[0]._grad_fn is not None:
            keep_given(res, **_as_called(dim, unbiased, correction))
        return tuple(write_out(res, out)) if out is not None else tuple(res)

    op.__name__ = name
    return op


var_mean = _moments_like("var_mean", False)
var_mean.__doc__ = "(var, mean) over `dim`, as a tuple, from one pass and one node."
std_mean = _moments_like("std_mean", True)
std_mean.__doc__ = "(std, mean) over `dim`, as a tuple, from one pass and one node."

__all__ = ["std", "std_mean", "var", "var_mean"]
