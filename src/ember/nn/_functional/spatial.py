"""Spatial functions of `ember.nn.functional`: convolution and pooling (from ember.ops),
padding, interpolation, unfold / fold and pixel shuffling.

Interpolation lives in interpolate.py (its names are re-exported here).
"""

from __future__ import annotations

import math

import numpy as np

import ember as E

from ..._core.dispatch import transform_active
from ..._tensor import Tensor
from ..._view import contiguous_strides
from ...amp.autocast_mode import autocast_op, cast_op, in_region
from ...ops import nn_ops
from ...ops._arg_parser_text import need_tensor, wrong_type
from ...ops._call_plans import Plans
from ...ops._common import type_name
from ...ops._size_args import int_list
from ...ops.columns import col2im_p, im2col_p
from ...ops.conv import (
    _layout_of,
    as_channels_last,
    channels_last_like,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    row_major_only,
)
from ...ops.copy import restrided
from ...ops.double_backward import double_backward
from ...ops.one_node import one_node, plain_call
from ...ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from ...ops.registry import (
    Primitive,
    apply,
    batch_by_loop,
    derivative_not_implemented,
    rename_node,
    shows,
)
from .interpolate import interpolate, upsample, upsample_bilinear, upsample_nearest

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "pad", "interpolate", "upsample",
    "upsample_nearest", "upsample_bilinear", "unfold", "fold", "pixel_shuffle",
    "pixel_unshuffle", "max_unpool1d", "max_unpool2d", "max_unpool3d", "local_response_norm",
    "channel_shuffle", "native_channel_shuffle", "max_pool3d_with_indices", "conv_tbc",
]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# --- pad ------------------------------------------------------------------------------


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    if mode == "circular":
        return _circular_index(n, lo, hi)
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        period = 2 * (n - 1)
        j = np.abs(i) % period if period else np.zeros_like(i)
        return np.where(j >= n, period - j, j)
    return np.clip(i, 0, n - 1)  # replicate


def _circular_index(n: int, lo: int, hi: int) -> np.ndarray:
    """The input positions of a circular pad's outputs along one dim.

    # NOTE: as PyTorch, a negative side crops first, and the other side then wraps around
    # what is left (the core), not around the whole input: pad (-1, 2) of [0 1 2 3 4] is
    # [1 2 3 4 1 2]. A wrap longer than the core would copy a region onto itself; PyTorch
    # refuses that (its words), and so does ember, also where the core is empty."""
    if n + lo + hi == 0:  # (nothing to write, so nothing read: PyTorch returns it empty)
        return np.zeros(0, dtype=np.int64)
    crop_lo, crop_hi = max(-lo, 0), max(-hi, 0)
    core = n - crop_lo - crop_hi
    if core < 0:
        raise RuntimeError("Negative padding value is resulting in an empty dimension")
    if (lo > 0 or hi > 0) and max(lo, hi) > core:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")
    left = crop_lo + core - lo + np.arange(max(lo, 0))
    right = crop_lo + np.arange(max(hi, 0))
    return np.concatenate([left, crop_lo + np.arange(core), right]).astype(np.int64)


