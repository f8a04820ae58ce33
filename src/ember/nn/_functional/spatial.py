"""Spatial functions of `ember.nn.functional`: convolution and pooling (from ember.ops),
padding, interpolation, unfold / fold and pixel shuffling.

Interpolation is separable: each resized dim is one matmul with an (out, in) weight
matrix built exactly as ATen computes its source indices and lambdas (in the
input's precision), so values match and gradients come from matmul's VJP.
"""

from __future__ import annotations

import math

import numpy as np

import ember as E

from ..._tensor import Tensor
from ...ops import nn_ops
from ...ops.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_input_grad_p,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
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
from ...ops.registry import apply, saves

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "pad", "interpolate", "upsample",
    "upsample_nearest", "upsample_bilinear", "unfold", "fold", "pixel_shuffle",
    "pixel_unshuffle", "max_unpool1d", "max_unpool2d", "local_response_norm",
    "channel_shuffle",
]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# --- pad ------------------------------------------------------------------------------


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    i = np.arange(-lo, n + hi)
    if mode == "reflect":
        period = 2 * (n - 1)
        j = np.abs(i) % period if period else np.zeros_like(i)
        return np.where(j >= n, period - j, j)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    return i % n  # circular


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the trailing dims by `pad` = (left_last, right_last, left_2nd_last, ...)."""
    pad = tuple(int(p) for p in pad)
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
    out = input
    for i in range(k):
        dim = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = input.shape[dim]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{dim} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        idx = E.tensor(_pad_index(n, lo, hi, mode), dtype=E.int64)
        out = out.index_select(dim, idx)
    # (PyTorch's reflection and replication pads keep their input for backward; its circular
    # pad is composed of slices and keeps nothing)
    return out if mode == "circular" else saves(out, input)


# --- interpolate ----------------------------------------------------------------------


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    o = np.arange(n_out)
    if not exact:
        if n_out == n_in:
            return o
        if n_out == 2 * n_in:
            return o >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    pos = (o.astype(np.float32) + np.float32(0.5)) * s if exact else o.astype(np.float32) * s
    return np.minimum(np.floor(pos).astype(np.int64), n_in - 1)


def _linear_matrix(n_in: int, n_out: int, scale, align_corners: bool, dtype) -> np.ndarray:
    """(out, in) weights of 1-d linear interpolation, computed in `dtype` as ATen does."""
    t = np.float64 if dtype == np.float64 else np.float32
    m = np.zeros((n_out, n_in), t)
    if n_out == n_in:
        np.fill_diagonal(m, 1)
        return m
    if align_corners:
        ratio = t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    else:
        ratio = t(1.0 / scale) if scale is not None and scale > 0 else t(n_in) / t(n_out)
    for o in range(n_out):
        if align_corners:
            src = ratio * t(o)
        else:
            src = max(ratio * (t(o) + t(0.5)) - t(0.5), t(0))
        i0 = min(int(math.floor(src)), n_in - 1)
        lam1 = min(max(src - t(i0), t(0)), t(1))
        i1 = i0 + (1 if i0 < n_in - 1 else 0)
        m[o, i0] += t(1) - lam1
        m[o, i1] += lam1
    return m


def _cubic_weights(t, dt):
    """The four cubic-convolution weights (A = -0.75) of the taps at -1, 0, 1, 2 for offset t,
    computed in `dt` as ATen computes them."""
    a = dt(-0.75)

    def near(x):  # |x| <= 1
        return ((a + dt(2)) * x - (a + dt(3))) * x * x + dt(1)

    def far(x):  # 1 < |x| < 2
        return ((a * x - dt(5) * a) * x + dt(8) * a) * x - dt(4) * a

    return far(t + dt(1)), near(t), near(dt(1) - t), far(dt(1) - t + dt(1))


def _cubic_matrix(n_in: int, n_out: int, scale, align_corners: bool, dtype) -> np.ndarray:
    """(out, in) weights of 1-d cubic interpolation, border pixels repeated outward."""
    t = np.float64 if dtype == np.float64 else np.float32
    m = np.zeros((n_out, n_in), t)
    if align_corners:
        ratio = t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    else:
        ratio = t(1.0 / scale) if scale is not None and scale > 0 else t(n_in) / t(n_out)
    for o in range(n_out):
        src = ratio * t(o) if align_corners else ratio * (t(o) + t(0.5)) - t(0.5)
        i0 = min(int(math.floor(src)), n_in - 1)
        lam = min(max(src - t(i0), t(0)), t(1))
        for k, w in enumerate(_cubic_weights(lam, t)):
            m[o, min(max(i0 - 1 + k, 0), n_in - 1)] += w
    return m


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims: nearest, nearest-exact, (bi/tri)linear, bicubic or area."""
    nd = input.dim() - 2
    if nd < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                         f"{input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | "
                         f"trilinear | area | nearest-exact (got {mode})")
    linear_modes = ("linear", "bilinear", "bicubic", "trilinear")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if align_corners is None:
        align_corners = False
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined" if size is None else
                         "only one of size or scale_factor should be defined")
    sp = tuple(input.shape[2:])
    if size is not None:
        out = (size,) * nd if isinstance(size, int) else tuple(size)
        if len(out) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions,"
                             f" but got input with spatial dimensions of {list(sp)} and output "
                             f"size of {list(out)}. Please provide input tensor in (N, C, d1, "
                             "d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        scales = (None,) * nd
    else:
        scales = (float(scale_factor),) * nd if isinstance(scale_factor, (int, float)) \
            else tuple(float(s) for s in scale_factor)
        out = tuple(int(math.floor(float(sp[i]) * scales[i])) for i in range(nd))
        if recompute_scale_factor:
            scales = (None,) * nd
    if mode in ("nearest", "nearest-exact"):
        x = input
        for i in range(nd):
            idx = _nearest_index(sp[i], out[i], scales[i], mode == "nearest-exact")
            x = x.index_select(2 + i, E.tensor(idx, dtype=E.int64))
        return x
    if mode == "area":
        return adaptive_avg_pool2d(input, out) if nd == 2 else \
            adaptive_avg_pool1d(input, out) if nd == 1 else _separable_area(input, out)
    if mode in linear_modes:
        expected = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}[mode]
        if nd != expected:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{expected + 2}D input")
        x = input
        for i in range(nd):
            make = _cubic_matrix if mode == "bicubic" else _linear_matrix
            m = make(sp[i], out[i], scales[i], align_corners, input.dtype.np)
            w = E.tensor(m, dtype=input.dtype)
            # (the other dims fold into the rows of one mm: a copy when the moved dim is not
            # last, so nothing of the input is saved, as PyTorch's upsample saves nothing)
            x = x.movedim(2 + i, -1)
            lead = x.shape[:-1]
            x = x.reshape(math.prod(lead), sp[i]).mm(w.t()).view(*lead, out[i])
            x = x.movedim(-1, 2 + i)
        return x
    raise NotImplementedError(f"Input Error: interpolation mode {mode} is not supported by "
                              "ember")


