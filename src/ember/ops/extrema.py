"""Extrema: amax / amin, max / min (of everything, or (values, indices) along one dim, or
the elementwise maximum / minimum of two tensors), argmax / argmin, and aminmax.

amax / amin and max() / min() are members of `reduce_p`; max(dim) / min(dim) of `pick_p`
(see reduce.py); argmax / argmin are one non-differentiable primitive. Ties share the
gradient equally, as in PyTorch.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtype as dt
from .. import native
from .._tensor import Tensor
from .._view import index_value, wrap_dim
from . import reduce as _reduce
from ._arg_parser_text import (
    ABSENT,
    is_int_arg,
    method_aware,
    need_dims,
    need_int,
    no_overload,
)
from ._batching import front
from ._common import along, type_name, write_exact, write_out
from ._out_checks import _exact_namedtuple, check_same_as_input
from .reduce import (
    _LOW,
    _axis,
    amax_vjp,
    c_order,
    dim_select_meta,
    evenly_distribute_vjp,
    masked_share_jvp,
    no_complex,
    norm_dims,
    one_dim,
    pick_p,
    picker,
    reduce_lines,
    reduce_p,
    reduced_shape,
    reduction,
    return_type,
    select_vjp,
    short_rows,
)
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    defjvp,
    defvjp,
    keep_given,
    nondifferentiable,
    shows,
)


def _extremum_kernel(largest: bool):
    name, fn = ("amax", np.amax) if largest else ("amin", np.amin)

    def kernel(a, *, dims, keepdim):
        if a.size == 0:
            for d in dims:
                if a.shape[d] == 0:
                    raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero "
                                     "size.")
        axis = _axis(a, dims)
        r = np.asarray(along(fn, a, axis, keepdim))
        floating = a.dtype.kind == "f" or a.dtype in _LOW
        return _signed_zeros(r, a, axis, keepdim, largest) if floating else r

    kernel.__name__ = f"_{name}_kernel"
    return kernel


def _signed_zeros(r, a, axis, keepdim: bool, largest: bool):
    """`r` with each zero signed as IEEE 754-2019's maximum (+0.0 if any element is +0.0)
    or minimum (-0.0 if any is -0.0). NOTE: np.maximum.reduce picks between 0.0 and -0.0 by
    its vector lanes, which differ from CPU to CPU (as PyTorch's do); this rule is one
    answer everywhere, and the one the native kernel (csrc/reduce.c) gives."""
    zero = r == 0
    if not zero.any():
        return r
    other = (a == 0) & (np.signbit(a) != largest)  # (a +0.0 for a maximum, -0.0 for a minimum)
    found = np.asarray(np.any(other, axis=axis, keepdims=keepdim))
    sign = np.where(found, not largest, largest)  # (the sign bit each zero takes)
    r = np.array(r)
    r[zero] = np.where(sign[zero], -0.0, 0.0).astype(r.dtype)
    return r


def _extremum_native(largest: bool):
    """amax's or amin's native twin (csrc/reduce.c): the same value, zeros signed as
    `_signed_zeros` signs them. Where the reduced dims lead in memory (one line, or rows of
    one block) NumPy streams them through its vector max as fast: its kernel runs there."""
    def kernel(lib, a, *, dims, keepdim):
        if short_rows(a, dims):  # (4096 rows of 10: 34 us down columns, 100 us as lines)
            return NotImplemented
        return reduce_lines(lib, a, dims, keepdim, "max" if largest else "min", outer_min=2)

    kernel.__name__ = "_amax_native" if largest else "_amin_native"
    return kernel


def extremum_jvp(primals, tangents, out, *, dims, keepdim):
    """amax's tangent: the tangent at the extremum (ties share it, as the gradient)."""
    return masked_share_jvp(tangents[0], primals[0], out, dims, keepdim)


# amax / amin, and max() / min() with no dim (whose VJP gives a NaN result's gradient to
# the NaN inputs): PyTorch names the four nodes apart.
AMAX = reduction("amax", _extremum_kernel(True))
AMIN = reduction("amin", _extremum_kernel(False))
MAX_ALL = reduction("max", _extremum_kernel(True), grad_name="MaxBackward1")
MIN_ALL = reduction("min", _extremum_kernel(False), grad_name="MinBackward1")
for _m in (AMAX, AMIN, MAX_ALL, MIN_ALL):
    native.register(_m, "reduce", _extremum_native(_m in (AMAX, MAX_ALL)),
                    min_size=(vars(_reduce), "_NATIVE_MIN"))
for _m in (AMAX, AMIN):
    defvjp(_m, amax_vjp, save_output=True)
    defjvp(_m, extremum_jvp)
for _m in (MAX_ALL, MIN_ALL):
    defvjp(_m, evenly_distribute_vjp, save_output=True)
    defjvp(_m, lambda primals, tangents, out, *, dims, keepdim: masked_share_jvp(
        tangents[0], primals[0], out, dims, keepdim, nan_ties=True))


def _no_complex_values(x: Tensor, kernel: str) -> None:
    if x._dtype.is_complex:
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{type_name(x._dtype)}\'')


