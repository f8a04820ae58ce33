"""Masked ops: masked_fill (hot in attention code, so it stays a lean blend or
`np.putmask`), masked_select and masked_scatter, each a primitive with its VJP and batch
rule beside it."""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core import data_dependent
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from .._view import broadcast_shapes
from ._arg_parser_text import (
    called_as_method,
    method_aware,
    need_tensor,
    need_tensors,
    operand_error,
)
from ._batching import batch_size, front, pad_front
from ._common import (
    _SELECT_MIN,
    broadcast_errors,
    c_type_name,
    is_scalar,
    refuse_out_grad,
    select,
    type_name,
    write_out,
)
from ._dynamic_shape import refuse_batched_mask
from ._inplace_kernel import disjoint_or_same, writes_into
from .index import (
    linear_in,
)
from .index_key import TENSOR_SLOT
from .index_ops import _fill_value, _take
from .registry import (
    Primitive,
    apply,
    apply_,
    batch_by_loop,
    bind,
    check_inplace,
    defbatch,
    defvjp,
    overlapping,
)
from .setitem import setitem_p
from .ternary import where

_grad_state = grad_mode.state

def _masked_fill_into(a: np.ndarray, mask: np.ndarray, value) -> bool:
    """masked_fill_'s kernel: `value` written into `a` where `mask` (broadcast) is True,
    nothing else touched. Small arrays take NumPy's masked copy; from `_SELECT_MIN` elements
    the value's bits are blended in branch-free (a ^= (a ^ v) & -mask), as `select` does,
    which an unpredictable mask makes several times faster."""
    if not disjoint_or_same(mask, a):
        return False  # (a bool `a` written through its own mask, shifted: copy first)
    isz = a.dtype.itemsize
    if a.size < _SELECT_MIN or isz not in (1, 2, 4, 8) or a.dtype.kind == "O":
        if mask.shape == a.shape:
            np.putmask(a, mask, value)
        else:
            np.copyto(a, value, where=mask, casting="unsafe")
        return True
    ints = np.dtype(f"i{isz}")
    bits = a.view(ints)
    blend = np.bitwise_xor(bits, np.asarray(value, a.dtype).view(ints))
    m = mask.astype(ints)
    np.negative(m, out=m)
    np.bitwise_and(blend, m, out=blend)
    np.bitwise_xor(bits, blend, out=bits)
    return True


@broadcast_errors
def _masked_fill_kernel(a, mask, value):
    out = select(mask, value, a)
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


writes_into(_masked_fill_kernel, _masked_fill_into)


masked_fill_p = Primitive(
    "masked_fill", _masked_fill_kernel,
    lambda x, mask, value: (broadcast_shapes(x._shape, mask._shape), x._dtype))
def _masked_fill_batch(args, dims):
    x, mask, value = args
    nd = max(x.ndim - (dims[0] is not None), mask.ndim - (dims[1] is not None))
    return bind(masked_fill_p, *[pad_front(a, d, nd) for a, d in zip(args, dims)]), 0


defbatch(masked_fill_p, _masked_fill_batch)
linear_in(masked_fill_p, 0, 2)  # (x and the fill value jointly)
defvjp(masked_fill_p,
       lambda g, out, x, mask, value: masked_fill(g, mask, 0), None,
       lambda g, out, x, mask, value: masked_fill(g, ~mask, 0).sum(),
       reads=((1,), (), (1,)))


def _check_mask(name: str, mask) -> None:
    need_tensor(mask, name, "mask", 2, method=True if name.endswith("_") else None)
    if mask._dtype is not dt.bool_:
        # (masked_fill names the dtype's C type, "float"; masked_scatter its ScalarType, "Float")
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{(type_name if 'scatter' in name else c_type_name)(mask._dtype)}")


@method_aware
def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    """`input` with `value` where `mask` is True (mask broadcasts)."""
    if not (isinstance(value, Tensor) or is_scalar(value)) or not isinstance(mask, Tensor):
        raise operand_error("masked_fill", (input, mask, value), method=called_as_method())
    _check_mask("masked_fill_", mask)
    v = _fill_value(value, input._dtype, "masked_fill_")
    broadcast_shapes(mask._shape, input._shape)  # (PyTorch names the mask first in a clash)
    return apply(masked_fill_p, input, mask, v)


def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    if not (isinstance(value, Tensor) or is_scalar(value)) or not isinstance(mask, Tensor):
        raise operand_error("masked_fill_", (self, mask, value), method=True)
    _check_mask("masked_fill_", mask)
    v = _fill_value(value, self._dtype, "masked_fill_")
    # (only a view can overlap itself: a plain tensor goes straight to the in-place kernel)
    if self._base is not None and self.device.type == "cpu" and not isinstance(v, Tensor) \
            and not (_grad_state.enabled and self._requires_grad) and mask.device.type == "cpu":
        full = broadcast_shapes(self._shape, mask._shape)
        if full != self._shape:
            raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                               f"broadcast shape {list(full)}")
        if overlapping(self):  # one value written where the mask says: order does not matter
            warn_at_user("Use of masked_fill_ on expanded tensors is deprecated. Please clone() "
                         "the tensor before performing this operation. This also applies to "
                         "advanced indexing e.g. tensor[mask] = scalar")
            check_inplace(self, aliased_ok=True)
            # (one value where the mask says, written through the overlap as PyTorch does)
            bind(setitem_p, self, v.item(), mask.expand(self._shape), key=TENSOR_SLOT)
            return self
    return apply_(masked_fill_p, self, mask, v)


