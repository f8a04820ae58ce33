"""Pointwise math built from other ops, so it needs no VJP of its own: angle conversions,
logaddexp / logaddexp2, xlogy, signbit, copysign, sinc, heaviside, positive, and their
in-place forms (the result written into self).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _wrap
from ._arg_parser_text import need_tensors, operand_error
from ._common import type_name, write_out
from .copy import relaid
from .one_node import plain_call, plain_eager
from .registry import rename_node, saves

_PLAIN = (dt.float32, dt.float64)


def _floating(x: Tensor) -> Tensor:
    """`x`, or `x` in the default float dtype when it holds integers or bools."""
    return x if x.dtype._kind >= 2 else x.to(dt.get_default_dtype())


def _tensors(name: str, **args) -> None:
    need_tensors(name, *((arg, pos, v) for arg, (pos, v) in args.items()))


def _common_floating(name: str, a, b) -> dt.dtype:
    """The floating dtype two operands compute in (integers promote to the default float);
    complex is refused, as PyTorch's real-only kernels do."""
    from .._view import broadcast_shapes

    if isinstance(a, Tensor):  # (a shape mismatch is reported before a dtype)
        broadcast_shapes(a.shape, b.shape)
    common = _result_dtype(a, b)
    if common._kind == 3:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{type_name(common)}\'')
    return common if common._kind == 2 else dt.get_default_dtype()


def _number(name: str, input, v) -> None:
    """The parser's TypeError (checked before any dtype) unless `v` is a Python number."""
    if not isinstance(v, (bool, int, float, complex)):
        raise operand_error(name, (input, v), method=False)


def _result_dtype(a, b) -> dt.dtype:
    """The dtype PyTorch computes `a` op `b` in (0-d tensors and numbers rank lower)."""
    from ._common import binary_operands

    return binary_operands(a, b)[2]