def _extreme_values(largest: bool, name: str):
    def op(input: Tensor, dim=(), keepdim: bool = False, *, out=None) -> Tensor:
        if dim.__class__ is not int and dim.__class__ is not tuple:  # (a tuple: as_dim)
            need_dims(dim, name)
            if dim is not None and not isinstance(dim, list):  # (a NumPy int, a 0-d tensor)
                dim = index_value(dim)
        if input.numel() == 0 and (dim is None or not isinstance(dim, int) and len(dim) == 0):
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        # PyTorch checks each dim as given, in order, for a zero size before anything else
        # (ranges of later dims, repeats, the dtype), and names it as given
        given = () if not input.ndim else (dim,) if isinstance(dim, int) else tuple(dim or ())
        for d in given:
            if input._shape[wrap_dim(d, input.ndim)] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        dims = norm_dims(dim, input.ndim)
        _no_complex_values(input, f"{name[1:]}_values_cpu")
        check_same_as_input(input, out)
        r = apply(reduce_p, input, fn=AMAX if largest else AMIN, dims=dims, keepdim=keepdim)
        if r._grad_fn is not None:
            keep_given(r, dim=dim)
        return write_out(r, out)

    op.__name__ = name
    op.__doc__ = (f"The {name[1:]}imum over `dim` (all dims by default); ties share the "
                  "gradient equally.")
    return op


amax = _extreme_values(True, "amax")
amin = _extreme_values(False, "amin")


def _argextremum_kernel(a, *, dim, keepdim, largest):
    fn, name = (np.argmax, "argmax") if largest else (np.argmin, "argmin")
    if dim is None:
        if a.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        r = fn(a.reshape(-1))
        return np.asarray(r, dtype=np.int64).reshape((1,) * a.ndim if keepdim else ())
    if a.ndim and a.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    r = fn(a, axis=dim, keepdims=keepdim) if a.ndim else fn(a.reshape(1))
    return np.asarray(r, dtype=np.int64)


def _arg_meta(x, *, dim, keepdim, largest):
    if dim is None:
        return ((1,) * x.ndim if keepdim else ()), dt.int64
    return reduced_shape(x._shape, (dim,), keepdim), dt.int64


# argmax and argmin (`largest`): one index-of-the-extremum reduction
argextremum_p = Primitive("argextremum", c_order(_argextremum_kernel), _arg_meta)
nondifferentiable(argextremum_p)


def _argextremum_batch(args, bdims, *, dim, keepdim, largest):
    x, bd = args[0], bdims[0]
    if bd is None:
        return bind(argextremum_p, x, dim=dim, keepdim=keepdim, largest=largest), None
    x = front(x, bd)
    if dim is None or x.ndim == 1:  # of the flattened input: flatten all but the batch
        r = bind(argextremum_p, x.reshape(x._shape[0], -1), dim=1, keepdim=False,
                 largest=largest)
        return (r.reshape((-1,) + (1,) * (x.ndim - 1)) if keepdim and dim is None else r), 0
    return bind(argextremum_p, x, dim=dim + 1, keepdim=keepdim, largest=largest), 0


defbatch(argextremum_p, _argextremum_batch)


