"""Powers: pow (a tensor or a number on either side, PyTorch's three overloads as three
members of the `binary` family, PowBackward0/1/2) and float_power (computed in float64 or
complex128), with their derivatives and the refusals of integers to negative powers.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from . import _complex_math
from ._arg_parser_text import method_aware, operand_error
from ._common import (
    OperandTypeError,
    binary_operands,
    is_scalar,
)
from ._common import write_out as _write_out
from ._pointwise import (
    shaped,
    tangent_sum,
)
from ._rounding import in_16
from ._scalar_value import _python_number, integer_operand
from .binary import (
    _F32,
    _cj,
    _operand_dtype,
    binary_p,
    forward_op,
    lowp2,
    member,
    not_implemented,
    reflected_op,
)
from .registry import (
    Member,
    apply,
    defjvp,
    defvjp,
)

_I64_END = 2 ** 63


# --- pow --------------------------------------------------------------------

def _float_pow_scalar(a, e: float):
    # NOTE: NumPy's generic float pow is ~250x slower than multiplication; PyTorch itself
    # special-cases 2, 3, 0.5, -0.5, -1, -2, and small integer powers go by squaring in
    # float64 here (one rounding to float32, as std::pow would give).
    if e == 1:  # (pow's derivative at 2 takes x ** 1: a copy, as PyTorch's)
        return np.copy(a, order="K")
    if e == 2:
        return a * a
    if e == 3:
        return a * a * a
    if e == 0.5:
        return np.sqrt(a)
    if e == -0.5:
        return 1 / np.sqrt(a)
    if e == -1:
        return 1 / a
    if e == -2:
        return 1 / (a * a)
    if e.is_integer() and abs(e) <= 16 and a.dtype.kind == "f":
        x = a.astype(np.float64)
        acc = np.ones_like(x)
        n = int(abs(e))
        while n:
            if n & 1:
                acc *= x
            n >>= 1
            if n:
                x = x * x
        return (1 / acc if e < 0 else acc).astype(a.dtype)
    return np.power(a, e)


def _int_pow(a, b):
    """Integer pow with PyTorch's answer for negative exponents: 1, +-1 or 0."""
    b_arr = np.asarray(b)
    neg = b_arr < 0
    if not neg.any():
        return np.power(a, b)
    res = np.power(a, np.where(neg, 0, b_arr).astype(b_arr.dtype))
    odd = (b_arr % 2) != 0
    special = np.where(np.equal(a, 1), 1, np.where(np.equal(a, -1), np.where(odd, -1, 1), 0))
    return np.where(neg, special, res).astype(res.dtype)


def _pow_kernel(a, b):
    if isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        d = a.dtype
        if d.kind in "fV" or d.kind == "c":
            if d == np.float16 and abs(b) == 0.5:
                # NOTE: PyTorch's float16 kernel (alone) takes no sqrt shortcut for +-0.5.
                return _c_pow(a.astype(_F32), _F32.type(b)).astype(d)
            if d == _BF16 and b in (3, -2):
                return _bfloat16_power(a, b)
            if d.itemsize == 2:
                return _float_pow_scalar(a.astype(_F32), float(b)).astype(d)
            if d.kind == "c" or isinstance(b, complex):
                return _complex_math.pow_scalar(a, b)
            return _float_pow_scalar(a, float(b))
        return np.power(a, b)
    kind = np.result_type(a, b).kind
    if kind in "iu":
        return _int_pow(a, b)
    if kind == "c":  # (in the array operand's precision: a NumPy scalar beside it is weak)
        d = np.result_type(_operand_dtype(a, b), np.complex64)
        return _complex_math.cpow(a, b, d)
    return lowp2(_c_pow)(a, b)


_BF16 = dt.bfloat16.np


