"""In-place fills: `fill_` and `zero_` (the graph sees them as ops on the old value)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._common import same_meta
from ._scalar_value import scalar_value
from .registry import Primitive, apply_, defvjp


def _fill_kernel(a, value):
    out = np.empty_like(a)
    out.fill(value)
    return out


fill_p = Primitive("fill", _fill_kernel, lambda a, value: same_meta(a))
defvjp(fill_p, lambda g, out, a, value: g * 0, None, reads=((), ()))


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
    return apply_(fill_p, self, value)


def zero_(self: Tensor) -> Tensor:
    return fill_(self, 0)


TENSOR_METHODS = {"fill_": fill_, "zero_": zero_}

__all__: list = []
