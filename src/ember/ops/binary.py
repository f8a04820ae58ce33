"""Binary arithmetic: add, sub, mul, div and the comparisons, with their derivatives (pow
and float_power: power.py).

Every two-input pointwise map is a member of one primitive, the `binary` family (the
function a static param, `fn=`), here and in `binary_math.py` and `special_ops.py`; the
bool-valued relations are one primitive, `compare`, the relation a static param (`op=`).
Each public function promotes its operands by PyTorch's rules (`binary_operands`) and
binds one of them. Broadcasting needs nothing here: the engine sums a gradient back to its
input's shape in one place (`autograd.engine._fit`). The Python operators bound onto
Tensor go straight to these functions.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._core.dispatch import iter_layout
from .._tensor import Tensor
from .._view import broadcast_shapes
from ..native import calls
from . import _binary_math_native as binary_math_native
from . import _multiply_add as multiply_add
from ._arg_parser_text import method_aware, need_number, need_tensor, operand_error
from ._common import (
    OperandTypeError,
    binary_operands,
    elementwise_meta,
    fit_scalar,
    is_scalar,
    iter_relayout,
    tensoriterator_family,
    type_name,
)
from ._common import write_out as _write_out
from ._half_casts import cast, widen
from ._inplace_kernel import writes_into
from ._pointwise import (
    batch_pointwise,
    shaped,
    tangent_sum,
)
from ._rounding import wide
from ._scalar_value import _python_number as python_number
from .registry import (
    Family,
    Member,
    Primitive,
    apply,
    apply_,
    defbatch,
    defjvp,
    deflower,
    defvjp,
    derivative_not_implemented,
    nondifferentiable,
)
from .sparse_compressed import CompressedTensor
from .sparse_tensor import SparseTensor

_SPARSE = (SparseTensor, CompressedTensor)  # (the layouts the function forms hand over)

_F32 = np.dtype(np.float32)
_LOW16 = frozenset((dt.float16, dt.bfloat16))  # (one membership test on the hot `a * b` path)
_grad_state = grad_mode.state

# Every two-input pointwise map with a derivative (or a refusal of one) is one primitive,
# the function a static param: `bind(binary_p, a, b, fn=add_fn)`. Each member has its own
# kernel, node name and derivatives; vmap has one rule for all of them.
binary_p = Family("binary")
tensoriterator_family(binary_p)
defbatch(binary_p, batch_pointwise(binary_p))


def member(name: str, kernel, grad_name: str | None = None, meta=elementwise_meta) -> Member:
    """A member of the `binary` family (elementwise meta unless told)."""
    return Member(binary_p, name, kernel, meta, grad_name=grad_name)


def _cj(x):
    """Conjugate of a complex tensor operand (VJPs multiply by conjugate derivatives)."""
    if isinstance(x, Tensor):
        return x.conj() if x._dtype.is_complex else x
    if isinstance(x, (complex, np.complexfloating)):
        return x.conjugate()
    return x


def _operand_dtype(a, b) -> np.dtype:
    """The dtype a binary kernel computes in: its array operand's (a NumPy scalar beside
    an array is a weak number); with no array, the NumPy scalar's (a 0-d result inside a
    generated program reaches the next kernel as one)."""
    if isinstance(a, np.ndarray):
        return a.dtype
    if isinstance(b, np.ndarray) or not isinstance(a, np.generic):
        return b.dtype
    return a.dtype


def lowp2(fn):
    """Binary kernel that computes float16 / bfloat16 in float32 and rounds once."""
    def kernel(a, b, **params):
        d = _operand_dtype(a, b)
        if d.itemsize == 2 and d.kind in "fV":
            a = widen(a) if isinstance(a, np.ndarray) else \
                a.astype(_F32) if isinstance(a, np.generic) else a
            b = widen(b) if isinstance(b, np.ndarray) else \
                b.astype(_F32) if isinstance(b, np.generic) else b
            return cast(np.asarray(fn(a, b, **params)), d)
        return fn(a, b, **params)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def tensor_dtype(x) -> dt.dtype | None:
    return x._dtype if isinstance(x, Tensor) else None


def not_implemented(kname: str, d: dt.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kname}" not implemented for \'{type_name(d)}\'')


# --- add / sub / mul / div ----------------------------------------------------

add_fn = member("add", np.add)
deflower(add_fn, "{0} + {1}")
defvjp(add_fn, lambda g, out, a, b: g, lambda g, out, a, b: g, reads=((), ()))
defjvp(add_fn, lambda primals, tangents, out: shaped(tangent_sum(*tangents), out))


def _native_twin(name: str):
    """a op b in C (csrc/binary.c): NumPy's IEEE results, split over the kernel threads,
    for two C-contiguous float32 / float64 arrays of one dtype (64K elements or more: the
    gate at registration), of one shape or broadcast (`_rows3`), and float16 / bfloat16
    ones of one shape through float32 (C casts); NumPy's ufunc for everything else."""
    def run(lib, a, b, **params):
        if params or a.__class__ is not np.ndarray or b.__class__ is not np.ndarray or \
                a.dtype != b.dtype:
            return NotImplemented
        if not (a.flags.c_contiguous and b.flags.c_contiguous):
            ca, cb = compact(a), compact(b)
            # (both compacted, they could spread to less than the result)
            if not (ca.flags.c_contiguous and cb.flags.c_contiguous) or \
                    broadcast_shapes(ca.shape, cb.shape) != broadcast_shapes(a.shape, b.shape):
                return NotImplemented
            a, b = ca, cb
        sfx = calls.SUFFIX.get(a.dtype)
        if sfx is None:
            if a.dtype.itemsize == 2 and a.dtype.kind in "fV" and a.shape == b.shape:
                # (in float32 and rounded once: the 16-bit result's bits, float32 holding
                # more than twice its digits; NumPy's 16-bit loops convert per element)
                return cast(run(lib, widen(a), widen(b)), a.dtype)
            return NotImplemented
        if a.shape != b.shape:
            return _broadcast_native(lib, f"{name}3_{sfx}", a, b)
        out = np.empty_like(a)
        calls.entry(lib, f"{name}_{sfx}", [calls.P] * 3 + [calls.I64])(
            calls.ptr(a), calls.ptr(b), calls.ptr(out), a.size)
        return out

    run.__name__ = f"_{name}_native"
    return run


