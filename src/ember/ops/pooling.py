"""Pooling: max pooling as a primitive (values + argmax indices); average pooling (in
ops/avg_pool.py, re-exported here) composed.

Max pooling reads windows through a strided view of the (-inf padded) input and
records the flat index of each maximum, as PyTorch's `return_indices` does; its
VJP scatters the gradient to those indices. Adaptive max pooling is max pooling where
the bins tile the input, else a primitive of its own (uneven, overlapping bins) with the
same scatter for its VJP. Average pooling (plain and adaptive) is window sums of a
depthwise convolution, divided (see ops/avg_pool.py). Max pooling's 1-d and 2-d float32 /
float64 kernels have native twins (csrc/pool.c, through ops/_pool_native.py).
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .. import native
from .._tensor import Tensor
from ..amp.autocast_mode import autocast_op
from ._arg_parser_text import need_tensor, touch_then_check
from ._batching import batch_size, batched, front
from ._call_plans import Plans, window_key
from ._common import type_name
from ._pool_native import adaptive_max_pool_native, max_pool_backward_native, max_pool_native
from ._pool_shapes import (
    adaptive_1d_size,
    adaptive_checks,
    adaptive_sizes,
    bins,
    pool_out,
    window_args,
)
from .avg_pool import (  # noqa: F401  (this module's public names)
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_avg_pool_nd,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    avg_pool_nd,
    channels_last_1d,
)
from .conv import as_channels_last, channels_last_like
from .double_backward import double_backward
from .registry import Primitive, apply, bind, defbatch, defjvp, defvjp, rename_node

_LOW = (np.dtype(np.float16), dt.bfloat16.np)


def _max_pool_kernel(x, *, kernel, stride, padding, dilation, ceil_mode):
    nd = len(kernel)
    sp = x.shape[-nd:]
    out = tuple(pool_out(sp[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                for i in range(nd))
    need = tuple((out[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1
                 for i in range(nd))
    lead = x.ndim - nd
    work = x.astype(np.float32) if x.dtype in _LOW else x
    floating = work.dtype.kind == "f"
    pads = tuple((padding[i], max(need[i] - sp[i] - padding[i], 0)) for i in range(nd))
    padded = any(lo or hi for lo, hi in pads)
    if padded:
        fill = -np.inf if floating else np.iinfo(work.dtype).min
        work = np.pad(work, ((0, 0),) * lead + pads, constant_values=fill)
    # The values: a running maximum over strided views of the input, one per window tap
    # (no window copies; NaN propagates, as in PyTorch, and the fill is the lowest value).
    taps = list(itertools.product(*(range(k) for k in kernel)))
    views = [work[(Ellipsis,) + tuple(
        slice(tap[i] * dilation[i], tap[i] * dilation[i] + (out[i] - 1) * stride[i] + 1,
              stride[i]) for i in range(nd))] for tap in taps]
    # (row-major whatever the input's layout, as the native kernel writes: the caller lays
    # the result out as PyTorch's kernel would)
    values = np.empty(views[0].shape, work.dtype)
    if len(views) == 1:
        np.copyto(values, views[0])
    else:
        np.maximum(views[0], views[1], out=values)
    for view in views[2:]:
        np.maximum(values, view, out=values)
    # The winner: PyTorch's kernel keeps the first of equal maxima and the last NaN. So
    # the winning tap is the smallest t whose value equals the maximum, taken branch-free
    # as a running minimum of (equal ? t : last) in bytes (a masked write on a random
    # mask costs several times more); NaN windows, rare, are then given their last NaN.
    # A window that starts in the padding only looks at its taps inside the input (an
    # all -inf window points at the first of them).
    ntaps = len(taps)
    kind = np.min_scalar_type(ntaps)
    best = np.full(values.shape, ntaps - 1, kind)
    cand = np.empty(values.shape, kind)
    for t in range(ntaps - 2, -1, -1):
        won = np.equal(views[t], values)
        if padded:
            np.logical_and(won, _tap_inside(taps[t], out, sp, stride, padding, dilation),
                           out=won)
        np.multiply(won, ntaps - 1 - t, out=cand, dtype=kind)
        np.subtract(ntaps - 1, cand, out=cand, dtype=kind)
        np.minimum(best, cand, out=best)
    if floating and np.isnan(values).any():
        nan = np.isnan(values)
        for t, view in enumerate(views):
            np.copyto(best, t, where=nan & np.isnan(view))
    # The winning tap's offset in the unpadded input (a table look-up), plus each
    # window's origin, flattened over the spatial dims.
    plane = np.cumprod((1,) + tuple(sp[:0:-1]))[::-1]  # unpadded strides of the spatial dims
    steps = np.array([sum(tap[i] * dilation[i] * int(plane[i]) for i in range(nd))
                      for tap in taps], np.int64)
    offset = np.take(steps, best)  # (a take: 2x faster than indexing with `best`)
    origin = 0
    for i in range(nd):
        o = np.arange(out[i]) * stride[i] - padding[i]
        origin = origin + (o * int(plane[i])).reshape((-1,) + (1,) * (nd - 1 - i))
    np.add(offset, origin, out=offset)
    return values.astype(x.dtype, copy=False), offset


def _tap_inside(tap, out, sp, stride, padding, dilation) -> np.ndarray:
    """Whether window tap `tap` of each output position falls inside the unpadded input:
    a boolean array broadcastable to the output's spatial shape."""
    nd = len(out)
    mask = np.ones((1,) * nd, bool)
    for i in range(nd):
        pos = np.arange(out[i]) * stride[i] - padding[i] + tap[i] * dilation[i]
        mask = mask & ((pos >= 0) & (pos < sp[i])).reshape((-1,) + (1,) * (nd - 1 - i))
    return mask


