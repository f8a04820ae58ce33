"""Helpers shared by the op modules: operand promotion, meta rules, `out=` handling."""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import iter_layout
from .._core.primitive import meta_rules
from .._tensor import Tensor, _wrap, layout_strides
from .._user_warnings import user_stacklevel
from .._view import (
    broadcast_shapes,
    contiguous_strides,
    like_strides,
    pointwise_order,
    pointwise_strides,
    storage_extent,
)
from ._rounding import rounded
from ._scalar_value import _python_number, uint64_promotion
from ._select_native import select_native

_grad_state = grad_mode.state

_SCALAR_KIND = {bool: 0, int: 1, float: 2, complex: 3}


def has_values(t: Tensor) -> bool:
    """Whether `t`'s values can be read here for an argument check. A tensor with neither
    an array nor a storage is one example's view of a batch inside vmap: its values are
    the batch's, so a check that reads them is left to the kernel, which sees the batch
    (as PyTorch's batched kernels check)."""
    return t._np is not None or t._storage is not None


def is_scalar(x) -> bool:
    """A Python or NumPy number (np.bool_ too, which is no `numbers.Number`)."""
    return (isinstance(x, numbers.Number) or x.__class__ is np.bool_) and \
        not isinstance(x, Tensor)


OperandTypeError = dt.OperandTypeError


def scalar_kind(x) -> int:
    k = _SCALAR_KIND.get(x.__class__)
    if k is None:
        if isinstance(x, np.generic):
            return _SCALAR_KIND[dt.py_number(x).__class__]
        if isinstance(x, bool):
            return 0
        if isinstance(x, numbers.Integral):
            return 1
        if isinstance(x, numbers.Real):
            return 2
        if isinstance(x, numbers.Complex):
            return 3
        raise OperandTypeError(f"expected a Tensor or a number, got {type(x).__name__}")
    return k


def broadcast_errors(kernel):
    """`kernel` with NumPy's broadcasting ValueError raised as PyTorch's RuntimeError.

    For kernels of several tensor operands whose callers do not check the shapes first
    (binary ops do, in `binary_operands`): the success path costs nothing extra, and a clash
    is reported as PyTorch reports it, naming the sizes and the dim.
    """
    @functools.wraps(kernel)
    def run(*arrays, **params):
        try:
            return kernel(*arrays, **params)
        except ValueError:
            shapes = [a.shape for a in arrays if isinstance(a, np.ndarray)]
            try:
                broadcast_shapes(*shapes)
            except RuntimeError as clash:
                raise clash from None
            raise  # broadcastable: some other ValueError, not ours to rename

    return run


_I64_MIN, _I64_END = -(2 ** 63), 2 ** 63
_EXACT_INTS = {dt.float16: 2048, dt.bfloat16: 256}  # (every int up to these is exact in them)


def fit_scalar(x, d: dt.dtype):
    """A Python number as the kernel should see it next to a tensor of dtype `d`."""
    if x.__class__ is int and not _I64_MIN <= x < _I64_END:
        # NOTE: PyTorch reads a Python int as an int64 Scalar, else as a uint64 one (an
        # OverflowError outside both); next to an integer tensor a uint64 Scalar wraps into
        # int64 (x - 2**64), as C converts it.
        x = _python_number(x)
        if d._kind == 1:
            x -= 2 ** 64
    if x.__class__ is float and d._kind >= 2:
        # A 16-bit float reads a number rounded to its own dtype, as PyTorch's add, sub,
        # remainder, pow and the comparisons do (mul and div widen it: see
        # `_rounding`); ml_dtypes would also promote bfloat16 to float32 otherwise.
        return x if d.itemsize != 2 else rounded(x, d)
    if x.__class__ is int and d in _EXACT_INTS and not -_EXACT_INTS[d] <= x <= _EXACT_INTS[d]:
        # NOTE: an int the 16-bit dtype cannot hold rounds through float32, as PyTorch
        # converts it (2**24 + 2**16 + 1 is bfloat16's 2**24); NumPy beside a bfloat16 array
        # rounds it once since ml_dtypes 0.7.
        return rounded(x, d)
    if d._kind == 1 and d is not dt.int64 and isinstance(x, numbers.Integral):
        # NumPy refuses out-of-range Python ints; C (and PyTorch) wrap them.
        return np.array(int(x)).astype(d.np)[()]
    if isinstance(x, np.generic):
        return x.astype(d.np) if d._kind >= scalar_kind(x) else x
    return x


