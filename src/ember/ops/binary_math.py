"""Binary math beyond `binary.py`: remainder / fmod, atan2 / hypot, maximum / minimum /
fmax / fmin, and closeness and equality (isclose, allclose, equal), with `%` as an operator.

Same pattern as `binary.py`: promote with `binary_operands`, bind a member of the `binary`
family (or a relation of the `compare` primitive), derivatives registered right below it.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import native
from .._tensor import Tensor
from . import _binary_math_native as native_math
from ._arg_parser_text import need_bool, need_float, need_tensor
from ._binary_api import op_pair, refuse_kinds, where_
from ._common import (
    binary_operands,
    to_float,
    type_name,
)
from ._pointwise import shaped, tangent_sum
from .binary import (
    COMPARISONS,
    binary_p,
    compare_p,
    forward_op,
    int_zero_check,
    int_zero_checked,
    lowp2,
    member,
    reflected_op,
)
from .binary_inplace import inplace_dunder
from .registry import (
    Member,
    apply,
    defjvp,
    defvjp,
    derivative_not_implemented,
)

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
# float32 / float64 (NumPy's loop calls fmod per element) and int32 / int64 in C, the same
# bits (csrc/binary_math.c)
for _fn, _op in ((remainder_fn, native_math.REMAINDER),
                 (remainder_scalar_fn, native_math.REMAINDER),
                 (fmod_fn, native_math.FMOD), (fmod_scalar_fn, native_math.FMOD)):
    native.register(_fn, "binary_math", native_math.modulo_native(_op),
                    min_size=(vars(native_math), "MIN_SIZE"))


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
        refuse_kinds(d, (0, 3), kname)
        int_zero_check(b, d, a)
        return a, b

    return prepare


remainder, remainder_ = op_pair(
    binary_p, _modulo_operands("remainder_cpu"),
    "Python's modulus: the result has the sign of `other`.", name="remainder",
    pick=_pick_remainder)
_fmod, fmod_ = op_pair(binary_p, _modulo_operands("fmod_cpu"),
                    "C's fmod: the result has the sign of `input`.", name="fmod",
                    pick=lambda a, b: fmod_fn if isinstance(b, Tensor) else fmod_scalar_fn)


def fmod(input: Tensor, other, *, out=None) -> Tensor:
    """C's fmod: the result has the sign of `input`."""
    need_tensor(input, "fmod", "input", 1)
    return _fmod(input, other, out=out)


# --- atan2 and hypot ----------------------------------------------------------------------

atan2_fn = member("atan2", lowp2(np.arctan2))
def _atan2_scale(a: Tensor, b: Tensor) -> Tensor:
    """1 / (a^2 + b^2), and 0 where that is 0 (PyTorch's atan2 gradient at the origin)."""
    from .ternary import where

    d = a * a + b * b
    return where(d == 0, 0, d.reciprocal())


# (PyTorch's steps: the gradient times the other operand, times the reciprocal)
defvjp(atan2_fn, lambda g, out, a, b: g * b * _atan2_scale(a, b),
       lambda g, out, a, b: g * -a * _atan2_scale(a, b))
defjvp(atan2_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else tangents[0] * primals[1],
    None if tangents[1] is None else -tangents[1] * primals[0],
) / (primals[0] * primals[0] + primals[1] * primals[1]), out))

# --- copysign -------------------------------------------------------------------------------

def _copysign_ratio(out: Tensor, x: Tensor) -> Tensor:
    """out / x, and 0 where x is 0: PyTorch's copysign derivative in x (so NaN where x is
    +-inf or NaN, inf / inf, as its is)."""
    return where_(x == 0, 0.0, out / x)


def _zeros_of(g: Tensor) -> Tensor:
    from .creation import zeros_like

    return zeros_like(g)


# (the sign's operand gets zeros, not None, as PyTorch's node gives it)
copysign_fn = member("copysign", np.copysign, "CopysignBackward0")
defvjp(copysign_fn, lambda g, out, x, y: g * _copysign_ratio(out, x),
       lambda g, out, x, y: _zeros_of(g), reads=((0,), ()), save_output=True)
defjvp(copysign_fn, lambda primals, tangents, out: shaped(
    None if tangents[0] is None else tangents[0] * _copysign_ratio(out, primals[0]), out))

