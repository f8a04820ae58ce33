"""`where`: pick from two tensors by a bool condition, with broadcasting."""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._common import binary_operands, elementwise_meta, write_out
from .registry import Primitive, apply, defvjp


def _where_kernel(cond, a, b):
    return np.where(cond, a, b)


def _where_meta(cond, a, b):
    shape, dtype, stride = elementwise_meta(*(x for x in (cond, a, b) if isinstance(x, Tensor)))
    kinds = [x._dtype for x in (a, b) if isinstance(x, Tensor)]
    return shape, kinds[0] if kinds else dtype, stride


where_p = Primitive("where", _where_kernel, _where_meta, grad_name="WhereBackward0")
defvjp(
    where_p,
    None,
    lambda g, out, cond, a, b: _masked(g, cond, True),
    lambda g, out, cond, a, b: _masked(g, cond, False),
    reads=((), (0,), (0,)),
)


def _masked(g: Tensor, cond: Tensor, keep_true: bool) -> Tensor:
    zero = 0 if not g.dtype.is_complex else 0j
    return where(cond, g, zero) if keep_true else where(cond, zero, g)


def where(condition: Tensor, input=None, other=None, *, out=None):
    """`input` where `condition` holds, else `other`; one-argument form is `nonzero(as_tuple)`."""
    if input is None and other is None:
        from .index import nonzero

        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError("where(): argument 'condition' must be Tensor")
    if condition._dtype is not dt.bool_:
        if condition._dtype is dt.uint8:
            condition = condition.to(dt.bool_)
        else:
            raise RuntimeError(
                f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{condition._dtype.name.capitalize()}"
            )
    a, b, _ = binary_operands(input, other)
    return write_out(apply(where_p, condition, a, b), out)


TENSOR_METHODS = {"where": lambda self, condition, other: where(condition, self, other)}

__all__ = ["where"]