def to_tensor(x, like: Tensor | None = None) -> Tensor:
    """A tensor from a tensor or a number (a 0-d tensor of the number's PyTorch dtype)."""
    if isinstance(x, Tensor):
        return x
    from .creation import scalar_tensor

    dev = None if like is None else like.device
    return scalar_tensor(x, device=dev)


def binary_operands(a, b):
    """`a`, `b` cast to their common dtype by PyTorch's rules; numbers stay numbers.

    Returns (a, b, dtype). At least one of `a`, `b` is a tensor.
    """
    ta = isinstance(a, Tensor)
    tb = isinstance(b, Tensor)
    if ta and tb:
        if a._shape != b._shape:
            broadcast_shapes(a._shape, b._shape)  # RuntimeError naming both sizes, as PyTorch
        if a._dtype is b._dtype:
            return a, b, a._dtype
        d = dt.result_type(a, b)
        return (a if a._dtype is d else a.to(d)), (b if b._dtype is d else b.to(d)), d
    if ta:
        t, s = a, b
    elif tb:
        t, s = b, a
    else:
        # (a public op re-raises it in the parser's words: "add(): argument 'input'
        # (position 1) must be Tensor, not str")
        raise OperandTypeError(
            f"expected at least one Tensor operand, got {type(a).__name__} and {type(b).__name__}"
        )
    if not is_scalar(s):
        raise OperandTypeError(
            f"unsupported operand type(s): 'Tensor' and '{type(s).__name__}'"
        )
    if isinstance(s, np.generic):
        s = dt.py_number(s)  # (the number PyTorch's parser reads; promotes as one)
    d = t._dtype
    if scalar_kind(s) > d._kind:
        if d is dt.bool_:
            uint64_promotion(d, s)
        d = dt.result_type(t, s)
        t = t.to(d)
    s = fit_scalar(s, d)
    return (t, s, d) if ta else (s, t, d)


