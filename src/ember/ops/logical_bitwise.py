"""Logical and bitwise ops: logical and / or / xor (relations of the `compare`
primitive), bitwise and / or / xor and the shifts, gcd and lcm (the derivative-free
`bitwise` primitive), and their Python operators (&, |, ^, <<, >>).
"""

from __future__ import annotations

import numpy as np

from .._core.dispatch import iter_layout
from .._tensor import Tensor
from ._arg_parser_text import need_tensor
from ._binary_api import op_pair, refuse_kinds
from ._common import (
    binary_operands,
    elementwise_meta,
    iter_relayout,
    write_out,
)
from ._pointwise import batch_pointwise
from .binary import (
    COMPARISONS,
    compare_p,
    forward_op,
    reflected_op,
)
from .binary_inplace import inplace_dunder
from .registry import (
    Primitive,
    apply,
    apply_,
    defbatch,
    nondifferentiable,
)

# --- logical ops ---------------------------------------------------------------------------

def _truth(a):
    return a if a.dtype == np.bool_ else a != 0


# logical and / or / xor of the operands' truth values: relations of the `compare` primitive
def _logical(ufunc):
    return lambda a, b: ufunc(_truth(a), _truth(b))


COMPARISONS.update(logical_and=_logical(np.logical_and), logical_or=_logical(np.logical_or),
                   logical_xor=_logical(np.logical_xor))


def _logical_operands(name: str):
    def prepare(input, other):
        need_tensor(input, name, "input", 1)
        need_tensor(other, name, "other", 2)
        if input._shape != other._shape:
            from .._view import broadcast_shapes

            broadcast_shapes(input._shape, other._shape)
        return input, other

    return prepare


def _logical_api(which: str):
    name = f"logical_{which}"
    prepare = _logical_operands(name)

    def op(input, other, *, out=None) -> Tensor:
        return write_out(apply(compare_p, *prepare(input, other), op=name), out)

    def op_(self: Tensor, other) -> Tensor:
        return apply_(compare_p, self, prepare(self, other)[1], op=name)

    op.__name__, op_.__name__ = name, name + "_"
    op.__doc__ = f"Elementwise {which.upper()} of truth values, as bool."
    return op, op_


logical_and, logical_and_ = _logical_api("and")
logical_or, logical_or_ = _logical_api("or")
logical_xor, logical_xor_ = _logical_api("xor")


# --- bitwise ops and shifts -------------------------------------------------------------------

def _shift_parts(a, b):
    rt = np.result_type(a, b)
    b = np.asarray(b)
    ok = (b >= 0) & (b < rt.itemsize * 8)
    return rt, ok, np.where(ok, b, 0).astype(rt)


def _lshift_kernel(a, b):
    # NOTE: shifting by a negative count or by the width or more gives 0 (PyTorch's rule;
    # C leaves it undefined).
    rt, ok, safe = _shift_parts(a, b)
    return np.where(ok, np.left_shift(a, safe), 0).astype(rt)


def _rshift_kernel(a, b):
    rt, ok, safe = _shift_parts(a, b)
    return np.where(ok, np.right_shift(a, safe), np.where(np.less(a, 0), -1, 0)).astype(rt)


def _gcd_kernel(a, b):
    """Euclid's algorithm as PyTorch's C loop runs it: |a| and |b| wrap (the most negative
    value stays negative) and % truncates toward zero, so gcd(INT_MIN, 0) is INT_MIN."""
    a, b = (np.array(x) for x in np.broadcast_arrays(np.abs(a), np.abs(b)))
    live = a != 0
    while live.any():
        c = a[live]
        a[live] = np.fmod(b[live], c)
        b[live] = c
        live = a != 0
    return b


def _lcm_kernel(a, b):
    """|a / gcd * b| (0 where the gcd is 0). C computes it in `int` for 8- and 16-bit
    operands (then narrows) and in the operands' type, wrapping, for wider ones."""
    g = _gcd_kernel(a, b)
    a, b = np.broadcast_arrays(a, b)
    work = np.int64 if g.dtype.itemsize < 4 else g.dtype
    g = g.astype(work)
    with np.errstate(over="ignore"):
        # (the gcd divides `a` exactly, so floor division is C's truncating one)
        q = np.floor_divide(a.astype(work), np.where(g == 0, 1, g)) * b.astype(work)
        return np.where(g == 0, 0, np.abs(q)).astype(a.dtype)


