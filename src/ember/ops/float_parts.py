"""The parts of a floating-point number: `frexp` splits one into mantissa and exponent,
`ldexp` multiplies a mantissa by a power of two, `nextafter` steps to the neighbouring float.

`ldexp` and `nextafter` are members of the `binary` family, `frexp`'s two results members of
the `unary` family (the exponent has no derivative), each with PyTorch's derivative beside it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _dtype as dt
from .. import native
from .._tensor import Tensor
from .._user_warnings import user_stacklevel
from .._view import broadcast_shapes
from . import _binary_math_native as native_math
from ._arg_parser_text import need_tensor
from ._binary_api import op_pair
from ._common import MEMBER_LAYOUT, binary_operands, same_meta, type_name
from ._out_checks import check_frexp_out
from ._pointwise import shaped, tangent_sum
from .binary import binary_p, member, not_implemented
from .reduce import as_namedtuple, return_type
from .registry import apply, apply_, defjvp, defvjp, nondifferentiable
from .unary import defjvp1, unary, unary_p

_F32 = np.dtype(np.float32)


def _wide(a) -> bool:
    """float16 / bfloat16: PyTorch's kernels compute them in float32 and round once."""
    return a.dtype.itemsize == 2 and a.dtype.kind in "fV"


# --- frexp ---------------------------------------------------------------------------------

def _frexp(a):
    m, e = np.frexp(a.astype(_F32) if _wide(a) else a)
    return m.astype(a.dtype), e.astype(np.int32)  # (mantissas of 16-bit floats are exact)


def _exponent(x: Tensor) -> Tensor:
    return apply(unary_p, x, fn=frexp_exponent_fn)


# frexp: x = mantissa * 2**exponent, |mantissa| in [0.5, 1) (0, inf and NaN are their own
# mantissa, with exponent 0). PyTorch's derivative divides by exp2 of the int32 exponent, a
# float32: so a float64 beyond float32's range gets a gradient of 0 or inf, as there.
frexp_mantissa_fn = unary("frexp", lambda a: _frexp(a)[0], grad_name="FrexpBackward0")
defvjp(frexp_mantissa_fn, lambda g, out, x: g / _exponent(x).exp2())
defjvp1(frexp_mantissa_fn, lambda t, out, x: t / _exponent(x).exp2())
frexp_exponent_fn = unary("frexp_exponent", lambda a: _frexp(a)[1],
                          meta=lambda x: same_meta(x, dt.int32))
nondifferentiable(frexp_exponent_fn)
# (PyTorch's frexp writes both into `empty_like(input)`)
MEMBER_LAYOUT.update({"frexp": "like", "frexp_exponent": "like"})

frexp_result = return_type("frexp", ["mantissa", "exponent"])


def frexp(input: Tensor, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2**exponent; exponent is int32."""
    need_tensor(input, "frexp", "input", 1)
    if not input._dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    if out is not None:
        check_frexp_out(input, out)
    mantissa = apply(unary_p, input, fn=frexp_mantissa_fn)
    return as_namedtuple(frexp_result, (mantissa, _exponent(input)), out)


# --- ldexp ---------------------------------------------------------------------------------

def _ldexp_kernel(a, b):
    """a * 2**b. An integer `b` scales exactly (C's ldexp, `b` narrowed to a C int); a float
    `b` (operands of one dtype) is PyTorch's `a * pow(2, b)`, two roundings."""
    if b.dtype.kind in "iub":
        e = b.astype(np.int32)
        return np.ldexp(a.astype(_F32), e).astype(a.dtype) if _wide(a) else np.ldexp(a, e)
    if _wide(a):
        p = np.power(_F32.type(2), b.astype(_F32)).astype(a.dtype)
        return (a.astype(_F32) * p.astype(_F32)).astype(a.dtype)
    return a * np.power(a.dtype.type(2), b)


def _ldexp_self_grad(g, out, a, b):
    # PyTorch's formula `grad * pow(2, other)`: with an integer `other` the power is an
    # integer one, so a negative exponent gives the input a zero gradient, as there
    return g * (2 ** b)


# ldexp: input * 2**other (LdexpBackward0 on either path)
ldexp_fn = member("ldexp", _ldexp_kernel, "LdexpBackward0")


def _ldexp_layout(args, params) -> str:
    """PyTorch's exact path (a float input, an integer `other`) writes into
    `empty_like(input)`; the other is `input * pow(2.0, other)`, the power row-major."""
    a, b = args
    return "like" if a._dtype.is_floating_point and b._dtype._kind < 2 else "second fresh"


MEMBER_LAYOUT["ldexp"] = _ldexp_layout
defvjp(ldexp_fn, _ldexp_self_grad, lambda g, out, a, b: g * out * math.log(2),
       reads=((1,), ()), save_output=True)
defjvp(ldexp_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else tangents[0] * (2 ** primals[1]),
    None if tangents[1] is None else tangents[1] * out * math.log(2)), out))