def _arg(largest: bool, name: str):
    def op(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
        if dim is not None and dim.__class__ is not int:
            dim = need_int(dim, name, "dim", 2)
        if input._dtype is dt.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        no_complex(input, name)
        d = None if dim is None else one_dim(dim, builtins.max(input.ndim, 1), name)
        return write_exact(apply(argextremum_p, input, dim=d, keepdim=keepdim, largest=largest),
                           out)

    op.__name__ = name
    op.__doc__ = f"Index of the {name[3:]} value over `dim` (of the flattened input if None)."
    return method_aware(op)


argmax = _arg(True, "argmax")
argmin = _arg(False, "argmin")


def _extremum_dim_kernel(largest: bool):
    name, arg = ("max", np.argmax) if largest else ("min", np.argmin)

    def kernel(a, *, dim, keepdim, in_shape=None):
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        if a.shape[dim] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
        idx = arg(a, axis=dim, keepdims=True)
        vals = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            vals, idx = vals.squeeze(dim), idx.squeeze(dim)
        return vals, idx.astype(np.int64)

    return c_order(kernel)


# max(dim) and min(dim): the values and indices of the extremum along one dim
MAX_DIM = picker("max_dim", _extremum_dim_kernel(True), dim_select_meta, select_vjp,
                 grad_name="MaxBackward0")
MIN_DIM = picker("min_dim", _extremum_dim_kernel(False), dim_select_meta, select_vjp,
                 grad_name="MinBackward0")

max_result = return_type("max", ["values", "indices"])
min_result = return_type("min", ["values", "indices"])


def _extreme(largest: bool, binary_name: str, result, name: str):
    def reduce(input: Tensor, dim=ABSENT, keepdim: bool = False, *, out=None, other=None):
        if isinstance(dim, Tensor) or other is not None:
            from . import binary_math

            fn = getattr(binary_math, binary_name)
            return write_out(fn(input, dim if other is None else other), out)
        if not (dim.__class__ is int or dim is ABSENT or is_int_arg(dim)):
            raise no_overload(name, (input, dim), {"out": out})
        if dim is ABSENT:
            if input.numel() == 0:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument."
                )
            _no_complex_values(input, f"{name}_all")
            return write_out(apply(reduce_p, input, fn=MAX_ALL if largest else MIN_ALL,
                                   dims=tuple(range(input.ndim)), keepdim=False), out)
        d = one_dim(dim, builtins.max(input.ndim, 1), name)  # IndexError before the dtype
        if input.ndim and input._shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        no_complex(input, name)
        r = apply(pick_p, input, fn=MAX_DIM if largest else MIN_DIM, dim=d, keepdim=keepdim,
                  in_shape=input._shape)
        if r[0]._grad_fn is not None:
            keep_given(r, dim=dim)
        return _exact_namedtuple(result, r, out)

    reduce.__name__ = name
    reduce.__doc__ = (f"The {name}imum of all elements; with `dim`, a ({name}) named tuple "
                      f"(values, indices); with a tensor second argument, `{binary_name}`.")
    return method_aware(reduce)


max = _extreme(True, "maximum", max_result, "max")
min = _extreme(False, "minimum", min_result, "min")

aminmax_result = return_type("aminmax", ["min", "max"])


def aminmax(input: Tensor, *, dim=None, keepdim: bool = False, out=None):
    """(min, max) over one dim, or over everything when `dim` is None."""
    _no_complex_values(input, "aminmax_cpu")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(input.ndim))
    else:
        d = one_dim(dim, builtins.max(input.ndim, 1), "aminmax")
        if input.ndim and input._shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,)
    lo = apply(reduce_p, input, fn=AMIN, dims=dims, keepdim=keepdim)
    hi = apply(reduce_p, input, fn=AMAX, dims=dims, keepdim=keepdim)
    for part in (lo, hi):  # (two nodes here; PyTorch's one kernel's node is AminmaxBackward0)
        shows(part, "AminmaxBackward0", dim=dim, keepdim=keepdim, max=hi, min=lo, self=input)
    return _exact_namedtuple(aminmax_result, (lo, hi), out)


TENSOR_METHODS = {
    "amax": amax, "amin": amin, "max": max, "min": min, "argmax": argmax, "argmin": argmin,
    "aminmax": aminmax,
}

__all__ = ["amax", "amin", "max", "min", "argmax", "argmin", "aminmax"]