def elementwise_meta(*args, dtype: dt.dtype | None = None):
    """Shape, dtype and strides of an elementwise result on meta (TensorIterator's layout;
    a number among the arguments counts as the 0-d operand PyTorch wraps it in)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    shape = broadcast_shapes(*(t._shape for t in tensors))
    if dtype is None:
        dtype = tensors[0]._dtype
    operands = [(a._shape, a.stride()) if isinstance(a, Tensor) else ((), ())
                for a in args if a is not None]
    return shape, dtype, pointwise_strides(shape, operands)


def layout_like(tensors, shape) -> tuple[int, ...]:
    """Output strides as PyTorch's TensorIterator lays them out for these input tensors
    (`_view.pointwise_strides`)."""
    return pointwise_strides(shape, [(t._shape, t.stride()) for t in tensors])


def iter_order(operands, shape) -> list[int]:
    """The dims of a pointwise result, innermost first, as TensorIterator orders them for
    these operands ((shape, strides) pairs; `_view.pointwise_order`)."""
    return pointwise_order(shape, operands)


# The members PyTorch lays out otherwise than TensorIterator over all their arguments:
# "values": its number arguments are values for the kernel (the Scalar overloads of pow, clamp
# and lerp), not the 0-d tensor operands that `x + 1` or `where(c, x, 0.)` make of them;
# "like": the result is `empty_like(input)` (preserve_format), TensorIterator writing into it;
# "complex like": "like" for a complex input (abs), TensorIterator's for a real one;
# "contiguous": the result is allocated row-major (`pow(number, tensor)`);
# "with number": TensorIterator's over the input's own pointwise result and a number (isinf:
# `x.abs() == inf`); "isfinite": `(x == x) * (x.abs() != inf)`, the two results' product;
# "second fresh": TensorIterator's with the second operand row-major (ldexp: `x * 2**e`);
# "like target": `empty_like(target)`, the second operand (BCE with logits); "like
# expanded": `empty_like` of the input expanded to the result's shape (Huber: PyTorch
# broadcasts input and target before its kernel); "expanded": TensorIterator's over the
# operands expanded to the result's shape (mse, smooth L1: the same layout, but for an
# empty result, which expanded operands leave row-major);
# "first": TensorIterator's over the first operand alone, the rest applied in place (soft
# margin: `neg(input)`, then `mul_(target)`); "scaled": TensorIterator's over the input and
# a number, then over that result alone (ndtr: `erf(x * c)` ...);
# a function of (args, params) names the kind where it depends on them (isinf of integers).
MEMBER_LAYOUT = {"pow_tensor_scalar": "values", "clamp": "values", "lerp": "values",
                 "clamp_min": "values", "clamp_max": "values",
                 "nan_to_num": "like", "hardtanh": "like", "binary_cross_entropy": "like",
                 "huber_loss": "like expanded", "mse_loss": "expanded",
                 "smooth_l1_loss": "expanded",
                 "binary_cross_entropy_with_logits": "like target",
                 "soft_margin_loss": "first", "special_ndtr": "scaled",
                 "conj_physical": "like", "abs": "complex like", "pow_scalar": "contiguous"}


def iter_relayout(args, res, params):
    """`res`, a pointwise kernel's array, as the tensor PyTorch's TensorIterator would have
    allocated for operands `args` (`params["fn"]`: the family member, if the op has one).

    Operands that are all row-major (strides exactly so) give a non-empty result row-major,
    as a NumPy kernel returns it: `res` comes back as it is. Otherwise the strides are worked
    out from the operands' (`_view.pointwise_strides`): `res` is copied when its data is
    laid out otherwise, and given those strides (a size-1 dim's stride included)."""
    # NOTE: every pointwise op passes here: the row-major case is one look per tensor.
    for a in args:
        if a.__class__ is Tensor or isinstance(a, Tensor):
            st = a._stride
            if st is None:
                if not a._np.flags.c_contiguous:
                    break
            elif st != contiguous_strides(a._shape):
                break
    else:
        if res.__class__ is not np.ndarray or res.size:
            return res  # (an empty result may still not be row-major: a size-0 dim)
    return _relayout(args, res, member_kind(args, params))


def member_kind(args, params) -> str | None:
    """The MEMBER_LAYOUT kind of a call of the family member `params["fn"]`, if any."""
    kind = MEMBER_LAYOUT.get(getattr(params.get("fn"), "name", None))
    return kind(args, params) if callable(kind) else kind


def _relayout(args, res, kind):
    if res.__class__ is not np.ndarray or not res.ndim:
        return res  # (a reduced loss is 0-d)
    return strided_result(res, member_strides(args, res.shape, kind))


def member_strides(args, shape, kind) -> tuple[int, ...]:
    """Strides PyTorch gives the pointwise result of `shape` of a call with arguments `args`
    by a member whose MEMBER_LAYOUT entry is `kind` (None: TensorIterator over all of them,
    numbers as 0-d operands), on any device: eager (`iter_relayout`) and meta (`laid_meta`)."""
    if kind == "complex like":
        kind = "like" if args[0]._dtype.is_complex else None
    numbers = kind is None
    operands = []
    for a in args:
        if isinstance(a, Tensor):
            operands.append((a._shape, layout_strides(a)))
        elif numbers and a is not None and (a.__class__ in _SCALAR_KIND or is_scalar(a)):
            operands.append(((), ()))
    if kind == "second fresh":
        operands[1] = (operands[1][0], contiguous_strides(operands[1][0]))
    elif kind == "expanded":
        operands = [(shape, _expanded(s, st, shape)) for s, st in operands]
        kind = None
    elif kind in ("like target", "first"):
        operands = operands[1:2] if kind == "like target" else operands[:1]
        kind = "like" if kind == "like target" else None
    key = (shape, tuple(operands), kind)
    stride = _layouts_met.get(key)
    if stride is None:
        if kind == "like" and operands[0][0] == shape:
            stride = like_strides(operands[0][0], operands[0][1])
        elif kind == "like expanded":
            stride = like_strides(shape, _expanded(*operands[0], shape))
        elif kind == "contiguous":
            stride = contiguous_strides(shape)
        elif kind == "scaled":
            own = (shape, pointwise_strides(shape, [operands[0], ((), ())]))
            stride = pointwise_strides(shape, [own])
        elif kind in ("with number", "isfinite"):
            own = (shape, pointwise_strides(shape, operands))
            stride = pointwise_strides(shape, [own, ((), ())])
            if kind == "isfinite":
                stride = pointwise_strides(shape, [own, (shape, stride)])
        else:
            stride = pointwise_strides(shape, operands)
        if len(_layouts_met) < 4096:
            _layouts_met[key] = stride
    return stride


def _expanded(op_shape, op_strides, shape) -> tuple[int, ...]:
    """The strides of an operand of `op_shape` expanded to `shape` (0 where it broadcasts)."""
    if tuple(op_shape) == tuple(shape):
        return tuple(op_strides)
    off = len(shape) - len(op_shape)
    return (0,) * off + tuple(0 if n == 1 and m != 1 else s for n, m, s in
                              zip(op_shape, shape[off:], op_strides))


def laid_meta(*args, fn, **params):
    """The meta rule of a family laid out by `iter_relayout`: its member's rule, with the
    strides of a member that MEMBER_LAYOUT names as `member_strides` gives them, so a
    compiled or meta result is laid out as the eager one (a member's rule does not know
    which member it serves)."""
    res = fn.meta(*args, **params)
    kind = MEMBER_LAYOUT.get(fn.name)
    if callable(kind):
        kind = kind(args, params)
    if kind is None or not res[0]:
        return res
    return res[0], res[1], member_strides(args, tuple(res[0]), kind)


def tensoriterator_family(fam) -> None:
    """Lay out family `fam`'s results as TensorIterator does, eager and on meta."""
    iter_layout[fam] = iter_relayout
    meta_rules[fam] = laid_meta


# (result shape, operands' layouts, member kind) -> the result's strides: a training step
# meets the same few layouts at every step; bounded, as `_view.contiguous_strides`'s table
_layouts_met: dict = {}


def like_relayout(args, res, params):
    """`res` as PyTorch's `empty_like(args[0])` (preserve_format) lays a result out: the
    input's strides when it is dense, else a dense order of them (`_view.like_strides`)."""
    x = args[0]
    st = layout_strides(x)
    if res.__class__ is not np.ndarray or st == contiguous_strides(x._shape):
        return res
    return strided_result(res, like_strides(x._shape, st))


def strided_result(res: np.ndarray, stride):
    """`res`'s values with element strides `stride` (dense, non-negative): `res` itself
    when its array says those strides, else a new tensor over its data restrided (only a
    size-1 dim's stride differs) or over a copy laid out so."""
    it = res.itemsize
    want = tuple(s * it for s in stride)
    if res.strides == want and res.size and (1 not in res.shape or not res.flags.c_contiguous):
        return res  # (NumPy's array says these strides itself; an empty one's are not read)
    if res.strides != want:
        same = min(res.strides, default=0) >= 0 and all(
            n == 1 or a == b for n, a, b in zip(res.shape, res.strides, want))
        if same:  # (only a size-1 dim's stride differs: the same data, restrided)
            res = np.lib.stride_tricks.as_strided(res, res.shape, want)
        else:
            res = laid_copy(res, res.shape, stride, res.dtype)
    t = _wrap(res)
    if stride != contiguous_strides(res.shape) or not res.flags.c_contiguous:
        t._ensure_storage()
        t._stride = tuple(stride)
    return t


def laid_out(operands, res):
    """`res` copied into the dense layout `iter_order` gives for these operands (shape,
    strides), or `res` itself when it is already laid out so (or is not a C-ordered
    array of 2 or more dims: the only kind a NumPy kernel returns where they differ)."""
    if res.__class__ is not np.ndarray or res.ndim < 2 or res.size == 0:
        return res
    if not res.flags.c_contiguous and not any(0 in st for _, st in operands):
        # (NumPy's own order is TensorIterator's here; it differs only for a broadcast,
        # stride-0 dim, which NumPy puts innermost and TensorIterator leaves in its place)
        return res
    perm = iter_order(operands, res.shape)
    if perm == list(range(res.ndim - 1, -1, -1)) and res.flags.c_contiguous or \
            not res.flags.c_contiguous and _dense_in(res, perm):
        return res
    outer = perm[::-1]
    laid = np.empty(tuple(res.shape[d] for d in outer), res.dtype)
    inv = [0] * res.ndim
    for i, d in enumerate(outer):
        inv[d] = i
    laid = laid.transpose(inv)
    laid[...] = res
    return laid


def has_broadcast_dim(a: np.ndarray) -> bool:
    """Whether `a` steps 0 along a dim of more than one element (an expanded array)."""
    return 0 in a.strides and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape))


