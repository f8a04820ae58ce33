"""Joining and reordering: cat / stack (and the h/v/d/column variants), repeat, tile,
repeat_interleave, broadcast_tensors / broadcast_shapes, flip, roll, rot90, meshgrid,
cartesian_prod, combinations.

`cat` is hot in training loops: one primitive, one `np.concatenate` (which also
casts to the promoted dtype), and a VJP that hands each input its slice of the
gradient. Primitives with a variable number of inputs (cat, stack) are made per
input count, since a VJP rule lists one function per input.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from .. import _dtype as dt
from .._core.dispatch import iter_layout
from .._layout import channels_last_strides, contiguous_format, suggest_memory_format
from .._tensor import Size, Tensor, _wrap
from .._view import (
    contiguous_strides,
    like_strides,
    pointwise_strides,
    view_strides,
    wrap_dim,
    wrap_dims,
)
from . import movement
from ._arg_parser_text import (
    ABSENT,
    called_as_method,
    is_int_arg,
    method_aware,
    need_int,
    no_overload,
    tp_name,
)
from ._batching import batch_size, batched
from ._common import (
    like_relayout,
    preserve_copy,
    refuse_out_grad,
    strided_result,
    type_name,
    write_out,
)
from ._size_args import REQUIRED, int_list, keyword_list
from .one_node import one_node, plain_call
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    deflinear,
    defvjp,
    defvjp_variadic,
    keep_given,
    shows,
)
from .views import move_to_front, unsqueeze, view_p


def _join_batch(p, args, dims, /, **params):
    """vmap of cat / stack: every input given the batch in front, the join one dim later
    (the channels-last layout of a 4-d cat does not carry over to 5-d)."""
    size = batch_size(args, dims)
    args = [batched(a, d, size) for a, d in zip(args, dims)]
    params = dict(params, dim=params["dim"] + 1)
    if "channels_last" in params:
        params["channels_last"] = False
    if params.get("strides") is not None:
        params["strides"] = None
    return bind(p, *args, **params), 0


def _check_list(name: str, tensors) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {tp_name(tensors)}")
    return list(tensor_args(tensors))


def tensor_args(tensors) -> tuple:
    """`tensors` checked as PyTorch's argument parser checks a tensor list: a non-Tensor
    element is a TypeError naming its position and type."""
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{tp_name(t)}")
    return tuple(tensors)


def _common_dtype(tensors) -> dt.dtype:
    return functools.reduce(dt.promote_types, (t._dtype for t in tensors))


# --- cat -------------------------------------------------------------------------------------

def _cat_kernel(*arrays, dim, sizes, dtype, channels_last):
    if channels_last:  # (channels-last-3d for 5-d inputs)
        shape = list(arrays[0].shape)
        shape[dim] = sum(sizes)
        nd = len(shape)
        stored = (0, *range(2, nd), 1)  # (N, *S, C): the order the data is stored in
        out = np.empty([shape[d] for d in stored], dtype.np).transpose(
            (0, nd - 1, *range(1, nd - 1)))
        return np.concatenate(arrays, axis=dim, out=out, casting="unsafe")
    out = np.concatenate(arrays, axis=dim, dtype=dtype.np, casting="unsafe")
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


def _cat_meta(*xs, dim, sizes, dtype, channels_last):
    shape = list(xs[0]._shape)
    shape[dim] = sum(sizes)
    return tuple(shape), dtype, channels_last_strides(shape) if channels_last else None


def _cat_piece(g, i, *, dim, sizes, dtype, channels_last):
    start = sum(sizes[:i])
    return movement.slice_dim(g, dim, start, start + sizes[i])


# `cat` and `stack` take any number of tensor inputs; input i's gradient is a slice of g
def _cat_relayout(args, res, params):
    """A channels-last cat's result given its strides (a size-1 dim's too, which NumPy's
    array does not tell)."""
    return strided_result(res, channels_last_strides(res.shape)) if params["channels_last"] \
        else res


def _joined_channels_last(inputs) -> bool:
    """Whether PyTorch's cat of `inputs` ((shape, strides) pairs) is channels-last (-3d for
    5-d inputs): when every input's `suggest_memory_format()` is that format
    (`cat_compute_output_memory_format`), else the result is contiguous."""
    fmt = None
    for shape, stride in inputs:
        f = suggest_memory_format(shape, stride)
        if f is contiguous_format or fmt is not None and f is not fmt:
            return False
        fmt = f
    return True


cat_p = Primitive("cat", _cat_kernel, _cat_meta, grad_name="CatBackward0")
iter_layout[cat_p] = _cat_relayout
defvjp_variadic(cat_p, _cat_piece)
deflinear(cat_p)  # joining is linear in every input
defbatch(cat_p, functools.partial(_join_batch, cat_p))


def _check_cat_shapes(tensors, dim: int) -> None:
    first = tensors[0]
    for j, t in enumerate(tensors[1:], 1):
        if t.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} "
                               f"and {t.ndim}")
        for d, (a, b) in enumerate(zip(first._shape, t._shape)):
            if d != dim and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {a} "
                    f"but got size {b} for tensor number {j} in the list.")


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """The tensors joined along an existing dim `dim` (dtypes promoted as in PyTorch)."""
    return _cat("cat", tensors, dim, out)


def concat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """`cat` under its NumPy-array-API name (which its argument errors print)."""
    return _cat("concat", tensors, dim, out)


def _cat(name: str, tensors, dim: int, out) -> Tensor:
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        tensors = _check_list(name, tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dtype, kept = None, []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            _check_list("cat", tensors)
        if not t._shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
        d = t._dtype
        dtype = d if dtype is None or dtype is d else dt.promote_types(dtype, d)
        # NOTE: PyTorch still skips 1-D empty tensors in cat, whatever the other shapes.
        if t._shape != (0,):
            kept.append(t)
    if not kept:
        kept = [tensors[0]]
    nd = len(kept[0]._shape)
    if dim.__class__ is not int:
        dim = need_int(dim, name, "dim")
    d = dim if 0 <= dim < nd else wrap_dim(dim, nd)
    ref = kept[0]._shape
    for t in kept:
        s = t._shape
        if len(s) != nd or s[:d] != ref[:d] or s[d + 1:] != ref[d + 1:]:
            _check_cat_shapes(kept, d)
    sizes = tuple(t._shape[d] for t in kept)
    cl = _joined_channels_last([(t._shape, t.stride()) for t in tensors])
    r = apply(cat_p, *kept, dim=d, sizes=sizes, dtype=dtype, channels_last=cl)
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return r if out is None else _write_joined(r, out, tuple(kept))


def _write_joined(result: Tensor, out, inputs: tuple) -> Tensor:
    """`write_out` for cat and stack, whose kernel refuses an `out` of a lower category than
    the inputs (float into int) with a TypeError, not the pointwise ops' RuntimeError."""
    refuse_out_grad(result, out)  # (first, as in PyTorch)
    if isinstance(out, Tensor) and not dt.can_cast(result._dtype, out._dtype):
        raise TypeError("torch.cat(): input types can't be cast to the desired output type "
                        f"{type_name(out._dtype)}")
    return write_out(result, out, inputs)


