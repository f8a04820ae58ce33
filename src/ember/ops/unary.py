"""Unary elementwise math: each op is one primitive with its VJP on the next line.

Integer and bool inputs to floating-point functions are first cast to the
default dtype, as PyTorch does (`torch.tensor([1, 4]).sqrt()` is float32).
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._common import same_meta, to_float, write_out
from .registry import Primitive, apply, apply_, defvjp, nondifferentiable


def unary(name: str, kernel, *, grad_name: str | None = None) -> Primitive:
    return Primitive(name, kernel, same_meta, grad_name=grad_name)


def _float_op(prim: Primitive, doc: str):
    """Public function and in-place method for a float-valued unary primitive."""
    def op(input: Tensor, *, out=None) -> Tensor:
        return write_out(apply(prim, to_float(input)), out)

    def op_(self: Tensor) -> Tensor:
        if self._dtype._kind < 2:
            from ._common import type_name

            raise RuntimeError(
                f"result type Float can't be cast to the desired output type "
                f"{type_name(self._dtype)}"
            )
        return apply_(prim, self)

    op.__name__, op_.__name__ = prim.name, prim.name + "_"
    op.__doc__ = doc
    return op, op_


def _same_op(prim: Primitive, doc: str):
    """Public function and in-place method for a dtype-preserving unary primitive."""
    def op(input: Tensor, *, out=None) -> Tensor:
        return write_out(apply(prim, input), out)

    def op_(self: Tensor) -> Tensor:
        return apply_(prim, self)

    op.__name__, op_.__name__ = prim.name, prim.name + "_"
    op.__doc__ = doc
    return op, op_


# --- the primitives, each with its derivative --------------------------------------------

neg_p = unary("neg", np.negative)
defvjp(neg_p, lambda g, out, x: -g, reads=((),))

exp_p = unary("exp", np.exp)
defvjp(exp_p, lambda g, out, x: g * out.conj(), reads=((),), save_output=True)

log_p = unary("log", np.log)
defvjp(log_p, lambda g, out, x: g / x.conj())

sqrt_p = unary("sqrt", np.sqrt)
defvjp(sqrt_p, lambda g, out, x: g / (2 * out.conj()), reads=((),), save_output=True)

sin_p = unary("sin", np.sin)
defvjp(sin_p, lambda g, out, x: g * x.cos().conj())

cos_p = unary("cos", np.cos)
defvjp(cos_p, lambda g, out, x: -g * x.sin().conj())

tanh_p = unary("tanh", np.tanh)
defvjp(tanh_p, lambda g, out, x: g * (1 - out * out).conj(), reads=((),), save_output=True)


def _sigmoid_kernel(a):
    # NOTE: split by sign so exp never overflows (PyTorch's CPU kernel is stable too).
    out = np.empty_like(a)
    pos = a >= 0
    np.divide(1, 1 + np.exp(-a, where=pos, out=np.zeros_like(a)), where=pos, out=out)
    e = np.exp(a, where=~pos, out=np.zeros_like(a))
    np.divide(e, 1 + e, where=~pos, out=out)
    return out


sigmoid_p = unary("sigmoid", _sigmoid_kernel)
defvjp(sigmoid_p, lambda g, out, x: g * (out * (1 - out)).conj(), reads=((),), save_output=True)


def _abs_kernel(a):
    return np.abs(a) if a.dtype != np.bool_ else a.copy()


abs_p = unary("abs", _abs_kernel)
defvjp(abs_p, lambda g, out, x: g * x.sgn())

sign_p = unary("sign", np.sign)
defvjp(sign_p, lambda g, out, x: g * 0, reads=((),))


def _relu_kernel(a):
    return np.maximum(a, 0) if a.dtype != np.bool_ else a.copy()


relu_p = unary("relu", _relu_kernel)
# NOTE: the derivative at 0 is taken as 0, as in PyTorch (threshold_backward).
defvjp(relu_p, lambda g, out, x: g * (out > 0), reads=((),), save_output=True)


def _sgn_kernel(a):
    if a.dtype.kind == "c":
        mag = np.abs(a)
        return np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag)).astype(a.dtype)
    return np.sign(a)


sgn_p = unary("sgn", _sgn_kernel)
defvjp(sgn_p, lambda g, out, x: g * 0, reads=((),))

logical_not_p = Primitive("logical_not", np.logical_not, lambda x: same_meta(x, _bool()))
nondifferentiable(logical_not_p)


def _bool():
    from .. import _dtype as dt

    return dt.bool_


def _bitwise_not_kernel(a):
    return np.logical_not(a) if a.dtype == np.bool_ else np.invert(a)


bitwise_not_p = unary("bitwise_not", _bitwise_not_kernel)
nondifferentiable(bitwise_not_p)


conj_p = unary("conj", np.conjugate, grad_name="ConjBackward0")
defvjp(conj_p, lambda g, out, x: g.conj(), reads=((),))


def _real_kernel(a):
    return np.array(a.real)


def _complex_part_meta(x):
    return same_meta(x, x._dtype.to_real())


real_p = Primitive("real", _real_kernel, _complex_part_meta)
defvjp(real_p, lambda g, out, x: g.to(_complex_of(g)), reads=((),))
imag_p = Primitive("imag", lambda a: np.array(a.imag), _complex_part_meta)
defvjp(imag_p, lambda g, out, x: g.to(_complex_of(g)) * 1j, reads=((),))


def _complex_of(g):
    return g._dtype.to_complex()


def conj(input: Tensor) -> Tensor:
    """Complex conjugate; the tensor itself for real dtypes."""
    return apply(conj_p, input) if input._dtype.is_complex else input


def real(input: Tensor) -> Tensor:
    return apply(real_p, input) if input._dtype.is_complex else input


def imag(input: Tensor) -> Tensor:
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(imag_p, input)


# --- public functions ------------------------------------------------------------

exp, exp_ = _float_op(exp_p, "e to the power of each element.")
log, log_ = _float_op(log_p, "Natural logarithm of each element.")
sqrt, sqrt_ = _float_op(sqrt_p, "Square root of each element.")
sin, sin_ = _float_op(sin_p, "Sine of each element (radians).")
cos, cos_ = _float_op(cos_p, "Cosine of each element (radians).")
tanh, tanh_ = _float_op(tanh_p, "Hyperbolic tangent of each element.")
sigmoid, sigmoid_ = _float_op(sigmoid_p, "1 / (1 + exp(-x)), computed without overflow.")
neg, neg_ = _same_op(neg_p, "Negation of each element.")
abs, abs_ = _same_op(abs_p, "Absolute value of each element.")
sign, sign_ = _same_op(sign_p, "Sign (-1, 0, 1) of each element.")
sgn, sgn_ = _same_op(sgn_p, "Sign, and z / |z| for complex inputs.")
relu, relu_ = _same_op(relu_p, "max(x, 0) elementwise.")
bitwise_not, bitwise_not_ = _same_op(bitwise_not_p, "Bitwise (or, for bool, logical) NOT.")
negative, negative_ = neg, neg_
absolute, absolute_ = abs, abs_


def _neg_checked(x: Tensor) -> Tensor:
    if x._dtype.name == "bool":
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return neg(x)


def logical_not(input: Tensor, *, out=None) -> Tensor:
    return write_out(apply(logical_not_p, input), out)


def logical_not_(self: Tensor) -> Tensor:
    return apply_(logical_not_p, self)


TENSOR_METHODS = {
    "exp": exp, "exp_": exp_, "log": log, "log_": log_, "sqrt": sqrt, "sqrt_": sqrt_,
    "sin": sin, "sin_": sin_, "cos": cos, "cos_": cos_, "tanh": tanh, "tanh_": tanh_,
    "sigmoid": sigmoid, "sigmoid_": sigmoid_, "neg": _neg_checked, "neg_": neg_,
    "negative": _neg_checked, "negative_": neg_, "abs": abs, "abs_": abs_,
    "absolute": abs, "absolute_": abs_, "sign": sign, "sign_": sign_, "sgn": sgn, "sgn_": sgn_,
    "relu": relu, "relu_": relu_, "logical_not": logical_not, "logical_not_": logical_not_,
    "bitwise_not": bitwise_not, "bitwise_not_": bitwise_not_,
    "__neg__": _neg_checked, "__abs__": abs, "__invert__": bitwise_not,
    "__pos__": lambda x: x, "conj": conj, "resolve_conj": lambda x: x,
    "resolve_neg": lambda x: x, "real": property(real), "imag": property(imag),
}

__all__ = [
    "exp", "exp_", "log", "log_", "sqrt", "sqrt_", "sin", "sin_", "cos", "cos_", "tanh",
    "tanh_", "sigmoid", "sigmoid_", "neg", "neg_", "negative", "negative_", "abs", "abs_",
    "absolute", "sign", "sgn", "relu", "relu_", "logical_not", "bitwise_not", "conj", "real",
    "imag",
]
