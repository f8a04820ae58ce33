"""Binary arithmetic: add, sub, mul, div, pow and friends, with their VJPs.

Each public function promotes its operands by PyTorch's rules (`binary_operands`)
and calls one primitive. Broadcasting needs nothing here: the engine sums a
gradient back to its input's shape in one place (`autograd.engine._fit`).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ._common import binary_operands, elementwise_meta, is_scalar, type_name, write_out
from .registry import Primitive, apply, apply_, defvjp, nondifferentiable


def _binary(name: str, kernel, grad_name: str | None = None) -> Primitive:
    return Primitive(name, kernel, elementwise_meta, grad_name=grad_name)


# --- add / sub / mul / div ----------------------------------------------------

add_p = _binary("add", np.add)
defvjp(add_p, lambda g, out, a, b: g, lambda g, out, a, b: g, reads=((), ()))

sub_p = _binary("sub", np.subtract)
defvjp(sub_p, lambda g, out, a, b: g, lambda g, out, a, b: -g, reads=((), ()))

mul_p = _binary("mul", np.multiply)
defvjp(mul_p, lambda g, out, a, b: g * _conj(b), lambda g, out, a, b: g * _conj(a),
       reads=((1,), (0,)))

div_p = _binary("div", np.true_divide)
defvjp(div_p, lambda g, out, a, b: g / _conj(b), lambda g, out, a, b: -g * _conj(a / (b * b)),
       reads=((1,), (0, 1)))


def _conj(x):
    if isinstance(x, Tensor) and x._dtype.is_complex:
        return x.conj()
    return x


def _alpha_check(alpha, d: dt.dtype) -> None:
    if alpha != 1:
        if d._kind < 2 and not isinstance(alpha, (int, np.integer)):
            raise RuntimeError(
                "For integral input tensors, argument alpha must not be a floating point number."
            )
        if d is dt.bool_ and not isinstance(alpha, bool):
            raise RuntimeError("Boolean alpha only supported for Boolean results.")


def add(input, other, *, alpha=1, out=None) -> Tensor:
    if alpha != 1:
        other = mul(other, alpha)
    a, b, d = binary_operands(input, other)
    return write_out(apply(add_p, a, b), out)


def sub(input, other, *, alpha=1, out=None) -> Tensor:
    a, b, d = binary_operands(input, other)
    if d is dt.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if alpha != 1:
        _alpha_check(alpha, d)
        b = mul(b, alpha)
    return write_out(apply(sub_p, a, b), out)


subtract = sub


def rsub(input, other, *, alpha=1) -> Tensor:
    return sub(other, input, alpha=alpha)


def mul(input, other, *, out=None) -> Tensor:
    a, b, d = binary_operands(input, other)
    return write_out(apply(mul_p, a, b), out)


multiply = mul

floor_divide_p = _binary("floor_divide", np.floor_divide, grad_name="DivBackward0")
defvjp(floor_divide_p, lambda g, out, a, b: g * 0, lambda g, out, a, b: g * 0, reads=((), ()))
trunc_divide_p = _binary("trunc_divide", lambda a, b: np.trunc(np.true_divide(a, b)).astype(
    np.result_type(a, b)), grad_name="DivBackward0")
defvjp(trunc_divide_p, lambda g, out, a, b: g * 0, lambda g, out, a, b: g * 0, reads=((), ()))


def _int_zero_check(b) -> None:
    if isinstance(b, Tensor):
        if b.device.type == "cpu" and not b._dtype.is_floating_point and \
                not b._dtype.is_complex and bool((b._array() == 0).any()):
            raise RuntimeError("ZeroDivisionError")
    elif b == 0:
        raise RuntimeError("ZeroDivisionError")


def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    a, b, d = binary_operands(input, other)
    if rounding_mode is None:
        if d._kind < 2:
            fd = dt.get_default_dtype()
            a = a.to(fd) if isinstance(a, Tensor) else a
            b = b.to(fd) if isinstance(b, Tensor) else b
        return write_out(apply(div_p, a, b), out)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    if d._kind < 2:
        _int_zero_check(b)
    if d is dt.bool_:
        raise RuntimeError(f"\"{'div_floor' if rounding_mode == 'floor' else 'div_trunc'}_cpu\""
                           " not implemented for 'Bool'")
    prim = floor_divide_p if rounding_mode == "floor" else trunc_divide_p
    return write_out(apply(prim, a, b), out)


divide = div


def true_divide(input, other, *, out=None) -> Tensor:
    return div(input, other, out=out)


def floor_divide(input, other, *, out=None) -> Tensor:
    return div(input, other, rounding_mode="floor", out=out)


# --- pow --------------------------------------------------------------------

def _pow_kernel(a, b):
    # NOTE: NumPy's generic float pow is ~250x slower than repeated multiplication
    # for small integral exponents, which models use constantly (x ** 2).
    if not isinstance(b, np.ndarray) and isinstance(a, np.ndarray):
        if b == 2:
            return a * a
        if b == 3:
            return a * a * a
        if b == 1:
            return a.copy()
        if b == 0.5 and a.dtype.kind == "f":
            return np.sqrt(a)
        if b == -1 and a.dtype.kind in "fc":
            return np.reciprocal(a)
    return np.power(a, b)


pow_p = Primitive("pow", _pow_kernel, elementwise_meta)


def _pow_grad_base(g, out, a, b):
    if not isinstance(b, Tensor):
        if b == 0:
            return g * 0
        return g * b * a ** (b - 1)
    return g * b * _where_zero_exp(a, b)


def _where_zero_exp(a, b):
    # d/da a**b = b * a**(b-1); where b == 0 it is 0, even at a == 0.
    from .ternary import where

    return where(b == 0, 0.0, a ** (b - 1))


def _pow_grad_exp(g, out, a, b):
    from .ternary import where

    if not isinstance(a, Tensor):
        return g * out * float(np.log(a)) if a > 0 else where(out == 0, 0.0, g * out * np.log(a))
    return where((a == 0) & (b >= 0), 0.0, g * out * a.log())


defvjp(pow_p, _pow_grad_base, _pow_grad_exp, save_output=True)


def pow(input, exponent, *, out=None) -> Tensor:
    a, b, d = binary_operands(input, exponent)
    if d._kind == 1:
        neg = (b < 0) if is_scalar(b) else (
            b.device.type == "cpu" and bool((b._array() < 0).any()))
        if neg:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    if d is dt.bool_:
        a = a.to(dt.int64) if isinstance(a, Tensor) else a
        b = b.to(dt.int64) if isinstance(b, Tensor) else b
        return write_out(apply(pow_p, a, b).to(dt.bool_ if False else dt.int64), out)
    return write_out(apply(pow_p, a, b), out)


def float_power(input, exponent, *, out=None) -> Tensor:
    target = dt.complex128 if any(
        (isinstance(x, Tensor) and x._dtype.is_complex) or isinstance(x, complex)
        for x in (input, exponent)) else dt.float64
    a = input.to(target) if isinstance(input, Tensor) else input
    b = exponent.to(target) if isinstance(exponent, Tensor) else exponent
    return pow(a, b, out=out)


# --- comparisons (not differentiable) --------------------------------------------

def _compare(name: str, kernel) -> Primitive:
    prim = Primitive(name, kernel, lambda *a: elementwise_meta(*a, dtype=dt.bool_))
    nondifferentiable(prim)
    return prim


eq_p = _compare("eq", np.equal)
ne_p = _compare("ne", np.not_equal)
lt_p = _compare("lt", np.less)
le_p = _compare("le", np.less_equal)
gt_p = _compare("gt", np.greater)
ge_p = _compare("ge", np.greater_equal)


def _comparison(prim):
    def compare(input, other, *, out=None) -> Tensor:
        a, b, _ = binary_operands(input, other)
        return write_out(apply(prim, a, b), out)

    compare.__name__ = prim.name
    compare.__doc__ = f"Elementwise `{prim.name}` as a bool tensor, with broadcasting."
    return compare


eq = _comparison(eq_p)
ne = _comparison(ne_p)
lt = _comparison(lt_p)
le = _comparison(le_p)
gt = _comparison(gt_p)
ge = _comparison(ge_p)
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


# --- in-place forms -------------------------------------------------------------

def inplace_operand(self: Tensor, other):
    """`other` ready to combine into `self` in place; RuntimeError if the result can't be cast."""
    d = dt.result_type(self, other)
    if not dt.can_cast(d, self._dtype):
        raise RuntimeError(
            f"result type {type_name(d)} can't be cast to the desired output type "
            f"{type_name(self._dtype)}"
        )
    if isinstance(other, Tensor):
        if other._dtype is not d and d is not self._dtype:
            other = other.to(d)
        return other
    from ._common import fit_scalar

    return fit_scalar(other, d if d._kind >= self._dtype._kind else self._dtype)