def concatenate(tensors, dim: int = 0, out=None) -> Tensor:
    """`cat` under NumPy's name (its `axis=` spelling is bound in `ember._aliases`)."""
    return _cat("concatenate", tensors, dim, out)


# --- stack and friends -----------------------------------------------------------------------

def _stack_kernel(*arrays, dim, dtype, channels_last=False, strides=None):
    out = np.stack(arrays, axis=dim, dtype=dtype.np, casting="unsafe")
    return out if out.flags.c_contiguous else np.ascontiguousarray(out)


def _stack_meta(*xs, dim, dtype, channels_last=False, strides=None):
    shape = xs[0]._shape
    return shape[:dim] + (len(xs),) + shape[dim:], dtype, \
        strides or _stack_strides(shape, dim, len(xs), channels_last)


def _stack_strides(shape, dim: int, n: int, channels_last: bool) -> tuple[int, ...]:
    """PyTorch's stack of `n` tensors of `shape`: their cat along `dim` (channels-last or
    contiguous) viewed with the new dim split out of it, or for `dim` past the last, the
    cat of the inputs unsqueezed at the end."""
    if dim == len(shape):
        new = shape + (n,)
        return channels_last_strides(new) if channels_last else contiguous_strides(new)
    joined = shape[:dim] + (shape[dim] * n,) + shape[dim + 1:]
    stride = channels_last_strides(joined) if channels_last else contiguous_strides(joined)
    new = shape[:dim] + (n,) + shape[dim:]
    return view_strides(joined, stride, new) or contiguous_strides(new)


