"""MLX's convolutions, channels last: inputs (N, *spatial, C_in), weights
(C_out, *kernel, C_in / groups) (transposed convolutions: the same layout), results
(N, *spatial, C_out). Each moves the channels to where ember's (PyTorch's) convolution
wants them, runs it, and moves them back, so gradients are ember's convolution VJPs.
Like MLX, these cross-correlate; `conv_general(flip=True)` convolves."""

from __future__ import annotations

import ember as E
import ember.nn.functional as F

from . import _dtypes as D
from ._array import _wrap, array, cast

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _per_dim(v, nd: int, name: str) -> tuple:
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(v)
    if len(v) != nd:
        raise ValueError(f"[conv] Invalid {name} {v} for {nd} spatial dimensions.")
    return v


def _shape(a: array) -> str:
    return "(" + ",".join(map(str, a.shape)) + ")"


def _operands(x: array, w: array, nd: int, groups: int, name: str) -> tuple:
    if x.ndim != nd + 2:
        raise ValueError(f"[{name}] Invalid input array with {x.ndim} dimensions for "
                         f"{nd}D convolution. Expected an array with {nd + 2} dimensions "
                         "following the format [N, ..., C_in].")
    if w.ndim != nd + 2:
        raise ValueError(f"[{name}] Invalid weight array with {w.ndim} dimensions for "
                         f"{nd}D convolution. Expected an array with {nd + 2} dimensions "
                         "following the format [C_out, ..., C_in].")
    if x.shape[-1] != w.shape[-1] * groups:
        raise ValueError("[conv] Expect the input channels in the input and weight array "
                         f"to match but got shapes - input: {_shape(x)} and weight: "
                         f"{_shape(w)}")
    if x.dtype.kind not in "fc" or w.dtype.kind not in "fc":
        raise ValueError(f"[{name}] Only floating point convolutions are supported.")
    dt = D.promote_types(x.dtype, w.dtype)
    xt = cast(x._t, x.dtype, dt)
    wt = cast(w._t, w.dtype, dt)
    return xt.permute(0, nd + 1, *range(1, nd + 1)), wt, dt


def _channels_last(t, nd: int):
    return t.permute(0, *range(2, nd + 2), 1)


def _dilate(t, d: tuple):
    """Insert d-1 zeros between neighbours along each spatial axis (channels-first t)."""
    for axis, k in enumerate(d, start=2):
        if k == 1:
            continue
        n = t.shape[axis]
        moved = t.movedim(axis, -1).unsqueeze(-1)
        zeros = E.zeros((*moved.shape[:-1], k - 1), dtype=t.dtype)
        spread = E.cat([moved, zeros], dim=-1).reshape(*moved.shape[:-2], n * k)
        t = spread[..., :(n - 1) * k + 1].movedim(-1, axis)
    return t


def conv_general(input: array, weight: array, /, stride=1, padding=0,  # noqa: A002
                 kernel_dilation=1, input_dilation=1, groups: int = 1, flip: bool = False,
                 *, stream=None) -> array:
    """N-d convolution with per-side padding (`padding=(low, high)` as two sequences),
    kernel and input dilation, groups, and optional kernel flip."""
    nd = input.ndim - 2
    xt, wt, dt = _operands(input, weight, nd, groups, "conv")
    if isinstance(padding, tuple) and len(padding) == 2 and not isinstance(padding[0], int):
        lo, hi = _per_dim(padding[0], nd, "padding"), _per_dim(padding[1], nd, "padding")
    else:
        lo = hi = _per_dim(padding, nd, "padding")
    xt = _dilate(xt, _per_dim(input_dilation, nd, "input_dilation"))
    wt = wt.permute(0, nd + 1, *range(1, nd + 1))
    if flip:
        wt = E.flip(wt, dims=tuple(range(2, nd + 2)))
    if lo != hi:
        pads = [p for pair in reversed(list(zip(lo, hi))) for p in pair]
        xt, lo = F.pad(xt, pads), (0,) * nd
    out = _CONV[nd](xt, wt, None, _per_dim(stride, nd, "stride"), lo,
                    _per_dim(kernel_dilation, nd, "kernel_dilation"), groups)
    return _wrap(_channels_last(out, nd), dt)


