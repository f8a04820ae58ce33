"""More binary ops: remainder/fmod, atan2/hypot, maximum/minimum/fmax/fmin, closeness,
logical and bitwise ops with shifts, gcd / lcm, and their Python operators (%, &, |, ^, <<,
>>).

Same pattern as `binary.py`: promote with `binary_operands`, bind a member of the
`binary` family (or the `compare` / `bitwise` primitive), derivatives registered right
below it.
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
from ._pointwise import batch_pointwise, shaped, tangent_sum
from .binary import (
    COMPARISONS,
    binary_p,
    compare_p,
    forward_op,
    int_zero_check,
    int_zero_checked,
    lowp2,
    member,
    not_implemented,
    reflected_op,
)
from .binary_inplace import inplace_dunder, inplace_operand, inplace_shape_check
from .registry import (
    Member,
    Primitive,
    apply,
    apply_,
    defbatch,
    defjvp,
    defvjp,
    derivative_not_implemented,
    nondifferentiable,
)


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
         pick=None, **params):
    """Function `op(input, other, *, out=None)` and method `op_(self, other)` for `prim`
    (called `name`, and bound with the static `params`, when one primitive serves several).

    `prepare(input, other)` checks and promotes, returning the operands the kernel gets;
    `number_other=False` says `other` must be a tensor (`prepare` raises the TypeError).
    `pick(input, other)`, when given, is the family member (`fn`) to bind for them.
    """
    def op(input, other, *, out=None) -> Tensor:
        a, b = prepare(input, other)
        if pick is not None:
            return write_out(apply(prim, a, b, fn=pick(a, b)), out)
        return write_out(apply(prim, a, b, **params), out)

    def op_(self: Tensor, other) -> Tensor:
        if number_other or isinstance(other, Tensor):
            _inplace_first_checks(self, other)
        a, b = prepare(self, other)
        # A number goes in as given: `prepare` may have made it a NumPy scalar (bfloat16
        # among them) that `inplace_operand` does not take.
        b = inplace_operand(self, b if isinstance(other, Tensor) else other)
        if pick is not None:
            return apply_(prim, self, b, fn=pick(self, b))
        return apply_(prim, self, b, **params)

    if name is None:
        name = params["fn"].name if "fn" in params else prim.name
    op.__name__, op_.__name__ = name, name + "_"
    op.__doc__ = op_.__doc__ = doc
    return op, op_


# --- remainder and fmod -------------------------------------------------------------------

def _floor_quotient(a, b):
    return a.div(b, rounding_mode="floor")


def _trunc_quotient(a, b):
    return a.div(b, rounding_mode="trunc")


def _modulo(name: str, kernel, quotient):
    """Members `name` (a tensor divisor: {Name}Backward1) and `name_scalar` (a number:
    Backward0, as PyTorch's overloads), with d/da = 1 and d/db = -quotient(a, b)."""
    title = name.capitalize()
    fns = (member(name, kernel, f"{title}Backward1"),
           member(f"{name}_scalar", kernel, f"{title}Backward0"))

    def jvp(primals, tangents, out):
        (a, b), (ta, tb) = primals, tangents
        return shaped(tangent_sum(ta, None if tb is None else -tb * quotient(a, b)), out)

    for fn in fns:
        defvjp(fn, lambda g, out, a, b: g, lambda g, out, a, b: -g * quotient(a, b),
               reads=((), (0, 1)))
        defjvp(fn, jvp)
    return fns


def _remainder_kernel(a, b):
    """Python's modulo (the divisor's sign), with PyTorch's zero: fmod's, the dividend's sign."""
    r = np.remainder(a, b)
    if r.dtype.kind == "f":
        # NOTE: PyTorch computes fmod(a, b), then adds b to a nonzero result of the wrong
        # sign, so 3 % -1 is +0.0 and -3 % 1 is -0.0; NumPy gives a zero the divisor's sign.
        zero = r == 0
        if zero.any():
            r = np.where(zero, np.copysign(r, a), r)
    return r


remainder_fn, remainder_scalar_fn = _modulo("remainder",
                                            int_zero_checked(lowp2(_remainder_kernel)),
                                            _floor_quotient)
fmod_fn, fmod_scalar_fn = _modulo("fmod", int_zero_checked(lowp2(np.fmod)), _trunc_quotient)


# `number % tensor` (PyTorch's remainder.Scalar_Tensor overload) has no derivative.
remainder_self_scalar_fn = member("remainder_self_scalar", remainder_fn.kernel)
derivative_not_implemented(remainder_self_scalar_fn, "remainder", (False, True))


def _pick_remainder(a, b):
    if not isinstance(a, Tensor):
        return remainder_self_scalar_fn
    return remainder_fn if isinstance(b, Tensor) else remainder_scalar_fn


def _modulo_operands(kname: str):
    def prepare(input, other):
        a, b, d = binary_operands(input, other)
        _refuse(d, (0, 3), kname)
        int_zero_check(b, d, a)
        return a, b

    return prepare


remainder, remainder_ = _api(
    binary_p, _modulo_operands("remainder_cpu"),
    "Python's modulus: the result has the sign of `other`.", name="remainder",
    pick=_pick_remainder)
_fmod, fmod_ = _api(binary_p, _modulo_operands("fmod_cpu"),
                    "C's fmod: the result has the sign of `input`.", name="fmod",
                    pick=lambda a, b: fmod_fn if isinstance(b, Tensor) else fmod_scalar_fn)


def fmod(input: Tensor, other, *, out=None) -> Tensor:
    """C's fmod: the result has the sign of `input`."""
    _need_tensor(input, "fmod", 1, "input")
    return _fmod(input, other, out=out)


# --- atan2 and hypot ----------------------------------------------------------------------

atan2_fn = member("atan2", lowp2(np.arctan2))
defvjp(atan2_fn, lambda g, out, a, b: g * b / (a * a + b * b),
       lambda g, out, a, b: -g * a / (a * a + b * b))
defjvp(atan2_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else tangents[0] * primals[1],
    None if tangents[1] is None else -tangents[1] * primals[0],
) / (primals[0] * primals[0] + primals[1] * primals[1]), out))