def compact(a: np.ndarray) -> np.ndarray:
    """A broadcast view (stride 0 along some dims: an expanded gradient of a sum, a
    reduction's result expanded back) as the smaller array it spreads, size 1 along those
    dims, which the broadcast kernels spread again; `a` itself otherwise."""
    if a.flags.c_contiguous or not any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        return a
    return a[tuple(slice(0, 1) if st == 0 and n > 1 else slice(None)
                   for st, n in zip(a.strides, a.shape))]


@functools.lru_cache(maxsize=512)
def _rows3(a_shape: tuple, b_shape: tuple):
    """(out shape, (p, q, r), a's strides, b's strides) for C-order `a` op `b` broadcast
    against each other, the result's dims merged into at most three groups along which
    each operand is whole or broadcast; None where more groups are needed. The strides are
    C arrays, made once per pair of shapes (the kernels only read them)."""
    shape = broadcast_shapes(a_shape, b_shape)
    n = len(shape)
    sa = (1,) * (n - len(a_shape)) + tuple(a_shape)
    sb = (1,) * (n - len(b_shape)) + tuple(b_shape)
    groups: list = []  # [size, a whole, b whole]
    for size, na, nb in zip(shape, sa, sb):
        if size == 1:
            continue
        kind = (na == size, nb == size)
        if groups and (groups[-1][1], groups[-1][2]) == kind:
            groups[-1][0] *= size
        else:
            groups.append([size, *kind])
    if len(groups) > 3:
        return None
    groups[:0] = [[1, True, True]] * (3 - len(groups))
    strides = []
    for k in (1, 2):
        st, step = [0, 0, 0], 1
        for g in (2, 1, 0):
            if groups[g][k]:
                st[g], step = step, step * groups[g][0]
        strides.append(st)
    return shape, tuple(g[0] for g in groups), (ctypes.c_int64 * 3)(*strides[0]), \
        (ctypes.c_int64 * 3)(*strides[1])