def _check_output_size(input: Tensor, pad: tuple, k: int, name: str) -> None:
    """Negative padding that leaves a reflection or replication without output, refused in
    PyTorch's words: the kernels check that some padded dim keeps an element, then allocate
    (which refuses a negative size)."""
    sizes = input.shape[-k:]
    outs = [n + pad[2 * (k - 1 - j)] + pad[2 * (k - 1 - j) + 1] for j, n in enumerate(sizes)]
    if all(o < 1 for o in outs):
        got = dict(zip("DHW"[-k:], sizes))
        want = dict(zip("DHW"[-k:], outs))
        if k == 1:
            where = f"(W: {got['W']})"
        elif k == 2:  # (replication's message has a stray space before its parenthesis)
            gap = " " if name == "replication" else ""
            where = f"(H: {got['H']}, W: {got['W']}{gap})"
        else:
            where = f"(D: {got['D']} H: {got['H']}, W: {got['W']})"
        calc = " ".join(f"{d}: {o}" for d, o in want.items())
        raise RuntimeError(f"input {where} is too small. Calculated output {calc}")
    if any(o < 0 for o in outs):
        if name == "reflection" and k == 2:  # (its kernel computes numel first)
            raise RuntimeError("numel: integer multiplication overflow")
        shape = list(input.shape[:-k]) + outs
        neg = next(o for o in outs if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: {shape}")


# A reflection, replication or circular pad is a gather: with no graph to record (no grad
# wanted, no interpreter on the stack, no autocast region) a row-major input's is NumPy's
# indexing by the checked call's index grids, kept by what the checks read. The same values
# copied, no checks again, none of the index tensors and indexing ops around them.
_pad_plans = Plans()  # key -> the index grids (np.ix_), or False where the ops run
_PAD_PLAN_MOST = 1 << 15  # elements: past this NumPy's indexing by grids is slower than the
# ops' gather by runs (reflect of 8x64x32x32: 5.0 against 0.74 ms)


def _pad_key(input: Tensor, pad, mode: str, value) -> tuple | None:
    """What a plain gather pad's checks and grids depend on; None where the ops run."""
    if mode == "constant" or value is not None or in_region() or \
            pad.__class__ not in (tuple, list) or input is None or not plain_call(input) or \
            math.prod(input._shape) > _PAD_PLAN_MOST:
        return None
    for v in pad:
        if v.__class__ is not int:
            return None
    layout = _layout_of(input)
    return None if layout is None else (mode, tuple(pad), input._shape, input._dtype, layout)


def _gathered(input: Tensor, grids: tuple) -> Tensor:
    """The input's trailing dims gathered by index `grids`, row-major (a plain call's pad).
    (Reshaped through 1-d: NumPy's gather may give a size-1 dim any stride, and from_numpy
    keeps an array's strides; a row-major result's are the canonical ones.)"""
    a = np.ascontiguousarray(input.detach().numpy()[(Ellipsis, *grids)])
    return E.from_numpy(a.reshape(-1).reshape(a.shape))


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the trailing dims by `pad` = (left_last, right_last, left_2nd_last, ...)."""
    key = _pad_key(input, pad, mode, value)
    if key is not None:
        grids = _pad_plans.get(key)
        if grids:  # (the checks of a call like this one passed)
            return _gathered(input, grids)
    if input.__class__ is not Tensor:
        need_tensor(input, "pad")
    pad = int_list((pad,), "pad", "pad", 2, method=False)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    # PyTorch's checks, in its order (aten's _pad_enum)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.dim()}")
    if mode == "constant":
        return nn_ops.constant_pad_nd(input, pad, 0 if value is None else value)
    if value not in (None, 0):
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    name = {"reflect": "reflection", "replicate": "replication"}.get(mode)
    if name is not None:
        input, = cast_op(f"{name}_pad{k}d", input)
        batched = input.dim() == k + 2
        if 0 in input.shape[1 if batched else 0:]:  # (only a batch may be empty)
            raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly "
                               "0 batch size and other non-zero dimensions for input, but got: "
                               f"{list(input.shape)}")
    index = []  # per padded dim, first to last: the input positions each output reads
    for i in range(k):  # (checked from the last dim, as ATen)
        dim = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            # (ATen numbers the argument by the dim: #4 the last, #6 the one before, #8)
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               "corresponding input dimension, but got: padding "
                               f"({lo}, {hi}) at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        index.insert(0, _pad_index(n, lo, hi, mode))
    if name is not None:
        _check_output_size(input, pad, k, name)
    if name is not None and input.dtype == E.bool:  # (after the size checks, as the kernels)
        raise NotImplementedError(f'"{name}_pad{k}d" not implemented for \'Bool\'')
    if key is not None:
        _pad_plans[key] = row_major_only(input) and np.ix_(*index)
        if _pad_plans[key]:
            return _gathered(input, _pad_plans[key])
    if mode == "circular":  # (PyTorch composes it of slice copies and keeps nothing)
        out = input
        for j, idx in enumerate(index):
            out = out.index_select(input.dim() - k + j, E.tensor(idx, dtype=E.int64))
            if out.grad_fn is not None:
                rename_node(out.grad_fn, "CopySlices")
        return out
    # reflection and replication: one gather over the padded dims, one node as PyTorch's
    # kernel leaves (named for it), which keeps its input for backward
    grids = np.ix_(*index)
    out = input[(Ellipsis, *(E.tensor(g, dtype=E.int64) for g in grids))]
    node = f"{name.capitalize()}Pad{k}DBackward0"
    out = nn_ops.keep_channels_last(input, out, node)
    if not (out.is_contiguous() or input.ndim in (4, 5) and channels_last_like(input)):
        # (PyTorch's kernel writes its result in the input's suggested format: row-major
        # but for channels-last, where the gather kept the input's permutation)
        out = restrided(out, contiguous_strides(out.shape))
        if out.grad_fn is not None:
            rename_node(out.grad_fn, node)
    out = shows(out, node, padding=tuple(int(v) for v in pad), self=input)
    # (PyTorch's derivative kernel takes the input: a create_graph gradient requires grad)
    return double_backward(out, input)


# --- unfold / fold ----------------------------------------------------------------------


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _integer_refused(input: Tensor, kernel: str) -> None:
    """PyTorch's im2col / col2im take floating, complex and bool tensors only."""
    if input.dtype.is_floating_point or input.dtype.is_complex or input.dtype == E.bool:
        return
    raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(input.dtype)}\'')