hypot_fn = member("hypot", lowp2(np.hypot))
native.register(hypot_fn, "binary_math", native_math.pair_native("hypot"),
                min_size=(vars(native_math), "MIN_SIZE"))
defvjp(hypot_fn, lambda g, out, a, b: g * a / out, lambda g, out, a, b: g * b / out,
       reads=((0,), (1,)), save_output=True)
defjvp(hypot_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else tangents[0] * primals[0],
    None if tangents[1] is None else tangents[1] * primals[1],
) / out, out))


def _atan2_operands(input, other):
    need_tensor(input, "atan2", "input", 1)
    need_tensor(other, "atan2", "other", 2)
    a, b, d = binary_operands(input, other)
    refuse_kinds(d, (3,), "atan2_cpu")
    return to_float(a), to_float(b)


def _hypot_operands(input, other):
    need_tensor(input, "hypot", "input", 1)
    need_tensor(other, "hypot", "other", 2)
    a, b, d = binary_operands(input, other)
    refuse_kinds(d, (0, 1, 3), "hypot_cpu")
    return a, b


atan2, atan2_ = op_pair(binary_p, _atan2_operands, "The angle of (other, input), in (-pi, pi].",
                     number_other=False, fn=atan2_fn)
hypot, hypot_ = op_pair(binary_p, _hypot_operands, "sqrt(input**2 + other**2) without overflow.",
                     number_other=False, fn=hypot_fn)
arctan2, arctan2_ = atan2, atan2_


# --- maximum, minimum, fmax, fmin ------------------------------------------------------------

# maximum / minimum (NaN propagates) and fmax / fmin (NaN loses).
def _loses(x, y, largest: bool):
    return x < y if largest else x > y


def _input_wins(a, b, largest: bool):
    return ((a >= b) if largest else (a <= b)) | b.isnan()


def _split(g, x, y, largest: bool):
    """maximum/minimum's cotangent for operand x: half on a tie, a +0.0 fill where x loses."""
    return where_(_loses(x, y, largest), 0.0, where_(x == y, g / 2, g))


def _mix(ta, tb, weight):
    """tb + weight * (ta - tb), a missing tangent read as zero."""
    if ta is None:
        return tb - weight * tb
    if tb is None:
        return weight * ta
    return tb + weight * (ta - tb)


def _extreme(name: str, kernel, largest: bool, nan_loses: bool) -> Member:
    """Member `name`. maximum/minimum: the loser gets no gradient, a tie splits it, NaN
    gives it to both (PyTorch's rule). fmax/fmin: ties and NaN-in-other go to `input`, as
    PyTorch's formulas do."""
    fn = member(name, kernel)
    if nan_loses:
        # NOTE: the loser's gradient is a masked fill (+0.0, even where g is -0.0, inf or
        # NaN), not g * mask, as PyTorch's masked_fill_ formulas give.
        defvjp(fn, lambda g, out, a, b: where_(_input_wins(a, b, largest), g, 0.0),
               lambda g, out, a, b: where_(_input_wins(a, b, largest), 0.0, g))

        def jvp(primals, tangents, out):
            # NOTE: PyTorch's forward formula, tb + mask * (ta - tb), in its order (the sign of
            # a zero tangent depends on it); at a tie fmax takes tb, fmin ta.
            (a, b), (ta, tb) = primals, tangents
            takes_a = ((a > b) if largest else (a <= b)) | b.isnan()
            return shaped(_mix(ta, tb, takes_a), out)
    else:
        defvjp(fn, lambda g, out, a, b: _split(g, a, b, largest),
               lambda g, out, a, b: _split(g, b, a, largest))

        def jvp(primals, tangents, out):
            # (PyTorch's forward formula: the weight of ta is 1/2 at a tie, and 0 where NaN
            # is involved, unlike its backward one)
            (a, b), (ta, tb) = primals, tangents
            wins = (a > b) if largest else (a < b)
            weight = where_(a == b, 0.5, wins.to(a.dtype))
            return shaped(_mix(ta, tb, weight), out)
    defjvp(fn, jvp)
    return fn


maximum_fn = _extreme("maximum", np.maximum, True, False)
minimum_fn = _extreme("minimum", np.minimum, False, False)
fmax_fn = _extreme("fmax", np.fmax, True, True)
fmin_fn = _extreme("fmin", np.fmin, False, True)