def add_(self: Tensor, other, *, alpha=1) -> Tensor:
    if alpha != 1:
        other = mul(other, alpha)
    return apply_(add_p, self, inplace_operand(self, other))


def sub_(self: Tensor, other, *, alpha=1) -> Tensor:
    if self._dtype is dt.bool_:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if alpha != 1:
        other = mul(other, alpha)
    return apply_(sub_p, self, inplace_operand(self, other))


def mul_(self: Tensor, other) -> Tensor:
    return apply_(mul_p, self, inplace_operand(self, other))


def div_(self: Tensor, other, *, rounding_mode=None) -> Tensor:
    if rounding_mode is None:
        if self._dtype._kind < 2:
            raise RuntimeError(
                f"result type Float can't be cast to the desired output type "
                f"{type_name(self._dtype)}"
            )
        return apply_(div_p, self, inplace_operand(self, other))
    prim = floor_divide_p if rounding_mode == "floor" else trunc_divide_p
    if self._dtype._kind < 2:
        _int_zero_check(other)
    return apply_(prim, self, inplace_operand(self, other))


def pow_(self: Tensor, exponent) -> Tensor:
    return apply_(pow_p, self, inplace_operand(self, exponent))


def floor_divide_(self: Tensor, other) -> Tensor:
    return div_(self, other, rounding_mode="floor")


