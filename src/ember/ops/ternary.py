"""Ops of three operands: where, clamp / clip, lerp, addcmul, addcdiv, the members of one
primitive (the `ternary` family), with their derivatives."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from .._user_warnings import warn_at_user
from .._view import broadcast_shapes
from . import _multiply_add as multiply_add
from ._arg_parser_text import (
    called_as_method,
    invalid_combination,
    method_aware,
    need_tensor,
    need_tensors,
    operand_error,
)
from ._common import (
    OperandTypeError,
    binary_operands,
    bounded,
    broadcast_errors,
    c_type_name,
    elementwise_meta,
    fit_scalar,
    is_scalar,
    select,
    tensoriterator_family,
    type_name,
    write_out,
)
from ._dynamic_shape import refuse_batched
from ._half_casts import cast, widen
from ._piecewise_native import CLAMP, piecewise_native
from ._pointwise import batch_pointwise, shaped, tangent_sum
from ._scalar_value import (
    _python_number,
    integer_operand,
    real_operand,
    scalar_value,
    uint64_promotion,
)
from .binary import not_implemented
from .registry import Family, Member, apply, apply_, defbatch, defjvp, defvjp

_grad_state = grad_mode.state

# where, clamp, lerp, addcmul and addcdiv are one primitive, the function a static param
# (`bind(ternary_p, cond, a, b, fn=where_fn)`), as the binary maps are.
ternary_p = Family("ternary")
tensoriterator_family(ternary_p)  # (a mixed-layout call laid out as TensorIterator's)
defbatch(ternary_p, batch_pointwise(ternary_p))

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _meta3(*args, **params):
    return elementwise_meta(*(x for x in args if isinstance(x, Tensor)))


def _lowp(fn):
    """Kernel over several arrays: float16 / bfloat16 compute in float32, round once."""
    def kernel(*arrays, **params):
        d = next(a.dtype for a in arrays if isinstance(a, np.ndarray))
        if d.itemsize == 2 and d.kind in "fV":
            arrays = [widen(a) if isinstance(a, np.ndarray) else a for a in arrays]
            return cast(np.asarray(fn(*arrays, **params)), d)
        return fn(*arrays, **params)

    return kernel


def _cast_all(d: dt.dtype, *xs):
    """Tensors cast to `d`, numbers fitted to it (None passes through)."""
    return [x.to(d) if isinstance(x, Tensor) and x._dtype is not d
            else (fit_scalar(x, d) if x is not None and not isinstance(x, Tensor) else x)
            for x in xs]


# --- where ---------------------------------------------------------------------------

@broadcast_errors
def _where_kernel(cond, a, b):
    return select(cond, a, b)


def _where_meta(cond, a, b):
    shape, _, stride = elementwise_meta(cond, a, b)  # (a number: a 0-d operand, as eager)
    kinds = [x._dtype for x in (a, b) if isinstance(x, Tensor)]
    return shape, kinds[0], stride


where_fn = Member(ternary_p, "where", _where_kernel, _where_meta)


def _masked(g: Tensor, cond: Tensor, keep_true: bool) -> Tensor:
    zero = 0j if g._dtype.is_complex else 0
    return where(cond, g, zero) if keep_true else where(cond, zero, g)


defvjp(where_fn, None, lambda g, out, cond, a, b: _masked(g, cond, True),
       lambda g, out, cond, a, b: _masked(g, cond, False), reads=((), (0,), (0,)))


def _where_jvp(primals, tangents, out):
    _, ta, tb = tangents
    if ta is None and tb is None:
        return None
    zero = 0j if out._dtype.is_complex else 0.0
    return shaped(where(primals[0], zero if ta is None else ta, zero if tb is None else tb),
                  out)


defjvp(where_fn, _where_jvp)


def where(condition: Tensor, input=None, other=None, *, out=None):
    """`input` where `condition` holds, else `other`; one-argument form is `nonzero(as_tuple)`."""
    need_tensor(condition, "where", "condition")
    if input is None and other is None:
        from .nonzero import nonzero

        refuse_batched(condition, "aten::where")

        return nonzero(condition, as_tuple=True)
    if out is not None:  # (the out= overload takes tensors only)
        need_tensors("where", ("input", 2, input), ("other", 3, other))
    if condition._dtype is not dt.bool_:
        if condition._dtype is not dt.uint8:
            raise RuntimeError(
                "where expected condition to be a boolean tensor, but got a tensor with dtype "
                f"{type_name(condition._dtype)}"
            )
        warn_at_user("where received a uint8 condition tensor. This behavior is deprecated and "
                     "will be removed in a future version of PyTorch. Use a boolean condition "
                     "instead.", once=True)
        condition = condition.to(dt.bool_)
    shape = condition._shape  # shapes broadcast in PyTorch's operand order: the condition first
    for x in (input, other):
        if isinstance(x, Tensor) and x._shape != shape:
            shape = broadcast_shapes(shape, x._shape)
    input, other = dt.py_number(input), dt.py_number(other)
    try:
        if isinstance(input, Tensor) or isinstance(other, Tensor):
            a, b, d = binary_operands(input, other)
        else:
            d = dt.result_type(input, other)
    except OperandTypeError:
        raise operand_error("where", (condition, input, other), {"out": out},
                            method=False) from None
    if d._kind == 1:
        integer_operand(input, d)
        integer_operand(other, d)
    if not (isinstance(input, Tensor) or isinstance(other, Tensor)):
        from .creation import scalar_tensor

        a = scalar_tensor(input, dtype=d, device=condition.device)
        b = other
    return write_out(apply(ternary_p, condition, a, b, fn=where_fn), out,
                     (condition, input, other))


# --- clamp / clip ---------------------------------------------------------------------

@broadcast_errors
def _clamp_kernel(x, lo=None, hi=None):
    """min(max(x, lo), hi), keeping x on a tie with a bound as PyTorch does (clamp(-0.0,
    min=0) is -0.0): the bound goes first (see `bounded`)."""
    if x.dtype in _CLIP_DTYPES and _clips(x, lo) and _clips(x, hi):
        return np.clip(x, lo, hi)  # (one vectorised pass: 3x faster than the two below)
    out = x if lo is None else _bound(np.maximum, x, lo)
    out = out if hi is None else _bound(np.minimum, out, hi)
    return out.copy() if out is x else out


_CLIP_DTYPES = (np.float32, np.float64)


def _clips(x, bound) -> bool:
    """Whether np.clip gives the bits of the bound-first compares for this bound: a number
    in x's dtype that is neither 0 (on a tie np.clip returns the bound, so clamp(-0.0, 0)
    would be 0.0) nor NaN (whose sign and payload np.clip takes from the other side)."""
    if bound is None or np.ndim(bound) != 0 or np.result_type(bound, x) != x.dtype:
        return False
    b = x.dtype.type(bound)
    return b == b and b != 0


def _bound(fn, x, bound):
    return bounded(fn, x, bound) if np.ndim(bound) == 0 else fn(bound, x)


# (each gradient is g where its mask holds and 0 elsewhere, selected as PyTorch's
# `where`: an infinite or NaN g gives 0 outside the mask, not g * 0)

def _number_bound(b):
    """A bound as the masks compare with it: a number bound reaches the node rounded to a
    16-bit dtype as a NumPy / ml_dtypes scalar (`fit_scalar`), which tensors do not take
    (bfloat16's); the Python number of the same value does."""
    return b if b is None or isinstance(b, Tensor) else _python_number(b)


def _clamp_grad_input(g, out, x, lo=None, hi=None):
    lo, hi = _number_bound(lo), _number_bound(hi)
    keep = None
    if lo is not None:
        keep = x >= lo
    if hi is not None:
        keep = (x <= hi) if keep is None else keep & (x <= hi)
    return where(keep, g, 0.0)


def _clamp_grad_min(g, out, x, lo, hi):
    # NOTE: PyTorch's clamp_backward_min_max: when min > max the result is max, so min gets
    # no gradient there.
    lo, hi = _number_bound(lo), _number_bound(hi)
    mask = x < lo if hi is None else (x < lo) & (lo < hi)
    return where(mask, g, 0.0)


def _clamp_grad_max(g, out, x, lo, hi):
    lo, hi = _number_bound(lo), _number_bound(hi)
    mask = x > hi if lo is None else (x > hi) | (hi < lo)
    return where(mask, g, 0.0)


def _clamp_jvp(primals, tangents, out):
    x, lo, hi = primals
    tx, tlo, thi = tangents
    return shaped(tangent_sum(
        None if tx is None else _clamp_grad_input(tx, out, x, lo, hi),
        None if tlo is None else _clamp_grad_min(tlo, out, x, lo, hi),
        None if thi is None else _clamp_grad_max(thi, out, x, lo, hi)), out)


# PyTorch's overloads, one member each for their node names: bounds that are numbers
# (ClampBackward1) or tensors (ClampBackward0).
clamp_fn = Member(ternary_p, "clamp", _clamp_kernel, _meta3, grad_name="ClampBackward1")
clamp_tensor_fn = Member(ternary_p, "clamp_tensor", _clamp_kernel, _meta3,
                         grad_name="ClampBackward0")
# clamp_min / clamp_max are overloads of their own in PyTorch, with their own node names
clamp_min_fn = Member(ternary_p, "clamp_min", _clamp_kernel, _meta3,
                      grad_name="ClampMinBackward0")
clamp_min_tensor_fn = Member(ternary_p, "clamp_min_tensor", _clamp_kernel, _meta3,
                             grad_name="ClampMinBackward1")
clamp_max_fn = Member(ternary_p, "clamp_max", _clamp_kernel, _meta3,
                      grad_name="ClampMaxBackward0")
clamp_max_tensor_fn = Member(ternary_p, "clamp_max_tensor", _clamp_kernel, _meta3,
                             grad_name="ClampMaxBackward1")


def _c_bound(bound, x) -> bool:
    """Whether csrc/activation.c's clamp takes `bound` as the NumPy kernel does: None, or a
    Python number that is not NaN, in x's dtype (rounded to it from a double as NumPy rounds
    it: an int exact in a double)."""
    if bound is None:
        return True
    if bound.__class__ not in (int, float) or bound != bound or \
            (bound.__class__ is int and abs(bound) > 1 << 53):
        return False
    return np.result_type(bound, x) == x.dtype


_CLAMP_NATIVE_MIN = 1 << 10  # (as the piecewise activations': below, NumPy's pass is cheaper)


def _clamp_native(lib, x, lo=None, hi=None):
    """clamp by number bounds in one C pass over the kernel threads (hardtanh's kernel: the
    bound-first compares, x kept on a tie and NaN x kept, so the NumPy kernel's bits), for a
    C-order float32 / float64 input; NumPy's np.clip runs on one thread."""
    if not (_c_bound(lo, x) and _c_bound(hi, x)):
        return NotImplemented
    return piecewise_native(CLAMP, lib, x, -np.inf if lo is None else float(lo),
                            np.inf if hi is None else float(hi))


for _fn in (clamp_fn, clamp_min_fn, clamp_max_fn):
    native.register(_fn, "activation", _clamp_native,
                    min_size=(globals(), "_CLAMP_NATIVE_MIN"))

_ONE_SIDED = {"min": (clamp_min_fn, clamp_min_tensor_fn),
              "max": (clamp_max_fn, clamp_max_tensor_fn), None: (clamp_fn, clamp_tensor_fn)}
for _fn in (clamp_fn, clamp_tensor_fn, clamp_min_fn, clamp_min_tensor_fn, clamp_max_fn,
            clamp_max_tensor_fn):
    defvjp(_fn, _clamp_grad_input, _clamp_grad_min, _clamp_grad_max)
    defjvp(_fn, _clamp_jvp)


def _clamp_member(lo, hi, side: str | None = None) -> Member:
    """The member for these bounds: `side` names the one-sided op (clamp_min / clamp_max)."""
    number, tensor = _ONE_SIDED[side]
    return tensor if isinstance(lo, Tensor) or isinstance(hi, Tensor) else number


def _clamp_args(input: Tensor, min, max, name: str = "clamp", side: str | None = None,
                inplace: bool = False):
    """The promoted operands and the result dtype of a clamp call (`side`: clamp_min /
    clamp_max's own overloads; `inplace`: the result is `input`)."""
    need_tensor(input, name)
    if min is None and max is None:
        raise RuntimeError(f"torch.{name}: At least one of 'min' or 'max' must not be None")
    if (isinstance(min, Tensor) or isinstance(max, Tensor)) and not (
            min is None or max is None or isinstance(min, Tensor) and isinstance(max, Tensor)):
        raise OperandTypeError(f"{name}: min and max must both be Tensors or both numbers")
    min, max = dt.py_number(min), dt.py_number(max)  # (as the parser reads them)
    bounds = [b for b in (min, max) if b is not None]
    for b in bounds:
        if b.__class__ is int:
            _python_number(b)  # (PyTorch's Scalar holds no int outside int64 and uint64)
        uint64_promotion(input._dtype, b)
    tensor_bounds = isinstance(min, Tensor) or isinstance(max, Tensor)
    if tensor_bounds:
        d = _clamp_tensor_dtype(input, min, max, side, inplace)
    else:
        d = dt.result_type(input, *bounds)  # (first: the parser refuses what is no number)
        min, max = _complex_number_bounds(input, min, max, side, inplace)
        bounds = [b for b in (min, max) if b is not None]
        if input._dtype._kind == 2:  # (a float input is not promoted by its number bounds)
            d = input._dtype
    for b in bounds:
        integer_operand(b, d)
    if tensor_bounds and d is dt.bool_ and min is not None and max is not None:
        raise not_implemented("clamp_cpu", d)
    if d._kind == 2:  # (an int past int64 bounds a float tensor as the double it rounds to)
        min, max = (float(b) if b.__class__ is int and b >= 2 ** 63 else b
                    for b in (min, max))
    x, lo, hi = _cast_all(d, input, min, max)
    return x, lo, hi, d


def _refuse_complex() -> NotImplementedError:
    return NotImplementedError("clamp is not supported for complex types")


def _complex_number_bounds(input: Tensor, min, max, side: str | None, inplace: bool):
    """PyTorch's clamp with number bounds: complex inputs are refused; clamp_min / clamp_max
    refuse any complex bound; clamp reads a float input's bounds as doubles (a complex one
    with an imaginary part overflows, one without is its real part) and promotes an integer
    or bool input with them (a complex result refused, in place first as a cast)."""
    if input._dtype.is_complex:
        raise _refuse_complex()
    complex_bound = any(isinstance(b, numbers.Complex) and not isinstance(b, numbers.Real)
                        for b in (min, max))
    if not complex_bound:
        return min, max
    if side is not None:
        raise _refuse_complex()
    if input._dtype._kind == 2:
        if any(isinstance(b, complex) and b.imag for b in (min, max)):
            raise RuntimeError("value cannot be converted to type double without overflow")
        return (b.real if isinstance(b, complex) else b for b in (min, max))
    d = dt.result_type(input, *(b for b in (min, max) if b is not None))
    if inplace:
        raise RuntimeError(f"result type {type_name(d)} can't be cast to the desired output "
                           f"type {c_type_name(input._dtype)}")
    raise _refuse_complex()


def _clamp_tensor_dtype(input: Tensor, min, max, side: str | None, inplace: bool):
    """The result dtype of clamp with tensor bounds: clamp refuses a complex input; a complex
    result reaches the kernels, which have none (clamp_min / clamp_max are maximum /
    minimum), after the in-place cast check."""
    if side is None and input._dtype.is_complex:
        raise _refuse_complex()
    d = dt.result_type(input, *(b for b in (min, max) if b is not None))
    if not d.is_complex:
        return d
    if inplace and d is not input._dtype:
        raise RuntimeError(f"result type {type_name(d)} can't be cast to the desired output "
                           f"type {type_name(input._dtype)}")
    kname = "minimum_cpu" if min is None else "maximum_cpu" if max is None else "clamp_cpu"
    raise not_implemented(kname, d)


def _clamp_words(name: str, input, min, max, out, method: bool):
    """The parser's TypeError for a clamp bound of the wrong type. A bound given after a
    None one is taken as passed by keyword (`x.clamp(max=v)`), the rest as positional."""
    if min is None:
        args, kwargs = (input,), {"max": max, "out": out}
    else:
        args, kwargs = (input, min) if max is None else (input, min, max), {"out": out}
    return operand_error(name, args, kwargs, method=method)


@method_aware
def clamp(input: Tensor, min=None, max=None, *, out=None) -> Tensor:
    """Elementwise min(max(input, min), max); bounds are numbers or tensors, either may be None."""
    try:
        return _clamp(input, min, max, out)
    except OperandTypeError:
        raise _clamp_words("clamp", input, min, max, out, called_as_method()) from None


def _one_sided(min, max, side: str | None) -> None:
    """clamp_min / clamp_max take no None bound (their overloads have no default)."""
    if side is not None and (min if side == "min" else max) is None:
        raise OperandTypeError(f"clamp_{side}: the bound is None")


def _clamp(input: Tensor, min, max, out, side: str | None = None) -> Tensor:
    _one_sided(min, max, side)
    x, lo, hi, d = _clamp_args(input, min, max, side=side)
    if out is not None:
        if isinstance(out, Tensor) and out._dtype is not d and out is not input and not (
                isinstance(lo, Tensor) or isinstance(hi, Tensor)):
            # (number bounds: PyTorch's structured kernel wants out in the result's dtype;
            # out being the input itself is an in-place call, under the casting rule)
            raise RuntimeError(f"Found dtype {type_name(out._dtype)} but expected "
                               f"{type_name(d)}")
        _clamp_cast_check(lo, hi, d, out)
    _number_bounds_check(min, max, d)
    return write_out(apply(ternary_p, x, lo, hi, fn=_clamp_member(lo, hi, side)), out,
                     (input, min, max))


def _number_bounds_check(min, max, d: dt.dtype) -> None:
    """PyTorch's kernel-time refusals of number bounds: none for a bool result, and each must
    fit the result's C type (clamp(max=1e5) on float16 overflows c10::Half)."""
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return
    if d is dt.bool_:
        name = "clamp" if min is not None and max is not None else (
            "clamp_min" if max is None else "clamp_max")
        raise not_implemented(f"{name}_scalar_cpu", d)
    for b in (min, max):
        if b is not None:
            # (an int past int64 is a double to a float dtype, as PyTorch reads it)
            scalar_value(float(b) if d._kind == 2 and b.__class__ is int else b, d)


def _clamp_cast_check(lo, hi, d: dt.dtype, out: Tensor) -> None:
    """PyTorch's check of a clamp result written into `out`: with number bounds its message
    names the C++ type (`long int`), with tensor bounds the dtype (`Long`)."""
    if isinstance(out, Tensor) and not dt.can_cast(d, out._dtype):
        name = type_name if _clamp_member(lo, hi) is clamp_tensor_fn else c_type_name
        raise RuntimeError(f"result type {type_name(d)} can't be cast to the desired output "
                           f"type {name(out._dtype)}")


def clamp_(self: Tensor, min=None, max=None) -> Tensor:
    try:
        return _clamp_(self, min, max)
    except OperandTypeError:
        raise _clamp_words("clamp_", self, min, max, None, True) from None


def _clamp_(self: Tensor, min, max, side: str | None = None) -> Tensor:
    _one_sided(min, max, side)
    bounds = [b for b in (min, max) if b is not None]
    if bounds and all(isinstance(b, Tensor) for b in bounds):
        # (the in-place result's shape is checked before any dtype, as PyTorch does)
        shape = broadcast_shapes(self._shape, *(b._shape for b in bounds))
        if shape != self._shape:
            raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
    _, lo, hi, d = _clamp_args(self, min, max, side=side, inplace=True)
    _clamp_cast_check(lo, hi, d, self)
    _number_bounds_check(min, max, d)
    return apply_(ternary_p, self, lo, hi, fn=_clamp_member(lo, hi, side))


@method_aware
def clamp_min(input: Tensor, min, *, out=None) -> Tensor:
    try:
        return _clamp(input, min, None, out, "min")
    except OperandTypeError:
        raise operand_error("clamp_min", (input, min), {"out": out},
                            method=called_as_method()) from None


@method_aware
def clamp_max(input: Tensor, max, *, out=None) -> Tensor:
    try:
        return _clamp(input, None, max, out, "max")
    except OperandTypeError:
        raise operand_error("clamp_max", (input, max), {"out": out},
                            method=called_as_method()) from None


def clamp_min_(self: Tensor, min) -> Tensor:
    try:
        return _clamp_(self, min, None, "min")
    except OperandTypeError:
        raise operand_error("clamp_min_", (self, min), method=True) from None


def clamp_max_(self: Tensor, max) -> Tensor:
    try:
        return _clamp_(self, None, max, "max")
    except OperandTypeError:
        raise operand_error("clamp_max_", (self, max), method=True) from None


@method_aware
def clip(input: Tensor, min=None, max=None, *, out=None) -> Tensor:
    """`clamp` under NumPy's name."""
    try:
        return _clamp(input, min, max, out)
    except OperandTypeError:
        raise _clamp_words("clip", input, min, max, out, called_as_method()) from None


def clip_(self: Tensor, min=None, max=None) -> Tensor:
    try:
        return _clamp_(self, min, max)
    except OperandTypeError:
        raise _clamp_words("clip_", self, min, max, None, True) from None


# --- lerp --------------------------------------------------------------------------------

@broadcast_errors
@_lowp
def _lerp_kernel(start, end, weight):
    # NOTE: PyTorch's formula: from `start` for |w| < 0.5, from `end` otherwise, which keeps
    # lerp(a, b, 1) == b exactly; each side one fused multiply-add (`_multiply_add`).
    return multiply_add.lerp(start, end, weight)


def _lerp_jvp(primals, tangents, out):
    (a, b, w), (ta, tb, tw) = primals, tangents
    return shaped(tangent_sum(None if ta is None else ta * (1 - w),
                              None if tb is None else tb * w,
                              None if tw is None else tw * (b - a)), out)


# a number weight (LerpBackward0) or a tensor one (LerpBackward1)
lerp_fn = Member(ternary_p, "lerp", _lerp_kernel, _meta3, grad_name="LerpBackward0")
lerp_tensor_fn = Member(ternary_p, "lerp_tensor", _lerp_kernel, _meta3,
                        grad_name="LerpBackward1")
for _fn in (lerp_fn, lerp_tensor_fn):
    # (each rule reads what PyTorch's formula names: the ends' the weight, the weight's the
    # ends, and the weight is kept whenever the node is; so an in-place op on an end after
    # lerp with a number weight trains)
    defvjp(_fn, lambda g, out, a, b, w: g * (1 - w), lambda g, out, a, b, w: g * w,
           lambda g, out, a, b, w: g * (b - a), reads=((2,), (2,), (0, 1, 2)))
    defjvp(_fn, _lerp_jvp)
    native.register(_fn, "multiply_add", multiply_add.lerp_native)


def _lerp_checks(input: Tensor, end: Tensor, weight) -> None:
    if not (isinstance(end, Tensor) and (isinstance(weight, Tensor) or is_scalar(weight))):
        raise OperandTypeError("lerp takes a Tensor end and a Tensor or number weight")
    d = input._dtype
    for name, x in (("end", end), ("weight", weight)):
        if name == "weight" and _zero_dim(weight):
            continue  # (promoted as a 0-d operand: `_lerp_operands`)
        if isinstance(x, Tensor) and x._dtype is not d:
            raise RuntimeError(f"expected dtype {c_type_name(d)} for `{name}` but got dtype "
                               f"{c_type_name(x._dtype)}")
    tensor_w = isinstance(weight, Tensor)
    if d._kind < 2:
        raise not_implemented("lerp_kernel_tensor" if tensor_w else "lerp_kernel_scalar", d)


def _lerp_member(weight) -> Member:
    return lerp_tensor_fn if isinstance(weight, Tensor) else lerp_fn


def _zero_dim(weight) -> bool:
    return isinstance(weight, Tensor) and weight.ndim == 0


def _lerp_operands(input: Tensor, end: Tensor, weight):
    """(input, end, weight) in the dtype lerp computes in: `end` must have input's dtype,
    and a 0-d weight tensor takes part in type promotion as a 0-d operand does (a float64
    or int64 one beside float32 tensors computes in float32, a complex one in complex)."""
    if not (isinstance(input, Tensor) and isinstance(end, Tensor)):
        raise OperandTypeError("lerp takes tensors for input and end")
    _lerp_checks(input, end, weight)
    if not isinstance(weight, Tensor):
        weight = real_operand(weight, input._dtype)
    if _zero_dim(weight) and weight._dtype is not input._dtype:
        d = dt.result_type(input, end, weight)
        return _cast_all(d, input, end, weight)
    return input, end, weight


@method_aware
def lerp(input: Tensor, end: Tensor, weight, *, out=None) -> Tensor:
    """input + weight * (end - input)."""
    try:
        input, end, weight = _lerp_operands(input, end, weight)
    except OperandTypeError:
        raise operand_error("lerp", (input, end, weight), {"out": out}) from None
    return write_out(apply(ternary_p, input, end, weight, fn=_lerp_member(weight)), out,
                     (input, end, weight))


def lerp_(self: Tensor, end: Tensor, weight) -> Tensor:
    try:
        _, end, weight = _lerp_operands(self, end, weight)
    except OperandTypeError:
        raise operand_error("lerp_", (self, end, weight), method=True) from None
    if end._dtype is not self._dtype:
        _inplace_check(self, end)
        end, weight = _cast_all(self._dtype, end, weight)
    return apply_(ternary_p, self, end, weight, fn=_lerp_member(weight))


# --- addcmul / addcdiv ----------------------------------------------------------------------

def _addc_kernel(op):
    def kernel(x, t1, t2, value=1):
        d = np.result_type(x, t1, t2)
        if op is np.true_divide and d.kind in "fV":
            # As PyTorch rounds: the value times t1 first, then the quotient and the sum
            # (16-bit floats computed in float32)
            w = _F64 if d == _F64 else _F32
            a, b, c = (v.astype(w, copy=False) for v in (x, t1, t2))
            scaled = b if value == 1 else np.multiply(b, w.type(value))
            return np.add(a, np.divide(scaled, c)).astype(d, copy=False)
        if op is np.multiply and multiply_add.fused(x, t1, t2) is not None:
            return multiply_add.addcmul(x, t1, t2, value)  # (one fused multiply-add)
        # NOTE: `value` is cast to the result dtype first, as PyTorch does (0.5 -> 0 for ints).
        v = np.asarray(value).astype(d) if d.kind != "b" else bool(value)
        return np.asarray(x + v * op(t1, t2)).astype(d)

    return broadcast_errors(kernel)


addcmul_fn = Member(ternary_p, "addcmul", _addc_kernel(np.multiply), _meta3)
defvjp(addcmul_fn, lambda g, out, x, t1, t2, value: g,
       lambda g, out, x, t1, t2, value: g * (value * _conj(t2)),
       lambda g, out, x, t1, t2, value: g * (value * _conj(t1)),
       reads=((), (2,), (1,)))
native.register(addcmul_fn, "multiply_add", multiply_add.addcmul_native)
addcdiv_fn = Member(ternary_p, "addcdiv", _addc_kernel(np.true_divide), _meta3)
native.register(addcdiv_fn, "multiply_add", multiply_add.addcdiv_native)
defvjp(addcdiv_fn, lambda g, out, x, t1, t2, value: g,
       lambda g, out, x, t1, t2, value: g * _conj(value / t2),
       lambda g, out, x, t1, t2, value: -g * _conj(value * t1 / (t2 * t2)),
       reads=((2,), (2,), (1, 2)))  # (PyTorch keeps tensor2 whenever it records the node)


def _addcmul_jvp(primals, tangents, out, value):
    (_, t1, t2), (tx, dt1, dt2) = primals, tangents
    prod = tangent_sum(None if dt1 is None else dt1 * t2, None if dt2 is None else t1 * dt2)
    return shaped(tangent_sum(tx, None if prod is None else value * prod), out)


def _addcdiv_jvp(primals, tangents, out, value):
    (_, t1, t2), (tx, dt1, dt2) = primals, tangents
    quot = tangent_sum(None if dt1 is None else dt1 / t2,
                       None if dt2 is None else -dt2 * (t1 / (t2 * t2)))
    return shaped(tangent_sum(tx, None if quot is None else value * quot), out)


defjvp(addcmul_fn, _addcmul_jvp)
defjvp(addcdiv_fn, _addcdiv_jvp)


def _conj(t: Tensor) -> Tensor:
    return t.conj() if t._dtype.is_complex else t


def _addc_operands(input, tensor1, tensor2, value, div: bool):
    need_tensors("addcdiv" if div else "addcmul", ("input", 1, input), ("tensor1", 2, tensor1),
                 ("tensor2", 3, tensor2))
    if div and tensor1._dtype._kind < 2 and tensor2._dtype._kind < 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    if not (is_scalar(value) or isinstance(value, Tensor)):
        raise TypeError(f"{'addcdiv' if div else 'addcmul'}(): argument 'value' must be Number, "
                        f"not {type(value).__name__}")
    d = dt.result_type(input, tensor1, tensor2)
    if d is dt.bool_:
        raise not_implemented(f"{'addcdiv' if div else 'addcmul'}_cpu_out", d)
    value = real_operand(value, d)
    if d._kind < 2 and isinstance(value, float):
        value = int(value)
    return _cast_all(d, input, tensor1, tensor2), value


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out=None) -> Tensor:
    """input + value * tensor1 * tensor2."""
    xs, value = _addc_operands(input, tensor1, tensor2, value, False)
    return write_out(apply(ternary_p, *xs, value=value, fn=addcmul_fn), out,
                     (input, tensor1, tensor2))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1, out=None) -> Tensor:
    """input + value * tensor1 / tensor2."""
    xs, value = _addc_operands(input, tensor1, tensor2, value, True)
    return write_out(apply(ternary_p, *xs, value=value, fn=addcdiv_fn), out,
                     (input, tensor1, tensor2))


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    xs, value = _addc_operands(self, tensor1, tensor2, value, False)
    _inplace_check(self, xs[1])
    return apply_(ternary_p, self, *xs[1:], value=value, fn=addcmul_fn)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    xs, value = _addc_operands(self, tensor1, tensor2, value, True)
    _inplace_check(self, xs[1])
    return apply_(ternary_p, self, *xs[1:], value=value, fn=addcdiv_fn)