def _broadcast_native(lib, fname: str, a: np.ndarray, b: np.ndarray):
    """a op b of two C-order arrays of one dtype broadcast against each other (binary.c's
    name3 forms), or NotImplemented where the shapes need more than three groups."""
    plan = _rows3(a.shape, b.shape)
    if plan is None or a.size == 0 or b.size == 0:
        return NotImplemented
    shape, (p, q, r), sa, sb = plan
    out = np.empty(shape, a.dtype)
    calls.entry(lib, fname, [calls.P, calls.P, calls.P, calls.P, calls.P] + [calls.I64] * 3)(
        calls.ptr(a), sa, calls.ptr(b), sb,
        calls.ptr(out), p, q, r)
    return out


_BINARY_NATIVE_MIN = 1 << 16
native.register(add_fn, "binary", _native_twin("add"),
                min_size=(globals(), "_BINARY_NATIVE_MIN"))

sub_fn = member("sub", np.subtract)
deflower(sub_fn, "{0} - {1}")
defvjp(sub_fn, lambda g, out, a, b: g, lambda g, out, a, b: -g, reads=((), ()))
defjvp(sub_fn, lambda primals, tangents, out: shaped(
    tangents[0] if tangents[1] is None else tangent_sum(tangents[0], -tangents[1]), out))
native.register(sub_fn, "binary", _native_twin("sub"),
                min_size=(globals(), "_BINARY_NATIVE_MIN"))

mul_fn = member("mul", np.multiply)
deflower(mul_fn, "{0} * {1}")
_MUL_VJP = (lambda g, out, a, b: g * _cj(b), lambda g, out, a, b: g * _cj(a))
defvjp(mul_fn, *_MUL_VJP, reads=((1,), (0,)))


def _mul_jvp(primals, tangents, out):
    (a, b), (ta, tb) = primals, tangents
    return shaped(tangent_sum(None if ta is None else ta * b, None if tb is None else a * tb),
                  out)


defjvp(mul_fn, _mul_jvp)
native.register(mul_fn, "binary", _native_twin("mul"),
                min_size=(globals(), "_BINARY_NATIVE_MIN"))

div_fn = member("div", np.true_divide)
deflower(div_fn, "{0} / {1}")
_DIV_VJP = (lambda g, out, a, b: g / _cj(b), lambda g, out, a, b: -g * _cj(a / (b * b)))
defvjp(div_fn, *_DIV_VJP, reads=((1,), (0, 1)))


def _div_jvp(primals, tangents, out):
    b = primals[1]
    ta, tb = tangents
    return shaped(tangent_sum(None if ta is None else ta / b,
                              None if tb is None else -tb * (out / b)), out)


defjvp(div_fn, _div_jvp)
native.register(div_fn, "binary", _native_twin("div"),
                min_size=(globals(), "_BINARY_NATIVE_MIN"))

# add / sub with `alpha=` (a tensor `b`): a + alpha * b as one node, for floats one fused
# multiply-add as PyTorch's kernel (`_rounding`, `_multiply_add`).

_add_alpha = writes_into(lowp2(multiply_add.alpha_kernel(False)), multiply_add.alpha_into)
_sub_alpha = writes_into(lowp2(multiply_add.alpha_kernel(True)),
                         lambda dst, b, alpha: multiply_add.alpha_into(dst, b, alpha, True))
add_alpha_fn = member("add_alpha", _add_alpha, "AddBackward0",
                      lambda a, b, alpha: elementwise_meta(a, b))
sub_alpha_fn = member("sub_alpha", _sub_alpha, "SubBackward0",
                      lambda a, b, alpha: elementwise_meta(a, b))
defvjp(add_alpha_fn, lambda g, out, a, b, alpha: g, lambda g, out, a, b, alpha: g * _cj(alpha),
       reads=((), ()))
defvjp(sub_alpha_fn, lambda g, out, a, b, alpha: g, lambda g, out, a, b, alpha: g * -_cj(alpha),
       reads=((), ()))
for _fn, _negate in ((add_alpha_fn, False), (sub_alpha_fn, True)):
    native.register(
        _fn, "multiply_add",
        lambda lib, a, b, alpha, _n=_negate: multiply_add.scaled_add_native(lib, a, b, alpha, _n),
        into=lambda lib, dst, b, alpha, _n=_negate: multiply_add.scaled_add_into_native(
            lib, dst, b, alpha, _n))