def _stack_relayout(args, res, params):
    stride = params.get("strides")  # (given by `stack_pointwise`)
    if stride is None:
        if not params.get("channels_last") and res.flags.c_contiguous:
            return res
        stride = _stack_strides(args[0]._shape, params["dim"], len(args),
                                params["channels_last"])
    return strided_result(res, stride)


def _stack_piece(g, i, *, dim, dtype, channels_last=False, strides=None):
    return movement.select(g, dim, i)


stack_p = Primitive("stack", _stack_kernel, _stack_meta, grad_name="StackBackward0")
iter_layout[stack_p] = _stack_relayout
defvjp_variadic(stack_p, _stack_piece)
deflinear(stack_p)
defbatch(stack_p, functools.partial(_join_batch, stack_p))


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    """The tensors (all the same shape) joined along a new dim `dim`."""
    tensors = _check_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]
    if dim.__class__ is not int:
        dim = need_int(dim, "stack", "dim", 2)
    d = wrap_dim(dim, first.ndim + 1)  # the dim is checked before the sizes, as in PyTorch
    if out is None and first.ndim + (d == first.ndim) <= 3:
        r = _plain_stack(tensors, d)
        if r is not None:
            return r
    for i, t in enumerate(tensors[1:], 1):
        if t._shape != first._shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first._shape)} at entry 0 and {list(t._shape)} at entry "
                               f"{i}")
    if d == first.ndim:  # (PyTorch joins the inputs unsqueezed at the end)
        parts = [(t._shape + (1,), t.stride() + (1,)) for t in tensors]
    else:
        parts = [(t._shape, t.stride()) for t in tensors]
    r = apply(stack_p, *tensors, dim=d, dtype=_common_dtype(tensors),
              channels_last=_joined_channels_last(parts))
    if r._grad_fn is not None:
        keep_given(r, dim=dim)
    return r if out is None else _write_joined(r, out, tuple(tensors))


def _plain_stack(tensors: list, d: int) -> Tensor | None:
    """The stack of row-major tensors of one shape and dtype where no graph is recorded (a
    batch's collation, `torch.stack(samples)`): the kernel's copy on their arrays, without
    the primitive's per-input dispatch (64 samples: ~8,200 -> ~4,200 opcodes). None where
    the primitive runs (and words any error). The caller takes it for joined parts of at
    most 3 dims, whose stack PyTorch lays out row-major (its layout rule starts at 4-d)."""
    if not plain_call(*tensors):
        return None
    first = tensors[0]
    dtype, shape = first._dtype, first._shape
    arrays = []
    for t in tensors:
        a = t._np if t._np is not None else t._array()
        if t._dtype is not dtype or t._shape != shape or not a.flags.c_contiguous:
            return None
        arrays.append(a)
    # (np.array of equal arrays is their stack along a new first dim, without np.stack's
    # Python)
    return _wrap(np.array(arrays) if d == 0 else np.stack(arrays, axis=d))