def preserve_copy(a: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
    """A copy of `values` (default `a`) laid out as PyTorch's preserve_format copy of `a`
    (`empty_like`): NumPy's order "K" but for a broadcast (stride-0) dim, which NumPy puts
    innermost and PyTorch leaves in its row-major place."""
    if not has_broadcast_dim(a) or min(a.strides) < 0:
        return (a if values is None else values).copy(order="K")
    stride = like_strides(a.shape, tuple(s // a.itemsize for s in a.strides))
    return laid_copy(a if values is None else values, a.shape, stride, a.dtype)


def laid_copy(values, shape, stride, dtype) -> np.ndarray:
    """A fresh array of `shape` and `dtype` with element strides `stride` (dense,
    non-negative) holding `values` (broadcast to it)."""
    dtype = np.dtype(dtype)
    buf = np.empty(storage_extent(shape, stride, 0), dtype)
    out = np.lib.stride_tricks.as_strided(buf, shape, tuple(x * dtype.itemsize for x in stride))
    out[...] = values
    return out


def _dense_in(res: np.ndarray, perm) -> bool:
    """Whether `res` is dense in the dim order `perm` (innermost first)."""
    step = res.itemsize
    for d in perm:
        n = res.shape[d]
        if n != 1 and res.strides[d] != step:
            return False
        step *= n
    return True


def same_meta(x: Tensor, dtype: dt.dtype | None = None):
    return x._shape, dtype or x._dtype, layout_like([x], x._shape)


def float_dtype_for(x: Tensor) -> dt.dtype:
    """The dtype a floating-point op computes in: ints and bool go to the default dtype."""
    d = x._dtype
    return d if d._kind >= 2 else dt.get_default_dtype()


def to_float(x: Tensor) -> Tensor:
    return x if x._dtype._kind >= 2 else x.to(dt.get_default_dtype())


def reduced_float(np_dtype) -> bool:
    """True for float16 / bfloat16, which compute in float32 and round once."""
    return np_dtype.itemsize == 2 and np_dtype.kind in "fV" or np_dtype == dt.bfloat16.np


def cast_input(x: Tensor, d: dt.dtype, out=None) -> Tensor:
    """`x.to(d)` for an op that casts its input first (sum / prod / cumsum with `dtype=`).
    PyTorch records the op itself in the graph, and autograd refuses a result of an integer
    or bool dtype; a plain cast would quietly drop the graph instead. An `out=` call is
    refused first (PyTorch checks `out=` before the dtype)."""
    if out is not None:
        refuse_out_grad(x, out)
    if d._kind < 2 and x._requires_grad and _grad_state.enabled:
        raise RuntimeError(f"Autograd not support dtype: {type_name(d)}")
    return x.to(d)


def refuse_out_grad(result, out) -> None:
    """PyTorch's refusal of `out=` when grad mode is on and the result or `out` needs grad
    (an `out=` write is not recorded in the graph)."""
    if out is not None and _grad_state.enabled and _needs_grad(result, out):
        raise RuntimeError(
            f"{_op_name(result)}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad.")


def write_exact(result, out):
    """`write_out` for PyTorch's structured kernels, which cast nothing: each `out` tensor
    must have its result's dtype (a float64 `out` for a float32 result is an error)."""
    if out is not None:
        refuse_out_grad(result, out)  # (before the dtypes, as PyTorch checks)
        results = result if isinstance(result, tuple) else (result,)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for r, o in zip(results, outs):
            if isinstance(o, Tensor) and isinstance(r, Tensor) and o._dtype is not r._dtype:
                raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(r._dtype)}, "
                                   f"but got {c_type_name(o._dtype)} instead")
    return write_out(result, out)


def write_out(result, out, inputs: tuple = ()):
    """Honour `out=`: copy `result` into `out` (resized if empty), return `out`.

    With grad on, a differentiable result that requires grad, or an `out` that does, is
    refused as PyTorch refuses it: `out=` writes are not recorded in the graph. `inputs`:
    the operands of an elementwise op, which may not partly overlap `out` (PyTorch's
    iterator refuses that: the result would depend on the order elements are visited)."""
    if out is None:
        return result
    refuse_out_grad(result, out)
    if inputs and out.__class__ is Tensor:
        from .registry import check_partial_overlap

        check_partial_overlap(out, inputs)
    if isinstance(out, (tuple, list)):
        for r, o in zip(result, out):
            write_out(r, o)
        # (a named-tuple result type: its module reads torch.return_types under the alias)
        if str(getattr(type(result), "__module__", "")).endswith(".return_types"):
            from ._return_types import out_type  # (it builds on this module)

            return out_type(type(result))(*out)  # torch.return_types.<name>_out
        return out
    if not isinstance(out, Tensor):
        raise TypeError(f"out= expects a Tensor, got {type(out).__name__}")
    if out._shape != result._shape:
        if out.numel() != 0 and out._shape != ():
            import warnings

            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._shape)}, which does not match the required output shape "
                f"{list(result._shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                "t.resize_(0).",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        out.resize_(result._shape)
    if not dt.can_cast(result._dtype, out._dtype):
        raise RuntimeError(
            f"result type {_tn(result._dtype)} can't be cast to the desired output type "
            f"{_tn(out._dtype)}"
        )
    with grad_mode.no_grad():
        out.copy_(result)
    return out