defjvp(add_alpha_fn, lambda primals, tangents, out, alpha: shaped(tangent_sum(
    tangents[0], None if tangents[1] is None else tangents[1] * alpha), out))
defjvp(sub_alpha_fn, lambda primals, tangents, out, alpha: shaped(tangent_sum(
    tangents[0], None if tangents[1] is None else tangents[1] * -alpha), out))

# mul and div of a float16 / bfloat16 tensor and a number, which they read at float32
# precision (`_rounding`): computed in float32 and rounded once.
mul_wide_fn = member("mul_wide", lowp2(np.multiply), "MulBackward0")
div_wide_fn = member("div_wide", lowp2(np.true_divide), "DivBackward0")
defvjp(mul_wide_fn, *_MUL_VJP, reads=((1,), (0,)))
defvjp(div_wide_fn, *_DIV_VJP, reads=((1,), (0, 1)))
defjvp(mul_wide_fn, _mul_jvp)
defjvp(div_wide_fn, _div_jvp)


def _scale(b, alpha, d: dt.dtype):
    """`alpha * b` for add/sub's `alpha=` and a number `b`, checked, in the result dtype `d`."""
    _check_alpha(alpha, d)
    if d is dt.bool_:
        return bool(b and alpha)
    return b * alpha


def _alpha_call(fn, a, b, alpha, d: dt.dtype, inplace: bool = False) -> Tensor:
    """add / sub with `alpha=`: one node with `alpha` a param, as PyTorch's AddBackward0 /
    SubBackward0 (`_rounding` says how it rounds). A float result reads a number `b` and
    `alpha` at its dtype and fuses (fma(b, alpha, a), 16-bit floats in float32); other
    dtypes scale a number `b` first."""
    if not (is_scalar(alpha) or isinstance(alpha, Tensor)):
        raise OperandTypeError(f"alpha must be a number, not {type(alpha).__name__}")
    if alpha.__class__ is int:
        python_number(alpha)  # (OverflowError past uint64, in PyTorch's words)
    if not isinstance(b, Tensor):
        if d._kind != 2:  # (integers, bools, complex numbers: the product, then the sum)
            b = _scale(b, alpha, d)
            plain = add_fn if fn is add_alpha_fn else sub_fn
            return apply_(binary_p, a, b, fn=plain) if inplace else \
                apply(binary_p, a, b, fn=plain)
    elif b._dtype is not d:
        # NOTE: an in-place `self` wider than `other` (float32 += bfloat16 * alpha): PyTorch
        # casts `other` to the result dtype first, so alpha's product is taken there, not in
        # `other`'s dtype (where NumPy, and ml_dtypes >= 0.7 for bfloat16, would round it).
        b = b.to(d)
    _check_alpha(alpha, d)
    k = fit_scalar(bool(alpha) if d is dt.bool_ else alpha, d)  # (16-bit: rounded to d)
    if inplace:
        return apply_(binary_p, a, b, fn=fn, alpha=k)
    return apply(binary_p, a, b, fn=fn, alpha=k)


def _check_alpha(alpha, d: dt.dtype) -> None:
    """PyTorch's refusals of an `alpha=` the result dtype `d` cannot hold."""
    if d._kind < 2 and isinstance(alpha, (float, complex, np.floating)):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if d._kind < 3 and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")


def _number_pair(input, other) -> Tensor | None:
    """`input` as the 0-d tensor PyTorch makes of it when both operands of add, sub, mul,
    div or floor_divide are numbers (`torch.add(1, 2.5)` is tensor(3.5000), float32; a NumPy
    scalar counts as the Python number it holds), else None."""
    if not (is_scalar(input) and is_scalar(other)) or isinstance(input, Tensor):
        return None
    from .creation import tensor

    return tensor(input.item() if isinstance(input, np.generic) else input)