def _node(out: Tensor, name: str) -> Tensor:
    """`out`, its graph node (if any) given the class of PyTorch's one node for the op, so
    grad_fn reads the same (these ops are several ember ops, one kernel in PyTorch)."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, name)
    return out


_LOW = (dt.float16, dt.bfloat16)


def _opmath(x: Tensor) -> Tensor:
    """`x` in the dtype PyTorch's kernels compute in: float32 for float16 / bfloat16 (the
    result is rounded once at the end), else `x` itself."""
    return x.to(dt.float32) if x.dtype in _LOW else x


def _with_complex(d: dt.dtype) -> dt.dtype:
    """The complex dtype a complex Python number gives with a tensor of dtype `d`."""
    return d if d.is_complex else (dt.complex128 if d is dt.float64 else dt.complex64)


def deg2rad(input: Tensor, *, out=None) -> Tensor:
    """Degrees to radians, in a floating dtype."""
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    # (PyTorch multiplies into `empty_like(input)`: its layout)
    res = relaid(_floating(input) * (math.pi / 180.0), (input,), "like")
    return write_out(_node(res, "Deg2RadBackward0"), out)


def rad2deg(input: Tensor, *, out=None) -> Tensor:
    """Radians to degrees, in a floating dtype."""
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    res = relaid(_floating(input) * (180.0 / math.pi), (input,), "like")
    return write_out(_node(res, "Rad2DegBackward0"), out)


def _log_add(name: str, a: Tensor, b: Tensor, log1p_pow) -> Tensor:
    from .._view import broadcast_shapes
    from .ternary import where

    _tensors(name, input=(1, a), other=(2, b))
    broadcast_shapes(a.shape, b.shape)
    # The dtype the two promote to decides (an int tensor with a float one is fine).
    common = _result_dtype(a, b)
    if common._kind < 2 or (common._kind == 3 and name != "logaddexp"):
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{type_name(common)}'")
    given, seen = (a, b), (a.to(common), b.to(common))
    a, b = _opmath(seen[0]), _opmath(seen[1])
    if common._kind == 3:
        # Complex: factor out the operand with the larger real part.
        first = a.real >= b.real
        hi, lo = where(first, a, b), where(first, b, a)
        out = hi + (lo - hi).exp().log1p()  # an infinite hi (or lo at -inf) gives hi
    else:
        # log(e^a + e^b) = max + log1p(e^-|a-b|); equal infinities give themselves (not NaN).
        # NOTE: the max and -|a-b| picked by one `where`, not by maximum() and abs(): at a
        # tie those split or zero the gradient's own derivative, where torch's second
        # derivative is sigmoid'(0) (0.25 for logaddexp)
        first = a >= b
        out = where(first, a, b) + log1p_pow(where(first, b - a, a - b))
    node = "LogaddexpBackward0" if name == "logaddexp" else "Logaddexp2Backward0"
    # (PyTorch's node saves both inputs: an in-place change to one raises in backward)
    out = relaid(where((a == b) & a.isinf(), a, out).to(common), seen)
    return saves(_node(out, node), *given)


def logaddexp(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """log(exp(input) + exp(other)), without overflow."""
    return write_out(_log_add("logaddexp", input, other, lambda d: d.exp().log1p()), out)


def logaddexp2(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """log2(2**input + 2**other), without overflow."""
    return write_out(_log_add("logaddexp2", input, other,
                              lambda d: (d * math.log(2.0)).exp().log1p() / math.log(2.0)),
                     out)


def xlogy(input, other, *, out=None) -> Tensor:
    """input * log(other), and 0 where input is 0 (unless other is NaN)."""
    return write_out(_xlogy(input, other), out)


def _xlogy(input, other) -> Tensor:
    from .creation import tensor
    from .ternary import where

    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("xlogy(): expected at least one Tensor argument")
    if not isinstance(other, Tensor):  # (its log in double precision, as PyTorch's)
        _number("xlogy", input, other)
        if input.dtype.is_complex or isinstance(other, complex):
            raise NotImplementedError(f'"xlogy_cpu" not implemented for '
                                      f"'{type_name(_with_complex(input.dtype))}'")
        x = _floating(input)
        if x.dtype.itemsize == 2 and other == other:
            # a 16-bit tensor reads the number in its dtype (through float, as PyTorch's
            # Scalar conversion) and rounds its log to it too
            other = float(np.float32(other).astype(x.dtype.np))
        log_y = math.log(other) if other > 0 else (-math.inf if other == 0 else math.nan)
        if x.dtype.itemsize == 2 and other > 0:
            log_y = float(np.log(np.float32(other)).astype(x.dtype.np))
        if (other > 0 and log_y != math.inf) or math.isnan(other):
            return _node(x * log_y, "XlogyBackward2")
        return _node(x * where(x == 0, 0.0, tensor(log_y, dtype=x.dtype)), "XlogyBackward2")
    from .binary import binary_p
    from .registry import apply
    from .special_ops import xlogy_fn

    common = _common_floating("xlogy", input, other)
    if isinstance(input, Tensor):
        input = input.to(common)
    out = apply(binary_p, input, other.to(common), fn=xlogy_fn)
    return out if isinstance(input, Tensor) else _node(out, "XlogyBackward1")


def signbit(input: Tensor, *, out=None) -> Tensor:
    """True where the sign bit is set: negatives, -0.0 and NaNs with the bit set."""
    from .unary_math import layout_own

    if (own := layout_own(input, "signbit", out)) is not None:  # (a sparse layout's own)
        return own(input)
    d = input.dtype
    if d.is_complex:
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if isinstance(out, Tensor) and out._dtype is not dt.bool_:
        raise RuntimeError("signbit does not support non-boolean outputs.")
    if d._kind == 2:
        bits = {2: dt.int16, 4: dt.int32, 8: dt.int64}[d.itemsize]
        return write_out(relaid(input.detach().contiguous().view(bits) < 0, (input,)), out)
    return write_out(relaid(input < 0, (input,)), out)


def copysign(input: Tensor, other, *, out=None) -> Tensor:
    """|input| with the sign of `other` (a tensor or a number), in a floating dtype."""
    return write_out(_copysign(input, other), out)


def _copysign(input: Tensor, other) -> Tensor:
    from .binary import binary_p
    from .binary_math import copysign_fn
    from .creation import scalar_tensor
    from .registry import apply

    _tensors("copysign", input=(1, input))
    if not isinstance(other, Tensor):
        _number("copysign", input, other)
        if isinstance(other, complex) or input.dtype.is_complex:
            raise NotImplementedError(f'"copysign_cpu" not implemented for '
                                      f"'{type_name(_with_complex(input.dtype))}'")
        x = _floating(input)
        sign = scalar_tensor(math.copysign(1.0, other), dtype=x.dtype, device=x.device)
        out = _node(apply(binary_p, x, sign, fn=copysign_fn), "CopysignBackward1")
        return saves(out, out, input if input.requires_grad else None)
    plain = _copysign_plain(input, other)
    if plain is not None:
        return plain
    common = _common_floating("copysign", input, other)
    # (the operands PyTorch's kernel sees: integers cast to `common` first)
    out = apply(binary_p, input.to(common), other.to(common), fn=copysign_fn)
    # (PyTorch's node saves the result, and the input when the input needs a gradient)
    return saves(out, out, input if input.requires_grad else None)


def _copysign_plain(input: Tensor, other) -> Tensor | None:
    """copysign of two row-major float32 / float64 tensors of one dtype and shape in a plain
    call (`one_node.plain_call`: no graph, no interpreter), as one np.copysign, the member's
    kernel, without its dispatch. None: bind the member."""
    if other.__class__ is not Tensor or input._dtype not in _PLAIN or \
            other._dtype is not input._dtype or input._shape != other._shape or \
            not plain_call(input, other) or not plain_eager() or \
            not (input.is_contiguous() and other.is_contiguous()):
        return None
    a, b = (t._np if t._np is not None else t._array() for t in (input, other))
    return _wrap(np.copysign(a, b))


def sinc(input: Tensor, *, out=None) -> Tensor:
    """sin(pi x) / (pi x), and 1 at 0."""
    from .ternary import where

    x = _floating(input)
    w = _opmath(x)  # (pi * x in float16 would move sinc(1) from -0.0 to 3e-4)
    at_zero = w == 0
    safe = where(at_zero, 1.0, w) * math.pi  # (keeps 0/0 out of the gradient at 0)
    res = relaid(where(at_zero, 1.0, safe.sin() / safe).to(x.dtype), (x,))
    res = _node(res, "SincBackward0")
    return write_out(saves(res, input), out)  # (saves the input, as PyTorch's node)


def heaviside(input: Tensor, values: Tensor, *, out=None) -> Tensor:
    """0 below 0, 1 above, `values` at 0; like PyTorch, its backward raises."""
    return write_out(_heaviside(input, values), out)


def heaviside_(self: Tensor, values: Tensor) -> Tensor:
    """In place through the primitive's in-place form: one `NotImplemented` node on `self`'s
    history, whose refusal names aten::heaviside_, as PyTorch's."""
    return _heaviside(self, values, inplace=True)