def _needs_grad(result, out) -> bool:
    """Whether an `out=` call would have to record a node: a result in the graph (an op
    whose derivative PyTorch lists as not implemented excepted, as PyTorch does), or an
    `out` that requires grad."""
    results = result if isinstance(result, tuple) else (result,)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for r in results:
        if isinstance(r, Tensor) and r._requires_grad:
            node = r._grad_fn
            if node is None or type(node).__name__ != "NotImplemented":
                return True
    # (an `out` that requires grad counts only beside a result of a differentiable dtype:
    # PyTorch's argmax into a float `out` that requires grad is a dtype error, not this)
    return any(isinstance(o, Tensor) and o._requires_grad for o in outs) and any(
        isinstance(r, Tensor) and r._dtype._kind >= 2 for r in results)


_GENERIC = frozenset({"op", "fn", "inner", "wrapper", "run", "call", "apply", "impl",
                      "as_namedtuple", "reduce", "autocast_wrapper", "write_exact", "write_out",
                      "refuse_out_grad"})


def _op_name(result) -> str:
    """The public op the user called, for PyTorch's message: the outermost ember function
    with a public name on the stack (`max`, not the reduction helper it calls), else the
    result's node name (`SumBackward1` -> sum). Only computed when raising."""
    import sys

    name = None
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ember."):
        code = frame.f_code.co_name
        if code in _GENERIC:  # (a factory's inner function: the op's name is in its closure)
            local = frame.f_locals.get("name")
            code = local if isinstance(local, str) and local.isidentifier() else code
        if not code.startswith(("_", "<")) and code not in _GENERIC:
            name = code
        frame = frame.f_back
    if name is not None:
        return name
    r = result[0] if isinstance(result, tuple) else result
    base = type(getattr(r, "_grad_fn", None)).__name__.split("Backward")[0]
    return "".join("_" + c.lower() if c.isupper() else c for c in base).lstrip("_")