_POSITIVE = {"kernel_size": ("kernel size should be greater than zero", "kernel"),
             "dilation": ("dilation should be greater than zero", "dilation"),
             "padding": ("padding should be non-negative", "pad"),
             "stride": ("stride should be greater than zero", "stride")}


def _window_checks(sizes: dict, order: tuple) -> None:
    """PyTorch's im2col / col2im argument checks: two values each, then each in range (in
    `order`, which differs between the two kernels)."""
    for name, v in sizes.items():
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    for name in order:
        (h, w), (words, short) = sizes[name], _POSITIVE[name]
        if (h < 0 or w < 0) if name == "padding" else (h <= 0 or w <= 0):
            raise RuntimeError(f"{words}, but got {short}_height: {h} {short}_width: {w}")


def _im2col_dims_valid(input: Tensor) -> bool:
    """im2col's rank check: 3D or 4D, only a batch may be empty.

    NOTE: PyTorch reads size(1) and size(2) before it looks at the rank, so an input of
    fewer than three dims fails on that read (IndexError, `Tensor.size`'s words) unless a
    zero in dim 1 already settles the answer; the reads are made the same way here.
    """
    nd = input.dim()
    valid = input.size(1) != 0 and input.size(2) != 0
    return (nd == 3 and input.size(0) != 0 and valid) or (nd == 4 and valid
                                                          and input.size(3) != 0)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L) sliding blocks."""
    need_tensor(input, "im2col")
    k, dl, pd, st = (_pair(v) for v in (kernel_size, dilation, padding, stride))
    _window_checks({"kernel_size": k, "dilation": dl, "padding": pd, "stride": st},
                   ("kernel_size", "dilation", "padding", "stride"))
    if not _im2col_dims_valid(input):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")
    sp = input.shape[-2:]
    blocks = [(sp[i] + 2 * pd[i] - (dl[i] * (k[i] - 1) + 1)) // st[i] + 1 for i in range(2)]
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({sp[0]}, {sp[1]}), kernel_size="
                           f"({k[0]}, {k[1]}), dilation=({dl[0]}, {dl[1]}), padding=({pd[0]}, "
                           f"{pd[1]}), calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), but its components must be at least one.")
    _integer_refused(input, "im2col_out_cpu")

    # (ops/columns.py: values copied, row-major whatever the input's memory format)
    cols = apply(im2col_p, input, image=tuple(sp), k=k, dl=dl, pd=pd, st=st,
                 blocks=tuple(blocks))
    return shows(cols, "Im2ColBackward0",
                 dilation=dl, kernel_size=k, padding=pd, self_sym_argsize_minus_1=sp[1],
                 self_sym_argsize_minus_2=sp[0], stride=st)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im: sum sliding blocks (N, C * kh * kw, L) back into (N, C, H, W)."""
    need_tensor(input, "col2im")
    out, k, dl, pd, st = (_pair(v) for v in (output_size, kernel_size, dilation, padding,
                                             stride))
    if len(out) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(out)}")
    _window_checks({"kernel_size": k, "dilation": dl, "padding": pd, "stride": st},
                   ("kernel_size", "stride", "dilation", "padding"))
    batched = input.dim() == 3
    if input.dim() not in (2, 3) or 0 in input.shape[1 if batched else 0:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    x = input if batched else input.unsqueeze(0)
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={tuple(k)}.")
    given = (f"Given output_size=({out[0]}, {out[1]}), kernel_size=({k[0]}, {k[1]}), dilation="
             f"({dl[0]}, {dl[1]}), padding=({pd[0]}, {pd[1]}), stride=({st[0]}, {st[1]}), ")
    blocks = tuple((out[i] + 2 * pd[i] - dl[i] * (k[i] - 1) - 1) // st[i] + 1 for i in range(2))
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"{given}expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={x.shape[2]}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{given}calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), which is too small (non-positive)")
    _integer_refused(input, "col2im_out_cpu")

    # (ops/columns.py: each tap's columns added in order onto zeros, as PyTorch's col2im)
    img = apply(col2im_p, input, image=tuple(out), k=k, dl=dl, pd=pd, st=st, blocks=blocks)
    return shows(img, "Col2ImBackward0",
                 dilation=dl, kernel_size=k, padding=pd, stride=st)


def _named(out: Tensor, name: str) -> Tensor:
    """`out` with the node PyTorch's one kernel for the op leaves (ember composes it)."""
    if out.grad_fn is not None:
        rename_node(out.grad_fn, name)
    return out


def _shuffled(input: Tensor, shuffle, name: str, **shown) -> Tensor:
    """A pixel (un)shuffle's result, `shuffle(input)`: channels-last for a channels-last
    input, as PyTorch's kernels allocate it (`suggest_memory_format`), under one node named
    and showing `shown` as PyTorch's."""
    def run(x: Tensor) -> Tensor:
        out = shuffle(x)
        return as_channels_last(out, name) if channels_last_like(x) else out

    return shows(one_node(name, run, input, linear=True), name, **shown)


def _plain_shuffle(input: Tensor, r: int, split: tuple, perm: tuple, shape: tuple):
    """A pixel (un)shuffle with no graph to record of a row-major input: the composite's
    reshape, permute and copy on its array (the same values, row-major); None where the
    composite runs."""
    if r == 1 or not plain_call(input) or not input.is_contiguous():
        return None
    x = input.detach().numpy()
    return E.from_numpy(np.ascontiguousarray(x.reshape(split).transpose(perm)).reshape(shape))


def _shuffle_checks(name: str, factor: str, input: Tensor, r) -> int:
    """PyTorch's argument parser's and kernel's checks, in its order; the factor as an int."""
    need_tensor(input, name)
    if isinstance(r, Tensor) and r.dim() == 0 and not r.dtype.is_floating_point and \
            not r.dtype.is_complex and r.dtype != E.bool:
        r = int(r)
    if not isinstance(r, (int, np.integer)) or isinstance(r, (bool, np.bool_)):
        raise wrong_type(name, factor, 2, "int", r)
    r = int(r)
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {factor}, but got {r}")
    return r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = _shuffle_checks("pixel_shuffle", "upscale_factor", input, upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} is"
                           f" not divisible by {r * r}")
    n = len(lead)
    split = (*lead, c // (r * r), r, r, h, w)
    perm = (*range(n), n, n + 3, n + 1, n + 4, n + 2)
    shape = (*lead, c // (r * r), h * r, w * r)
    out = _plain_shuffle(input, r, split, perm, shape)
    if out is not None:
        return out

    def shuffle(x: Tensor) -> Tensor:
        return x.reshape(split).permute(perm).reshape(shape)

    return _shuffled(input, shuffle, "PixelShuffleBackward0", upscale_factor=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = _shuffle_checks("pixel_unshuffle", "downscale_factor", input, downscale_factor)
    *lead, c, h, w = input.shape
    for side, size, at in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by "
                               f"downscale_factor, but input.size({at})={size} is not divisible "
                               f"by {r}")
    if input.numel() == 0:  # (PyTorch's kernel returns an empty input's copy, its shape kept)
        return _named(input.clone(), "PixelUnshuffleBackward0")
    n = len(lead)
    split = (*lead, c, h // r, r, w // r, r)
    perm = (*range(n), n, n + 2, n + 4, n + 1, n + 3)
    shape = (*lead, c * r * r, h // r, w // r)
    out = _plain_shuffle(input, r, split, perm, shape)
    if out is not None:
        return out

    def unshuffle(x: Tensor) -> Tensor:
        return x.reshape(split).permute(perm).reshape(shape)

    return _shuffled(input, unshuffle, "PixelUnshuffleBackward0", downscale_factor=r)


# --- unpooling, local response norm, channel shuffle ------------------------------------------


def _unpool_size(input: Tensor, kernel, stride, padding, output_size) -> list[int]:
    nd = len(kernel)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{lo} and {hi})")
    return output_size


def _max_unpool(nd: int, input: Tensor, indices: Tensor, kernel_size, stride, padding,
                output_size) -> Tensor:
    """Scatter each value to the position its max-pool index names; zeros elsewhere."""
    def tup(v):
        return (v,) * nd if isinstance(v, int) else tuple(v)

    kernel = tup(kernel_size)
    stride = kernel if stride is None else tup(stride)
    size = list(_unpool_size(input, kernel, stride, tup(padding), output_size))
    if nd == 1:  # (PyTorch runs it as 2-d, on a trailing dim of one)
        return _unpool_scatter(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]
                               ).squeeze(-1)
    return _unpool_scatter(input, indices, size)


def _unpool_checks(input: Tensor, indices: Tensor, size: list) -> None:
    """ATen's unpooling checks, in its order: the indices' dtype, the input's rank, the two
    shapes, empty non-batch dims, the input's dtype, then every index inside its plane (the
    last bad one named, as its loop leaves it)."""
    nd = len(size)
    name = f"max_unpooling{nd}d"
    if indices.dtype != E.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {type_name(indices.dtype)}" if nd == 2 else ""))
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {name} should be a {nd + 1}d or {nd + 2}d Tensor, but got "
                           f"a tensor with {input.dim()} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but got {list(input.shape)} with "
                               f"dimension {i} being empty.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"max_unpool{nd}d" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    if indices.device.type != "cpu" or transform_active():  # (values not readable)
        return
    flat = indices.detach().contiguous().numpy().reshape(-1)
    bad = np.flatnonzero((flat < 0) | (flat >= math.prod(size)))
    if bad.size:
        raise RuntimeError(f"Found an invalid max index: {flat[bad[-1]]} (output volumes are "
                           f"of size {'x'.join(str(n) for n in size)})")


def _unpool_scatter(input: Tensor, indices: Tensor, size: list) -> Tensor:
    """The unpooling kernel: each plane's values scattered to their flat indices in a zero
    plane of `size`; one node, named as PyTorch's."""
    _unpool_checks(input, indices, size)
    nd = len(size)
    lead = tuple(input.shape[:-nd])
    flat = input.reshape(lead + (math.prod(input.shape[-nd:]),))
    out = E.zeros(lead + (math.prod(size),), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, indices.reshape(flat.shape), flat).view(lead + tuple(size))
    if out.grad_fn is not None:
        rename_node(out.grad_fn, f"MaxUnpool{nd}DBackward0")
    return out


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """A partial inverse of max_pool3d: values go back to their argmax positions."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


@autocast_op("max_unpool2d")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """A partial inverse of max_pool2d: values go back to their argmax positions."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta."""
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality" + " " * 26 +
                         f"input (got {dim} dimensions)")  # (PyTorch's spaces)
    if input.numel() == 0:
        return input
    div = input * input  # (PyTorch's steps, so the graph shows its nodes)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k).pow(beta)


def _check_shuffle(input: Tensor, groups) -> None:
    """PyTorch's checks of channel_shuffle's arguments, in its order and words."""
    if not isinstance(groups, int) or isinstance(groups, bool):
        raise wrong_type("channel_shuffle", "groups", 2, "int", groups)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave channels: (N, g * c, *) viewed as (N, g, c, *), transposed to (N, c, g, *)."""
    _check_shuffle(input, groups)
    n, ch = input.shape[:2]
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, ch // groups) + rest).transpose(1, 2)
    out = x.reshape((n, ch) + rest)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "ChannelShuffleBackward0")
    return out


def _shuffle_kernel(x, *, groups):
    n, ch = x.shape[:2]
    rest = x.shape[2:]
    y = x.reshape((n, groups, ch // groups) + rest).swapaxes(1, 2)
    return np.ascontiguousarray(y).reshape(x.shape)


# PyTorch's native_channel_shuffle: channel_shuffle's values, but no derivative formula (its
# output requires grad under a NotImplemented node whose backward raises).
native_shuffle_p = Primitive("native_channel_shuffle", _shuffle_kernel,
                             lambda x, *, groups: (tuple(x._shape), x._dtype))
derivative_not_implemented(native_shuffle_p, "native_channel_shuffle", (True,))
batch_by_loop(native_shuffle_p, "a legacy kernel; vmap runs it once per element")


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """channel_shuffle as ATen's native kernel: the same values, not differentiable."""
    _check_shuffle(input, groups)
    return apply(native_shuffle_p, input, groups=groups)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):
    """max_pool3d returning (values, indices) whatever `return_indices` says."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-d convolution over (time, batch, channel) input with a (kernel width, in, out)
    weight, padded by `pad` steps at both ends: conv1d on the transposed layout."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    out = out.permute(2, 0, 1).contiguous()
    if out.grad_fn is not None:
        rename_node(out.grad_fn, "ConvTbcBackward0")
    return out
