"""MLX's convolutions, channels last: inputs (N, *spatial, C_in), weights
(C_out, *kernel, C_in / groups) (transposed convolutions: the same layout), results
(N, *spatial, C_out). Each moves the channels to where ember's (PyTorch's) convolution
wants them, runs it, and moves them back, so gradients are ember's convolution VJPs.
Like MLX, these cross-correlate; `conv_general(flip=True)` convolves."""

from __future__ import annotations

import ember as E
import ember.nn.functional as F

from . import _conv_checks as _checks
from . import _dtypes as D
from ._array import _wrap, array, cast

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _vector(v) -> list:
    """MLX's bindings: an int is a one-entry vector (it then stands for every axis)."""
    return [v] if isinstance(v, int) else list(v)


def _per_dim(v, nd: int) -> list:
    """conv2d/conv3d's bindings: an int repeated nd times, a tuple as given."""
    return [v] * nd if isinstance(v, int) else list(v)


def _channels_last(t, nd: int):
    return t.permute(0, *range(2, nd + 2), 1)


def _channels_first(t, nd: int):
    """A channels-last operand viewed channels first. With one channel that view is also
    row-major, and its strides say channels-last too (PyTorch's rule, which ember's
    convolution follows): it takes the row-major strides, the memory being the same, so
    that the convolution runs its row-major path, as it did before it read such strides as
    PyTorch does (the course's one-channel CNN trains to MLX's numbers within 1e-5 on it,
    within 1e-2 on the channels-last one)."""
    t = t.permute(0, nd + 1, *range(1, nd + 1))
    return t.reshape(t.shape) if t.shape[1] == 1 else t


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


def _general(x: array, w: array, stride, lo, hi, kernel_dilation, input_dilation,
             groups: int, flip: bool) -> array:
    """MLX's general convolution: checked as MLX checks it, then run channels first
    through ember's convolution."""
    p = _checks.plan(x.shape, x.dtype, w.shape, stride, lo, hi, kernel_dilation,
                     input_dilation, groups)
    nd = x.ndim - 2
    dt = D.promote_types(x.dtype, w.dtype)
    cropped_away = any(b <= a for a, b in zip(p.starts, p.stops))  # only padding is left
    if 0 in p.out_shape or x.size == 0 or w.size == 0 or cropped_away:
        return _wrap(E.zeros(p.out_shape, dtype=dt.carrier), dt)
    xt = cast(x._t, x.dtype, dt)
    if any(p.starts) or p.stops != x.shape[1:-1]:  # negative padding crops
        xt = xt[(slice(None), *(slice(a, b) for a, b in zip(p.starts, p.stops)))]
    xt = _channels_first(xt, nd)
    wt = _channels_first(cast(w._t, w.dtype, dt), nd)
    xt = _dilate(xt, p.input_dilation)
    if flip:
        wt = E.flip(wt, dims=tuple(range(2, nd + 2)))
    # NOTE: MLX sizes the output with C++ division (toward zero): a last window that
    # hangs past the padded input still counts there (MLX reads past the input, whose
    # values are undefined); here zeros fill it, so ember's convolution accepts it
    hi = list(p.hi)
    for axis in range(nd):
        k = 1 + p.kernel_dilation[axis] * (wt.shape[axis + 2] - 1)
        need = (p.out_shape[axis + 1] - 1) * p.stride[axis] + k
        hi[axis] += max(0, need - (xt.shape[axis + 2] + p.lo[axis] + hi[axis]))
    pad = p.lo
    if tuple(hi) != p.lo:  # ember's convolution pads both sides alike: pad the rest here
        xt, pad = F.pad(xt, [q for pair in reversed(list(zip(p.lo, hi))) for q in pair]), 0
    out = _CONV[nd](xt, wt, None, p.stride, pad, p.kernel_dilation, groups)
    return _wrap(_channels_last(out, nd), dt)


def conv_general(input: array, weight: array, /, stride=1, padding=0,  # noqa: A002
                 kernel_dilation=1, input_dilation=1, groups: int = 1, flip: bool = False,
                 *, stream=None) -> array:
    """N-d convolution with per-side padding (`padding=(low, high)` as two sequences),
    kernel and input dilation, groups, and optional kernel flip."""
    if isinstance(padding, tuple) and len(padding) == 2 and not isinstance(padding[0], int):
        lo, hi = list(padding[0]), list(padding[1])
    else:
        lo = hi = _vector(padding)
    return _general(input, weight, _vector(stride), lo, hi, _vector(kernel_dilation),
                    _vector(input_dilation), groups, flip)


def conv1d(input: array, weight: array, /, stride: int = 1, padding: int = 0,  # noqa: A002
           dilation: int = 1, groups: int = 1, *, stream=None) -> array:
    """1-d convolution of (N, L, C_in) by (C_out, K, C_in / groups)."""
    return _general(input, weight, [stride], [padding], [padding], [dilation], [1], groups,
                    False)


def conv2d(input: array, weight: array, /, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1, *, stream=None) -> array:
    """2-d convolution of (N, H, W, C_in) by (C_out, KH, KW, C_in / groups)."""
    pad = _per_dim(padding, 2)
    return _general(input, weight, _per_dim(stride, 2), pad, pad, _per_dim(dilation, 2),
                    [1, 1], groups, False)