def _tn(d: dt.dtype) -> str:
    return dt.SCALAR_TYPE_NAMES[d.name]


type_name = _tn


def checked_type_name(t) -> str:
    """A tensor's dtype as PyTorch's argument checks print it: its legacy tensor type where
    it has one (torch.FloatTensor), else the CPU type (CPUBoolType, CPUBFloat16Type)."""
    return dt.cpu_type_text(t.dtype)


def index_runs(index: np.ndarray):
    """(order, ordered, starts) of a 1-D integer array: a stable sort (each value's
    positions keep their order), the sorted values, and where each run of one value starts."""
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    return order, ordered, starts


def c_type_name(d: dt.dtype) -> str:
    """The C++ name PyTorch's messages print for a dtype's scalar (`long int`, `c10::Half`)."""
    return dt.CPP_TYPE_NAMES.get(d.name, d.name)


_SELECT_MIN = 1 << 12  # elements: below this np.where's one call is cheaper than bit masks
_SELECT_NATIVE_MIN = 1 << 10 # ... and than the C blend (`_select_native`)


def select(cond, a, b):
    """np.where(cond, a, b) as a fresh array, branch-free for large operands.

    NumPy's `where` branches per element, and on an unpredictable mask that costs several
    times the memory traffic (2.4 ms for 512K float32 here); selecting with bit masks,
    b ^ ((a ^ b) & -cond) on the values' bits, is exact and about 8x faster; where native
    kernels are on, one C pass blends the bits (`_select_native`, about 40x).
    """
    d = np.result_type(a, b)
    shape = np.broadcast_shapes(np.shape(cond), np.shape(a), np.shape(b))
    n = math.prod(shape)
    if n < _SELECT_NATIVE_MIN or d.itemsize not in (1, 2, 4, 8) or d.kind == "O":
        return np.where(cond, a, b)
    a = np.asarray(a, d)
    b = np.asarray(b, d)
    if np.shape(cond) != shape:  # (a per-row condition: spread first, a byte an element)
        cond = np.ascontiguousarray(np.broadcast_to(cond, shape))
    out = select_native(cond, a, b)
    if out is not None:
        return out
    if n < _SELECT_MIN:
        return np.where(cond, a, b)
    ints = np.dtype(f"i{d.itemsize}")
    a = a.view(ints)
    b = b.view(ints)
    mask = np.asarray(cond).astype(ints)
    np.negative(mask, out=mask)
    r = np.bitwise_and(np.bitwise_xor(a, b), mask)
    np.bitwise_xor(r, b, out=r)
    return r.view(d)