def _heaviside(input: Tensor, values: Tensor, inplace: bool = False) -> Tensor:
    from .._view import broadcast_shapes
    from .special_ops import heaviside_values

    if inplace:  # (the method's words: `values` is its first argument)
        _tensors("heaviside_", values=(1, values))
    _tensors("heaviside", input=(1, input), values=(2, values))
    broadcast_shapes(input.shape, values.shape)
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return heaviside_values(input, values, inplace)


def positive(input: Tensor) -> Tensor:
    if input.dtype is dt.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _written_into_self(fn):
    """`self.<fn>_(...)`: the out-of-place result written into `self`, refused as PyTorch's
    in-place kernels refuse it (a broadcast past self's shape, then a result dtype self
    cannot hold)."""
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        # (a composite may save its input for backward: in the graph, it gets a copy, so
        # the write into self leaves what was saved alone)
        result = fn(self.clone() if self.requires_grad else self, *args, **kwargs)
        if result.shape != self.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        if not dt.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {type_name(result.dtype)} can't be cast to the "
                               f"desired output type {type_name(self.dtype)}")
        self.copy_(result)
        # (PyTorch's in-place kernel gets the out-of-place op's node, not a copy's; a view
        # written in place keeps its view node, as there)
        node = self.grad_fn
        if (node is not None and type(node).__name__ == "CopyBackwards"
                and result.grad_fn is not None):
            rename_node(node, type(result.grad_fn).__name__)
        return self

    method.__name__ = fn.__name__ + "_"
    return method


TENSOR_METHODS = {
    "deg2rad": deg2rad, "rad2deg": rad2deg, "logaddexp": logaddexp, "logaddexp2": logaddexp2,
    "xlogy": xlogy, "signbit": signbit, "copysign": copysign, "sinc": sinc,
    "heaviside": heaviside, "heaviside_": heaviside_, "positive": positive,
    **{f.__name__ + "_": _written_into_self(f)
       for f in (deg2rad, rad2deg, xlogy, copysign, sinc)},
}

__all__ = ["deg2rad", "rad2deg", "logaddexp", "logaddexp2", "xlogy", "signbit", "copysign",
           "sinc", "heaviside", "positive"]
