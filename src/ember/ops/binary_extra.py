"""More binary ops: remainder/fmod, atan2/hypot, maximum/minimum/fmax/fmin, closeness,
logical and bitwise ops with shifts, and their Python operators (%, &, |, ^, <<, >>).

Same pattern as `binary.py`: promote with `binary_operands`, run one primitive,
derivative registered right below it.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._common import (
    binary_operands,
    elementwise_meta,
    is_scalar,
    to_float,
    type_name,
    write_out,
)
from .binary import (
    forward_op,
    inplace_operand,
    inplace_shape_check,
    int_zero_check,
    int_zero_checked,
    lowp2,
    not_implemented,
    reflected_op,
)
from .registry import Primitive, apply, apply_, defvjp, nondifferentiable


def _binary(name: str, kernel, grad_name: str | None = None) -> Primitive:
    return Primitive(name, kernel, elementwise_meta, grad_name=grad_name)


def _where(cond, a, b):
    from .ternary import where

    return where(cond, a, b)


def _need_tensor(x, fname: str, pos: int, argname: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{argname}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _refuse(d: dt.dtype, kinds, kname: str) -> None:
    if d._kind in kinds:
        raise not_implemented(kname, d)


def _inplace_first_checks(self: Tensor, other) -> None:
    """What PyTorch checks of `self.op_(other)` before the kernel's dtypes: that the result
    has `self`'s shape, then that its dtype casts into `self`."""
    if isinstance(other, Tensor) or is_scalar(other):
        inplace_shape_check(self, other, "")
        inplace_operand(self, other)  # RuntimeError when the result type can't be cast


def _api(prim: Primitive, prepare, doc: str, number_other: bool = True, name: str | None = None,
         **params):
    """Function `op(input, other, *, out=None)` and method `op_(self, other)` for `prim`
    (called `name`, and bound with the static `params`, when one primitive serves several).

    `prepare(input, other)` checks and promotes, returning the operands the kernel gets;
    `number_other=False` says `other` must be a tensor (`prepare` raises the TypeError).
    """
    def op(input, other, *, out=None) -> Tensor:
        a, b = prepare(input, other)
        return write_out(apply(prim, a, b, **params), out)

    def op_(self: Tensor, other) -> Tensor:
        if number_other or isinstance(other, Tensor):
            _inplace_first_checks(self, other)
        a, b = prepare(self, other)
        # A number goes in as given: `prepare` may have made it a NumPy scalar (bfloat16
        # among them) that `inplace_operand` does not take.
        return apply_(prim, self,
                      inplace_operand(self, b if isinstance(other, Tensor) else other), **params)

    name = name or prim.name
    op.__name__, op_.__name__ = name, name + "_"
    op.__doc__ = op_.__doc__ = doc
    return op, op_


# --- remainder and fmod -------------------------------------------------------------------

def _by_other(op: str):
    """PyTorch's node names for `op(tensor, number)` (Backward0) and `op(tensor, tensor)`."""
    def name(args: tuple, params: dict) -> str:
        return f"{op}Backward1" if isinstance(args[1], Tensor) else f"{op}Backward0"

    return name


remainder_p = _binary("remainder", int_zero_checked(lowp2(np.remainder)), _by_other("Remainder"))
defvjp(remainder_p, lambda g, out, a, b: g,
       lambda g, out, a, b: -g * a.div(b, rounding_mode="floor"), reads=((), (0, 1)))

fmod_p = _binary("fmod", int_zero_checked(lowp2(np.fmod)), _by_other("Fmod"))
defvjp(fmod_p, lambda g, out, a, b: g,
       lambda g, out, a, b: -g * a.div(b, rounding_mode="trunc"), reads=((), (0, 1)))


def _modulo_operands(kname: str):
    def prepare(input, other):
        a, b, d = binary_operands(input, other)
        _refuse(d, (0, 3), kname)
        int_zero_check(b, d, a)
        return a, b

    return prepare


remainder, remainder_ = _api(remainder_p, _modulo_operands("remainder_cpu"),
                             "Python's modulus: the result has the sign of `other`.")
_fmod, fmod_ = _api(fmod_p, _modulo_operands("fmod_cpu"),
                    "C's fmod: the result has the sign of `input`.")


def fmod(input: Tensor, other, *, out=None) -> Tensor:
    """C's fmod: the result has the sign of `input`."""
    _need_tensor(input, "fmod", 1, "input")
    return _fmod(input, other, out=out)


# --- atan2 and hypot ----------------------------------------------------------------------

atan2_p = _binary("atan2", lowp2(np.arctan2))
defvjp(atan2_p, lambda g, out, a, b: g * b / (a * a + b * b),
       lambda g, out, a, b: -g * a / (a * a + b * b))

hypot_p = _binary("hypot", lowp2(np.hypot))
defvjp(hypot_p, lambda g, out, a, b: g * a / out, lambda g, out, a, b: g * b / out,
       reads=((0,), (1,)), save_output=True)