def _inplace_cmp(prim):
    def compare_(self: Tensor, other) -> Tensor:
        return apply_(prim, self, inplace_operand(self, other) if isinstance(other, Tensor)
                      else other)

    compare_.__name__ = prim.name + "_"
    return compare_


eq_, ne_, lt_, le_, gt_, ge_ = (_inplace_cmp(p) for p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))


# --- Python operators -------------------------------------------------------------

def _reflected(fn):
    def op(self, other):
        if not isinstance(other, Tensor) and not is_scalar(other):
            return NotImplemented
        return fn(other, self)

    return op


def _forward(fn):
    def op(self, other):
        if not isinstance(other, Tensor) and not is_scalar(other):
            return NotImplemented
        return fn(self, other)

    return op


def _iop(fn):
    def op(self, other):
        return fn(self, other)

    return op


TENSOR_METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": true_divide, "floor_divide": floor_divide, "pow": pow,
    "float_power": float_power, "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
    "not_equal": ne, "less": lt, "less_equal": le, "greater": gt, "greater_equal": ge,
    "add_": add_, "sub_": sub_, "subtract_": sub_, "mul_": mul_, "multiply_": mul_,
    "div_": div_, "divide_": div_, "true_divide_": div_, "pow_": pow_,
    "floor_divide_": floor_divide_, "eq_": eq_, "ne_": ne_, "lt_": lt_, "le_": le_,
    "gt_": gt_, "ge_": ge_,
    "__add__": _forward(add), "__radd__": _reflected(add),
    "__sub__": _forward(sub), "__rsub__": _reflected(sub),
    "__mul__": _forward(mul), "__rmul__": _reflected(mul),
    "__truediv__": _forward(div), "__rtruediv__": _reflected(div),
    "__floordiv__": _forward(floor_divide), "__rfloordiv__": _reflected(floor_divide),
    "__pow__": _forward(pow), "__rpow__": _reflected(pow),
    "__iadd__": _iop(add_), "__isub__": _iop(sub_), "__imul__": _iop(mul_),
    "__itruediv__": _iop(div_), "__ifloordiv__": _iop(floor_divide_), "__ipow__": _iop(pow_),
    "__eq__": _forward(eq), "__ne__": _forward(ne), "__lt__": _forward(lt),
    "__le__": _forward(le), "__gt__": _forward(gt), "__ge__": _forward(ge),
}

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "pow", "float_power", "eq", "ne", "lt", "le", "gt", "ge", "not_equal",
    "less", "less_equal", "greater", "greater_equal",
]