def conv3d(input: array, weight: array, /, stride=1, padding=0, dilation=1,  # noqa: A002
           groups: int = 1, *, stream=None) -> array:
    """3-d convolution of (N, D, H, W, C_in) by (C_out, KD, KH, KW, C_in / groups)."""
    pad = _per_dim(padding, 3)
    return _general(input, weight, _per_dim(stride, 3), pad, pad, _per_dim(dilation, 3),
                    [1, 1, 1], groups, False)


def _conv_transpose(x: array, w: array, stride: list, padding: list, dilation: list,
                    output_padding: list, groups: int) -> array:
    """A transposed convolution. MLX runs it as a general convolution (flipped kernel,
    input dilated by the stride, padding from the kernel's extent); that convolution's
    checks give MLX's errors here, and ember's transposed convolution the values."""
    if min(x.ndim, w.ndim) <= len(stride):
        raise IndexError("SmallVector out of range.")  # MLX reads the missing axis's size
    lo, hi = [], []
    for i, (s, p, d, op) in enumerate(zip(stride, padding, dilation, output_padding)):
        k = 1 + d * (w.shape[1 + i] - 1)
        lo.append(k - p - 1)
        full = (x.shape[1 + i] - 1) * s - 2 * p + k
        hi.append(full - (1 + s * (x.shape[1 + i] - 1)) + p + op)
    if min(lo + hi) < 0 or min(output_padding) < 0:
        # padding past the kernel's extent, or a negative output padding: MLX's general
        # convolution crops the (undilated) input there, which ember's (PyTorch's)
        # transposed convolution cannot express
        return _general(x, w, [1] * len(stride), lo, hi, dilation, stride, groups, True)
    p = _checks.plan(x.shape, x.dtype, w.shape, [1] * len(stride), lo, hi, dilation,
                     stride, groups)
    nd = x.ndim - 2
    dt = D.promote_types(x.dtype, w.dtype)
    cropped_away = any(b <= a for a, b in zip(p.starts, p.stops))  # only padding is left
    if 0 in p.out_shape or x.size == 0 or w.size == 0 or cropped_away:
        return _wrap(E.zeros(p.out_shape, dtype=dt.carrier), dt)
    xt = cast(x._t, x.dtype, dt).permute(0, nd + 1, *range(1, nd + 1))
    wt = cast(w._t, w.dtype, dt)
    # MLX (C_out, *k, C_in/g) -> ember (C_in, C_out/g, *k), group by group
    c_out, c_in_g = wt.shape[0], wt.shape[-1]
    wt = wt.reshape(groups, c_out // groups, *wt.shape[1:-1], c_in_g)
    wt = wt.permute(0, nd + 2, 1, *range(2, nd + 2))
    wt = wt.reshape(groups * c_in_g, c_out // groups, *wt.shape[3:])
    stride, padding, output_padding, dilation = (
        (v * nd if len(v) == 1 else v) for v in (stride, padding, output_padding, dilation))
    if all(op < max(s, d) for op, s, d in zip(output_padding, stride, dilation)):
        out = _CONV_T[nd](xt, wt, None, stride, padding, output_padding, groups, dilation)
    else:
        out = _padded_transpose(xt, wt, stride, padding, output_padding, dilation, groups)
    return _wrap(_channels_last(out, nd), dt)


def _padded_transpose(xt, wt, stride, padding, output_padding, dilation, groups: int):
    """A transposed convolution whose output padding reaches the stride (and dilation),
    which ember's (PyTorch's) refuses and MLX's general convolution computes: the
    uncropped result, cut to [padding, padding + size), the rows past it zeros (no input
    reaches them)."""
    nd = len(stride)
    out = _CONV_T[nd](xt, wt, None, stride, 0, 0, groups, dilation)
    cut, extra = [slice(None), slice(None)], []
    for i, (p, op) in enumerate(zip(padding, output_padding)):
        full = out.shape[2 + i]  # (n - 1) * stride + dilated kernel
        cut.append(slice(p, min(full - p + op, full)))
        extra.append(max(0, op - p))
    out = out[tuple(cut)]
    return F.pad(out, [q for e in reversed(extra) for q in (0, e)]) if any(extra) else out


def conv_transpose1d(input: array, weight: array, /, stride: int = 1,  # noqa: A002
                     padding: int = 0, dilation: int = 1, output_padding: int = 0,
                     groups: int = 1, *, stream=None) -> array:
    """Transposed 1-d convolution (the gradient of conv1d with respect to its input)."""
    return _conv_transpose(input, weight, [stride], [padding], [dilation], [output_padding],
                           groups)


def conv_transpose2d(input: array, weight: array, /, stride=1, padding=0,  # noqa: A002
                     dilation=1, output_padding=0, groups: int = 1, *,
                     stream=None) -> array:
    return _conv_transpose(input, weight, *(_per_dim(v, 2) for v in (
        stride, padding, dilation, output_padding)), groups)


def conv_transpose3d(input: array, weight: array, /, stride=1, padding=0,  # noqa: A002
                     dilation=1, output_padding=0, groups: int = 1, *,
                     stream=None) -> array:
    return _conv_transpose(input, weight, *(_per_dim(v, 3) for v in (
        stride, padding, dilation, output_padding)), groups)


__all__ = ["conv1d", "conv2d", "conv3d", "conv_general", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]