def _bfloat16_power(a, e):
    """bfloat16 ** 3 and ** -2 as PyTorch's kernel: x * x * x and 1 / (x * x) with bfloat16's
    vector operators, each product and quotient rounded to bfloat16 (a quarter of the
    cubes differ from the cube rounded once)."""
    f = a.astype(_F32)
    square = in_16(f * f, _BF16)
    with np.errstate(divide="ignore", over="ignore"):
        return (square * f if e == 3 else 1 / square).astype(_BF16)


def _c_pow(a, b):
    """np.power with C's pow(x, 0.5) at -inf and -0.0 (inf and +0.0, as PyTorch's std::pow
    gives): NumPy takes a sqrt shortcut for an exponent of 0.5 (NaN and -0.0 there)."""
    r = np.power(a, b)
    if np.result_type(r).kind == "f" and np.any(np.equal(b, 0.5)):
        fix = np.equal(b, 0.5) & ((a == -np.inf) | (a == 0))
        r = np.where(fix, np.abs(a), r).astype(r.dtype)
    return r


# PyTorch's three overloads, one member each for their node names: tensor ** number
# (PowBackward0), tensor ** tensor (PowBackward1), number ** tensor (PowBackward2).
pow_tensor_scalar_fn = member("pow_tensor_scalar", _pow_kernel, "PowBackward0")
pow_tensor_tensor_fn = member("pow_tensor_tensor", _pow_kernel, "PowBackward1")
pow_scalar_fn = member("pow_scalar", _pow_kernel, "PowBackward2")


def _pow_fn(a, b) -> Member:
    """The member for `a ** b` (at least one a tensor)."""
    if isinstance(a, Tensor):
        return pow_tensor_tensor_fn if isinstance(b, Tensor) else pow_tensor_scalar_fn
    return pow_scalar_fn


def _pow_grad_base(g, out, a, b):
    if not isinstance(b, Tensor):
        if b == 0:
            return g * 0
        # (a 16-bit base's exponent arrives as a NumPy / ml_dtypes scalar: a Python number
        # of the same value keeps `b * tensor` from turning the tensor into an array)
        b = _python_number(b)
        return g * _cj(b * a ** (b - 1))
    from .ternary import where

    return where(b == 0, 0.0, g * _cj(b * a ** (b - 1)))


def _log_base(a, out):
    """log(a) for the exponent's derivative: a tensor, or for a number base a constant
    (-inf at 0, NaN below 0 for real results)."""
    if isinstance(a, Tensor):
        return a.log()
    return complex(np.log(complex(a))) if out._dtype.is_complex else float(np.log(float(a)))


def _real_nonneg(b):
    """Where exponent `b` is real and >= 0 (a complex exponent: zero imaginary part and a
    nonnegative real one, as PyTorch's pow_backward_exponent; complex has no order)."""
    if isinstance(b, Tensor) and b._dtype.is_complex:
        return (b.imag == 0) & (b.real >= 0)
    return b >= 0


def _pow_grad_exp(g, out, a, b):
    from .ternary import where

    if isinstance(a, Tensor):
        return where((a == 0) & _real_nonneg(b), 0.0, g * _cj(out * a.log()))
    grad = g * _cj(out * _log_base(a, out))
    return where(_real_nonneg(b), 0.0, grad) if a == 0 else grad


def _pow_jvp(primals, tangents, out):
    from .ternary import where

    (a, b), (ta, tb) = primals, tangents
    base = exp = None
    if ta is not None:
        if not isinstance(b, Tensor):
            b = _python_number(b)  # (as in `_pow_grad_base`)
            base = None if b == 0 else ta * (b * a ** (b - 1))
        else:
            base = where(b == 0, 0.0, ta * (b * a ** (b - 1)))
    if tb is not None:
        exp = tb * (out * _log_base(a, out))
        if isinstance(a, Tensor):
            exp = where((a == 0) & _real_nonneg(b), 0.0, exp)
        elif a == 0:
            exp = where(_real_nonneg(b), 0.0, exp)
    return shaped(tangent_sum(base, exp), out)