hypot_fn = member("hypot", lowp2(np.hypot))
defvjp(hypot_fn, lambda g, out, a, b: g * a / out, lambda g, out, a, b: g * b / out,
       reads=((0,), (1,)), save_output=True)
defjvp(hypot_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else tangents[0] * primals[0],
    None if tangents[1] is None else tangents[1] * primals[1],
) / out, out))


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


atan2, atan2_ = _api(binary_p, _atan2_operands, "The angle of (other, input), in (-pi, pi].",
                     number_other=False, fn=atan2_fn)
hypot, hypot_ = _api(binary_p, _hypot_operands, "sqrt(input**2 + other**2) without overflow.",
                     number_other=False, fn=hypot_fn)
arctan2, arctan2_ = atan2, atan2_


# --- maximum, minimum, fmax, fmin ------------------------------------------------------------

# maximum / minimum (NaN propagates) and fmax / fmin (NaN loses).
def _loses(x, y, largest: bool):
    return x < y if largest else x > y


def _input_wins(a, b, largest: bool):
    return ((a >= b) if largest else (a <= b)) | b.isnan()


def _extreme(name: str, kernel, largest: bool, nan_loses: bool) -> Member:
    """Member `name`. maximum/minimum: the loser gets no gradient, a tie splits it, NaN
    gives it to both (PyTorch's rule). fmax/fmin: ties and NaN-in-other go to `input`, as
    PyTorch's formulas do."""
    fn = member(name, kernel)
    if nan_loses:
        defvjp(fn, lambda g, out, a, b: g * _input_wins(a, b, largest),
               lambda g, out, a, b: g * ~_input_wins(a, b, largest))

        def jvp(primals, tangents, out):
            (a, b), (ta, tb) = primals, tangents
            wins = _input_wins(a, b, largest)
            return shaped(tangent_sum(None if ta is None else ta * wins,
                                      None if tb is None else tb * ~wins), out)
    else:
        defvjp(fn, lambda g, out, a, b: _where(a == b, g / 2, g * ~_loses(a, b, largest)),
               lambda g, out, a, b: _where(a == b, g / 2, g * ~_loses(b, a, largest)))

        def jvp(primals, tangents, out):
            (a, b), (ta, tb) = primals, tangents
            tie = a == b
            return shaped(tangent_sum(
                None if ta is None else _where(tie, ta / 2, ta * ~_loses(a, b, largest)),
                None if tb is None else _where(tie, tb / 2, tb * ~_loses(b, a, largest))), out)
    defjvp(fn, jvp)
    return fn