def _separable_area(input: Tensor, out) -> Tensor:
    from ...ops.pooling import adaptive_avg_pool_nd

    return adaptive_avg_pool_nd(input.dim() - 2, input, out)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- unfold / fold ----------------------------------------------------------------------


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _taps_weight(channels: int, k: tuple[int, int], dtype) -> Tensor:
    """(C*K, 1, kh, kw) one-hot weight: grouped conv with it is im2col."""
    kk = k[0] * k[1]
    w = np.zeros((channels * kk, 1) + tuple(k), dtype=np.float64)
    for c in range(channels):
        for t in range(kk):
            w[c * kk + t, 0, t // k[1], t % k[1]] = 1
    return E.tensor(w, dtype=dtype)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C * kh * kw, L) sliding blocks."""
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got "
                                  f"{input.dim()}D)")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    k = _pair(kernel_size)
    c = x.shape[1]
    w = _taps_weight(c, k, x.dtype)
    cols = conv2d(x, w, None, _pair(stride), _pair(padding), _pair(dilation), groups=c)
    cols = cols.reshape(x.shape[0], c * k[0] * k[1], math.prod(cols.shape[2:]))
    return cols if batched else cols.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im: sum sliding blocks (N, C * kh * kw, L) back into (N, C, H, W)."""
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    k = _pair(kernel_size)
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={tuple(k)}")
    c = x.shape[1] // kk
    out = _pair(output_size)
    st, pd, dl = _pair(stride), _pair(padding), _pair(dilation)
    blocks = tuple((out[i] + 2 * pd[i] - dl[i] * (k[i] - 1) - 1) // st[i] + 1 for i in range(2))
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={tuple(out)}, kernel_size={tuple(k)}, dilation="
                           f"{tuple(dl)}, padding={tuple(pd)}, stride={tuple(st)}, expected size "
                           f"of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    g = x.reshape(x.shape[0], c * kk, blocks[0], blocks[1])
    w = _taps_weight(c, k, x.dtype)
    res = apply(conv_input_grad_p, g, w, stride=st, padding=tuple((p, p) for p in pd),
                dilation=dl, groups=c, x_shape=(x.shape[0], c) + tuple(out))
    return res if batched else res.squeeze(0)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} is"
                           f" not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# --- unpooling, local response norm, channel shuffle ------------------------------------------


def _unpool_size(input: Tensor, kernel, stride, padding, output_size) -> list[int]:
    nd = len(kernel)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
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
    size = _unpool_size(input, kernel, stride, tup(padding), output_size)
    lead = tuple(input.shape[:-nd])
    plane = 1
    for n in size:
        plane *= n
    flat = input.reshape(lead + (-1,))
    out = E.zeros(lead + (plane,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, indices.reshape(lead + (-1,)), flat)
    return out.reshape(lead + tuple(size))


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """A partial inverse of max_pool2d: values go back to their argmax positions."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels) ** beta."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k).pow(beta)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave channels: (N, g * c, *) viewed as (N, g, c, *), transposed to (N, c, g, *)."""
    n, ch = input.shape[:2]
    rest = tuple(input.shape[2:])
    x = input.reshape((n, groups, ch // groups) + rest).transpose(1, 2)
    return x.reshape((n, ch) + rest)