@broadcast_errors
def _masked_select_kernel(a, mask, *, in_shape):
    a, mask = np.broadcast_arrays(a, mask)
    return a[mask]


masked_select_p = Primitive("masked_select", _masked_select_kernel, None)
data_dependent(masked_select_p)
linear_in(masked_select_p, 0)
batch_by_loop(masked_select_p, "each example's mask picks its own number of elements: the "
                               "output shape depends on the data")
defvjp(masked_select_p,
       lambda g, out, x, mask, *, in_shape: masked_scatter(
           _zeros(broadcast_shapes(in_shape, mask._shape), g), mask, g), None,
       reads=((0, 1), ()))  # (PyTorch's masked_select_backward names the input: kept)


def _zeros(shape, like: Tensor) -> Tensor:
    from .creation import zeros

    return zeros(shape, dtype=like._dtype, device=like.device)


@method_aware
def masked_select(input: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """The elements of `input` where `mask` is True, as a 1-D tensor."""
    need_tensors("masked_select", ("input", 1, input), ("mask", 2, mask))
    if mask._dtype is not dt.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if input.device.type == "meta":
        raise NotImplementedError("masked_select's output shape depends on the mask's values: "
                                  "it cannot run on 'meta'")
    broadcast_shapes(mask._shape, input._shape)  # RuntimeError naming the clash, as PyTorch
    refuse_batched_mask(mask, "masked_select")
    res = apply(masked_select_p, input, mask, in_shape=input._shape)
    if isinstance(out, Tensor) and out._dtype is not input._dtype:  # (after the grad check)
        refuse_out_grad(res, out)
        raise RuntimeError("masked_select(): self and result must have the same scalar type")
    return write_out(res, out)


@broadcast_errors
def _masked_scatter_kernel(a, mask, src):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    out = np.array(np.broadcast_to(a, shape), order="C")
    m = np.broadcast_to(mask, shape)
    n = int(np.count_nonzero(m))
    if n > src.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = src.reshape(-1)[:n]
    return out


masked_scatter_p = Primitive(
    "masked_scatter", _masked_scatter_kernel,
    lambda x, mask, src: (broadcast_shapes(x._shape, mask._shape), x._dtype))


def _masked_scatter_src_grad(g, out, x, mask, src, *, in_shape):
    picked = masked_select(g, mask)
    rest = math.prod(in_shape) - picked.numel()
    if rest:
        from .join import cat

        picked = cat([picked, _zeros((rest,), g)])
    return picked.reshape(in_shape)


# The source's rule reads its shape only (in_shape=2): as in PyTorch, an in-place op on the
# source after the scatter trains.
defvjp(masked_scatter_p, lambda g, out, x, mask, src, *, in_shape: masked_fill(g, mask, 0),
       None, _masked_scatter_src_grad, reads=((1,), (), (1,)), in_shape=2)
linear_in(masked_scatter_p, 0, 2)


def _masked_scatter_batch(args, dims):
    """Each example's source read in order at its mask's True positions: the k-th True
    of an example takes its source's k-th element (a running count along the flattened
    mask, then a gather), composed, so no example waits for another."""
    x, mask, src = args
    dx, dm, ds = dims
    b = batch_size(args, dims)
    nd = max(x.ndim - (dx is not None), mask.ndim - (dm is not None))
    x, mask = pad_front(x, dx, nd), pad_front(mask, dm, nd)
    shape = (b,) + broadcast_shapes(x._shape[1:], mask._shape[1:])
    m = mask.expand(shape)
    src = (front(src, ds) if ds is not None else src.unsqueeze(0).expand((b,) + src._shape)
           ).reshape(b, -1)
    if src._shape[1] == 0:
        return bind(masked_scatter_p, x.expand(shape), m, src), 0  # (the kernel's checks)
    pos = (m.reshape(b, -1).cumsum(1) - 1).clamp(0, src._shape[1] - 1)
    return where(m, _take(src, 1, pos).reshape(shape), x.expand(shape)), 0


defbatch(masked_scatter_p, _masked_scatter_batch)


def _masked_scatter_args(x: Tensor, mask: Tensor, source: Tensor) -> None:
    _check_mask("masked_scatter_", mask)
    if source._dtype is not x._dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{type_name(x._dtype)} and {type_name(source._dtype)}")


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """`input` with `source`'s leading elements copied, in order, where `mask` is True."""
    _masked_scatter_args(input, mask, source)
    broadcast_shapes(mask._shape, input._shape)  # (PyTorch names the mask first in a clash)
    return apply(masked_scatter_p, input, mask, source)


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    _masked_scatter_args(self, mask, source)
    if mask.ndim > self.ndim:  # (in place, PyTorch expands the mask to self's shape)
        raise RuntimeError(f"expand({mask.device.type.upper()}{type_name(mask._dtype)}Type"
                           f"{{{list(mask._shape)}}}, size={list(self._shape)}): the number of "
                           f"sizes provided ({self.ndim}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({mask.ndim})")
    mask.expand(self._shape)
    return apply_(masked_scatter_p, self, mask, source)


TENSOR_METHODS = {
    "masked_fill": masked_fill, "masked_fill_": masked_fill_, "masked_select": masked_select,
    "masked_scatter": masked_scatter, "masked_scatter_": masked_scatter_,
}

__all__ = ["masked_fill", "masked_select", "masked_scatter"]