def _max_pool_meta(x, *, kernel, stride, padding, dilation, ceil_mode):
    nd = len(kernel)
    sp = x._shape[-nd:]
    out = tuple(pool_out(sp[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
                for i in range(nd))
    shape = x._shape[:-nd] + out
    return (shape, x._dtype), (shape, dt.int64)


def _max_pool_vjp(g, out, x, **params):
    values, index = out
    # NOTE: with create_graph the saved outputs come back attached to the graph; the
    # integer indices are a constant of the gradient, so they are detached.
    return max_pool_backward(g[0], index.detach(), x._shape, len(params["kernel"]))


# (a 1-d pooling's node is renamed by max_pool_nd: PyTorch pools it as 2-d, then squeezes)
max_pool_p = Primitive(
    "max_pool_with_indices", _max_pool_kernel, _max_pool_meta, n_outputs=2,
    grad_name=lambda args, params: "MaxPool3DWithIndicesBackward0" if len(params["kernel"]) == 3
    else "MaxPool2DWithIndicesBackward0")
# As PyTorch's max_pool2d_with_indices does, the node keeps the input and the indices, not
# the pooled values: MaxPool2d followed by ReLU(inplace=True) trains.
defvjp(max_pool_p, _max_pool_vjp, save_output=(1,))
native.register(max_pool_p, "pool", max_pool_native)


def _scatter_kernel(g, index, *, shape, nd):
    if g.size == 0:  # (an empty batch: nothing to scatter)
        return np.zeros(shape, g.dtype)
    lead = int(np.prod(shape[:-nd], dtype=np.int64))
    plane = int(np.prod(shape[-nd:], dtype=np.int64))
    work = g.astype(np.float32) if g.dtype in _LOW else g
    flat = index.reshape(lead, -1) + (np.arange(lead) * plane)[:, None]
    res = np.zeros(lead * plane, work.dtype)
    np.add.at(res, flat.ravel(), work.reshape(-1))  # (windows may overlap: an add, not a put)
    return res.astype(g.dtype, copy=False).reshape(shape)


max_pool_backward_p = Primitive(
    "max_pool_backward", _scatter_kernel, lambda g, index, *, shape, nd: (tuple(shape), g._dtype),
    grad_name=lambda args, params: f"MaxPool{max(params['nd'], 2)}DWithIndicesBackwardBackward0")
native.register(max_pool_backward_p, "pool", max_pool_backward_native)


def _gather_back(h, out, g, index, *, shape, nd):
    from .index import _gather

    flat = h.flatten(-nd) if nd > 1 else h
    lead = h.shape[:-nd]
    idx = index.reshape(tuple(lead) + (-1,))
    flat = flat.reshape(tuple(lead) + (-1,))
    # (gather bound directly: the public one's bounds check would read the indices)
    return _gather(flat, idx, flat.ndim - 1).reshape(g.shape)


defvjp(max_pool_backward_p, _gather_back, None)


def _max_pool_jvp(primals, tangents, out, *, kernel, **params):
    """Each window's value is the input at its argmax: the tangent is the input's tangent
    gathered there (the indices have none)."""
    from .index import _gather

    nd = len(kernel)
    tx = tangents[0]
    index = out[1]
    lead = tuple(tx._shape[:-nd])
    flat = tx.reshape(lead + (-1,))
    picked = _gather(flat, index.reshape(lead + (-1,)), flat.ndim - 1)
    return picked.reshape(index._shape), None


def _max_pool_batch(args, dims, **params):
    """The kernel pools the trailing dims under any leading ones: the batch is one more."""
    return bind(max_pool_p, front(args[0], dims[0]), **params), (0, 0)


def _max_pool_backward_jvp(primals, tangents, out, **params):
    """Linear in the gradient (the indices are constants)."""
    return bind(max_pool_backward_p, tangents[0], primals[1], **params)


def _max_pool_backward_batch(args, dims, *, shape, nd):
    size = batch_size(args, dims)
    g, index = (batched(a, d, size) for a, d in zip(args, dims))
    return bind(max_pool_backward_p, g, index, shape=(size,) + tuple(shape), nd=nd), 0


defjvp(max_pool_p, _max_pool_jvp)
defbatch(max_pool_p, _max_pool_batch)
defjvp(max_pool_backward_p, _max_pool_backward_jvp)
defbatch(max_pool_backward_p, _max_pool_backward_batch)


def max_pool_backward(g: Tensor, index: Tensor, shape, nd: int) -> Tensor:
    """The gradient of max pooling: `g` added at each window's argmax."""
    return apply(max_pool_backward_p, g, index, shape=tuple(shape), nd=nd)


# --- public max pooling -------------------------------------------------------------------

def max_pool_nd(nd: int, input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                ceil_mode: bool = False, return_indices: bool = False):
    """Shared body of max_pool1d/2d/3d: checks, then the primitive."""
    if input.__class__ is not Tensor:
        name = f"max_pool{nd}d" + ("_with_indices" if return_indices else "")
        if nd == 3 and return_indices:  # (torch's Python reads input.is_cuda first)
            _ = input.is_cuda
        need_tensor(input, name)
    key = window_key(nd, input, (kernel_size, stride, padding, dilation),
                       (ceil_mode, return_indices))
    checked = _checked.get(key) if key is not None else None
    if checked is None:
        checked = window_args("max", nd, input, kernel_size, stride, padding, dilation)
        _check_output_size(nd, input, *checked, ceil_mode, return_indices)
        if input.dtype is dt.bool_ or input.dtype.is_complex:  # (after the sizes, as PyTorch)
            kname = "max_pool1d_impl" if nd == 1 and not return_indices else \
                f"max_pool{max(nd, 2)}d"
            raise NotImplementedError(f'"{kname}" not implemented for '
                                      f"'{type_name(input.dtype)}'")
        if key is not None:
            _checked[key] = checked
    kernel, stride, padding, dilation = checked
    if nd == 1 and (return_indices or input.requires_grad and grad_mode.state.enabled):
        # PyTorch runs the 2-d kernel on the input unsqueezed at -2 where it needs the
        # indices (for them, or for a gradient): its graph shows Unsqueeze, the 2-d node
        # and Squeeze, and so does this one
        x = input.unsqueeze(-2)
        values, index = apply(max_pool_p, x, kernel=(1, kernel[0]), stride=(1, stride[0]),
                              padding=(0, padding[0]), dilation=(1, dilation[0]),
                              ceil_mode=ceil_mode)
        values, index = _laid_out(values, index, True, None,
                                  x.ndim == 4 and channels_last_like(x), x)
        return (values.squeeze(-2), index.squeeze(-2)) if return_indices else \
            values.squeeze(-2)
    values, index = apply(max_pool_p, input, kernel=kernel, stride=stride, padding=padding,
                          dilation=dilation, ceil_mode=ceil_mode)
    # (PyTorch's 2-d and 3-d kernels write channels-last (-3d) results for such inputs; 1-d
    # pooling without indices or a gradient, a 1-d kernel of its own, contiguous ones)
    layout = nd > 1 and input.ndim == nd + 2 and channels_last_like(input)
    return _laid_out(values, index, return_indices, None, layout, input)


_checked = Plans()  # a call's checked window sizes, by what its checks read (`window_key`)


def _check_output_size(nd: int, input: Tensor, kernel, stride, padding, dilation,
                       ceil_mode: bool, return_indices: bool) -> None:
    """PyTorch's refusal of an empty pooled output, in its kernels' words: max_pool1d without
    indices names the size; the 2-d kernel (which also runs 1-d with indices) and the 3-d one
    print the (channels x spatial) sizes in and out."""
    sp = tuple(input.shape[-nd:])
    out = [pool_out(sp[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
           for i in range(nd)]
    if all(o > 0 for o in out):
        return
    if nd == 1 and not return_indices:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out[0]}")
    c = input.shape[-nd - 1] if input.ndim > nd else 1
    pad = (1,) * (2 - nd) if nd == 1 else ()
    shown_in = "x".join(str(v) for v in (c,) + pad + sp)
    shown_out = "x".join(str(v) for v in (c,) + pad + tuple(out))
    raise RuntimeError(f"Given input size: ({shown_in}). Calculated output size: "
                       f"({shown_out}). Output size is too small")


def _laid_out(values: Tensor, index: Tensor, return_indices: bool, name: str | None,
              channels_last: bool, input: Tensor):
    """A max pooling's results as PyTorch returns them: both channels-last where its kernel
    allocates them so, the values' node named `name` where PyTorch's differs from the
    primitive's (and marked: PyTorch's derivative kernel takes the input, so a create_graph
    gradient requires grad where it does, with zeros as its own gradient)."""
    node = values.grad_fn
    if name is not None and node is not None:
        rename_node(node, name)
    double_backward(values, input)
    if channels_last:  # (a copy, unless the kernel wrote that layout; named as the op)
        values = as_channels_last(values, node and type(node).__name__)
        index = as_channels_last(index)
    return (values, index) if return_indices else values


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    return max_pool_nd(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    return max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


@autocast_op("max_pool3d")
def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    return max_pool_nd(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


def _adaptive_max_kernel(x, *, out_size):
    """Adaptive max pooling, values and flat indices, one output cell at a time: each
    window's first maximum (np.argmax) or, where it holds a NaN, its last NaN (PyTorch's
    `val > max || isnan(val)`); the value is the winner's."""
    out = out_size
    nd = len(out)
    sp, lead = x.shape[-nd:], x.shape[:-nd]
    work = x.astype(np.float32) if x.dtype in _LOW else x
    values = np.empty(lead + tuple(out), work.dtype)
    index = np.empty(lead + tuple(out), np.int64)
    if values.size == 0:
        return values.astype(x.dtype, copy=False), index
    spans = [bins(sp[i], out[i]) for i in range(nd)]
    plane = np.cumprod((1,) + tuple(sp[:0:-1]))[::-1]
    for cell in itertools.product(*(range(o) for o in out)):
        span = [spans[i][cell[i]] for i in range(nd)]
        win = work[(Ellipsis,) + tuple(slice(a, b) for a, b in span)]
        flat = win.reshape(lead + (-1,))
        k = np.argmax(flat, axis=-1) if flat.size else np.zeros(lead, np.int64)
        if work.dtype.kind == "f" and flat.size:
            nan = np.isnan(flat)
            if nan.any():
                last = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
                k = np.where(nan.any(axis=-1), last, k)
        at = (Ellipsis,) + cell
        values[at] = np.take_along_axis(flat, k[..., None], -1)[..., 0]
        coords = np.unravel_index(k, tuple(b - a for a, b in span))
        index[at] = sum((coords[i] + span[i][0]) * int(plane[i]) for i in range(nd))
    return values.astype(x.dtype, copy=False), index


def _adaptive_max_meta(x, *, out_size):
    shape = x._shape[:-len(out_size)] + tuple(out_size)
    return (shape, x._dtype), (shape, dt.int64)


adaptive_max_pool_p = Primitive(
    "adaptive_max_pool_with_indices", _adaptive_max_kernel, _adaptive_max_meta, n_outputs=2,
    grad_name=lambda args, params: f"AdaptiveMaxPool{len(params['out_size'])}DBackward0")


def _adaptive_max_vjp(g, out, x, *, out_size):
    # as max pooling's: the gradient scatters through the saved indices (not the values)
    return max_pool_backward(g[0], out[1].detach(), x._shape, len(out_size))


def _adaptive_max_jvp(primals, tangents, out, *, out_size):
    return _max_pool_jvp(primals, tangents, out, kernel=out_size)


def _adaptive_max_batch(args, dims, **params):
    return bind(adaptive_max_pool_p, front(args[0], dims[0]), **params), (0, 0)


defvjp(adaptive_max_pool_p, _adaptive_max_vjp, save_output=(1,))
defjvp(adaptive_max_pool_p, _adaptive_max_jvp)
defbatch(adaptive_max_pool_p, _adaptive_max_batch)
native.register(adaptive_max_pool_p, "pool", adaptive_max_pool_native)


def adaptive_max_pool_nd(nd: int, input: Tensor, output_size, return_indices: bool = False):
    """Adaptive max pooling: a max_pool where the bins tile the input evenly, else the
    adaptive primitive (2-d and up; 1-d: one max_pool per bin)."""
    from .join import cat

    if input.__class__ is not Tensor:  # (torch's Python reads input.size() for 2-d and up)
        touch_then_check(input, "size", "adaptive_max_pool2d") if nd > 1 else \
            need_tensor(input, "adaptive_max_pool1d")
    if nd > 1:
        sizes = adaptive_sizes(nd, input, output_size)
        adaptive_checks("max", nd, input, sizes)
        if not (input.dtype.is_floating_point and not input.dtype.is_complex):
            kname = "adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d"
            raise NotImplementedError(f'"{kname}" not implemented for '
                                      f"'{type_name(input.dtype)}'")
        for s in sizes:
            if s < 0:
                shape = list(input.shape[:-nd]) + list(sizes)
                raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                                   f"{shape}")
        sp = input.shape[-nd:]
        # (3-d: no max_pool shortcut; its results stay contiguous, as PyTorch's do)
        if nd == 2 and all(sizes[i] and sp[i] % sizes[i] == 0 for i in range(nd)):
            k = tuple(sp[i] // sizes[i] for i in range(nd))
            values, index = apply(max_pool_p, input, kernel=k, stride=k, padding=(0, 0),
                                  dilation=(1, 1), ceil_mode=False)
            return _laid_out(values, index, return_indices, "AdaptiveMaxPool2DBackward0",
                             input.ndim == 4 and channels_last_like(input), input)
        values, index = apply(adaptive_max_pool_p, input, out_size=sizes)
        # (PyTorch's adaptive 3-d kernel writes contiguous results whatever the input)
        return _laid_out(values, index, return_indices, None,
                         nd == 2 and input.ndim == 4 and channels_last_like(input), input)
    sizes = (adaptive_1d_size("max", input, output_size),)
    if not (input.dtype.is_floating_point and not input.dtype.is_complex):
        # (the 2-d kernel it runs refuses the dtype)
        raise NotImplementedError(f'"adaptive_max_pool2d" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    sp = input.shape[-nd:]
    if input.numel() == 0 or sizes[0] <= 0:
        # (no channels of an unbatched input, or no bins: the 2-d kernel's result or refusal)
        out = adaptive_max_pool_nd(2, input.unsqueeze(-2), (1,) + sizes, return_indices)
        return tuple(t.squeeze(-2) for t in out) if return_indices else out.squeeze(-2)
    if all(sizes[i] and sp[i] % sizes[i] == 0 for i in range(nd)):
        k = tuple(sp[i] // sizes[i] for i in range(nd))
        v, i = max_pool_nd(nd, input, k, k, 0, 1, False, True)
        return _laid_out(v, i, return_indices, None, channels_last_1d(input), input)
    vals, idxs = [], []  # (one pooling per bin; the node renamed as max_pool1d's)
    for o in range(sizes[0]):
        start = (o * sp[0]) // sizes[0]
        end = -(-((o + 1) * sp[0]) // sizes[0])
        v, i = max_pool_nd(1, input.narrow(-1, start, end - start), end - start,
                           return_indices=True)
        vals.append(v)
        idxs.append(i + start)
    v, i = cat(vals, -1), cat(idxs, -1)
    return _laid_out(v, i, return_indices, "SqueezeBackward1", channels_last_1d(input),
                     input)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool_nd(1, input, output_size, return_indices)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    return adaptive_max_pool_nd(2, input, output_size, return_indices)


@autocast_op("adaptive_max_pool3d")
def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) to a fixed (D', H', W'), with the flat
    indices of the maxima if asked."""
    return adaptive_max_pool_nd(3, input, output_size, return_indices)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


TENSOR_METHODS: dict = {}

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d",
           "adaptive_max_pool1d", "max_pool1d_with_indices"]