def stack_pointwise(parts, operands) -> Tensor:
    """The same-shaped `parts` stacked along a new last dim, the other dims laid out as
    PyTorch lays out a pointwise result of `operands` (`_view.pointwise_strides`; the
    tensors the parts were computed from, before broadcasting): `complex` and `polar`
    computed as a pair of reals, their result viewed as real."""
    shape = parts[0]._shape
    n = len(parts)
    inner = pointwise_strides(shape, [(t._shape, t.stride()) for t in operands])
    return apply(stack_p, *parts, dim=len(shape), dtype=_common_dtype(parts),
                 channels_last=False, strides=tuple(s * n for s in inner) + (1,))


def _atleast(t: Tensor, n: int) -> Tensor:
    if t.ndim >= n:
        return t
    if n == 3 and t.ndim == 2:
        return t.unsqueeze(-1)
    # (a 1-d tensor unsqueezed, as PyTorch's atleast_2d / _3d: UnsqueezeBackward0 nodes)
    if t.ndim == 1:
        return t.unsqueeze(0) if n == 2 else t.unsqueeze(0).unsqueeze(-1)
    return t.reshape((1,) * n)


def hstack(tensors, *, out=None) -> Tensor:
    """Stack column-wise: along dim 1, or dim 0 for 1-D tensors."""
    ts = [_atleast(t, 1) for t in _check_list("hstack", tensors)]
    if not ts:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(ts, 0 if ts[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None) -> Tensor:
    """Stack row-wise: 1-D tensors become rows, then cat along dim 0."""
    return _vstack("vstack", tensors, out)


def row_stack(tensors, *, out=None) -> Tensor:
    """`vstack` under its older name (which its argument errors print)."""
    return _vstack("row_stack", tensors, out)


def _vstack(name: str, tensors, out) -> Tensor:
    ts = [_atleast(t, 2) for t in _check_list(name, tensors)]
    if not ts:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(ts, 0, out=out)


def dstack(tensors, *, out=None) -> Tensor:
    """Stack depth-wise: everything made at least 3-D, then cat along dim 2."""
    return cat([_atleast(t, 3) for t in _check_list("dstack", tensors)], 2, out=out)


def column_stack(tensors, *, out=None) -> Tensor:
    """1-D (and 0-d) tensors become columns; then cat along dim 1."""
    ts = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in _check_list("column_stack", tensors)]
    return cat(ts, 1, out=out)


# --- repeat / tile / repeat_interleave -------------------------------------------------------

def _repeat_kernel(a, *, reps, in_shape):
    if a.size:  # (row-major always, as PyTorch's: NumPy's tile of all ones keeps a's order)
        return np.ascontiguousarray(np.tile(a, reps))
    return np.zeros(
        tuple(n * r for n, r in zip((1,) * (len(reps) - a.ndim) + a.shape, reps)), a.dtype)


def _repeat_meta(x, *, reps, in_shape):
    shape = (1,) * (len(reps) - x.ndim) + x._shape
    return tuple(n * r for n, r in zip(shape, reps)), x._dtype


def _repeat_vjp(g, out, x, *, reps, in_shape):
    shape = (1,) * (len(reps) - len(in_shape)) + in_shape
    split = tuple(itertools.chain.from_iterable(zip(reps, shape)))
    summed = g.reshape(split).sum(tuple(range(0, 2 * len(reps), 2))) if reps else g
    return summed.reshape(in_shape)


repeat_p = Primitive("repeat", _repeat_kernel, _repeat_meta)
defvjp(repeat_p, _repeat_vjp, reads=((),))
deflinear(repeat_p)


def _repeat_batch(args, dims, *, reps, in_shape):
    x = move_to_front(args[0], dims[0])
    for _ in range(len(reps) - len(in_shape)):  # new leading dims go after the batch dim
        x = bind(view_p, x, fn=unsqueeze, dim=1)
    return apply(repeat_p, x, reps=(1,) + reps, in_shape=x._shape), 0


defbatch(repeat_p, _repeat_batch)


