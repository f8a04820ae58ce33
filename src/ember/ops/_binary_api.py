"""How the binary families beyond `binary.py` are exposed: the function / method pair
(`op(input, other, *, out=None)` and `op_(self, other)`) that `op_pair` makes for a primitive,
and the argument checks those pairs share, in PyTorch's words."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from ._arg_parser_text import OPERAND_OVERLOADS, operand_error
from ._common import (
    OperandTypeError,
    is_scalar,
    write_out,
)
from .binary import (
    not_implemented,
)
from .binary_inplace import inplace_operand, inplace_shape_check
from .registry import (
    Primitive,
    apply,
    apply_,
)


def where_(cond, a, b):
    from .ternary import where

    return where(cond, a, b)


def refuse_kinds(d: dt.dtype, kinds, kname: str) -> None:
    if d._kind in kinds:
        raise not_implemented(kname, d)


def inplace_first_checks(self: Tensor, other) -> None:
    """What PyTorch checks of `self.op_(other)` before the kernel's dtypes: that the result
    has `self`'s shape, then that its dtype casts into `self`."""
    if isinstance(other, Tensor) or is_scalar(other):
        inplace_shape_check(self, other, "")
        inplace_operand(self, other)  # RuntimeError when the result type can't be cast


def op_pair(prim: Primitive, prepare, doc: str, number_other: bool = True, name: str | None = None,
         pick=None, **params):
    """Function `op(input, other, *, out=None)` and method `op_(self, other)` for `prim`
    (called `name`, and bound with the static `params`, when one primitive serves several).

    `prepare(input, other)` checks and promotes, returning the operands the kernel gets;
    `number_other=False` says `other` must be a tensor (`prepare` raises the TypeError).
    `pick(input, other)`, when given, is the family member (`fn`) to bind for them.
    """
    def op(input, other, *, out=None) -> Tensor:
        try:
            a, b = prepare(input, other)
        except OperandTypeError:
            if name not in OPERAND_OVERLOADS:
                raise
            raise operand_error(name, (input, other), {"out": out}) from None
        if pick is not None:
            return write_out(apply(prim, a, b, fn=pick(a, b)), out, (input, other))
        return write_out(apply(prim, a, b, **params), out, (input, other))

    def op_(self: Tensor, other) -> Tensor:
        try:
            if number_other or isinstance(other, Tensor):
                inplace_first_checks(self, other)
            a, b = prepare(self, other)
        except OperandTypeError:
            if name not in OPERAND_OVERLOADS:
                raise
            raise operand_error(name + "_", (self, other), method=True) from None
        # A number goes in as given: `prepare` may have made it a NumPy scalar (bfloat16
        # among them) that `inplace_operand` does not take.
        b = inplace_operand(self, b if isinstance(other, Tensor) else other)
        if pick is not None:
            return apply_(prim, self, b, fn=pick(self, b))
        return apply_(prim, self, b, **params)

    if name is None:
        name = params["fn"].name if "fn" in params else prim.name
    op.__name__, op_.__name__ = name, name + "_"
    op._method_aware = True
    op.__doc__ = op_.__doc__ = doc
    return op, op_
