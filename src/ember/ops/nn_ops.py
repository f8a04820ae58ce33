"""Primitives only `ember.nn` needs: embedding lookup, the negative log-likelihood loss and
constant padding (the CTC loss, layer norm and attention have files of their own).

Embedding and nll_loss are linear in their differentiable input, so each one's VJP is a
second primitive (the adjoint) whose own VJP is the first again; double backward works.
# NOTE: listed exceptions to "compose everything": embedding (EmbeddingBackward0,
# padding_idx rows get no gradient) and nll_loss (NllLossBackward0, fused gather and
# weighting; cross_entropy = log_softmax + nll_loss).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from .._view import like_strides
from ._batching import batch_size, batched, front, loop
from ._cascade_sum import nll_mean_grad_low, nll_reduce_low
from ._common import index_runs, laid_copy
from ._scalar_value import kernel_number
from .creation import zeros, zeros_like
from .double_backward import double_backward
from .registry import (
    Primitive,
    apply,
    bind,
    defbatch,
    defjvp,
    defvjp,
    keep_given,
    nondifferentiable,
)

_grad_mode = grad_mode.state

# --- embedding ------------------------------------------------------------------------


def _embedding_kernel(weight, indices, *, padding_idx, scale_grad_by_freq, sparse=False):
    return np.take(weight, indices, axis=0)


def _embedding_meta(weight, indices, *, padding_idx, scale_grad_by_freq, sparse=False):
    return tuple(indices._shape) + tuple(weight._shape[1:]), weight._dtype


def _row_scale(indices, num_weights: int, padding_idx, scale_grad_by_freq):
    """Per-lookup gradient factor: 0 for padding_idx, 1/count with scale_grad_by_freq
    (True: the lookup's own index's count; "bag": embedding_bag's rule, below)."""
    flat = indices.reshape(-1)
    scale = np.ones(flat.shape, np.float64)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        if scale_grad_by_freq == "bag":
            # NOTE: PyTorch's embedding_bag CPU backward (sum and mean) divides the k-th
            # distinct index, in sorted order, by the count of the index at position k of
            # the *sorted lookups*, not by its own count: [1, 1, 1, 2] scales row 2 by 1/3.
            # Matched as it is, since users' numbers come from that kernel.
            ordered = np.sort(flat)
            _, rank = np.unique(flat, return_inverse=True)
            scale = 1.0 / counts[ordered[rank.reshape(-1)]]
        else:
            scale = 1.0 / counts[flat]
    if padding_idx is not None and padding_idx >= 0:
        scale = np.where(flat == padding_idx, 0.0, scale)
    return scale


def _embedding_backward_kernel(g, indices, *, num_weights, padding_idx, scale_grad_by_freq):
    work = g.astype(np.float32) if g.dtype.itemsize == 2 else g
    flat = indices.reshape(-1)
    width = math.prod(g.shape[indices.ndim:])  # (not -1: there may be no indices)
    rows = work.reshape(flat.size, width)
    if scale_grad_by_freq or (padding_idx is not None and 0 <= padding_idx):
        rows = rows * _row_scale(indices, num_weights, padding_idx,
                                 scale_grad_by_freq)[:, None].astype(work.dtype)
    return _sum_rows_into(rows, flat, num_weights).astype(g.dtype).reshape(
        (num_weights,) + g.shape[indices.ndim:])


def _sum_rows_into(rows, index, n: int):
    """out[index[i]] += rows[i] for every i, into zeros of n rows: rows sorted by index and
    summed per run with `reduceat`, several times faster than `np.add.at`. (reduceat does
    not add a run's rows strictly one after another, so the last bits can differ from
    np.add.at's; PyTorch adds them in the order of its own sort, which neither follows.)"""
    out = np.zeros((n, rows.shape[1]), rows.dtype)
    if index.size == 0:
        return out
    order, ordered, starts = index_runs(index)
    out[ordered[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return out


def _embedding_backward_meta(g, indices, *, num_weights, padding_idx, scale_grad_by_freq):
    return (num_weights,) + tuple(g._shape[indices.ndim:]), g._dtype


embedding_p = Primitive("embedding", _embedding_kernel, _embedding_meta)
embedding_backward_p = Primitive("embedding_backward", _embedding_backward_kernel,
                                 _embedding_backward_meta,
                                 grad_name="EmbeddingBackwardBackward0")


def _embedding_vjp(g, out, weight, indices, *, padding_idx, scale_grad_by_freq, in_shape,
                   sparse=False):
    if sparse:
        return _sparse_embedding_grad(g, indices, in_shape[0], padding_idx, scale_grad_by_freq)
    return apply(embedding_backward_p, g, indices, num_weights=in_shape[0],
                 padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)


def _sparse_embedding_grad(g, indices, num_weights: int, padding_idx, scale_grad_by_freq):
    """The gradient of `sparse=True`: a sparse COO tensor (not coalesced) with one row per
    lookup that is not padding, the incoming gradient's rows as values (PyTorch's
    embedding_sparse_backward)."""
    from .sparse_tensor import make_sparse

    if scale_grad_by_freq:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    features = tuple(g._shape[indices.ndim:])
    idx = indices.reshape(-1)
    values = g.reshape((-1,) + features)
    if padding_idx is not None:
        keep = idx != padding_idx
        idx, values = idx[keep], values[keep]
    idx = idx.reshape(1, -1).to(dt.int64)
    if values._requires_grad and _grad_mode.enabled:  # (create_graph: differentiable values)
        from .sparse_ops import sparse_coo_p

        return apply(sparse_coo_p, idx, values, size=(num_weights,) + features,
                     coalesced=False)
    return make_sparse(idx, values, (num_weights,) + features, False)


def _embedding_backward_vjp(h, out, g, indices, *, num_weights, padding_idx,
                            scale_grad_by_freq):
    rows = apply(embedding_p, h, indices, padding_idx=padding_idx,
                 scale_grad_by_freq=scale_grad_by_freq)
    s = apply(row_scale_p, indices, num_weights=num_weights, padding_idx=padding_idx,
              scale_grad_by_freq=scale_grad_by_freq, dtype=rows._dtype)
    return rows * s.reshape(tuple(indices.shape) + (1,) * (rows.ndim - indices.ndim))


# Each lookup's factor in the embedding gradient (0 at padding_idx, 1/count with
# scale_grad_by_freq), from the indices as an input: for the rule above, which reads no data.
row_scale_p = Primitive(
    "embedding_row_scale",
    lambda idx, *, num_weights, padding_idx, scale_grad_by_freq, dtype: _row_scale(
        idx, num_weights, padding_idx, scale_grad_by_freq).astype(dtype.np).reshape(idx.shape),
    lambda idx, *, num_weights, padding_idx, scale_grad_by_freq, dtype: (idx._shape, dtype))
nondifferentiable(row_scale_p)


# The rule reads the weight's row count only (its shape, kept as metadata), not the weight:
# as in PyTorch, an in-place op on the weight after the lookup leaves backward intact.
defvjp(embedding_p, _embedding_vjp, None, reads=((1,), ()), in_shape=True)
defvjp(embedding_backward_p, _embedding_backward_vjp, None, reads=((1,), ()))


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool | str = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` at `indices` (PyTorch's `torch.embedding` argument order);
    `scale_grad_by_freq="bag"` scales the gradient as embedding_bag's kernel does."""
    check_embedding_indices(weight, indices)
    pad = None if padding_idx is None or padding_idx < 0 else int(padding_idx)
    if scale_grad_by_freq != "bag":
        scale_grad_by_freq = bool(scale_grad_by_freq)
    if sparse:  # (the flag only changes the gradient: a sparse one)
        return apply(embedding_p, weight, indices, padding_idx=pad,
                     scale_grad_by_freq=scale_grad_by_freq, sparse=True)
    return apply(embedding_p, weight, indices, padding_idx=pad,
                 scale_grad_by_freq=scale_grad_by_freq)


def check_embedding_indices(weight: Tensor, indices: Tensor) -> None:
    """PyTorch's checks on embedding's weight and indices (index_select's along dim 0)."""
    from . import index_checks

    index_checks.embedding(weight, indices)


# --- nll_loss -------------------------------------------------------------------------


def _flat(x, target):
    """(M, C) scores with class last, and (M,) targets, for any (N, C, d1, ...) layout."""
    if x.ndim == 1:
        return x.reshape(1, -1), target.reshape(1)
    if x.ndim == 2:
        return x, target
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1]), target.reshape(-1)


def _picked_weights(target, weight, ignore_index: int, n_classes: int, dtype):
    """Each target's weight (0 where ignored), the targets made safe to index with, and the
    mask of ignored targets; the weights and mask are None when all weights are 1 (no class
    weights, nothing ignored)."""
    if weight is None and _none_ignored(target, ignore_index):
        return None, target, None
    ignored = target == ignore_index
    safe = np.where(ignored, 0, target)
    w = np.ones(target.shape, dtype) if weight is None else weight[safe].astype(dtype)
    return np.where(ignored, 0, w).astype(dtype), safe, ignored


def _none_ignored(target, ignore_index: int) -> bool:
    """No target equals `ignore_index`: one reduction when it lies outside the targets'
    range (the usual -100), an elementwise test otherwise."""
    if target.size == 0:
        return True
    if ignore_index < 0:
        return np.minimum.reduce(target, axis=None) > ignore_index
    return not (target == ignore_index).any()


def _total_weight(w, n: int, dtype):
    return dtype.type(n) if w is None else w.sum(dtype=dtype)


def _check_classes(t, n_classes: int, ignore_index: int) -> None:
    """IndexError naming the first target outside [0, n_classes) that is not ignored."""
    if t.size and (t.min() < 0 or t.max() >= n_classes):
        bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
        if bad.any():
            raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")


def _nll_kernel(x, target, weight, *, reduction, ignore_index):
    work = x.astype(np.float32) if x.dtype.itemsize == 2 else x
    xf, tf = _flat(work, target)
    _check_classes(tf, xf.shape[1], ignore_index)
    w, safe, ignored = _picked_weights(tf, weight, ignore_index, xf.shape[1], work.dtype)
    if reduction != "none" and x.dtype.itemsize == 2:
        # (torch sums a 16-bit loss in a cascade of 16-bit partial sums: _cascade_sum.py)
        kept = np.arange(tf.size) if ignored is None else np.flatnonzero(~ignored)
        ww = None if weight is None else weight[safe[kept]].astype(np.float32)
        return nll_reduce_low(xf[kept, safe[kept]], ww, kept, tf.size, reduction,
                              x.dtype)
    losses = np.negative(xf[np.arange(tf.size), safe])
    if w is not None:
        np.multiply(losses, w, out=losses)
        losses[ignored] = 0  # exactly 0, even when the row's scores are inf or NaN
    if reduction == "none":
        shape = target.shape
        return losses.reshape(shape).astype(x.dtype)
    total = losses.sum(dtype=work.dtype)
    if reduction == "mean":
        total = total / _total_weight(w, tf.size, work.dtype)  # 0 / 0 is NaN, as in PyTorch
    return np.asarray(total, dtype=x.dtype)


def _nll_meta(x, target, weight, *, reduction, ignore_index):
    return (tuple(target._shape) if reduction == "none" else ()), x._dtype


def nll_coefficients(work, target, weight, reduction: str, ignore_index: int,
                     n_classes: int, low=None):
    """(coef, safe): the gradient nll_loss's backward puts at each target (a 0-d `coef` when
    it is one number for every row), and the targets made safe to index with."""
    tf = target.reshape(-1)
    w, safe, ignored = _picked_weights(tf, weight, ignore_index, n_classes, work.dtype)
    coef = np.negative(work.reshape(-1) if reduction == "none" else work)
    if w is not None:
        coef = coef * w
    if reduction == "mean":  # (`low`: rounded where torch's 16-bit kernel rounds)
        coef = coef / _total_weight(w, tf.size, work.dtype) if low in (None, work.dtype) \
            else nll_mean_grad_low(work, w, ignored, tf.size, low, weight is not None)
    if ignored is not None:
        coef[ignored] = 0  # whatever gradient arrives, and when every target is ignored
    return coef, safe


def _nll_backward_kernel(g, target, weight, *, reduction, ignore_index, in_shape):
    work = g.astype(np.float32) if g.dtype.itemsize == 2 else g
    n_classes = in_shape[0] if len(in_shape) == 1 else in_shape[1]
    tf = target.reshape(-1)
    coef, safe = nll_coefficients(work, target, weight, reduction, ignore_index, n_classes, g.dtype)
    grad = np.zeros((tf.size, n_classes), work.dtype)
    grad[np.arange(tf.size), safe] = coef
    if len(in_shape) == 1:
        return grad.reshape(in_shape).astype(g.dtype)
    if len(in_shape) == 2:
        return grad if grad.dtype == g.dtype else grad.astype(g.dtype)
    moved = (in_shape[0],) + tuple(in_shape[2:]) + (n_classes,)
    return np.ascontiguousarray(np.moveaxis(grad.reshape(moved), -1, 1), dtype=g.dtype)


# (PyTorch runs inputs of 3 or more dims through its 2-d kernel, so their nodes are
# NllLoss2DBackward0 and NllLoss2DBackwardBackward0)
nll_loss_p = Primitive(
    "nll_loss", _nll_kernel, _nll_meta,
    grad_name=lambda args, params: f"NllLoss{'2D' if args[0].dim() > 2 else ''}Backward0")
nll_loss_backward_p = Primitive(
    "nll_loss_backward", _nll_backward_kernel,
    lambda g, target, weight, *, reduction, ignore_index, in_shape: (tuple(in_shape), g._dtype),
    grad_name=lambda args, params:
        f"NllLoss{'2D' if len(params['in_shape']) > 2 else ''}BackwardBackward0")

defvjp(nll_loss_p,
       lambda g, out, x, target, weight, *, reduction, ignore_index: apply(
           nll_loss_backward_p, g, target, weight, reduction=reduction,
           ignore_index=ignore_index, in_shape=x.shape),
       None, None, reads=((0, 1, 2), (), ()))
defvjp(nll_loss_backward_p,
       lambda h, out, g, target, weight, *, reduction, ignore_index, in_shape: apply(
           nll_loss_p, h, target, weight, reduction=reduction, ignore_index=ignore_index),
       None, None, reads=((1, 2), (), ()))


def expect_device(anchor: Tensor, *tensors: Tensor | None) -> None:
    """PyTorch's kernels that check their operands against one of them (batch_norm's input,
    nll_loss's target) name that one's device as the expected one, in its words."""
    dev = anchor.device
    for t in tensors:
        if t is not None and t.device is not dev and t.device != dev:
            raise RuntimeError(f"Tensor on device {t.device} is not on the expected device "
                               f"{dev}!")


def nll_loss_prim(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
                  ignore_index: int) -> Tensor:
    """Run the primitive; arguments are already checked and `target` is int64.

    As in PyTorch, an input of 3 or of more than 4 dims is viewed as (N, C, 1, -1) (and
    its target as (N, 1, -1)) for the 2-d kernel, and an unreduced loss viewed back."""
    expect_device(target, input, weight)
    nd = input.dim()
    if nd == 3 or nd > 4:
        n, c, rest = input.shape[0], input.shape[1], math.prod(input.shape[2:])
        out = apply(nll_loss_p, input.contiguous().view(n, c, 1, rest),
                    target.contiguous().view(n, 1, rest), weight, reduction=reduction,
                    ignore_index=int(ignore_index))
        double_backward(out, input)
        return out.view(target.shape) if reduction == "none" else out
    # (PyTorch's derivative kernel takes the input: a create_graph gradient requires grad
    # where it does, with zeros as its gradient)
    return double_backward(apply(nll_loss_p, input, target, weight, reduction=reduction,
                                 ignore_index=int(ignore_index)), input)


# --- constant padding -------------------------------------------------------------------


def _pad_kernel(x, *, pads, value):
    """`pads` is one (low, high) pair per dim; negative amounts crop."""
    crop = tuple(slice(max(-lo, 0), x.shape[i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads))
    x = x[crop]
    grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
    if not any(lo or hi for lo, hi in grow):
        # (PyTorch's crop is a clone of the narrowed input: preserve_format, its layout)
        return laid_copy(x, x.shape, _crop_strides(x.shape, x.strides, x.itemsize), x.dtype)
    value = kernel_number(value, x.dtype) if x.dtype.kind != "c" else value  # (a Scalar's cast)
    # (C order, as PyTorch's result and the meta rule are; filled, then the input copied in:
    # np.pad's generality costs several times the copy at the sizes of an eager call)
    out = np.full(tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, grow)), value, x.dtype)
    out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, grow))] = x
    return out


def _crop_strides(shape, byte_strides, itemsize: int) -> tuple[int, ...]:
    """The element strides of `clone()` of a narrowed view (`_view.like_strides`; a view
    with no element or a dense one keeps its own)."""
    stride = tuple(b // itemsize for b in byte_strides)
    return stride if 0 in shape else like_strides(shape, stride)


def _pad_meta(x, *, pads, value):
    shape = tuple(n + lo + hi for n, (lo, hi) in zip(x._shape, pads))
    if any(lo > 0 or hi > 0 for lo, hi in pads):
        return shape, x._dtype
    return shape, x._dtype, _crop_strides(shape, x.stride(), 1)


constant_pad_p = Primitive("constant_pad_nd", _pad_kernel, _pad_meta)
# Padding and cropping are adjoint: the gradient crops what was added (and pads, with
# zeros, what was cropped).
defvjp(constant_pad_p, lambda g, out, x, *, pads, value: apply(
    constant_pad_p, g, pads=tuple((-lo, -hi) for lo, hi in pads), value=0), reads=((),))


def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    """Pad (or, with negative amounts, crop) the trailing dims; `pad` runs from the last dim."""
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has "
                           f"{input.dim()} dimensions.")
    pairs = [(0, 0)] * input.dim()
    for i in range(len(pad) // 2):
        pairs[input.dim() - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    # NOTE: PyTorch crops each negative side with narrow() (first dim first, the low side
    # before the high one) before it pads, so a crop past the edge fails there, in narrow's
    # words, even where the other side's padding would have made the size non-negative.
    for d, (lo, hi) in enumerate(pairs):
        size = input.shape[d] + min(lo, 0)
        if size < 0 or (hi < 0 and size + hi < 0):
            raise RuntimeError("narrow(): length must be non-negative.")
    out = apply(constant_pad_p, input, pads=tuple(pairs), value=value)
    crop = not any(lo > 0 or hi > 0 for lo, hi in pairs)
    if crop and out._strided:
        # (the kernel lays a crop out as the narrowed input's clone; the strides of its
        # size-1 and empty dims, which NumPy's array does not tell, set here)
        from .copy import restrided

        out = restrided(out, _crop_strides(out._shape, input.stride(), 1))
    if out._grad_fn is not None:
        keep_given(out, pad=tuple(pad))  # (the node shows `pad` as given, not the pairs)
    return out if crop else keep_channels_last(input, out, "ConstantPadNdBackward0")


def keep_channels_last(input: Tensor, out: Tensor, node: str) -> Tensor:
    """`out` laid out channels-last (-3d) where `input` suggests that format, as PyTorch's
    kernels that allocate with `input.suggest_memory_format()` (padding, upsampling) return
    it; the copy's node is named `node`, the kernel's."""
    if input.ndim not in (4, 5):  # (no channels-last to keep)
        return out
    # (function-level: conv and copy sit beside this module and import much more)
    from .._layout import channels_last, channels_last_3d, channels_last_strides
    from .conv import channels_last_like
    from .copy import to_memory_format

    if not channels_last_like(input) or out.stride() == channels_last_strides(out.shape):
        return out  # (a kernel that already wrote it so: no copy)
    return to_memory_format(out, channels_last if input.ndim == 4 else channels_last_3d, node)


# --- forward mode and vmap -------------------------------------------------------------------
# embedding and its adjoint are linear in the table / the gradient; a batched index
# addresses a table of its own by an offset of b * rows per element. nll_loss is linear
# in the scores and, for "none" and "sum", in the class weights (mean divides by their
# total, hence the quotient rule).


def _offset(idx: Tensor, size: int, rows: int) -> Tensor:
    """Batch-first indices shifted by b * rows for element b (each its own table)."""
    from .creation import arange

    step = arange(size, dtype=idx.dtype).reshape((size,) + (1,) * (idx.ndim - 1)) * rows
    return idx + step


def _embedding_jvp(primals, tangents, out, **params):
    return None if tangents[0] is None else bind(embedding_p, tangents[0], primals[1], **params)


def _embedding_batch(args, dims, *, padding_idx, scale_grad_by_freq):
    """A batched table only: its batch is one more feature dim. Batched indices: the batch
    elements' tables stacked into one, each addressed by an offset (padding_idx, which
    only decides which row gets no gradient, cannot name one row of every table and is
    dropped there)."""
    weight, indices = args
    dw, di = dims
    if di is None:
        w = front(weight, dw).movedim(0, 1)
        return bind(embedding_p, w, indices, padding_idx=padding_idx,
                    scale_grad_by_freq=scale_grad_by_freq), indices.ndim
    idx = front(indices, di)
    if dw is None:
        return bind(embedding_p, weight, idx, padding_idx=padding_idx,
                    scale_grad_by_freq=scale_grad_by_freq), 0
    w = front(weight, dw)
    size, rows = w._shape[0], w._shape[1]
    flat = w.reshape((size * rows,) + tuple(w._shape[2:]))
    return bind(embedding_p, flat, _offset(idx, size, rows), padding_idx=None,
                scale_grad_by_freq=scale_grad_by_freq), 0


def _embedding_backward_jvp(primals, tangents, out, **params):
    return None if tangents[0] is None else bind(embedding_backward_p, tangents[0],
                                                 primals[1], **params)


def _not_padding(idx: Tensor, padding_idx, like: Tensor, trailing: int):
    """1 where a lookup is not padding_idx, 0 where it is, shaped to scale `like`."""
    keep = (idx != padding_idx).to(like.dtype)
    return keep.reshape(tuple(keep._shape) + (1,) * trailing)


def _embedding_backward_batch(args, dims, *, num_weights, padding_idx, scale_grad_by_freq):
    """Unbatched indices: the batch is one more feature dim of the gradient. Batched
    indices: each element's rows scatter into a table of its own (offset indices, so the
    frequency counts are per element too); padding lookups are zeroed beforehand."""
    g, indices = args
    dg, di = dims
    if di is None:
        g = front(g, dg).movedim(0, indices.ndim)
        return bind(embedding_backward_p, g, indices, num_weights=num_weights,
                    padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq), 1
    size = batch_size(args, dims)
    idx = front(indices, di)
    g = batched(g, dg, size)
    if padding_idx is not None:
        g = g * _not_padding(idx, padding_idx, g, g.ndim - idx.ndim)
    out = bind(embedding_backward_p, g, _offset(idx, size, num_weights),
               num_weights=size * num_weights, padding_idx=None,
               scale_grad_by_freq=scale_grad_by_freq)
    return out.reshape((size, num_weights) + tuple(out._shape[1:])), 0


def _row_scale_batch(args, dims, *, num_weights, padding_idx, scale_grad_by_freq, dtype):
    idx = front(args[0], dims[0])
    size = idx._shape[0]
    s = bind(row_scale_p, _offset(idx, size, num_weights), num_weights=size * num_weights,
             padding_idx=None, scale_grad_by_freq=scale_grad_by_freq, dtype=dtype)
    if padding_idx is not None:
        s = s * _not_padding(idx, padding_idx, s, 0)
    return s, 0


def _nll_total(like: Tensor, target: Tensor, weight, ignore_index: int, reduction: str):
    """The weights the targets pick (0 where ignored), summed ("sum") or not ("none"):
    nll_loss of scores that are -1 everywhere."""
    return bind(nll_loss_p, zeros_like(like) - 1, target, weight, reduction=reduction,
                ignore_index=ignore_index)


def _nll_jvp(primals, tangents, out, *, reduction, ignore_index):
    x, target, weight = primals
    tx, _, tw = tangents
    red = "sum" if reduction == "mean" else reduction
    t = None
    for a, w in ((tx, weight), (x, tw)):
        if a is not None and (w is not None or a is tx):
            u = bind(nll_loss_p, a, target, w, reduction=red, ignore_index=ignore_index)
            t = u if t is None else t + u
    if reduction != "mean":
        return t
    total = _nll_total(x, target, weight, ignore_index, "sum")
    t = t / total
    if tw is not None:
        t = t - out * _nll_total(x, target, tw, ignore_index, "sum") / total
    return t


def _nll_backward_jvp(primals, tangents, out, *, reduction, ignore_index, in_shape):
    g, target, weight = primals
    tg, _, tw = tangents
    p = {"reduction": reduction, "ignore_index": ignore_index, "in_shape": in_shape}
    t = None if tg is None else bind(nll_loss_backward_p, tg, target, weight, **p)
    if tw is not None:  # (for "mean", the quotient rule over the total weight)
        u = bind(nll_loss_backward_p, g, target, tw,
                 **(dict(p, reduction="sum") if reduction == "mean" else p))
        if reduction == "mean":
            u = (u - out * _nll_total(out, target, tw, ignore_index, "sum")) / _nll_total(
                out, target, weight, ignore_index, "sum")
        t = u if t is None else t + u
    return t


def _samples(x: Tensor, one: bool) -> Tensor:
    """A batch-first argument with the batch folded into the sample dim N (a single
    sample's argument already has the batch as its N)."""
    return x if one else x.reshape((-1,) + tuple(x._shape[2:]))


def _nll_batch(args, dims, *, reduction, ignore_index):
    """The batch folded into the samples, the losses kept per element ("none") and then
    reduced per element; per-element class weights are looped over."""
    if dims[2] is not None:
        return loop(nll_loss_p, args, dims, **{"reduction": reduction,
                                             "ignore_index": ignore_index})
    x, target, weight = args
    size = batch_size(args, dims)
    one = x.ndim - (dims[0] is not None) == 1
    xb, tb = batched(x, dims[0], size), batched(target, dims[1], size)
    xf, tf = _samples(xb, one), _samples(tb, one)
    loss = bind(nll_loss_p, xf, tf, weight, reduction="none",
                ignore_index=ignore_index).reshape(tb._shape)
    if reduction == "none":
        return loss, 0
    rest = tuple(range(1, loss.ndim))
    total = loss.sum(rest) if rest else loss
    if reduction == "sum":
        return total, 0
    w = _nll_total(xf, tf, weight, ignore_index, "none").reshape(tb._shape)
    return total / (w.sum(rest) if rest else w), 0


def _nll_backward_batch(args, dims, *, reduction, ignore_index, in_shape):
    """As nll_loss's rule: a per-element incoming gradient (divided by the element's total
    weight for "mean") spread over its targets, then one "none" backward."""
    params = {"reduction": reduction, "ignore_index": ignore_index, "in_shape": in_shape}
    if dims[2] is not None:
        return loop(nll_loss_backward_p, args, dims, **params)
    g, target, weight = args
    size = batch_size(args, dims)
    one = len(in_shape) == 1
    gb, tb = batched(g, dims[0], size), batched(target, dims[1], size)
    tf = _samples(tb, one)
    flat_shape = (size,) + tuple(in_shape) if one else (size * in_shape[0],) + tuple(
        in_shape[1:])
    if reduction != "none":
        if reduction == "mean":
            w = _nll_total(zeros(flat_shape, dtype=gb.dtype), tf, weight, ignore_index, "none")
            w = w.reshape(tb._shape)
            gb = gb / (w.sum(tuple(range(1, w.ndim))) if w.ndim > 1 else w)
        gb = gb.reshape((size,) + (1,) * (tb.ndim - 1)).expand(tb._shape)
    out = bind(nll_loss_backward_p, _samples(gb, one), tf, weight, reduction="none",
               ignore_index=ignore_index, in_shape=flat_shape)
    return out.reshape((size,) + tuple(in_shape)), 0


def _pad_jvp(primals, tangents, out, *, pads, value):
    """Linear in x; the padding of a tangent is zeros whatever the fill value."""
    return bind(constant_pad_p, tangents[0], pads=pads, value=0)


def _pad_batch(args, dims, *, pads, value):
    return bind(constant_pad_p, front(args[0], dims[0]), pads=((0, 0),) + pads,
                value=value), 0


defjvp(embedding_p, _embedding_jvp)
defbatch(embedding_p, _embedding_batch)
defjvp(embedding_backward_p, _embedding_backward_jvp)
defbatch(embedding_backward_p, _embedding_backward_batch)
defbatch(row_scale_p, _row_scale_batch)
defjvp(nll_loss_p, _nll_jvp)
defbatch(nll_loss_p, _nll_batch)
defjvp(nll_loss_backward_p, _nll_backward_jvp)
defbatch(nll_loss_backward_p, _nll_backward_batch)
defjvp(constant_pad_p, _pad_jvp)
defbatch(constant_pad_p, _pad_batch)


TENSOR_METHODS: dict = {}

__all__ = ["embedding", "constant_pad_nd"]