def repeat(input: Tensor, *sizes, **kwargs) -> Tensor:
    """`input` tiled `sizes[i]` times along each dim (leading new dims allowed)."""
    if kwargs:
        sizes = keyword_list(sizes, kwargs, "repeat", "repeats")
    reps = movement._shape_args(sizes, "repeat", "repeats", method=True)
    if len(reps) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    for r in reps:
        if r < 0:
            shape = (1,) * (len(reps) - input.ndim) + input._shape
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: "
                               f"{[n * q for n, q in zip(shape, reps)]}")
    return apply(repeat_p, input, reps=reps, in_shape=input._shape)


def tile(input: Tensor, dims) -> Tensor:
    """Like `repeat`, with too-short `dims` padded with leading ones."""
    reps = int_list((dims,), "tile", "dims", 2, method=False)
    return _tile_reps(input, reps)


def _tile(input: Tensor, *dims) -> Tensor:
    """`Tensor.tile`, which takes its dims one by one too."""
    return _tile_reps(input, movement._shape_args(dims, "tile", "dims", method=True))


def _tile_reps(input: Tensor, reps: tuple) -> Tensor:
    reps = (1,) * (input.ndim - len(reps)) + reps
    return repeat(input, reps)



def _repeat_counts(repeats: Tensor, n: int | None = None, dim_label=0,
                   output_size: int | None = None) -> np.ndarray:
    """A tensor of counts as int64 (one count spread over `n` slices when given). PyTorch's
    kernel takes int32 / int64 only and checks the total against `output_size` before the
    signs."""
    size = repeats.numel()
    if n is not None and size not in (1, n):  # (checked before the dtype, as PyTorch)
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {size} and input.size({dim_label}) = {n}")
    if repeats._dtype not in (dt.int32, dt.int64):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{type_name(repeats._dtype)}'")
    r = repeats._array().astype(np.int64).reshape(-1)
    if n is not None and r.size == 1:
        r = np.full(n, r[0])
    if output_size is not None and int(r.sum()) != output_size:
        raise RuntimeError("allocated size does not match required size")
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return r


