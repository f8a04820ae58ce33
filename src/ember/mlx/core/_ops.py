"""MLX's functions on arrays: math, reductions, shapes, indexing, creation.

Each one binds ember's ops on the arrays' tensors, with MLX's dtype rules around them
(integer inputs of float math become float32, sums of small integers widen to int32,
`argmax` answers uint32, ...). The `stream=` argument every MLX function takes is
accepted and ignored: there is one CPU stream.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

import ember as E

from . import _axis_checks as AC
from . import _complex_close as CC
from . import _dtypes as D
from . import _extremes as X
from . import _gather_checks as GC
from . import _join_checks as JC
from . import _product_checks as PC
from . import _saturating as S
from ._arange_args import bind_arange
from ._arithmetic import (
    mlx_floor_divide,
    mlx_power,
    mlx_remainder,
    on_parts,
    refuse_complex,
    refuse_floats,
)
from ._array import (
    _wrap,
    array,
    as_array,
    binary,
    cast,
    compare,
    complex_order,
    divide,
    operands,
    to_array,
    wrap_result,
)
from ._compile_shapes import shape_derived
from ._dtypes import Dtype
from ._einsum import einsum as run_einsum
from ._errors import check_broadcasts
from ._indexing import shape_text
from ._reductions import (  # noqa: F401
    _axes,
    _float,
    all,
    any,
    argmax,
    argmin,
    cummax,
    cummin,
    cumprod,
    cumsum,
    logsumexp,
    max,
    mean,
    min,
    prod,
    softmax,
    std,
    sum,
    var,
)

# (the reductions live in their module; named here too, as the other modules and the
# array's methods reach them through this one)
from ._reshape_checks import reshape_target

_arr = as_array  # (the conversion every op's array operands share)


# -- elementwise ----------------------------------------------------------------------------

def _unary_float(fn, *, complex_ok: bool = True, on_complex=None):
    """An op taking floats (integers and bools promoted); on complex input MLX's error
    where its kernel has no complex case, or `on_complex(tensor)` where MLX computes it
    otherwise than the real formula."""
    def op(a, /, *, stream=None) -> array:
        a = _float(_arr(a))
        if a._dtype.kind == "c":
            if not complex_ok:
                refuse_complex(fn.__name__, a._dtype)
            if on_complex is not None:
                return _wrap(on_complex(a._t), a._dtype)
        return _wrap(fn(a._t), a._dtype)
    op.__name__ = fn.__name__
    return op


exp = _unary_float(S.exp)  # (MLX's exp saturates: inf above 88, no subnormals)
expm1 = _unary_float(E.expm1, complex_ok=False)
log = _unary_float(E.log)
log2 = _unary_float(E.log2)
log10 = _unary_float(E.log10)
log1p = _unary_float(E.log1p)
sqrt = _unary_float(E.sqrt)
rsqrt = _unary_float(E.rsqrt)
sin = _unary_float(E.sin)
cos = _unary_float(E.cos)
tan = _unary_float(E.tan)
arcsin = _unary_float(E.asin)
arccos = _unary_float(E.acos)
arctan = _unary_float(E.atan)
sinh = _unary_float(E.sinh)
cosh = _unary_float(E.cosh)
tanh = _unary_float(E.tanh)
arcsinh = _unary_float(E.asinh)
arccosh = _unary_float(E.acosh)
arctanh = _unary_float(E.atanh)
sigmoid = _unary_float(S.sigmoid)
erf = _unary_float(E.erf)
erfinv = _unary_float(E.erfinv, complex_ok=False)
# NOTE: MLX takes a complex reciprocal as the complex division 1 / z (so 1 / (3 + 0j) has
# imaginary part +0 and 1 / 0 is inf + nan j), and scales complex degrees / radians
reciprocal = _unary_float(E.reciprocal, on_complex=lambda t: E.div(E.ones_like(t), t))
degrees = _unary_float(E.rad2deg, on_complex=lambda t: t * (180.0 / math.pi))
radians = _unary_float(E.deg2rad, on_complex=lambda t: t * (math.pi / 180.0))


def _unary_same(fn, name: str):
    def op(a, /, *, stream=None) -> array:
        a = _arr(a)
        return wrap_result(fn(a._t), a._dtype)
    op.__name__ = name
    return op


def negative(a, /, *, stream=None) -> array:
    a = _arr(a)
    if a._dtype is D.bool_:
        raise ValueError("[negative] Not supported for bool, use logical_not instead.")
    return wrap_result(E.neg(a._t), a._dtype)


def square(a, /, *, stream=None) -> array:
    """`a * a`: one multiplication (as torch's `square` computes it) that a fused loop can
    take in, where a power node would stop the loop."""
    a = _arr(a)
    return wrap_result(E.mul(a._t, a._t), a._dtype)


_sign_real = _unary_same(E.sign, "sign")


def sign(a, /, *, stream=None) -> array:
    """-1, 0 or 1 by sign; for complex z, z / |z| (0 at 0), as MLX's kernel gives it."""
    a = _arr(a)
    return wrap_result(E.sgn(a._t), a._dtype) if a._dtype.kind == "c" else _sign_real(a)


def abs(a, /, *, stream=None) -> array:  # noqa: A001  (MLX's name)
    a = _arr(a)
    if a._dtype.kind == "c":
        return _wrap(E.abs(a._t), D.float32)
    return _wrap(E.abs(a._t) if a._dtype.kind not in "bu" else a._t, a._dtype)


def _rounding(fn, name: str):
    def op(a, /, *, stream=None) -> array:
        a = _arr(a)
        refuse_complex(name, a._dtype)
        return a if a._dtype.kind in "biu" else _wrap(fn(a._t), a._dtype)
    op.__name__ = name
    return op


floor = _rounding(E.floor, "floor")
ceil = _rounding(E.ceil, "ceil")


def round(a, /, decimals: int = 0, *, stream=None) -> array:  # noqa: A001
    """To the nearest (half to even) multiple of 10**-decimals. NOTE: as MLX computes it,
    for decimals other than 0: times the scale (a float32, taken into the float type,
    float32 for integers), rounded, times 1 / scale, cast back to the input's dtype. So
    integers round to tens for decimals < 0 (through float32), and float16 to 1 decimal
    rounds as float16 arithmetic does."""
    a = _arr(a)
    if decimals == 0 and a._dtype.kind in "biu":
        return a
    f = _float(a)
    t = f._t
    if decimals:
        scale = np.float32(10.0**decimals)
        up, down = (float(np.array(v).astype(f._dtype.np if f._dtype.kind == "f" else
                                              np.float32)) for v in (scale, 1 / scale))
        t = t * up
    t = E.round(t) if f._dtype.kind != "c" else on_parts(E.round, t)
    if decimals:
        t = t * down
    return _wrap(cast(t, f._dtype, a._dtype), a._dtype)


def isnan(a, /, *, stream=None) -> array:
    return _wrap(E.isnan(_arr(a)._t), D.bool_)


def isinf(a, /, *, stream=None) -> array:
    return _wrap(E.isinf(_arr(a)._t), D.bool_)


def isfinite(a, /, *, stream=None) -> array:
    return _wrap(E.isfinite(_arr(a)._t), D.bool_)


def logical_not(a, /, *, stream=None) -> array:
    return _wrap(E.logical_not(_arr(a)._t), D.bool_)


def _binary(fn, name: str, numbers: bool = False, integers: bool = False):
    def op(a, b, /, *, stream=None) -> array:
        if integers:
            refuse_floats(name, a, b)
        return binary(fn, a, b, numbers)
    op.__name__ = name
    return op


add = _binary(E.add, "add")
subtract = _binary(E.sub, "subtract")
multiply = _binary(E.mul, "multiply")
floor_divide = _binary(mlx_floor_divide, "floor_divide")
remainder = _binary(mlx_remainder, "remainder")
power = _binary(mlx_power, "power")


def _select(first_if, real):
    """max / min as MLX defines them: NaN wins, and at a tie the second argument is taken
    (so the gradient flows to it whole: `relu`'s derivative at 0 is 0). Real floating
    operands go to `real` (one node, MLX's derivative: `_extremes`). Complex ones are
    ordered by real part, then imaginary part, and only the first argument's NaN (in
    either part) wins: MLX's `isnan(x) ? x : (x > y ? x : y)`."""
    def fn(ta, tb):
        if not isinstance(ta, E.Tensor):  # (a Python number first: `mx.maximum(0, x)`)
            ta = E.tensor(ta, dtype=tb.dtype)
        if ta.dtype.is_floating_point:
            return real(ta, tb)
        if ta.dtype.is_complex:
            return E.where(complex_order(first_if, ta, tb) | E.isnan(ta), ta, tb)
        return E.where(first_if(ta, tb), ta, tb)
    return fn


maximum = _binary(_select(E.gt, X.maximum), "maximum", numbers=True)
minimum = _binary(_select(E.lt, X.minimum), "minimum", numbers=True)
bitwise_and = _binary(E.bitwise_and, "bitwise_and", integers=True)
bitwise_or = _binary(E.bitwise_or, "bitwise_or", integers=True)
bitwise_xor = _binary(E.bitwise_xor, "bitwise_xor", integers=True)
left_shift = _binary(E.bitwise_left_shift, "left_shift", integers=True)
right_shift = _binary(E.bitwise_right_shift, "right_shift", integers=True)


def divide_(a, b, /, *, stream=None) -> array:
    return divide(a, b)


def arctan2(a, b, /, *, stream=None) -> array:
    ta, tb, dt = operands(a, b, floating=True)
    return _wrap(E.atan2(ta, tb), dt)


def logaddexp(a, b, /, *, stream=None) -> array:
    ta, tb, dt = operands(a, b, floating=True)
    return _wrap(S.saturate_logaddexp(ta, tb, E.logaddexp(ta, tb)), dt)


def _compare(fn, name: str):
    def op(a, b, /, *, stream=None) -> array:
        return compare(fn, a, b)
    op.__name__ = name
    return op


equal = _compare(E.eq, "equal")
not_equal = _compare(E.ne, "not_equal")
less = _compare(E.lt, "less")
less_equal = _compare(E.le, "less_equal")
greater = _compare(E.gt, "greater")
greater_equal = _compare(E.ge, "greater_equal")


def logical_and(a, b, /, *, stream=None) -> array:
    return _wrap(E.logical_and(_arr(a)._t, _arr(b)._t), D.bool_)


def logical_or(a, b, /, *, stream=None) -> array:
    return _wrap(E.logical_or(_arr(a)._t, _arr(b)._t), D.bool_)


def where(condition, x, y, /, *, stream=None) -> array:
    check_broadcasts(*(getattr(v, "shape", ()) for v in (_arr(condition), x, y)))
    tx, ty, dt = operands(x, y)
    return _wrap(E.where(_arr(condition).astype(D.bool_)._t, tx, ty), dt)


def clip(a, /, a_min, a_max, *, stream=None) -> array:
    if a_min is None and a_max is None:
        raise ValueError("At most one of a_min and a_max may be None")
    out = _arr(a)
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return out


def isclose(a, b, /, rtol: float = 1e-5, atol: float = 1e-8, *, equal_nan: bool = False,
            stream=None) -> array:
    ta, tb, dt = operands(a, b)
    if dt.kind == "c":
        return _wrap(CC.isclose(ta.to(tb.dtype), tb.to(ta.dtype), rtol, atol, equal_nan),
                     D.bool_)
    if not ta.dtype.is_floating_point:
        ta, tb = ta.to(E.float32), tb.to(E.float32)
    return _wrap(E.isclose(ta, tb.to(ta.dtype), rtol=rtol, atol=atol, equal_nan=equal_nan),
                 D.bool_)


def allclose(a, b, /, rtol: float = 1e-5, atol: float = 1e-8, *, equal_nan: bool = False,
             stream=None) -> array:
    return all(isclose(a, b, rtol, atol, equal_nan=equal_nan))


def array_equal(a, b, /, equal_nan: bool = False, *, stream=None) -> array:
    a, b = _arr(a), _arr(b)
    if a.shape != b.shape:
        return array(False)
    if equal_nan:
        return all(isclose(a, b, 0.0, 0.0, equal_nan=True))
    return all(equal(a, b))


# -- products -------------------------------------------------------------------------------

def matmul(a, b, /, *, stream=None) -> array:
    a, b = _arr(a), _arr(b)
    a_shape, b_shape = PC.check_operands("matmul", a.shape, b.shape)
    dt = _product_dtype(a, b)
    PC.batch_shape(a_shape, b_shape)
    return _wrap(E.matmul(cast(a._t, a._dtype, dt), cast(b._t, b._dtype, dt)), dt)


def _product_dtype(a: array, b: array) -> Dtype:
    """The dtype of `a @ b`, refusing what MLX refuses (integers, 0-d operands)."""
    dt = D.promote_types(a._dtype, b._dtype)
    if dt.kind not in "fc":
        raise ValueError(
            f"[matmul] Only inexact types are supported but {a._dtype.name} and "
            f"{b._dtype.name} were provided which results in {dt.name}, which is not a "
            "floating point type.")
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("[matmul] Got 0 dimension input. Inputs must have at least one "
                         "dimension.")
    return dt


def addmm(c, a, b, /, alpha: float = 1.0, beta: float = 1.0, *, stream=None) -> array:
    """`alpha * (a @ b) + beta * c`; one fused op (ember's addmm) for matrices."""
    c, a, b = _arr(c), _arr(a), _arr(b)
    a_shape, b_shape = PC.check_operands("addmm", a.shape, b.shape)
    dt = PC.addmm_dtype(c._dtype, a._dtype, b._dtype)
    out_shape = PC.batch_shape(a_shape, b_shape)
    PC.check_addmm_bias(c.shape, out_shape[:-2] + tuple(
        n for n, s in zip(out_shape[-2:], (a.shape, b.shape)) if len(s) > 1))
    a, b, c = (x if x._dtype is dt else x.astype(dt) for x in (a, b, c))
    if a.ndim > 2 and b.ndim == 2 and c.ndim <= 1:
        # (a batch of rows times one matrix, as a Linear layer's: the rows folded into one
        # matrix, one fused op)
        rows = addmm(c, reshape(a, (-1, a.shape[-1])), b, alpha, beta)
        return reshape(rows, (*a.shape[:-1], b.shape[-1]))
    if a.ndim != 2 or b.ndim != 2 or c.ndim > 2:
        out = matmul(a, b)
        return (out if alpha == 1 else multiply(out, alpha)) + \
            (c if beta == 1 else multiply(c, beta))
    # (1 as an int: the plain bias add, as nn.Linear's, which compiled C programs cover)
    alpha, beta = (1 if x == 1 else x for x in (alpha, beta))
    return _wrap(E.addmm(cast(c._t, c._dtype, dt), cast(a._t, a._dtype, dt),
                         cast(b._t, b._dtype, dt), beta=beta, alpha=alpha), dt)


def outer(a, b, /, *, stream=None) -> array:
    return multiply(reshape(_arr(a), (-1, 1)), reshape(_arr(b), (1, -1)))


def inner(a, b, /, *, stream=None) -> array:
    """NumPy's inner product, as MLX defines it: `a * b` when either is 0-d, else the
    contraction of the last axes (a tensordot, so integers are refused as matmul's)."""
    a, b = _arr(a), _arr(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError("[inner] a and b must have the same last dimension.")
    dt = _product_dtype(a, b)
    if not a.shape[-1]:  # (an empty sum: zeros; ember's tensordot cannot fold 0 columns)
        return zeros((*a.shape[:-1], *b.shape[:-1]), dt)
    return _wrap(E.tensordot(cast(a._t, a._dtype, dt), cast(b._t, b._dtype, dt),
                             dims=([a.ndim - 1], [b.ndim - 1])), dt)


def tensordot(a, b, /, axes=2, *, stream=None) -> array:
    a, b = _arr(a), _arr(b)
    dims = PC.tensordot_axes(axes, a.shape, b.shape)
    dt = _product_dtype(a, b)
    return _wrap(E.tensordot(cast(a._t, a._dtype, dt), cast(b._t, b._dtype, dt), dims=dims),
                 dt)


def einsum(subscripts: str, *operands_, stream=None) -> array:
    return run_einsum(subscripts, operands_)


# -- shapes ---------------------------------------------------------------------------------

def reshape(a, /, shape, *, stream=None) -> array:
    a = _arr(a)
    target = reshape_target(a.size, shape)
    if tuple(int(d) for d in shape) == a.shape:  # (as MLX: no op, so a shapeless trace
        return _wrap(a._t, a._dtype)  # replays it at any shape; `-1` is inferred, an op)
    return _wrap(a._t.reshape(target), a._dtype)


def flatten(a, /, start_axis: int = 0, end_axis: int = -1, *, stream=None) -> array:
    a = _arr(a)
    if a.ndim == 0:
        return reshape(a, (1,))
    start, end = AC.flatten_span(a.ndim, start_axis, end_axis)
    return _wrap(E.flatten(a._t, start, end), a._dtype)


def squeeze(a, /, axis=None, *, stream=None) -> array:
    a = _arr(a)
    if axis is None:
        return _wrap(a._t.squeeze(), a._dtype)
    t = a._t
    for d in reversed(AC.squeeze_axes(a.shape, _axes(axis, a.ndim))):
        t = t.squeeze(d)
    return _wrap(t, a._dtype)


def expand_dims(a, /, axis, *, stream=None) -> array:
    a = _arr(a)
    t = a._t
    for d in AC.expand_axes(a.ndim, _axes(axis, a.ndim)):
        t = t.unsqueeze(d)
    return _wrap(t, a._dtype)


def transpose(a, /, axes=None, *, stream=None) -> array:
    a = _arr(a)
    n = a.ndim
    if axes is None:
        return _wrap(a._t.permute(tuple(reversed(range(n)))), a._dtype)
    axes = tuple(axes)
    if len(axes) != n:
        raise ValueError(f"[transpose] Received {len(axes)} axes for array with {n} "
                         "dimensions.")
    seen = []
    for ax in axes:
        ax = ax + n if ax < 0 else ax
        if not 0 <= ax < n:
            raise IndexError(f"[transpose] Invalid axis ({ax}) for array with {n} "
                             "dimensions.")
        if ax in seen:
            raise ValueError("[transpose] Repeat axes not allowed.")
        seen.append(ax)
    return _wrap(a._t.permute(tuple(seen)), a._dtype)


def swapaxes(a, /, axis1: int, axis2: int, *, stream=None) -> array:
    a = _arr(a)
    return _wrap(a._t.transpose(*AC.move_axes("swapaxes", a.ndim, axis1, axis2)), a._dtype)


def moveaxis(a, /, source: int, destination: int, *, stream=None) -> array:
    a = _arr(a)
    return _wrap(E.movedim(a._t, *AC.move_axes("moveaxis", a.ndim, source, destination)),
                 a._dtype)


def broadcast_to(a, /, shape, *, stream=None) -> array:
    a = _arr(a)
    target = AC.broadcast_target("broadcast_to", a.shape, shape)
    return _wrap(a._t if target == a.shape else E.broadcast_to(a._t, target), a._dtype)


def _common(arrays) -> tuple:
    arrs = [_arr(x) for x in arrays]
    dt = arrs[0]._dtype
    for x in arrs[1:]:
        dt = D.promote_types(dt, x._dtype)
    return [cast(x._t, x._dtype, dt) for x in arrs], dt


def concatenate(arrays, axis: int | None = 0, *, stream=None) -> array:
    arrays = [_arr(x) for x in arrays]
    if axis is None:
        arrays, axis = [x.reshape(-1) for x in arrays], 0
    JC.check_concatenate([x.shape for x in arrays], axis)
    if len(arrays) == 1:
        return arrays[0]
    ts, dt = _common(arrays)
    return _wrap(E.cat(ts, dim=axis), dt)


concat = concatenate


def stack(arrays, axis: int = 0, *, stream=None) -> array:
    arrays = [_arr(x) for x in arrays]
    JC.check_stack([x.shape for x in arrays], axis)
    ts, dt = _common(arrays)
    return _wrap(E.stack(ts, dim=axis), dt)


def split(a, /, indices_or_sections, axis: int = 0, *, stream=None) -> list:
    """`a` cut along `axis` into equal parts (an int) or at the indices given, which are
    read as NumPy's (as Python's slice bounds: negative from the end, clamped, a part
    empty where an index comes before the one ahead of it)."""
    a = _arr(a)
    if not -a.ndim <= axis < a.ndim:
        raise IndexError(f"[split] Axis {axis} is out of bounds for array with {a.ndim} "
                         "dimensions.")
    n = a.shape[axis]
    if isinstance(indices_or_sections, int):
        parts = indices_or_sections
        if parts <= 0:
            raise ValueError("[split] num_splits must be positive and non-zero but got "
                             f"{parts}.")
        if n % parts:
            raise ValueError("Array split does not result in sub arrays with equal size: "
                             f"attempting {parts} splits along axis {axis} for shape "
                             f"{shape_text(a.shape)}.")
        size = n // parts
        bounds = [i * size for i in range(1, parts)]
    else:
        bounds = list(indices_or_sections)
    edges = [0, *bounds, None]
    spans = [slice(lo, hi).indices(n)[:2] for lo, hi in zip(edges[:-1], edges[1:])]
    return [_wrap(E.narrow(a._t, axis, lo, builtins.max(hi - lo, 0)), a._dtype)
            for lo, hi in spans]


def repeat(a, /, repeats: int, axis: int | None = None, *, stream=None) -> array:
    a = _arr(a)
    AC.check_repeat(a.ndim, repeats, axis)
    t = a._t.reshape(-1) if axis is None else a._t
    return _wrap(E.repeat_interleave(t, repeats, dim=0 if axis is None else axis), a._dtype)


def tile(a, /, reps, *, stream=None) -> array:
    a = _arr(a)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    AC.check_tile(reps)
    return _wrap(E.tile(a._t, reps), a._dtype)


# -- indexing -------------------------------------------------------------------------------

def take(a, /, indices, axis: int | None = None, *, stream=None) -> array:
    a = _arr(a)
    t = a._t.reshape(-1) if axis is None else a._t
    if isinstance(indices, int):
        at = GC.take_position(int(indices), axis, tuple(t.shape))
        return _wrap(t.select(0 if axis is None else axis % a.ndim, at), a._dtype)
    i = _arr(indices)
    GC.check_take(axis, a.ndim, i._dtype)
    axis = 0 if axis is None else axis % a.ndim
    n = t.shape[axis]
    GC.check_take_empty(n, i.size)
    idx = i._t
    idx = E.where(idx < 0, idx + n, idx)
    out = E.index_select(t, axis, idx.reshape(-1).to(E.int64))
    shape = list(t.shape[:axis]) + list(idx.shape) + list(t.shape[axis + 1:])
    return _wrap(out.reshape(shape), a._dtype)


def take_along_axis(a, /, indices, axis: int | None = -1, *, stream=None) -> array:
    a, i = _arr(a), _arr(indices)
    GC.check_along_axis("take_along_axis", (a.size,) if axis is None else a.shape, i.shape,
                        0 if axis is None else axis)
    GC.check_axis_indices("take_along_axis", i._dtype)
    t = a._t.reshape(-1) if axis is None else a._t
    idx = i._t.reshape(-1) if axis is None else i._t
    axis = 0 if axis is None else axis
    shape = list(np.broadcast_shapes(tuple(t.shape[:axis % t.dim()]) + (1,)
                                     + tuple(t.shape[axis % t.dim() + 1:]), tuple(idx.shape)))
    base = list(shape)
    base[axis % t.dim()] = t.shape[axis % t.dim()]
    idx = _wrapped_indices(idx.to(E.int64), i, t.shape[axis % t.dim()])
    return _wrap(E.gather(t.expand(*base), axis, idx.expand(*shape)), a._dtype)


def _wrapped_indices(idx, i: array, n: int):
    """Indices along an axis of length `n` with negative ones counted from its end, as
    MLX's gathers and scatters take them (one op, and none for unsigned indices)."""
    return idx if i._dtype.kind != "i" or n == 0 else E.remainder(idx, n)


def put_along_axis(a, /, indices, values, axis: int | None = None, *, stream=None) -> array:
    a, i, v = _arr(a), _arr(indices), _arr(values)
    GC.check_along_axis("put_along_axis", (a.size,) if axis is None else a.shape, i.shape,
                        0 if axis is None else axis)
    GC.check_axis_indices("put_along_axis", i._dtype)
    t = a._t.reshape(-1) if axis is None else a._t
    idx = i._t.reshape(-1).to(E.int64) if axis is None else i._t.to(E.int64)
    vals = cast(v._t, v._dtype, a._dtype)
    axis = 0 if axis is None else axis % t.dim()
    # (the indices broadcast against the array's other axes, as in take_along_axis, and
    # the values against them)
    shape = np.broadcast_shapes(tuple(t.shape[:axis]) + (1,) + tuple(t.shape[axis + 1:]),
                                tuple(idx.shape))
    check_broadcasts(shape, tuple(vals.shape))
    shape = np.broadcast_shapes(shape, tuple(vals.shape))
    idx = _wrapped_indices(idx, i, t.shape[axis])
    idx = idx.expand(*shape) if tuple(idx.shape) != shape else idx
    vals = E.broadcast_to(vals, shape) if tuple(vals.shape) != shape else vals
    out = t.scatter(axis, idx, vals)
    return _wrap(out.reshape(a.shape), a._dtype)


def diag(a, /, k: int = 0, *, stream=None) -> array:
    a = _arr(a)
    AC.check_diag(a.ndim)
    return _wrap(E.diag(a._t, k), a._dtype)


def diagonal(a, /, offset: int = 0, axis1: int = 0, axis2: int = 1, *, stream=None) -> array:
    a = _arr(a)
    axis1, axis2 = AC.diagonal_axes("diagonal", a.ndim, axis1, axis2)
    return _wrap(E.diagonal(a._t, offset, axis1, axis2), a._dtype)


def tril(x, /, k: int = 0, *, stream=None) -> array:
    x = _arr(x)
    AC.check_matrix("tril", x.ndim)
    return _wrap(E.tril(x._t, k), x._dtype)


def triu(x, /, k: int = 0, *, stream=None) -> array:
    x = _arr(x)
    AC.check_matrix("triu", x.ndim)
    return _wrap(E.triu(x._t, k), x._dtype)


def stop_gradient(a, /, *, stream=None) -> array:
    a = _arr(a)
    return _wrap(a._t.detach(), a._dtype)


# -- creation -------------------------------------------------------------------------------

def _shape(shape) -> tuple:
    """A creation function's shape; MLX fills every array through `full`, whose name its
    refusal of a negative size carries."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if builtins.any(d < 0 for d in shape):
        raise ValueError("[full] Negative dimensions not allowed.")
    return shape


def zeros(shape, dtype: Dtype | None = D.float32, *, stream=None) -> array:
    dtype = D.float32 if dtype is None else dtype  # (MLX reads None as its default)
    return _wrap(E.zeros(_shape(shape), dtype=dtype.carrier), dtype)


def ones(shape, dtype: Dtype | None = D.float32, *, stream=None) -> array:
    dtype = D.float32 if dtype is None else dtype
    return _wrap(E.ones(_shape(shape), dtype=dtype.carrier), dtype)


def full(shape, vals, dtype: Dtype | None = None, *, stream=None) -> array:
    """`vals` broadcast to `shape`, read as MLX reads a value beside a dtype (`to_array`: an
    array keeps its own dtype, a complex number stays complex, a float beside an integer
    dtype stays float32, an int out of the dtype's range is refused)."""
    v = _arr(vals) if dtype is None else to_array(vals, dtype)
    target = AC.broadcast_target("full", v.shape, _shape(shape))
    return _wrap(E.broadcast_to(v._t, target).clone(), v._dtype)


def zeros_like(a, /, dtype: Dtype | None = None, *, stream=None) -> array:
    a = _arr(a)
    return shape_derived(zeros(a.shape, dtype or a._dtype))  # (remade at each shape)


def ones_like(a, /, dtype: Dtype | None = None, *, stream=None) -> array:
    a = _arr(a)
    return shape_derived(ones(a.shape, dtype or a._dtype))  # (remade at each shape)


def full_like(a, /, vals, dtype: Dtype | None = None, *, stream=None) -> array:
    a = _arr(a)
    dtype = dtype or a._dtype
    made = shape_derived(full(a.shape, vals, dtype))
    return made.astype(dtype)  # (MLX casts to the dtype after)


def eye(n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = D.float32, *,
        stream=None) -> array:
    m = n if m is None else m
    dtype = D.float32 if dtype is None else dtype
    AC.check_eye(n, m)
    return array_from_np(np.eye(n, m, k), dtype)


def identity(n: int, dtype: Dtype | None = D.float32, *, stream=None) -> array:
    return eye(n, dtype=dtype)


def tri(n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = D.float32, *,
        stream=None) -> array:
    dtype = D.float32 if dtype is None else dtype
    return array_from_np(np.tri(n, n if m is None else m, k), dtype)


def array_from_np(a: np.ndarray, dtype: Dtype) -> array:
    from ._array import array_from_numpy
    return array_from_numpy(a.astype(dtype.np) if dtype.kind != "u" or True else a, dtype)


def arange(*args, **kw) -> array:
    """`arange(stop[, step][, dtype])`, `arange(start, stop[, step][, dtype])`: in the
    dtype of the bounds given (int32, int64 past its range, float32; bool refused) unless
    one is named. Filled as MLX's CPU kernel fills it: the first value and the step
    taken in the dtype (the step as T(start + step) - T(start)), then the step added
    over and over in the dtype, so float steps gather rounding (`arange(0, 2, 0.1)[7]`
    is 0.70000005) and an integer dtype truncates a float step first."""
    start, stop, step, dtype = bind_arange(args, kw)  # (MLX's two overloads)
    bounds = [v for v in (start, stop, step) if v is not None]
    if dtype is None:
        if builtins.all(isinstance(v, bool) for v in bounds):
            dtype = D.bool_
        elif builtins.all(isinstance(v, int) for v in bounds):
            small = builtins.all(-(2**31) <= v < 2**31 for v in bounds)
            dtype = D.int32 if small else D.int64
        else:
            dtype = D.float32
    if dtype is D.bool_:
        raise ValueError("bool not supported for arange.")
    start, stop = float(start or 0), float(stop)
    step = 1.0 if step is None else float(step)
    if builtins.any(math.isnan(v) for v in (start, stop, step)) or \
            math.isinf(start) or math.isinf(stop):
        raise ValueError("[arange] Cannot compute length.")
    if step == 0:
        raise ValueError("[arange] step must be nonzero.")
    if math.isinf(step) and (step > 0 and start < stop or step < 0 and start > stop):
        n = 1
    else:
        size = math.ceil((stop - start) / step)
        if size > 2**31 - 1:
            raise ValueError("[arange] Maximum size exceeded.")
        n = builtins.max(size, 0)
    with np.errstate(all="ignore"):  # (out-of-range casts give what C's casts give)
        first = D.c_cast(np.array([start, start + step]), dtype.np)  # (16 bits: via float)
        if dtype.kind in "iu":  # (modular, as the kernel's additions wrap)
            u = first.astype(np.uint64)
            values = u[0] + np.arange(n, dtype=np.uint64) * (u[1] - u[0])
        else:
            values = np.full(n, first[1] - first[0], dtype.np)
            values[:1] = first[:1]
            values = np.cumsum(values, dtype=dtype.np)  # (one addition after another)
    return array_from_np(values, dtype)


arange.binds_stream = True  # (`bind_arange` refuses a `stream=` of a wrong type)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype: Dtype | None = D.float32,
             stream=None) -> array:
    """`num` values from `start` to `stop` (included unless not `endpoint`), as MLX works
    them: in float32 (float64 for a float64 result), (1 - t) * start + t * stop at
    t = i / (num - 1) (i / num without the endpoint; one value is `start`), then cast to
    `dtype` as C casts (an integer dtype truncates)."""
    if num < 0:
        raise ValueError(f"[linspace] number of samples, {num}, must be non-negative.")
    dtype = dtype or D.float32
    f = np.float64 if dtype is D.float64 else np.float32
    with np.errstate(all="ignore"):  # (infinite bounds give what the kernels give)
        t = np.arange(num, dtype=f) / f(num - 1 if endpoint else num)
        values = (f(1) - t) * f(start) + t * f(stop) if num != 1 else np.array([start], f)
        return array_from_np(D.c_cast(values, dtype.np), dtype)


def astype(a, /, dtype: Dtype, *, stream=None) -> array:
    return _arr(a).astype(dtype)


__all__ = [n for n, v in list(globals().items())
           if callable(v) and not n.startswith("_") and getattr(v, "__module__", "") == __name__
           and n not in ("array_from_np", "divide_")]