maximum_fn = _extreme("maximum", np.maximum, True, False)
minimum_fn = _extreme("minimum", np.minimum, False, False)
fmax_fn = _extreme("fmax", np.fmax, True, True)
fmin_fn = _extreme("fmin", np.fmin, False, True)


def _extreme_operands(name: str):
    def prepare(input, other):
        _need_tensor(input, name, 1, "input")
        _need_tensor(other, name, 2, "other")
        a, b, d = binary_operands(input, other)
        if d.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return a, b

    return prepare


maximum, _ = _api(binary_p, _extreme_operands("maximum"), "Elementwise max; NaN propagates.",
                  fn=maximum_fn)
minimum, _ = _api(binary_p, _extreme_operands("minimum"), "Elementwise min; NaN propagates.",
                  fn=minimum_fn)
fmax, _ = _api(binary_p, _extreme_operands("fmax"), "Elementwise max ignoring NaN.", fn=fmax_fn)
fmin, _ = _api(binary_p, _extreme_operands("fmin"), "Elementwise min ignoring NaN.", fn=fmin_fn)


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
defbatch(bitwise_p, batch_pointwise(bitwise_p))


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


def _divisor_operands(name: str):
    refuse = _bitwise_operands(f"{name}_cpu", (0, 2, 3))

    def prepare(input, other):
        _need_tensor(input, name, 1, "input")
        _need_tensor(other, name, 2, "other")
        return refuse(input, other)

    return prepare


gcd, gcd_ = _api(bitwise_p, _divisor_operands("gcd"),
                 "Greatest common divisor, elementwise (integers; gcd(0, 0) is 0).",
                 number_other=False, name="gcd", op="gcd")
lcm, lcm_ = _api(bitwise_p, _divisor_operands("lcm"),
                 "Least common multiple, elementwise (integers; it wraps on overflow).",
                 number_other=False, name="lcm", op="lcm")


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


COMPARISONS["isclose"] = _isclose_kernel  # a relation of the `compare` primitive


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
    return apply(compare_p, input, other, op="isclose", rtol=rtol, atol=atol,
                 equal_nan=equal_nan)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when every element of `input` is close to `other` (see `isclose`)."""
    _need_tensor(input, "allclose", 1, "input")
    _need_tensor(other, "allclose", 2, "other")
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
    "bitwise_right_shift_": bitwise_right_shift_, "gcd": gcd, "gcd_": gcd_, "lcm": lcm,
    "lcm_": lcm_, "isclose": isclose, "allclose": allclose,
    "equal": equal,
    "__mod__": forward_op(remainder), "__rmod__": reflected_op(remainder),
    "__imod__": inplace_dunder(remainder_),
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
    "remainder", "fmod", "atan2", "arctan2", "hypot", "maximum", "minimum", "fmax", "fmin",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift", "gcd", "gcd_", "lcm", "lcm_", "isclose",
    "allclose", "equal",
]