@method_aware
def repeat_interleave(input: Tensor, repeats=ABSENT, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Each element (or slice along `dim`) repeated `repeats` times in place.

    With only a tensor of counts, returns the indices repeated by those counts (in the
    counts' dtype).
    """
    from .creation import tensor
    from .index_ops import index_select

    if repeats is ABSENT:
        if input.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        counts = _repeat_counts(input, output_size=output_size)
        return tensor(np.repeat(np.arange(counts.size), counts).astype(input._dtype.np),
                      device=input.device)
    if not (isinstance(repeats, Tensor) or is_int_arg(repeats)) or not (
            dim is None or is_int_arg(dim)):
        raise no_overload("repeat_interleave", (input, repeats) + (() if dim is None else (dim,)),
                          {"output_size": output_size})
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else wrap_dim(dim, max(x.ndim, 1))
    n = x._shape[d] if x.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        counts = _repeat_counts(repeats, n, d, output_size)
    else:
        r = int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        if output_size is not None and n * r != output_size:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                               f"{n * r} but got {output_size}")
        if x.ndim:
            # As PyTorch: each slice broadcast r times and copied, so the gradient is a sum
            # over the copies (float16 adds in float32), not index_select's scatter.
            shape = x._shape[:d + 1] + (r,) + x._shape[d + 1:]
            return x.unsqueeze(d + 1).expand(shape).clone().flatten(d, d + 1)
        counts = np.full(n, r, np.int64)
    idx = tensor(np.repeat(np.arange(n, dtype=np.int64), counts), device=x.device)
    return index_select(x, d, idx)


# --- broadcasting ---------------------------------------------------------------------------

def broadcast_shapes(*shapes) -> Size:
    """The shape all of `shapes` broadcast to (an int stands for a 1-D shape)."""
    norm = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    ndim = max((len(s) for s in norm), default=0)
    out = [1] * ndim
    for i, s in enumerate(norm):
        for k in range(-1, -1 - len(s), -1):  # (right to left, as PyTorch's reference)
            n = s[k]
            if n < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                                   f"{list(s)}")
            if n == out[k] or n == 1:
                continue
            if out[k] == 1:
                out[k] = n
                continue
            # (the message shows the argument as given and the shape built so far, this
            # argument's right-hand dims included)
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {n} at {k}! Mismatching "
                f"argument at index {i} had {shapes[i] if not isinstance(shapes[i], int) else s}"
                f"; but expected shape should be broadcastable to {out}")
    return Size(out)


def broadcast_tensors(*tensors) -> tuple[Tensor, ...]:
    """Views of the tensors expanded to their common shape (given one by one: like
    PyTorch, a single list is refused as a non-Tensor element)."""
    tensors = tensor_args(tensors)
    from .._view import broadcast_shapes as _bs

    shape = _bs(*(t._shape for t in tensors))
    return tuple(t if t._shape == shape else t.expand(shape) for t in tensors)


# --- flip / roll / rot90 ---------------------------------------------------------------------

def _flip_kernel(a, *, dims):
    return preserve_copy(a, np.flip(a, dims) if dims else a)  # (laid out as `a`)


flip_p = Primitive("flip", _flip_kernel, lambda x, *, dims: (
    x._shape, x._dtype, like_strides(x._shape, x.stride())))
iter_layout[flip_p] = like_relayout  # (PyTorch flips into `empty_like(input)`)
defvjp(flip_p, lambda g, out, x, *, dims: apply(flip_p, g, dims=dims), reads=((),))
deflinear(flip_p)


def _flip_batch(args, bdims, *, dims):
    x = move_to_front(args[0], bdims[0])
    return apply(flip_p, x, dims=tuple(d + 1 for d in dims)), 0


defbatch(flip_p, _flip_batch)


def flip(input: Tensor, dims) -> Tensor:
    """`input` with the order of elements reversed along each of `dims`."""
    return _flip(input, int_list((dims,), "flip", "dims", 2, method=False))


def _flip(input: Tensor, given: tuple) -> Tensor:
    dims = wrap_dims(given, max(input.ndim, 1))
    if input.ndim == 0:
        dims = ()
    r = apply(flip_p, input, dims=dims)
    if r._grad_fn is not None:
        keep_given(r, dims=given)
    return r


def _flip_method(self: Tensor, *dims) -> Tensor:
    """`x.flip(0, 1)` and `x.flip((0, 1))` both work on the method, as in PyTorch."""
    return _flip(self, movement._shape_args(dims, "flip", "dims", method=True))


def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _roll_kernel(a, *, shifts, dims, channels_last=False):
    if dims is None:
        return np.roll(a.reshape(-1), shifts).reshape(a.shape)
    if channels_last:  # (written into (N, *spatial, C) memory, as the meta's strides say)
        last = (0,) + tuple(range(2, a.ndim)) + (1,)
        out = np.empty(tuple(a.shape[d] for d in last), a.dtype)
        out = out.transpose(np.argsort(last))
        out[...] = np.roll(a, shifts, axis=dims)
        return out
    return np.ascontiguousarray(np.roll(a, shifts, axis=dims))


def _roll_meta(x, *, shifts, dims, channels_last=False):
    return x._shape, x._dtype, channels_last_strides(x._shape) if channels_last else None


# `channels_last`: the result laid out channels-last (-3d), as PyTorch's roll (a `cat` of
# two slices per dim) lays out that of a channels-last input
roll_p = Primitive("roll", _roll_kernel, _roll_meta)
defvjp(roll_p, lambda g, out, x, *, shifts, dims, channels_last=False: apply(
    roll_p, g, shifts=tuple(-s for s in shifts) if dims is not None else -shifts, dims=dims),
    reads=((),))
deflinear(roll_p)


def _roll_batch(args, bdims, *, shifts, dims, channels_last=False):
    x = move_to_front(args[0], bdims[0])
    if dims is None:  # each example rolled flat: the rows of (batch, numel)
        flat = x.reshape(x._shape[0], -1)
        return apply(roll_p, flat, shifts=(shifts,), dims=(1,)).reshape(x._shape), 0
    return apply(roll_p, x, shifts=shifts, dims=tuple(d + 1 for d in dims)), 0


defbatch(roll_p, _roll_batch)


@method_aware
def roll(input: Tensor, shifts=REQUIRED, dims=None) -> Tensor:
    """Elements shifted cyclically by `shifts` along `dims` (the flattened tensor if None)."""
    if shifts is REQUIRED:
        raise TypeError('roll() missing 1 required positional arguments: "shifts"')
    if type(shifts) is int and (dims is None or type(dims) is int):
        shifts_t, dims_t = (shifts,), dims if dims is None else (dims,)
    else:  # (int[1] parameters: a lone int or a sequence, in the parser's words)
        at = 1 if called_as_method() else 2
        shifts_t = int_list((shifts,), "roll", "shifts", at, method=at == 1,
                            lone_int=True)
        dims_t = None if dims is None else int_list((dims,), "roll", "dims", at + 1,
                                                    method=at == 1, lone_int=True)
    if not shifts_t:
        raise RuntimeError("`shifts` required")
    if dims is None or not dims_t:  # (no dims, as an empty list: the flattened tensor)
        if len(shifts_t) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts_t)}, "
                               "dims:0")
        r = apply(roll_p, input, shifts=shifts_t[0], dims=None)
        if r._grad_fn is not None:  # (PyTorch's node shows no dims as an empty list)
            keep_given(r, dims=(), shifts=shifts_t)
        return r
    if len(shifts_t) != len(dims_t):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts_t)}, dims:"
                           f"{len(dims_t)}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims_t[0]} but tensor has no dimensions")
    given, dims_t = dims_t, tuple(wrap_dim(d, input.ndim) for d in dims_t)
    if _rolls_channels_last(input, shifts_t, dims_t):
        r = apply(roll_p, input, shifts=shifts_t, dims=dims_t, channels_last=True)
    else:
        r = apply(roll_p, input, shifts=shifts_t, dims=dims_t)
    if r._grad_fn is not None:
        keep_given(r, dims=given, shifts=shifts_t)
    return r


def _rolls_channels_last(input: Tensor, shifts, dims) -> bool:
    """Whether PyTorch's roll returns channels-last (-3d): each dim's roll is a `cat` of two
    slices, which keeps a channels-last input's format, and a shift of zero (mod the size) a
    contiguous clone."""
    if input.ndim not in (4, 5):
        return False
    from .conv import channels_last_like  # (conv's reading of suggest_memory_format)

    return channels_last_like(input) and all(
        input._shape[d] and s % input._shape[d] for s, d in zip(shifts, dims))


def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """`input` rotated by 90 degrees `k` times in the plane of `dims` (from the first towards
    the second)."""
    k = need_int(k, "rot90", "k", 2)
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    from .copy import clone

    turns = k % 4

    def turn(x: Tensor) -> Tensor:
        return flip(x, (d1,)).transpose(d0, d1) if turns == 1 else \
            flip(x, (d0, d1)) if turns == 2 else \
            flip(x, (d0,)).transpose(d0, d1) if turns == 3 else clone(x)

    return shows(one_node("Rot90Backward0", turn, input, linear=True), "Rot90Backward0",
                 dims=dims, k=k)


TENSOR_METHODS = {
    "repeat": repeat, "tile": _tile, "repeat_interleave": repeat_interleave,
    "flip": _flip_method,
    "fliplr": fliplr, "flipud": flipud, "roll": roll, "rot90": rot90,
}

__all__ = [
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
    "column_stack", "repeat_interleave", "tile", "broadcast_shapes", "broadcast_tensors",
    "flip", "fliplr", "flipud", "roll", "rot90",
]