@method_aware
def add(input, other, *, alpha=1, out=None) -> Tensor:
    """input + alpha * other, with broadcasting and type promotion."""
    if alpha.__class__ is not int and alpha.__class__ is not float:
        need_number(alpha, "add", "alpha")
    if (input.__class__ in _SPARSE or other.__class__ in _SPARSE) and out is None:
        return _sparse_form("add", input, other, alpha)
    try:
        a, b, d = binary_operands(input, other)
        r = apply(binary_p, a, b, fn=add_fn) if alpha == 1 else \
            _alpha_call(add_alpha_fn, a, b, alpha, d)
    except OperandTypeError:
        if (wrapped := _number_pair(input, other)) is not None:
            return add(wrapped, other, alpha=alpha, out=out)
        raise operand_error("add", (input, other), {"alpha": None if alpha == 1 else alpha,
                                                    "out": out}) from None
    return r if out is None else _write_out(r, out, (input, other))


def _sub_bool_check(input, other) -> None:
    # (a NumPy bool is read as the float 1.0 / 0.0: `py_number`)
    ba = tensor_dtype(input) is dt.bool_ or isinstance(input, bool)
    bb = tensor_dtype(other) is dt.bool_ or isinstance(other, bool)
    if ba and bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead."
        )
    if ba or bb:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


@method_aware
def sub(input, other, *, alpha=1, out=None) -> Tensor:
    """input - alpha * other; bool operands are refused, as in PyTorch."""
    if alpha.__class__ is not int and alpha.__class__ is not float:
        need_number(alpha, "sub", "alpha")
    if (input.__class__ in _SPARSE or other.__class__ in _SPARSE) and out is None:
        return _sparse_form("sub", input, other, alpha)
    try:
        return _sub(input, other, alpha, out)
    except OperandTypeError:
        if (wrapped := _number_pair(input, other)) is not None:
            return sub(wrapped, other, alpha=alpha, out=out)
        raise operand_error("sub", (input, other), {"alpha": None if alpha == 1 else alpha,
                                                    "out": out}) from None


def _sub(input, other, alpha=1, out=None) -> Tensor:
    a, b, d = binary_operands(input, other)
    if d is dt.bool_ or a is not input or b is not other or other.__class__ is bool \
            or input.__class__ is bool:
        _sub_bool_check(input, other)
    r = apply(binary_p, a, b, fn=sub_fn) if alpha == 1 else \
        _alpha_call(sub_alpha_fn, a, b, alpha, d)
    return r if out is None else _write_out(r, out, (input, other))


subtract = sub


def _rsub_kernel(a, b, alpha=1):
    """b - alpha a: as sub's kernel with the operands swapped (one fused multiply-add for
    floats; 16-bit floats reach it as float32, `lowp2`)."""
    if alpha == 1:
        return np.subtract(b, a)
    if multiply_add.fused(a, b) is not None:
        return multiply_add.scaled_add(b, a, -alpha)
    return np.subtract(b, np.multiply(a, alpha))


# other - alpha * input, one node as PyTorch's overloads: a tensor `other` (RsubBackward0,
# an edge per operand) or a number (RsubBackward1, one edge). `alpha` is a param (only
# when not 1), so the scaling is inside the node, not a MulBackward0 before it.
rsub_fn = member("rsub", lowp2(_rsub_kernel), "RsubBackward0")
rsub_scalar_fn = member("rsub_scalar", lowp2(_rsub_kernel), "RsubBackward1")


def _rsub_jvp(primals, tangents, out, alpha=1):
    ta, tb = tangents
    if ta is not None:
        ta = -ta if alpha == 1 else ta * -alpha
    return shaped(tangent_sum(tb, ta), out)


for _fn in (rsub_fn, rsub_scalar_fn):
    defvjp(_fn, lambda g, out, a, b, alpha=1: -g if alpha == 1 else g * -_cj(alpha),
           lambda g, out, a, b, alpha=1: g, reads=((), ()))
    defjvp(_fn, _rsub_jvp)


def rsub(input, other, *, alpha=1) -> Tensor:
    """other - alpha * input (PyTorch's `number - tensor`)."""
    need_tensor(input, "rsub")
    a, b, d = binary_operands(input, other)
    if d is dt.bool_ or a is not input or b is not other or other.__class__ is bool:
        _sub_bool_check(input, other)
    fn = rsub_fn if isinstance(b, Tensor) else rsub_scalar_fn
    if alpha == 1:
        return apply(binary_p, a, b, fn=fn)
    _check_alpha(alpha, d)
    return apply(binary_p, a, b, fn=fn, alpha=fit_scalar(alpha, d))