def _atan2_operands(input, other):
    _need_tensor(input, "atan2", 1, "input")
    _need_tensor(other, "atan2", 2, "other")
    a, b, d = binary_operands(input, other)
    _refuse(d, (3,), "atan2_cpu")
    return to_float(a), to_float(b)


def _hypot_operands(input, other):
    _need_tensor(input, "hypot", 1, "input")
    _need_tensor(other, "hypot", 2, "other")
    a, b, d = binary_operands(input, other)
    _refuse(d, (0, 1, 3), "hypot_cpu")
    return a, b


atan2, atan2_ = _api(atan2_p, _atan2_operands, "The angle of (other, input), in (-pi, pi].",
                     number_other=False)
hypot, hypot_ = _api(hypot_p, _hypot_operands, "sqrt(input**2 + other**2) without overflow.",
                     number_other=False)
arctan2, arctan2_ = atan2, atan2_


# --- maximum, minimum, fmax, fmin ------------------------------------------------------------

# maximum / minimum (NaN propagates) and fmax / fmin (NaN loses) are one primitive per NaN
# rule, `largest` telling max from min; the node names follow it.
def _pair_names(big: str, small: str):
    return lambda args, params: big if params["largest"] else small


maximum_p = Primitive("maximum_minimum",
                      lambda a, b, *, largest: np.maximum(a, b) if largest else np.minimum(a, b),
                      lambda a, b, **params: elementwise_meta(a, b),
                      grad_name=_pair_names("MaximumBackward0", "MinimumBackward0"))
fmax_p = Primitive("fmax_fmin",
                   lambda a, b, *, largest: np.fmax(a, b) if largest else np.fmin(a, b),
                   lambda a, b, **params: elementwise_meta(a, b),
                   grad_name=_pair_names("FmaxBackward0", "FminBackward0"))


def _loses(x, y, largest: bool):
    return x < y if largest else x > y


# maximum/minimum: the loser gets no gradient, a tie splits it, NaN gives it to both
# (PyTorch's rule).
defvjp(maximum_p,
       lambda g, out, a, b, *, largest: _where(a == b, g / 2, g * ~_loses(a, b, largest)),
       lambda g, out, a, b, *, largest: _where(a == b, g / 2, g * ~_loses(b, a, largest)))


def _input_wins(a, b, largest: bool):
    return ((a >= b) if largest else (a <= b)) | b.isnan()


# NOTE: fmax/fmin give ties and NaN-in-other to `input`, as PyTorch's formulas do.
defvjp(fmax_p, lambda g, out, a, b, *, largest: g * _input_wins(a, b, largest),
       lambda g, out, a, b, *, largest: g * ~_input_wins(a, b, largest))


def _extreme_operands(name: str):
    def prepare(input, other):
        _need_tensor(input, name, 1, "input")
        _need_tensor(other, name, 2, "other")
        a, b, d = binary_operands(input, other)
        if d.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return a, b

    return prepare


maximum, _ = _api(maximum_p, _extreme_operands("maximum"), "Elementwise max; NaN propagates.",
                  name="maximum", largest=True)
minimum, _ = _api(maximum_p, _extreme_operands("minimum"), "Elementwise min; NaN propagates.",
                  name="minimum", largest=False)
fmax, _ = _api(fmax_p, _extreme_operands("fmax"), "Elementwise max ignoring NaN.", name="fmax",
               largest=True)
fmin, _ = _api(fmax_p, _extreme_operands("fmin"), "Elementwise min ignoring NaN.", name="fmin",
               largest=False)


# --- logical ops ---------------------------------------------------------------------------

def _truth(a):
    return a if a.dtype == np.bool_ else a != 0


_LOGICAL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}

# logical and / or / xor of the operands' truth values (`op`)
logical_p = Primitive("logical", lambda a, b, *, op: _LOGICAL[op](_truth(a), _truth(b)),
                      lambda a, b, *, op: elementwise_meta(a, b, dtype=dt.bool_))
nondifferentiable(logical_p)


def _logical_operands(name: str):
    def prepare(input, other):
        _need_tensor(input, name, 1, "input")
        _need_tensor(other, name, 2, "other")
        if input._shape != other._shape:
            from .._view import broadcast_shapes

            broadcast_shapes(input._shape, other._shape)
        return input, other

    return prepare


def _logical_api(which: str):
    name = f"logical_{which}"
    prepare = _logical_operands(name)

    def op(input, other, *, out=None) -> Tensor:
        return write_out(apply(logical_p, *prepare(input, other), op=which), out)

    def op_(self: Tensor, other) -> Tensor:
        return apply_(logical_p, self, prepare(self, other)[1], op=which)

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


_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
            "left_shift": _lshift_kernel, "right_shift": _rshift_kernel}

# bitwise and / or / xor and the shifts (`op`), on integers and bool
bitwise_p = Primitive("bitwise", lambda a, b, *, op: _BITWISE[op](a, b),
                      lambda a, b, *, op: elementwise_meta(a, b))
nondifferentiable(bitwise_p)


def _bitwise_operands(kname: str, refuse=(2, 3)):
    def prepare(input, other):
        a, b, d = binary_operands(input, other)
        _refuse(d, refuse, kname)
        return a, b

    return prepare