def _extreme_operands(name: str):
    def prepare(input, other):
        need_tensor(input, name, "input", 1)
        need_tensor(other, name, "other", 2)
        a, b, d = binary_operands(input, other)
        if d.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return a, b

    return prepare


# (maximum_ / minimum_ are no Tensor methods in PyTorch: only `_foreach_maximum_` uses them)
maximum, maximum_ = op_pair(binary_p, _extreme_operands("maximum"),
                            "Elementwise max; NaN propagates.", fn=maximum_fn)
minimum, minimum_ = op_pair(binary_p, _extreme_operands("minimum"),
                            "Elementwise min; NaN propagates.", fn=minimum_fn)
fmax, _ = op_pair(binary_p, _extreme_operands("fmax"), "Elementwise max ignoring NaN.", fn=fmax_fn)
fmin, _ = op_pair(binary_p, _extreme_operands("fmin"), "Elementwise min ignoring NaN.", fn=fmin_fn)


# --- closeness and equality -------------------------------------------------------------

def _isclose_kernel(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # NOTE: each step in the dtype PyTorch's composite computes it in: bools and integers
    # in the default float (so tolerances apply to them too); float16 / bfloat16 round
    # every step to their dtype (so an |a - b| past 65504 is inf, never close).
    close = np.equal(a, b)
    floating = a.dtype.kind in "fcV"
    if equal_nan and floating:
        close |= np.isnan(a) & np.isnan(b)
    if rtol == 0 and atol == 0:
        return close
    if a.dtype.kind in "biu":
        a, b = a.astype(dt.get_default_dtype().np), b.astype(dt.get_default_dtype().np)
        floating = True
    if a.dtype.itemsize == 2 and floating:
        low = a.dtype

        def rounded(x):
            return x.astype(low).astype(np.float32)

        a, b = a.astype(np.float32), b.astype(np.float32)
        allowed = rounded(np.float32(atol) + np.abs(rounded(np.float32(rtol) * b)))
        diff = rounded(np.abs(a - b))
    else:
        allowed = atol + np.abs(rtol * b)
        diff = np.abs(a - b)
    return close | (np.isfinite(diff) & (diff <= allowed))


COMPARISONS["isclose"] = _isclose_kernel  # a relation of the `compare` primitive


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other|, elementwise (and equal infinities)."""
    _close_args("isclose", input, other, rtol, atol, equal_nan)
    rtol, atol = (float(v) for v in (rtol, atol))
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{type_name(input._dtype)} did not match {type_name(other._dtype)}")
    # (the bound is printed as C++ streams a double, like %g: -1.0 reads "-1")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    if input._shape != other._shape:
        from .._view import broadcast_shapes

        broadcast_shapes(input._shape, other._shape)
    return apply(compare_p, input, other, op="isclose", rtol=rtol, atol=atol,
                 equal_nan=equal_nan)


def _close_args(name: str, input, other, rtol, atol, equal_nan) -> None:
    """The parser's checks of (all|is)close's arguments, in its order."""
    need_tensor(input, name, "input", 1)
    need_tensor(other, name, "other", 2)
    need_float(rtol, name, "rtol", 3)
    need_float(atol, name, "atol", 4)
    need_bool(equal_nan, name, "equal_nan", 5)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True when every element of `input` is close to `other` (see `isclose`)."""
    _close_args("allclose", input, other, rtol, atol, equal_nan)
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and the same values (NaN is never equal)."""
    need_tensor(input, "equal", "input", 1)
    need_tensor(other, "equal", "other", 2)
    if input._shape != other._shape:
        return False
    a, b, _ = binary_operands(input, other)
    return bool(np.array_equal(a.detach()._array(), b.detach()._array()))


TENSOR_METHODS = {
    "remainder": remainder, "remainder_": remainder_, "fmod": fmod, "fmod_": fmod_,
    "atan2": atan2, "atan2_": atan2_, "arctan2": arctan2, "arctan2_": arctan2_,
    "hypot": hypot, "hypot_": hypot_, "maximum": maximum, "minimum": minimum,
    "fmax": fmax, "fmin": fmin, "isclose": isclose, "allclose": allclose, "equal": equal,
    "__mod__": forward_op(remainder), "__rmod__": reflected_op(remainder),
    "__imod__": inplace_dunder(remainder_),
}

__all__ = [
    "remainder", "fmod", "atan2", "arctan2", "hypot", "maximum", "minimum", "fmax", "fmin",
    "isclose", "allclose", "equal",
]