def _rsub_op(self, other):
    """`number - tensor`."""
    if not is_scalar(other):
        return NotImplemented
    return rsub(self, other)


@method_aware
def mul(input, other, *, out=None) -> Tensor:
    """input * other, with broadcasting and type promotion."""
    if (input.__class__ in _SPARSE or other.__class__ in _SPARSE) and out is None:
        return _sparse_form("mul", input, other)
    try:
        a, b, d = binary_operands(input, other)
    except OperandTypeError:
        if (wrapped := _number_pair(input, other)) is not None:
            return mul(wrapped, other, out=out)
        raise operand_error("mul", (input, other), {"out": out}) from None
    if d in _LOW16:
        a, b, fn = _widened(input, other, a, b, mul_fn, mul_wide_fn)
        r = apply(binary_p, a, b, fn=fn)
    else:
        r = apply(binary_p, a, b, fn=mul_fn)
    return r if out is None else _write_out(r, out, (input, other))


def _sparse_form(name: str, input, other, alpha=1, rounding_mode=None) -> Tensor:
    """The function form of an arithmetic op with a sparse COO operand (ops/sparse_mul.py)."""
    from .sparse_mul import function_form

    return function_form(name, input, other, alpha, rounding_mode)


def _widened(input, other, a, b, fn, wide_fn):
    """(a, b, member) for mul or div with a float16 / bfloat16 result: a number operand at
    the float32 precision PyTorch reads it with, and the member that computes in float32
    (`_rounding`); tensor operands as they were."""
    if not isinstance(other, Tensor):
        return a, wide(other), wide_fn
    if not isinstance(input, Tensor):
        return wide(input), b, wide_fn
    if other._shape == () and other._dtype is not a._dtype and input._shape != ():
        # a 0-d tensor second is read as a number too (first, it is rounded as a tensor)
        return a, other if other._dtype is dt.float32 else other.to(dt.float32), wide_fn
    return a, b, fn


multiply = mul


def _integral(x) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "iub"
    return isinstance(x, (int, np.integer))


def int_zero_checked(fn):
    """A division-like kernel that raises on a zero in an integer divisor array, as
    PyTorch's CPU kernels do (unless the dividend is empty)."""
    def kernel(a, b, **params):
        if isinstance(b, np.ndarray) and np.size(a) and _integral(a) and _integral(b) \
                and not b.all():
            raise RuntimeError("ZeroDivisionError")
        return fn(a, b, **params)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _trunc_div_kernel(a, b):
    if np.result_type(a, b).kind in "iu":
        q = np.floor_divide(a, b)
        # Floor and truncation differ only for inexact negative quotients.
        return np.where((q < 0) & (q * b != a), q + 1, q)
    return np.trunc(np.true_divide(a, b))


def _rounded_div_grad(g, out, a, b):
    return g * 0  # a step function: zero almost everywhere


# div(rounding_mode='trunc' / 'floor') and floor_divide: floor_divide is div_floor's
# quotient, but PyTorch gives it no derivative and a node named NotImplemented.
div_trunc_fn = member("div_trunc", int_zero_checked(lowp2(_trunc_div_kernel)), "DivBackward2")
native.register(div_trunc_fn, "binary_math",  # (integers: csrc/binary_math.c)
                binary_math_native.modulo_native(binary_math_native.TRUNC_DIVIDE),
                min_size=(vars(binary_math_native), "MIN_SIZE"))
div_floor_fn = member("div_floor", int_zero_checked(lowp2(np.floor_divide)), "DivBackward2")
floor_divide_fn = member("floor_divide", div_floor_fn.kernel, "NotImplemented")
for _fn in (div_floor_fn, floor_divide_fn):  # (float32 / 64, int32 / 64: csrc/binary_math.c)
    native.register(_fn, "binary_math",
                    binary_math_native.modulo_native(binary_math_native.FLOOR_DIVIDE),
                    min_size=(vars(binary_math_native), "MIN_SIZE"))
_ROUNDED = {"trunc": div_trunc_fn, "floor": div_floor_fn}
for _fn in (div_trunc_fn, div_floor_fn):
    # (zero gradients, but PyTorch's formulas name the operands, so its node saves them)
    defvjp(_fn, _rounded_div_grad, _rounded_div_grad, reads=((1,), (0, 1)))
    defjvp(_fn, lambda primals, tangents, out: None)  # zero almost everywhere