bitwise_and, bitwise_and_ = _api(bitwise_p, _bitwise_operands("bitwise_and_cpu"),
                                 "Bitwise AND (logical for bool).", name="bitwise_and", op="and")
bitwise_or, bitwise_or_ = _api(bitwise_p, _bitwise_operands("bitwise_or_cpu"),
                               "Bitwise OR (logical for bool).", name="bitwise_or", op="or")
bitwise_xor, bitwise_xor_ = _api(bitwise_p, _bitwise_operands("bitwise_xor_cpu"),
                                 "Bitwise XOR (logical for bool).", name="bitwise_xor", op="xor")
bitwise_left_shift, bitwise_left_shift_ = _api(
    bitwise_p, _bitwise_operands("lshift_cpu", (0, 2, 3)), "input << other (integers).",
    name="bitwise_left_shift", op="left_shift")
bitwise_right_shift, bitwise_right_shift_ = _api(
    bitwise_p, _bitwise_operands("rshift_cpu", (0, 2, 3)),
    "input >> other (arithmetic shift for signed integers).", name="bitwise_right_shift",
    op="right_shift")


# --- closeness and equality -------------------------------------------------------------

def _isclose_kernel(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = np.equal(a, b)
    if a.dtype == np.bool_ or (rtol == 0 and atol == 0):
        return close
    if a.dtype.kind in "iu":
        a = a.astype(dt.get_default_dtype().np)
        b = b.astype(a.dtype)
    elif a.dtype.itemsize == 2 and a.dtype.kind in "fV":
        a, b = a.astype(np.float32), b.astype(np.float32)
    if equal_nan:
        close |= np.isnan(a) & np.isnan(b)
    diff = np.abs(a - b)
    return close | (np.isfinite(diff) & (diff <= atol + np.abs(rtol * b)))


isclose_p = Primitive("isclose", _isclose_kernel,
                      lambda a, b, **p: elementwise_meta(a, b, dtype=dt.bool_))
nondifferentiable(isclose_p)


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other|, elementwise (and equal infinities)."""
    _need_tensor(input, "isclose", 1, "input")
    _need_tensor(other, "isclose", 2, "other")
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{type_name(input._dtype)} did not match {type_name(other._dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    if input._shape != other._shape:
        from .._view import broadcast_shapes

        broadcast_shapes(input._shape, other._shape)
    return apply(isclose_p, input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when every element of `input` is close to `other` (see `isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and the same values (NaN is never equal)."""
    _need_tensor(input, "equal", 1, "input")
    _need_tensor(other, "equal", 2, "other")
    if input._shape != other._shape:
        return False
    a, b, _ = binary_operands(input, other)
    return bool(np.array_equal(a.detach()._array(), b.detach()._array()))


# --- Python operators and tables ---------------------------------------------------------------

TENSOR_METHODS = {
    "remainder": remainder, "remainder_": remainder_, "fmod": fmod, "fmod_": fmod_,
    "atan2": atan2, "atan2_": atan2_, "arctan2": arctan2, "arctan2_": arctan2_,
    "hypot": hypot, "hypot_": hypot_, "maximum": maximum, "minimum": minimum,
    "fmax": fmax, "fmin": fmin, "logical_and": logical_and, "logical_and_": logical_and_,
    "logical_or": logical_or, "logical_or_": logical_or_, "logical_xor": logical_xor,
    "logical_xor_": logical_xor_, "bitwise_and": bitwise_and, "bitwise_and_": bitwise_and_,
    "bitwise_or": bitwise_or, "bitwise_or_": bitwise_or_, "bitwise_xor": bitwise_xor,
    "bitwise_xor_": bitwise_xor_, "bitwise_left_shift": bitwise_left_shift,
    "bitwise_left_shift_": bitwise_left_shift_, "bitwise_right_shift": bitwise_right_shift,
    "bitwise_right_shift_": bitwise_right_shift_, "isclose": isclose, "allclose": allclose,
    "equal": equal,
    "__mod__": forward_op(remainder), "__rmod__": reflected_op(remainder),
    "__imod__": remainder_,
    "__and__": forward_op(bitwise_and), "__rand__": reflected_op(bitwise_and),
    "__iand__": bitwise_and_, "__or__": forward_op(bitwise_or),
    "__ror__": reflected_op(bitwise_or), "__ior__": bitwise_or_,
    "__xor__": forward_op(bitwise_xor), "__rxor__": reflected_op(bitwise_xor),
    "__ixor__": bitwise_xor_, "__lshift__": forward_op(bitwise_left_shift),
    "__rlshift__": reflected_op(bitwise_left_shift), "__ilshift__": bitwise_left_shift_,
    "__rshift__": forward_op(bitwise_right_shift),
    "__rrshift__": reflected_op(bitwise_right_shift), "__irshift__": bitwise_right_shift_,
}

__all__ = [
    "remainder", "fmod", "atan2", "arctan2", "hypot", "maximum", "minimum", "fmax", "fmin",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "isclose", "allclose", "equal",
]