_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
            "left_shift": _lshift_kernel, "right_shift": _rshift_kernel,
            "gcd": _gcd_kernel, "lcm": _lcm_kernel}

# The integer maps with no derivative (`op`): bitwise and / or / xor and the shifts (on
# integers and bool), gcd and lcm (on integers)
bitwise_p = Primitive("bitwise", lambda a, b, *, op: _BITWISE[op](a, b),
                      lambda a, b, *, op: elementwise_meta(a, b))
nondifferentiable(bitwise_p)
iter_layout[bitwise_p] = iter_relayout
defbatch(bitwise_p, batch_pointwise(bitwise_p))


def _bitwise_operands(kname: str, refuse=(2, 3)):
    def prepare(input, other):
        a, b, d = binary_operands(input, other)
        refuse_kinds(d, refuse, kname)
        return a, b

    return prepare


bitwise_and, bitwise_and_ = op_pair(bitwise_p, _bitwise_operands("bitwise_and_cpu"),
                                 "Bitwise AND (logical for bool).", name="bitwise_and", op="and")
bitwise_or, bitwise_or_ = op_pair(bitwise_p, _bitwise_operands("bitwise_or_cpu"),
                               "Bitwise OR (logical for bool).", name="bitwise_or", op="or")
bitwise_xor, bitwise_xor_ = op_pair(bitwise_p, _bitwise_operands("bitwise_xor_cpu"),
                                 "Bitwise XOR (logical for bool).", name="bitwise_xor", op="xor")
bitwise_left_shift, bitwise_left_shift_ = op_pair(
    bitwise_p, _bitwise_operands("lshift_cpu", (0, 2, 3)), "input << other (integers).",
    name="bitwise_left_shift", op="left_shift")
bitwise_right_shift, bitwise_right_shift_ = op_pair(
    bitwise_p, _bitwise_operands("rshift_cpu", (0, 2, 3)),
    "input >> other (arithmetic shift for signed integers).", name="bitwise_right_shift",
    op="right_shift")


def _divisor_operands(name: str):
    refuse = _bitwise_operands(f"{name}_cpu", (0, 2, 3))

    def prepare(input, other):
        need_tensor(input, name, "input", 1)
        need_tensor(other, name, "other", 2)
        return refuse(input, other)

    return prepare


gcd, gcd_ = op_pair(bitwise_p, _divisor_operands("gcd"),
                 "Greatest common divisor, elementwise (integers; gcd(0, 0) is 0).",
                 number_other=False, name="gcd", op="gcd")
lcm, lcm_ = op_pair(bitwise_p, _divisor_operands("lcm"),
                 "Least common multiple, elementwise (integers; it wraps on overflow).",
                 number_other=False, name="lcm", op="lcm")


TENSOR_METHODS = {
    "logical_and": logical_and, "logical_and_": logical_and_,
    "logical_or": logical_or, "logical_or_": logical_or_, "logical_xor": logical_xor,
    "logical_xor_": logical_xor_, "bitwise_and": bitwise_and, "bitwise_and_": bitwise_and_,
    "bitwise_or": bitwise_or, "bitwise_or_": bitwise_or_, "bitwise_xor": bitwise_xor,
    "bitwise_xor_": bitwise_xor_, "bitwise_left_shift": bitwise_left_shift,
    "bitwise_left_shift_": bitwise_left_shift_, "bitwise_right_shift": bitwise_right_shift,
    "bitwise_right_shift_": bitwise_right_shift_, "gcd": gcd, "gcd_": gcd_, "lcm": lcm,
    "lcm_": lcm_,
    "__and__": forward_op(bitwise_and), "__rand__": reflected_op(bitwise_and),
    "__iand__": inplace_dunder(bitwise_and_), "__or__": forward_op(bitwise_or),
    "__ror__": reflected_op(bitwise_or), "__ior__": inplace_dunder(bitwise_or_),
    "__xor__": forward_op(bitwise_xor), "__rxor__": reflected_op(bitwise_xor),
    "__ixor__": inplace_dunder(bitwise_xor_), "__lshift__": forward_op(bitwise_left_shift),
    "__rlshift__": reflected_op(bitwise_left_shift),
    "__ilshift__": inplace_dunder(bitwise_left_shift_),
    "__rshift__": forward_op(bitwise_right_shift),
    "__rrshift__": reflected_op(bitwise_right_shift),
    "__irshift__": inplace_dunder(bitwise_right_shift_),
}

__all__ = [
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "gcd", "gcd_", "lcm", "lcm_",
]
