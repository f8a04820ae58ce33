"""Writes of new values over a tensor's old ones: `fill_`, `zero_` and the functional
`fill` here, `copy_` (in
copy.py) and the random fills (in random_ops.py and bernoulli.py) are members of one
primitive, `fill`.

Each takes the tensor written (`dst`) and the values written (a number, a tensor cast and
broadcast to `dst`, or values drawn beforehand); the graph sees it as an op on the old
value, whose gradient is zero. Members differ in how they cast and in their node name
(`FillBackward2`, `ZeroBackward0`, `CopyBackwards`, `NormalBackward0` ...).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._arg_parser_text import operand_error
from ._common import is_scalar, same_meta
from ._scalar_value import scalar_value
from .registry import Family, Member, apply, apply_, bind, defbatch, defjvp, defvjp
from .views import expand, move_to_front, unsqueeze, view_p

fill_p = Family("fill")


def zero_tangent(primals, tangents, out):
    """The tangent of a result that does not depend on its inputs' values: zeros."""
    from .creation import zeros_like

    return zeros_like(out)


def _fill_kernel(a, value):
    out = np.empty_like(a)
    out.fill(value)
    return out


# PyTorch names the node of each overload: fill_(number) FillBackward2, zero_ ZeroBackward0
FILL_ = Member(fill_p, "fill", _fill_kernel, lambda a, value: same_meta(a),
               grad_name="FillBackward2")
ZERO = Member(fill_p, "zero", _fill_kernel, lambda a, value: same_meta(a))
for _m in (FILL_, ZERO):
    defvjp(_m, lambda g, out, a, value: g * 0, None, reads=((), ()))
    defjvp(_m, zero_tangent)


def _fill_tensor_kernel(a, value):
    out = np.empty_like(a)
    out[...] = value  # (a 0-d value, or under vmap one per example, broadcast)
    return out


def _fill_tensor_jvp(primals, tangents, out):
    t = tangents[1]
    return zero_tangent(primals, tangents, out) if t is None else t.expand(out._shape) * 1


# fill_(0-d tensor): FillBackward3, whose value gets the sum of the gradient
FILL_TENSOR = Member(fill_p, "fill_tensor", _fill_tensor_kernel, lambda a, value: same_meta(a),
                     grad_name="FillBackward3")
defvjp(FILL_TENSOR, lambda g, out, a, value: g * 0, lambda g, out, a, value: g.sum(),
       reads=((), ()))
defjvp(FILL_TENSOR, _fill_tensor_jvp)


def _fill_batch(args, dims, /, **params):
    """vmap of a write: the batch dim in front of both the written tensor and the values
    (either expanded when it is not batched), the values' dims lined up behind it."""
    dst, src = args
    dd, ds = dims
    if ds is None and not isinstance(src, Tensor):  # a number written
        if dd is None:
            return bind(fill_p, dst, src, **params), None
        return bind(fill_p, move_to_front(dst, dd), src, **params), 0
    n = dst._shape[dd] if dd is not None else src._shape[ds]
    # (values drawn beforehand are the result itself: a fresh tensor, never an expanded one)
    src = move_to_front(src, ds) if ds is not None else _copies(src, n).contiguous()
    dst = move_to_front(dst, dd) if dd is not None else _copies(dst, n)
    for _ in range(dst.ndim - src.ndim):  # the values' missing leading dims after the batch
        src = bind(view_p, src, fn=unsqueeze, dim=1)
    return bind(fill_p, dst, src, **params), 0


def _copies(x: Tensor, n: int) -> Tensor:
    """`n` copies of `x` along a new leading dim (an expanded view)."""
    x = bind(view_p, x, fn=unsqueeze, dim=0)
    return bind(view_p, x, fn=expand, size=(n,) + x._shape[1:])


defbatch(fill_p, _fill_batch)

# The functional `ember.fill(input, value)`: a new tensor, the same writes under the names
# PyTorch gives its overloads' nodes (FillBackward0 for a number, FillBackward1 for a tensor)
FILL = Member(fill_p, "fill_new", _fill_kernel, lambda a, value: same_meta(a),
              grad_name="FillBackward0")
defvjp(FILL, lambda g, out, a, value: g * 0, None, reads=((), ()))
defjvp(FILL, zero_tangent)
FILL_TENSOR_NEW = Member(fill_p, "fill_tensor_new", _fill_tensor_kernel,
                         lambda a, value: same_meta(a), grad_name="FillBackward1")
defvjp(FILL_TENSOR_NEW, lambda g, out, a, value: g * 0, lambda g, out, a, value: g.sum(),
       reads=((), ()))
defjvp(FILL_TENSOR_NEW, _fill_tensor_jvp)


def _fill_value(self: Tensor, value, fname: str):
    """The value `fill_` / `fill` write: a number checked against the dtype, or a 0-d tensor
    cast to it."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"{fname} only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        return value.to(self._dtype)
    return scalar_value(value, self._dtype)


def fill_(self: Tensor, value) -> Tensor:
    """Set every element to `value`: a number (RuntimeError when it overflows the dtype, as
    in PyTorch) or a 0-d tensor (cast like a copy, so it wraps, as in PyTorch)."""
    if not (isinstance(value, Tensor) or is_scalar(value)):
        raise operand_error("fill_", (self, value), method=True)
    v = _fill_value(self, value, "fill_")
    return apply_(fill_p, self, v, fn=FILL_TENSOR if isinstance(v, Tensor) else FILL_)


def fill(input: Tensor, value) -> Tensor:
    """A new tensor shaped, typed and strided like `input`, every element `value` (a number or
    a 0-d tensor, cast as `fill_` casts it)."""
    if not isinstance(input, Tensor) or not (isinstance(value, Tensor) or is_scalar(value)):
        raise operand_error("fill", (input, value), method=False)
    v = _fill_value(input, value, "fill_")
    return apply(fill_p, input, v, fn=FILL_TENSOR_NEW if isinstance(v, Tensor) else FILL)


def zero_(self: Tensor) -> Tensor:
    return apply_(fill_p, self, scalar_value(0, self._dtype), fn=ZERO)


def fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """Write `fill_value` on the main diagonal (all indices equal) through one strided view;
    with `wrap`, a tall matrix's diagonal starts again every `columns + 1` rows, as NumPy's
    and PyTorch's do."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[0], self.shape[1]
    if self.ndim > 2 and any(size != height for size in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    size, step, offset = min(height, width), sum(self.stride()), self.storage_offset()
    self.as_strided((size,), (step,), offset).fill_(fill_value)
    if wrap and self.ndim == 2 and height > width + 1:
        rest = -(-self.numel() // (width + 1)) - size
        self.as_strided((rest,), (step,), offset + self.stride(0) * (width + 1)).fill_(fill_value)
    return self


TENSOR_METHODS = {"fill_": fill_, "zero_": zero_, "fill_diagonal_": fill_diagonal_}

__all__ = ["fill", "fill_", "zero_"]
