"""`nonzero` and the ops made of it (`argwhere`, `nonzero_static`): the indices of a
tensor's nonzero elements, whose count (and so the output's shape) depends on the data:
no derivative, no meta kernel, and under vmap one call per example."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import data_dependent
from .._tensor import Tensor
from . import creation, join
from ._arg_parser_text import wrong_type
from ._common import write_out
from ._dynamic_shape import refuse_batched, refuse_batched_tuple
from .registry import Primitive, apply, batch_by_loop, nondifferentiable


def _nonzero_kernel(a):
    if a.ndim == 0:
        return np.zeros((1 if a else 0, 0), np.int64)
    # (ndim, n) transposed: PyTorch's CPU nonzero is column-major, strides (1, n)
    return np.stack(np.nonzero(a), axis=0).astype(np.int64).T


nonzero_p = Primitive("nonzero", _nonzero_kernel, None)
nondifferentiable(nonzero_p)
data_dependent(nonzero_p)
batch_by_loop(nonzero_p, "each example has its own number of nonzeros: the output shape "
                         "depends on the data")


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Indices of the nonzero elements: an (n, ndim) tensor, or one 1-D tensor per dim."""
    if input.device.type == "meta":
        raise NotImplementedError(
            "nonzero's output shape depends on the data, so it cannot run on 'meta'")
    if as_tuple:
        refuse_batched_tuple(input)
    else:
        refuse_batched(input, "aten::nonzero")
    with grad_mode.no_grad():
        r = apply(nonzero_p, input)
    if as_tuple:
        if input.ndim == 0:
            return (r.reshape(-1)[:0] if r._shape[0] == 0 else
                    apply(nonzero_p, input.reshape(1)).reshape(-1),)
        return tuple(r[:, i] for i in range(input.ndim))
    return write_out(r, out)


def argwhere(input: Tensor) -> Tensor:
    with grad_mode.no_grad():  # (under vmap: once per example, as PyTorch's fallback)
        return apply(nonzero_p, input)


def _int_argument(name: str, value) -> int:
    """An `int` argument as PyTorch's parser takes it: an int or a 0-d integer tensor."""
    if isinstance(value, Tensor) and value.ndim == 0 and not value.is_floating_point() \
            and not value.is_complex() and value._dtype is not dt.bool_:
        return int(value.item())
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise wrong_type("nonzero_static", name, None, "int", value)
    return int(value)


def _nonzero_static(input: Tensor, extra: tuple, size, fill_value, out, method: bool):
    if extra:
        hi = 0 if method else 1
        raise TypeError(f"nonzero_static() takes from {hi + 1} to {hi} positional arguments but "
                        f"{hi + len(extra)} were given")
    if size is None:
        raise TypeError('nonzero_static() missing 1 required positional arguments: "size"')
    size, fill_value = _int_argument("size", size), _int_argument("fill_value", fill_value)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = nonzero(input)
    if found._shape[0] >= size:
        r = found[:size].contiguous()
    else:
        pad = creation.full((size - found._shape[0], found._shape[1]), fill_value,
                            dtype=dt.int64)
        r = join.cat([found, pad])
    return write_out(r, out)


def nonzero_static(input: Tensor, *args, size=None, fill_value=-1, out=None) -> Tensor:
    """nonzero's first `size` index rows, padded with `fill_value` rows to exactly `size`
    (a shape known before the data, as compilers need)."""
    return _nonzero_static(input, args, size, fill_value, out, method=False)


def _nonzero_static_method(self: Tensor, *args, size=None, fill_value=-1) -> Tensor:
    return _nonzero_static(self, args, size, fill_value, None, method=True)