derivative_not_implemented(floor_divide_fn, "floor_divide", (True, True))


def int_zero_check(b, d: dt.dtype, a=None) -> None:
    """Integer division (and remainder) by the number zero raises, as PyTorch's CPU kernels
    do (not when the dividend `a` is empty: then nothing is divided). A tensor divisor is
    checked by the kernel (`int_zero_checked`): the wrapper does not read data."""
    if d._kind >= 2 or (isinstance(a, Tensor) and a.numel() == 0):
        return
    if not isinstance(b, Tensor) and b == 0:
        raise RuntimeError("ZeroDivisionError")


@method_aware
def div(input, other, *, rounding_mode=None, out=None) -> Tensor:
    """input / other: true division, or rounded with rounding_mode 'trunc' / 'floor'."""
    if rounding_mode is not None and rounding_mode.__class__ is not str:
        raise operand_error("div", (input, other), {"rounding_mode": rounding_mode, "out": out},
                            "div_rounded")
    if (input.__class__ in _SPARSE or other.__class__ in _SPARSE) and out is None:
        return _sparse_form("div", input, other, rounding_mode=rounding_mode)
    try:
        a, b, d = binary_operands(input, other)
    except OperandTypeError:
        if (wrapped := _number_pair(input, other)) is not None:
            return div(wrapped, other, rounding_mode=rounding_mode, out=out)
        raise operand_error("div", (input, other), {"rounding_mode": rounding_mode, "out": out},
                            "div" if rounding_mode is None else "div_rounded") from None
    if rounding_mode is None:
        if d._kind < 2:  # integers divide in the default float dtype, from the operands as
            fd = dt.get_default_dtype()  # given (a number is not first wrapped into uint8)
            a = input.to(fd) if isinstance(input, Tensor) else float(input)
            b = other.to(fd) if isinstance(other, Tensor) else float(other)
        fn = div_fn
        if d in _LOW16:
            a, b, fn = _widened(input, other, a, b, div_fn, div_wide_fn)
        r = apply(binary_p, a, b, fn=fn)
        return r if out is None else _write_out(r, out, (input, other))
    _check_rounded_div(rounding_mode, d, b, a)
    if d in _LOW16:  # (the rounded kernels compute 16-bit floats in float32)
        a, b, _ = _widened(input, other, a, b, None, None)
    return _write_out(apply(binary_p, a, b, fn=_ROUNDED[rounding_mode]), out, (input, other))


def _check_rounded_div(rounding_mode, d: dt.dtype, b, a=None) -> None:
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
            f"'{rounding_mode}'"
        )
    if d is dt.bool_:
        raise not_implemented(f"div_{rounding_mode}_cpu", d)
    if d._kind == 3:
        raise not_implemented(f"div_{rounding_mode}_cpu", d)
    int_zero_check(b, d, a)


divide = div


@method_aware
def true_divide(input, other, *, out=None) -> Tensor:
    if not (isinstance(other, Tensor) or is_scalar(other)) or not (
            isinstance(input, Tensor) or is_scalar(input)):
        raise operand_error("true_divide", (input, other), {"out": out})
    return div(input, other, out=out)


@method_aware
def floor_divide(input, other, *, out=None) -> Tensor:
    """Floor of input / other (integers stay integers); has no derivative, as in PyTorch."""
    try:
        a, b, d = binary_operands(input, other)
    except OperandTypeError:
        if (wrapped := _number_pair(input, other)) is not None:
            return floor_divide(wrapped, other, out=out)
        raise operand_error("floor_divide", (input, other), {"out": out}) from None
    _check_rounded_div("floor", d, b, a)
    if d in _LOW16:
        a, b, _ = _widened(input, other, a, b, None, None)
    return _write_out(apply(binary_p, a, b, fn=floor_divide_fn), out, (input, other))


# --- comparisons (not differentiable) --------------------------------------------

# Every pointwise bool-valued relation of two operands is one primitive, the relation a
# static param (`op`): the orderings here, and the logical ops (logical_bitwise) and isclose
# (binary_math).
COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}
compare_p = Primitive("compare", lambda a, b, *, op, **params: COMPARISONS[op](a, b, **params),
                      lambda a, b, *, op, **params: elementwise_meta(a, b, dtype=dt.bool_))