def _inplace_check(self: Tensor, promoted: Tensor) -> None:
    if not dt.can_cast(promoted._dtype, self._dtype):
        raise RuntimeError(f"result type {type_name(promoted._dtype)} can't be cast to the "
                           f"desired output type {type_name(self._dtype)}")


# Tensor.where's overloads as torch's parser prints them, and the function's it types their
# arguments by (one place early: see `operand_error`)
_WHERE_METHOD = ("(Tensor condition, Tensor other)", "(Tensor condition, Number other)")
_WHERE_TYPED = ("(Tensor condition, Tensor input, Tensor other, *, Tensor out = None)",
                "(Tensor condition, Tensor input, Number other)")


def _where_method(self: Tensor, *args, **kwargs) -> Tensor:
    """`self.where(condition, other)`: `where(condition, self, other)`; a call that fits
    neither overload is refused in the parser's words."""
    bound = dict(zip(("condition", "other"), args), **kwargs)
    cond, other = bound.get("condition"), bound.get("other")
    if len(args) > 2 or set(bound) != {"condition", "other"} or not isinstance(cond, Tensor) \
            or not isinstance(other, (Tensor, numbers.Number)):
        raise invalid_combination("where", _WHERE_METHOD, args, kwargs, typed_by=_WHERE_TYPED)
    return where(cond, self, other)


TENSOR_METHODS = {
    "where": _where_method,
    "clamp": clamp, "clamp_": clamp_, "clip": clip, "clip_": clip_, "clamp_min": clamp_min,
    "clamp_min_": clamp_min_, "clamp_max": clamp_max, "clamp_max_": clamp_max_,
    "lerp": lerp, "lerp_": lerp_, "addcmul": addcmul, "addcmul_": addcmul_,
    "addcdiv": addcdiv, "addcdiv_": addcdiv_,
}

__all__ = ["where", "clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_max", "lerp",
           "addcmul", "addcdiv"]
