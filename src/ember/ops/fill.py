"""Writes of new values over a tensor's old ones: `fill_` and `zero_` here, `copy_` (in
copy.py) and the random fills (in random_ops.py and bernoulli.py) are members of one
primitive, `fill`.

Each takes the tensor written (`dst`) and the values written (a number, a tensor cast and
broadcast to `dst`, or values drawn beforehand); the graph sees it as an op on the old
value, whose gradient is zero. Members differ in how they cast and in their node name
(`FillBackward0`, `CopyBackwards`, `NormalBackward0` ...).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._common import same_meta
from ._scalar_value import scalar_value
from .registry import Family, Member, apply_, bind, defbatch, defjvp, defvjp
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


FILL = Member(fill_p, "fill", _fill_kernel, lambda a, value: same_meta(a))
defvjp(FILL, lambda g, out, a, value: g * 0, None, reads=((), ()))
defjvp(FILL, zero_tangent)


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


def fill_(self: Tensor, value) -> Tensor:
    """Set every element to `value`: a number (RuntimeError when it overflows the dtype, as
    in PyTorch) or a 0-d tensor (cast like a copy, so it wraps, as in PyTorch)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        value = value.to(self._dtype).item()
    else:
        value = scalar_value(value, self._dtype)
    return apply_(fill_p, self, value, fn=FILL)


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


TENSOR_METHODS = {"fill_": fill_, "zero_": zero_}

__all__: list = []