# PyTorch's pow(tensor, number) saves only its base (`x ** 2` then an in-place op on the
# result trains); with a tensor exponent, the result as well
defvjp(pow_tensor_scalar_fn, _pow_grad_base, _pow_grad_exp)
for _fn in (pow_tensor_tensor_fn, pow_scalar_fn):
    defvjp(_fn, _pow_grad_base, _pow_grad_exp, save_output=True)
for _fn in (pow_tensor_scalar_fn, pow_tensor_tensor_fn, pow_scalar_fn):
    defjvp(_fn, _pow_jvp)


def _negative_int_power(d: dt.dtype, exponent) -> None:
    """Refuse an integer result with a negative Python-number exponent (checked on the number
    as given: fitted to uint8, -1 would read 255)."""
    if d._kind == 1 and isinstance(exponent, (int, np.integer)) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _pow_checks(a, b, d: dt.dtype):
    """PyTorch's refusals and bool handling; returns the operands to run."""
    if d._kind == 1 and is_scalar(b) and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if d is dt.bool_ and (isinstance(b, Tensor) or not isinstance(a, Tensor)):
        raise not_implemented("pow", d)
    return a, b


@method_aware
def pow(input, exponent, *, out=None) -> Tensor:  # noqa: A001
    """input ** exponent elementwise (a tensor or a number on either side)."""
    if input.__class__ is not Tensor and isinstance(input, Tensor) and not input._strided \
            and out is None and "pow" in type(input).__dict__:  # (sparse: sparse_pointwise)
        return type(input).__dict__["pow"](input, exponent)
    if exponent.__class__ is int and not -_I64_END <= exponent < _I64_END \
            and isinstance(input, Tensor) and input._dtype._kind < 2:
        integer_operand(exponent, dt.int64)  # (read as an int64_t before any promotion)
    try:
        a, b, d = binary_operands(input, exponent)
    except OperandTypeError:
        raise operand_error("pow", (input, exponent), {"out": out}) from None
    if d._kind < 2:
        integer_operand(exponent, dt.int64)  # (the exponent is read as an int64_t)
        _negative_int_power(d, exponent)
        a, b = _pow_checks(a, b, d)
        if d is dt.bool_:  # bool tensor ** bool: the tensor itself, or all True
            r = apply(binary_p, a.to(dt.uint8), int(b), fn=pow_tensor_scalar_fn)
            return _write_out(r.to(dt.bool_), out)
    # (the member picked inline: `x ** 2` is common in losses)
    fn = (pow_tensor_tensor_fn if isinstance(b, Tensor) else pow_tensor_scalar_fn) \
        if isinstance(a, Tensor) else pow_scalar_fn
    return _write_out(apply(binary_p, a, b, fn=fn), out)


@method_aware
def float_power(input, exponent, *, out=None) -> Tensor:
    """pow computed in float64 (complex128 if either side is complex)."""
    target = _float_power_dtype(input, exponent)
    a = input.to(target) if isinstance(input, Tensor) else input
    b = exponent.to(target) if isinstance(exponent, Tensor) else exponent
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise operand_error("float_power", (input, exponent), {"out": out})
    if isinstance(b, bool):
        b = int(b)
    try:
        a, b, _ = binary_operands(a, b)
    except OperandTypeError:
        raise operand_error("float_power", (input, exponent), {"out": out}) from None
    return _write_out(apply(binary_p, a, b, fn=_pow_fn(a, b)), out)


def _float_power_dtype(*xs) -> dt.dtype:
    cplx = any(isinstance(x, complex) or (isinstance(x, Tensor) and x._dtype.is_complex)
               for x in xs)
    return dt.complex128 if cplx else dt.float64


TENSOR_METHODS = {
    "pow": pow, "float_power": float_power,
    "__pow__": forward_op(pow), "__rpow__": reflected_op(pow),
}

__all__ = ["pow", "float_power"]
