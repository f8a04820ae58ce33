"""Reductions: sum, mean, prod, amax / amin, max / min (with indices), argmax / argmin.

`dim` may be an int, a tuple or None; `keepdim` keeps reduced dims as size 1.
float16 / bfloat16 accumulate in float32 and round once, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from .._view import numel, wrap_dims
from ._common import write_out
from .registry import Primitive, apply, defvjp, nondifferentiable

_LOW = (np.dtype(np.float16), dt.bfloat16.np)


def norm_dims(dim, ndim: int) -> tuple[int, ...]:
    """Reduced dims as a sorted tuple; None or () means every dim."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        return tuple(sorted(wrap_dims(tuple(dim), builtins.max(ndim, 1))))
    return wrap_dims((dim,), builtins.max(ndim, 1))


def reduced_shape(shape, dims, keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _reduce_meta(x, *, dims, keepdim, dtype=None, **_):
    return reduced_shape(x._shape, dims, keepdim), dtype or x._dtype


def _expand_back(g: Tensor, in_shape, dims, keepdim: bool) -> Tensor:
    """Undo a reduction's shape change on a gradient: unsqueeze, then expand."""
    if not keepdim:
        g = g.reshape(reduced_shape(in_shape, dims, True))
    return g.expand(in_shape)


# --- sum / mean / prod ----------------------------------------------------------------

def _sum_kernel(a, *, dims, keepdim, dtype, in_shape):
    axis = dims if a.ndim else None
    if a.dtype in _LOW and dtype.np == a.dtype:
        return np.sum(a, axis=axis, keepdims=keepdim, dtype=np.float32).astype(a.dtype)
    return np.asarray(np.sum(a, axis=axis, keepdims=keepdim, dtype=dtype.np))


sum_p = Primitive("sum", _sum_kernel, _reduce_meta)
defvjp(sum_p, lambda g, out, x, *, dims, keepdim, dtype, in_shape:
       _expand_back(g, in_shape, dims, keepdim), reads=((),))
sum_dim_p = Primitive("sum_dim", _sum_kernel, _reduce_meta, grad_name="SumBackward1")
defvjp(sum_dim_p, lambda g, out, x, *, dims, keepdim, dtype, in_shape:
       _expand_back(g, in_shape, dims, keepdim), reads=((),))


def _sum_dtype(x: Tensor, dtype) -> dt.dtype:
    if dtype is not None:
        return dtype
    return dt.int64 if x._dtype._kind < 2 else x._dtype


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    if isinstance(dim, dt.dtype):
        dim, dtype = None, dim
    d = _sum_dtype(input, dtype)
    dims = norm_dims(dim, input.ndim)
    prim = sum_p if dim is None else sum_dim_p
    return write_out(apply(prim, input, dims=dims, keepdim=keepdim, dtype=d,
                           in_shape=input._shape), out)


def sum_to_size(x: Tensor, *size) -> Tensor:
    """Sum `x` down to `size` (the shape it was broadcast from)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(size)
    if x._shape == size:
        return x
    lead = x.ndim - len(size)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(size) if n == 1 and x._shape[i + lead] != 1)
    if lead < 0 or any(n != 1 and n != x._shape[i + lead] for i, n in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(x._shape)}}}.")
    r = sum(x, dims, keepdim=True) if dims else x
    return r.reshape(size) if r._shape != size else r


def _mean_kernel(a, *, dims, keepdim, dtype, in_shape):
    axis = dims if a.ndim else None
    if a.dtype in _LOW:
        return np.mean(a, axis=axis, keepdims=keepdim, dtype=np.float32).astype(dtype.np)
    return np.asarray(np.mean(a, axis=axis, keepdims=keepdim, dtype=dtype.np))


def _mean_vjp(g, out, x, *, dims, keepdim, dtype, in_shape):
    n = numel([in_shape[d] for d in dims]) if in_shape else 1
    return _expand_back(g / n, in_shape, dims, keepdim)


mean_p = Primitive("mean", _mean_kernel, _reduce_meta)
defvjp(mean_p, _mean_vjp, reads=((),))
mean_dim_p = Primitive("mean_dim", _mean_kernel, _reduce_meta, grad_name="MeanBackward1")
defvjp(mean_dim_p, _mean_vjp, reads=((),))


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    if isinstance(dim, dt.dtype):
        dim, dtype = None, dim
    d = input._dtype if dtype is None else dtype
    if d._kind < 2:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_title(input._dtype)}"
        )
    dims = norm_dims(dim, input.ndim)
    prim = mean_p if dim is None else mean_dim_p
    x = input if input._dtype is d else input.to(d)
    return write_out(apply(prim, x, dims=dims, keepdim=keepdim, dtype=d, in_shape=x._shape),
                     out)


def _title(d: dt.dtype) -> str:
    from ._common import type_name

    return type_name(d)


# --- amax / amin / max / min ---------------------------------------------------------

def _extreme_kernel(fn):
    def kernel(a, *, dims, keepdim):
        if a.size == 0 and any(a.shape[d] == 0 for d in dims):
            raise IndexError(
                f"{fn.__name__}(): Expected reduction dim {dims[0]} to have non-zero size."
            )
        return np.asarray(fn(a, axis=dims if a.ndim else None, keepdims=keepdim))

    return kernel


def _amax_vjp(g, out, x, *, dims, keepdim):
    # NOTE: ties share the gradient equally, as in PyTorch's amax/amin backward.
    in_shape = x._shape
    o = _expand_back(out, in_shape, dims, keepdim)
    mask = (x == o).to(g.dtype)
    count = mask.sum(dims, keepdim=True)
    return _expand_back(g, in_shape, dims, keepdim) * mask / count


amax_p = Primitive("amax", _extreme_kernel(np.amax), _reduce_meta)
defvjp(amax_p, _amax_vjp, save_output=True)
amin_p = Primitive("amin", _extreme_kernel(np.amin), _reduce_meta)
defvjp(amin_p, _amax_vjp, save_output=True)
max_all_p = Primitive("max_all", _extreme_kernel(np.amax), _reduce_meta, grad_name="MaxBackward1")
defvjp(max_all_p, _amax_vjp, save_output=True)
min_all_p = Primitive("min_all", _extreme_kernel(np.amin), _reduce_meta, grad_name="MinBackward1")
defvjp(min_all_p, _amax_vjp, save_output=True)


def amax(input: Tensor, dim=(), keepdim: bool = False, *, out=None) -> Tensor:
    return write_out(apply(amax_p, input, dims=norm_dims(dim, input.ndim), keepdim=keepdim),
                     out)


def amin(input: Tensor, dim=(), keepdim: bool = False, *, out=None) -> Tensor:
    return write_out(apply(amin_p, input, dims=norm_dims(dim, input.ndim), keepdim=keepdim),
                     out)


def _arg_kernel(fn):
    def kernel(a, *, dim, keepdim):
        if a.size == 0:
            raise IndexError(
                f"{fn.__name__}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        if dim is None:
            r = fn(a.reshape(-1))
            return np.asarray(r, dtype=np.int64).reshape((1,) * a.ndim if keepdim else ())
        r = fn(a, axis=dim, keepdims=keepdim) if a.ndim else fn(a.reshape(1))
        return np.asarray(r, dtype=np.int64)

    return kernel


def _arg_meta(x, *, dim, keepdim):
    if dim is None:
        return ((1,) * x.ndim if keepdim else ()), dt.int64
    return reduced_shape(x._shape, (dim,), keepdim), dt.int64


argmax_p = Primitive("argmax", _arg_kernel(np.argmax), _arg_meta)
argmin_p = Primitive("argmin", _arg_kernel(np.argmin), _arg_meta)
nondifferentiable(argmax_p)
nondifferentiable(argmin_p)


def argmax(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    d = None if dim is None else norm_dims(dim, input.ndim)[0]
    return write_out(apply(argmax_p, input, dim=d, keepdim=keepdim), out)


def argmin(input: Tensor, dim=None, keepdim: bool = False, *, out=None) -> Tensor:
    d = None if dim is None else norm_dims(dim, input.ndim)[0]
    return write_out(apply(argmin_p, input, dim=d, keepdim=keepdim), out)


def _dim_extreme_kernel(fn, argfn):
    def kernel(a, *, dim, keepdim):
        if a.ndim and a.shape[dim] == 0:
            raise IndexError(
                f"{fn.__name__[1:]}(): Expected reduction dim {dim} to have non-zero size."
            )
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        idx = argfn(a, axis=dim, keepdims=True)
        vals = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            vals, idx = vals.squeeze(dim), idx.squeeze(dim)
        return vals, idx.astype(np.int64)

    return kernel


def _dim_extreme_meta(x, *, dim, keepdim):
    shape = reduced_shape(x._shape, (dim,), keepdim) if x.ndim else ()
    return (shape, x._dtype), (shape, dt.int64)


def _max_dim_vjp(g, out, x, *, dim, keepdim):
    from .index import scatter_into_zeros

    gv, _ = g
    _, idx = out
    if x.ndim == 0:
        return gv
    if not keepdim:
        gv, idx = gv.unsqueeze(dim), idx.unsqueeze(dim)
    return scatter_into_zeros(x._shape, dim, idx, gv)


max_dim_p = Primitive("max_dim", _dim_extreme_kernel(np.amax, np.argmax), _dim_extreme_meta,
                      grad_name="MaxBackward0", n_outputs=2)
defvjp(max_dim_p, _max_dim_vjp, save_output=True)
min_dim_p = Primitive("min_dim", _dim_extreme_kernel(np.amin, np.argmin), _dim_extreme_meta,
                      grad_name="MinBackward0", n_outputs=2)
defvjp(min_dim_p, _max_dim_vjp, save_output=True)

max_result = namedtuple("max", ["values", "indices"])
min_result = namedtuple("min", ["values", "indices"])


def _extreme(all_p, dim_p, binary, result, name):
    def reduce(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
        if isinstance(dim, Tensor):
            return binary(input, dim)
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(
                    f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                    "Specify the reduction dim with the 'dim' argument."
                )
            return write_out(apply(all_p, input, dims=tuple(range(input.ndim)), keepdim=False),
                             out)
        d = norm_dims(dim, input.ndim)[0]
        r = result(*apply(dim_p, input, dim=d, keepdim=keepdim))
        return write_out(r, out) if out is not None else r

    reduce.__name__ = name
    return reduce


def _maximum(a, b):
    from .binary_extra import maximum

    return maximum(a, b)


def _minimum(a, b):
    from .binary_extra import minimum

    return minimum(a, b)


max = _extreme(max_all_p, max_dim_p, _maximum, max_result, "max")
min = _extreme(min_all_p, min_dim_p, _minimum, min_result, "min")


TENSOR_METHODS = {
    "sum": sum, "mean": mean, "amax": amax, "amin": amin, "max": max, "min": min,
    "argmax": argmax, "argmin": argmin, "sum_to_size": sum_to_size,
}

__all__ = ["sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin"]