_SHORT_ROW = 16  # a last dim this short, over at least _MANY_ROWS rows, goes column-wise
_MANY_ROWS = 64


def along(fn, a, axis, keepdims: bool, **kw):
    """`fn(a, axis=axis, keepdims=keepdims)` for a NumPy reduction. Over a short last dim of
    many rows (a classifier's (N, 10) scores) it runs down the columns of a transposed copy
    instead: NumPy reduces each short contiguous row in its own inner loop, 5-10x slower."""
    nd = a.ndim
    if (nd >= 2 and axis in (nd - 1, -1, (nd - 1,)) and a.shape[-1] <= _SHORT_ROW
            and a.size >= _MANY_ROWS * a.shape[-1] and a.flags.c_contiguous):
        cols = a.T if nd == 2 else a.transpose((nd - 1, *range(nd - 1)))
        r = fn(np.ascontiguousarray(cols), axis=0, **kw)
        return r[..., None] if keepdims else r
    return fn(a, axis=axis, keepdims=keepdims, **kw)


_ONES: dict = {}  # (row length, dtype) -> the ones vector row_sums multiplies by


def row_sums(a):
    """Sums of the rows of a 2-D array, shape (rows, 1): a BLAS matrix-vector product with
    ones for float32 / float64 (NumPy's add.reduce along short rows is about 5x slower)."""
    if a.dtype.kind != "f" or a.dtype.itemsize < 4 or a.ndim != 2 or a.size < 4096:
        return along(np.add.reduce, a, -1, True)
    from ._parallel import blas

    key = (a.shape[1], a.dtype)
    ones = _ONES.get(key)
    if ones is None:
        ones = _ONES[key] = np.ones(a.shape[1], a.dtype)
    return blas(np.matmul, a, ones, 2 * a.size).reshape(-1, 1)


_BOUND_BLOCK = 1 << 16  # elements per comparison: 256 KB of float32, cache-resident


def bounded(fn, a: np.ndarray, value) -> np.ndarray:
    """`fn(value, a)` for `fn` np.maximum or np.minimum and a scalar `value`: the bound
    first, since on a tie NumPy returns the second operand, so `a` itself, as PyTorch's
    clamp keeps its input (relu(-0.0) is -0.0).

    NumPy's vectorised loops for these take two arrays, not a broadcast scalar and an
    array (about 3x slower here: 0.32 against 0.11 ms for a ReLU of 1M float32), so a
    large contiguous float32/float64 `a` is compared block by block against one block
    filled with `value`."""
    if a.dtype not in (np.float32, np.float64) or a.size < 4 * _BOUND_BLOCK or \
            not a.flags.c_contiguous or np.result_type(value, a) != a.dtype:
        return fn(value, a)
    out = np.empty_like(a)
    const = np.full(_BOUND_BLOCK, value, a.dtype)
    src, dst = a.reshape(-1), out.reshape(-1)
    for lo in range(0, a.size, _BOUND_BLOCK):
        hi = min(lo + _BOUND_BLOCK, a.size)
        fn(const[:hi - lo], src[lo:hi], out=dst[lo:hi])
    return out


def check_failed(condition: str) -> RuntimeError:
    """The error of one of PyTorch's checks that carries no message of its own: it names the
    condition (as written in its C++ source) and appends PyTorch's standard request."""
    return RuntimeError(f"Expected {condition} to be true, but got false.  (Could this error "
                        "message be improved?  If so, please report an enhancement request "
                        "to PyTorch.)")