def _resize_warning(input: Tensor, shape: tuple) -> None:
    """PyTorch's exact path writes into `empty_like(input)`, which a broadcast then resizes:
    it warns as for any resized `out=` (a 0-d one too)."""
    if shape != input._shape and input.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(input._shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
            "outputs will not be resized unless they have zero elements. You can explicitly "
            "reuse an out tensor t by resizing it, inplace, to zero elements with "
            "t.resize_(0).", UserWarning, stacklevel=user_stacklevel())


def _ldexp_operands(input, other):
    need_tensor(input, "ldexp", "input", 1)
    need_tensor(other, "ldexp", "other", 2)
    if input._dtype.is_floating_point and other._dtype._kind < 2:
        if other._dtype is dt.bool_:
            raise not_implemented("ldexp_cpu_exp", other._dtype)
        if input._shape != other._shape:
            _resize_warning(input, broadcast_shapes(input._shape, other._shape))
        return input, other  # the exact path: the result has the input's dtype
    a, b, d = binary_operands(input, other)
    if d._kind < 2:
        d = dt.get_default_dtype()
        a, b = a.to(d), b.to(d)
    return a, b


_ldexp, _ldexp_promoted_ = op_pair(binary_p, _ldexp_operands, "input * 2**other.",
                                number_other=False, fn=ldexp_fn)


def ldexp(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """input * 2**other: exact for an integer `other`; integers give a float result."""
    return _ldexp(input, other, out=out)


def ldexp_(self: Tensor, other: Tensor) -> Tensor:
    """In-place `ldexp` (the result must fit `self`'s floating dtype)."""
    need_tensor(self, "ldexp_", "input", 1)
    if self._dtype._kind < 2:
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{type_name(self._dtype)}")
    if self._dtype.is_floating_point and isinstance(other, Tensor) and other._dtype._kind < 2:
        _ldexp_operands(self, other)
        return apply_(binary_p, self, other, fn=ldexp_fn)
    return _ldexp_promoted_(self, other)


# --- nextafter -----------------------------------------------------------------------------

def _nextafter_bits(a, b):
    """nextafter by stepping the bit pattern (bfloat16, which NumPy's nextafter lacks): away
    from zero when `b` lies that way, toward it otherwise; from 0 to the smallest subnormal
    signed as `b`; `b` itself when equal; NaN when either is NaN."""
    a, b = np.broadcast_arrays(a, b)
    x, y = a.astype(_F32), b.astype(_F32)
    bits = a.view(np.uint16).astype(np.int32)
    away = (y > x) == (x > 0)
    stepped = np.where(away, bits + 1, bits - 1)
    stepped = np.where(x == 0, np.where(np.signbit(y), 0x8001, 0x0001), stepped)
    out = stepped.astype(np.uint16).view(a.dtype)
    out = np.where(x == y, b, out)
    return np.where(np.isnan(x) | np.isnan(y), np.array(np.nan, a.dtype), out).astype(a.dtype)


def _nextafter_kernel(a, b):
    return _nextafter_bits(a, b) if a.dtype.kind == "V" else np.nextafter(a, b)


# nextafter: PyTorch passes the gradient to `input` unchanged where it moved (the step is one
# ulp) and gives `other` none
nextafter_fn = member("nextafter", _nextafter_kernel, "NextafterBackward0")
native.register(nextafter_fn, "binary_math", native_math.pair_native("nextafter"),
                min_size=(vars(native_math), "MIN_SIZE"))  # (csrc/binary_math.c: the same bits)
defvjp(nextafter_fn, lambda g, out, a, b: g * (a != b), lambda g, out, a, b: g * 0,
       reads=((0, 1), ()))
defjvp(nextafter_fn, lambda primals, tangents, out: shaped(tangent_sum(
    None if tangents[0] is None else tangents[0] * (primals[0] != primals[1]),
    None if tangents[1] is None else tangents[1] * 0), out))


def _nextafter_operands(input, other):
    need_tensor(input, "nextafter", "input", 1)
    need_tensor(other, "nextafter", "other", 2)
    a, b, d = binary_operands(input, other)
    if not d.is_floating_point:
        raise not_implemented("nextafter_cpu", d)
    return a, b


nextafter, nextafter_ = op_pair(binary_p, _nextafter_operands,
                             "The next float after `input` in the direction of `other`.",
                             number_other=False, fn=nextafter_fn)

TENSOR_METHODS = {"frexp": frexp, "ldexp": ldexp, "ldexp_": ldexp_, "nextafter": nextafter,
                  "nextafter_": nextafter_}

__all__ = ["frexp", "ldexp", "ldexp_", "nextafter"]
