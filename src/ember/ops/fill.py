"""In-place fills: `fill_` and `zero_` (the graph sees them as ops on the old value)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._common import same_meta
from .registry import Primitive, apply_, defvjp


def _fill_kernel(a, value):
    out = np.empty_like(a)
    out.fill(value)
    return out


fill_p = Primitive("fill", _fill_kernel, lambda a, value: same_meta(a))
defvjp(fill_p, lambda g, out, a, value: g * 0, None, reads=((), ()))


def fill_(self: Tensor, value) -> Tensor:
    """Set every element to `value` (a number or a 0-d tensor)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        value = value.item()
    return apply_(fill_p, self, value)


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


TENSOR_METHODS = {"fill_": fill_, "zero_": zero_}

__all__: list = []