nondifferentiable(compare_p)
iter_layout[compare_p] = iter_relayout
defbatch(compare_p, batch_pointwise(compare_p))


def _comparison(op: str):
    ordered = op not in ("eq", "ne")

    def compare(input, other, *, out=None) -> Tensor:
        try:
            need_tensor(input, op)
            a, b, d = binary_operands(input, other)
        except (OperandTypeError, TypeError):
            raise operand_error(op, (input, other), {"out": out}) from None
        if d._kind == 3 and ordered:
            raise not_implemented(f"{op}_cpu", d)
        return _write_out(apply(compare_p, a, b, op=op), out, (input, other))

    compare.__name__ = op
    compare._method_aware = True
    compare.__doc__ = f"Elementwise `{op}` as a bool tensor, with broadcasting."
    return compare


eq = _comparison("eq")
ne = _comparison("ne")
lt = _comparison("lt")
le = _comparison("le")
gt = _comparison("gt")
ge = _comparison("ge")
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


# --- Python operators -------------------------------------------------------------

def forward_op(fn):
    """`tensor <op> other`: NotImplemented for operands ember cannot combine."""
    def op(self, other):
        if not isinstance(other, Tensor) and not is_scalar(other):
            return NotImplemented
        return fn(self, other)

    op.__name__ = f"__{fn.__name__}__"
    return op


def _eq_op(self, other):
    # PyTorch's `tensor == array` reads a NumPy array as a tensor (its other comparisons,
    # `!=` included, do not: Python's fallback decides them)
    if isinstance(other, np.ndarray):
        from .creation import from_data

        other = from_data(other, None, None, copy=False)
    if not isinstance(other, Tensor) and not is_scalar(other):
        return NotImplemented
    return eq(self, other)


def reflected_op(fn):
    """`other <op> tensor` (Python calls `tensor.__r<op>__(other)`)."""
    def op(self, other):
        if not is_scalar(other):
            return NotImplemented
        return fn(other, self)

    op.__name__ = f"__r{fn.__name__}__"
    return op


def _add_op(self, other):
    try:
        a, b, _ = binary_operands(self, other)
    except TypeError:
        return NotImplemented
    return apply(binary_p, a, b, fn=add_fn)


def _mul_op(self, other):
    try:
        a, b, d = binary_operands(self, other)
    except TypeError:
        return NotImplemented
    if d in _LOW16:
        a, b, fn = _widened(self, other, a, b, mul_fn, mul_wide_fn)
        return apply(binary_p, a, b, fn=fn)
    return apply(binary_p, a, b, fn=mul_fn)


def _rtruediv(self, other):
    # NOTE: PyTorch computes `number / tensor` as `tensor.reciprocal() * number` (so its
    # grad_fn is MulBackward0 and the reciprocal rounds in the tensor's dtype); an array
    # divided by a tensor goes the same way (the product falls to NumPy, wrapped back).
    if not is_scalar(other) and not isinstance(other, np.ndarray):
        return NotImplemented
    return self.reciprocal() * other


TENSOR_METHODS = {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div,
    "divide": div, "true_divide": true_divide, "floor_divide": floor_divide, "eq": eq, "ne": ne,
    "lt": lt,
    "le": le, "gt": gt, "ge": ge, "not_equal": ne, "less": lt, "less_equal": le, "greater": gt,
    "greater_equal": ge,
    "__add__": _add_op, "__radd__": _add_op, "__sub__": forward_op(sub),
    "__rsub__": _rsub_op, "__mul__": _mul_op, "__rmul__": _mul_op,
    "__truediv__": forward_op(div), "__rtruediv__": _rtruediv,
    "__floordiv__": forward_op(floor_divide), "__rfloordiv__": reflected_op(floor_divide),
    "__eq__": _eq_op, "__ne__": forward_op(ne), "__lt__": forward_op(lt),
    "__le__": forward_op(le), "__gt__": forward_op(gt), "__ge__": forward_op(ge),
}

__all__ = [
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "not_equal",
    "less", "less_equal", "greater", "greater_equal",
]