def _conv(nd: int, name: str, x, w, stride, padding, dilation, groups) -> array:
    xt, wt, dt = _operands(x, w, nd, groups, name)
    wt = wt.permute(0, nd + 1, *range(1, nd + 1))
    out = _CONV[nd](xt, wt, None, _per_dim(stride, nd, "stride"),
                    _per_dim(padding, nd, "padding"), _per_dim(dilation, nd, "dilation"),
                    groups)
    return _wrap(_channels_last(out, nd), dt)


def conv1d(input: array, weight: array, /, stride: int = 1, padding: int = 0,  # noqa: A002
           dilation: int = 1, groups: int = 1, *, stream=None) -> array:
    """1-d convolution of (N, L, C_in) by (C_out, K, C_in / groups)."""
    return _conv(1, "conv1d", input, weight, stride, padding, dilation, groups)


def conv2d(input: array, weight: array, /, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1, *, stream=None) -> array:
    """2-d convolution of (N, H, W, C_in) by (C_out, KH, KW, C_in / groups)."""
    return _conv(2, "conv2d", input, weight, stride, padding, dilation, groups)


def conv3d(input: array, weight: array, /, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1, *, stream=None) -> array:
    """3-d convolution of (N, D, H, W, C_in) by (C_out, KD, KH, KW, C_in / groups)."""
    return _conv(3, "conv3d", input, weight, stride, padding, dilation, groups)


def _conv_transpose(nd: int, name: str, x, w, stride, padding, dilation, output_padding,
                    groups) -> array:
    xt, wt, dt = _operands(x, w, nd, groups, name)
    # MLX (C_out, *k, C_in/g) -> ember (C_in, C_out/g, *k), group by group
    c_out, c_in_g = wt.shape[0], wt.shape[-1]
    wt = wt.reshape(groups, c_out // groups, *wt.shape[1:-1], c_in_g)
    wt = wt.permute(0, nd + 2, 1, *range(2, nd + 2))
    wt = wt.reshape(groups * c_in_g, c_out // groups, *wt.shape[3:])
    out = _CONV_T[nd](xt, wt, None, _per_dim(stride, nd, "stride"),
                      _per_dim(padding, nd, "padding"),
                      _per_dim(output_padding, nd, "output_padding"), groups,
                      _per_dim(dilation, nd, "dilation"))
    return _wrap(_channels_last(out, nd), dt)


def conv_transpose1d(input: array, weight: array, /, stride: int = 1,  # noqa: A002
                     padding: int = 0, dilation: int = 1, output_padding: int = 0,
                     groups: int = 1, *, stream=None) -> array:
    """Transposed 1-d convolution (the gradient of conv1d with respect to its input)."""
    return _conv_transpose(1, "conv_transpose1d", input, weight, stride, padding, dilation,
                           output_padding, groups)


def conv_transpose2d(input: array, weight: array, /, stride=1, padding=0,  # noqa: A002
                     dilation=1, output_padding=0, groups: int = 1, *,
                     stream=None) -> array:
    return _conv_transpose(2, "conv_transpose2d", input, weight, stride, padding, dilation,
                           output_padding, groups)


def conv_transpose3d(input: array, weight: array, /, stride=1, padding=0,  # noqa: A002
                     dilation=1, output_padding=0, groups: int = 1, *,
                     stream=None) -> array:
    return _conv_transpose(3, "conv_transpose3d", input, weight, stride, padding, dilation,
                           output_padding, groups)


__all__ = ["conv1d", "conv2d", "conv3d", "conv_general", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]
