"""Fractional max pooling (Graham, 2014) as PyTorch computes it: each plane's windows start
at pseudo-random offsets drawn from one uniform sample per spatial dim (`_random_samples`,
`torch.rand` of shape (N, C, nd) when not given), each window a max over `kernel_size`.

The window starts follow ATen's `generate_intervals` in the samples' precision, and the
winner of each window its scan (row by row, a strictly larger value or any NaN takes
over). Both are read off the data on the host; the values are then one gather from the
input, so the gradient is gather's (a scatter-add to the winners, as ATen's backward).
"""

from __future__ import annotations

import numpy as np

import ember as E

from ..._tensor import Tensor
from ...ops._common import type_name
from ...ops.double_backward import double_backward
from ...ops.registry import rename_node

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

# per pooled dim: its word in the messages; the sample that places it (ATen's order)
_DIMS = {2: (("height", "width"), (1, 0)), 3: (("time", "height", "width"), (0, 1, 2))}


def _tuple(v, nd: int) -> tuple:
    return (v,) * nd if isinstance(v, int) else tuple(v)


def _output_size(input: Tensor, nd: int, output_size, output_ratio) -> tuple:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return _tuple(output_size, nd)
    if nd == 2 and len(output_ratio) > 2:  # (a bare float fails len() in 2-d, as in PyTorch)
        raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of "
                         "Ints.")
    ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else \
        tuple(output_ratio)
    return tuple(int(input.size(i - nd) * ratio[i]) for i in range(nd))


def _checks(input: Tensor, nd: int, k: tuple, out: tuple, samples: Tensor) -> None:
    """ATen's checks, in its order: the argument lengths, the input's rank and sizes, the
    windows against the input (3-d ones must leave room: strictly smaller), the samples,
    then the dtype. The 2-d and 3-d kernels word them slightly differently."""
    name = f"fractional_max_pool{nd}d"
    fn = f"{name}()" if nd == 2 else f"{name}_out()"
    tuple_of = "tuple of Ints" if nd == 2 else "tuple of three Ints"
    if len(k) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or {tuple_of}")
    if len(out) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or {tuple_of}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for i in range(1, input.dim()):
        if input.size(i) <= 0:
            raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {i} "
                               "being empty.")
    spatial = input.shape[-nd:]
    for word, ki, oi, ni in zip(_DIMS[nd][0], k, out, spatial):
        if oi + ki - 1 > ni - (nd == 3):
            raise RuntimeError(f"{fn}: pool {word} {ki} too large relative to input {word} "
                               f"{ni}")
    batched = input.dim() == nd + 2
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    if samples.size(0) < (input.size(0) if batched else 1):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.size(1) != input.size(-nd - 1):
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.size(2) != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.size(2)}.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{name}_out_frame" not implemented for '
                                  f"'{type_name(input.dtype)}'")


def _starts(samples: np.ndarray, n_in: int, n_out: int, k: int) -> np.ndarray:
    """ATen's `generate_intervals` for every plane at once: (planes, n_out) window starts,
    computed in the samples' precision."""
    t = samples.dtype.type
    starts = np.zeros(samples.shape + (n_out,), np.int64)
    if n_out > 1:
        alpha = t(t(n_in - k) / t(n_out - 1))
        i = np.arange(n_out - 1).astype(t)
        starts[..., :-1] = ((i + samples[..., None]) * alpha).astype(t).astype(np.int64) - \
            (samples * alpha).astype(t).astype(np.int64)[..., None]
    if n_out > 0:
        starts[..., -1] = n_in - k
    return starts


def _winners(x: np.ndarray, nd: int, k: tuple, out: tuple, samples: np.ndarray) -> np.ndarray:
    """Flat index (within its plane) of each window's winner: (N, C, *out)."""
    spatial = x.shape[2:]
    planes = x.reshape(x.shape[0], x.shape[1], int(np.prod(spatial)))
    strides = [int(np.prod(spatial[i + 1:])) for i in range(nd)]
    flat = np.zeros(x.shape[:2] + tuple(out), np.int64)  # each window's first position
    offsets = np.zeros(tuple(k), np.int64)  # a window's positions, relative, in scan order
    for i in range(nd):
        s = _starts(samples[..., _DIMS[nd][1][i]], spatial[i], out[i], k[i])
        shape = x.shape[:2] + tuple(out[j] if j == i else 1 for j in range(nd))
        flat = flat + (s * strides[i]).reshape(shape)
        offsets = offsets + (np.arange(k[i]) * strides[i]).reshape(
            tuple(k[j] if j == i else 1 for j in range(nd)))
    taps = flat[..., None] + offsets.reshape(-1)  # (N, C, *out, K)
    if taps.shape[-1] == 0:  # (an empty window: its first position, as the scan leaves it)
        return flat
    per_plane = int(np.prod(taps.shape[2:]))
    vals = np.take_along_axis(planes, taps.reshape(planes.shape[:2] + (per_plane,)), 2)
    vals = vals.reshape(taps.shape)
    nan = np.isnan(vals)
    # the scan keeps the first strict maximum, unless a NaN comes: then the last NaN
    last_nan = taps.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    pick = np.where(nan.any(-1), last_nan, np.argmax(np.where(nan, -np.inf, vals), -1))
    return np.take_along_axis(taps, pick[..., None], -1)[..., 0]


def _fractional(nd: int, input: Tensor, kernel_size, output_size, output_ratio,
                samples: Tensor | None):
    out = _output_size(input, nd, output_size, output_ratio)
    if samples is None:
        n = 1 if input.dim() == nd + 1 else input.size(0)
        samples = E.rand(n, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    k = _tuple(kernel_size, nd)
    _checks(input, nd, k, out, samples)
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    if any(o < 0 for o in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {list(x.shape[:2]) + list(out)}")
    n, c = x.shape[:2]
    s = samples.detach()[:n].numpy()
    a = x.detach().float().numpy() if x.dtype in (E.float16, E.bfloat16) else x.detach().numpy()
    idx = E.tensor(_winners(a, nd, k, out, s), dtype=E.int64)
    if 0 in k:  # (an empty window's maximum is the scan's start, -inf)
        values = E.full((n, c, *out), -float("inf"), dtype=x.dtype, device=x.device)
    else:
        values = x.flatten(2).gather(2, idx.flatten(2)).view(n, c, *out)
    if values.grad_fn is not None:
        rename_node(values.grad_fn, f"FractionalMaxPool{nd}DBackward0")
        double_backward(values, x)  # (PyTorch's derivative kernel takes the input)
    return (values, idx) if batched else (values.squeeze(0), idx.squeeze(0))


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None):
    """(values, indices) of 2-d fractional max pooling, whatever `return_indices` says."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """Max over `kernel_size` windows at pseudo-random strides, to `output_size` (or the
    input's size times `output_ratio`); with `return_indices`, also each winner's flat
    index in its plane (for max_unpool2d)."""
    res = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return res if return_indices else res[0]


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None):
    """(values, indices) of 3-d fractional max pooling, whatever `return_indices` says."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """The 3-d form of fractional_max_pool2d, over (T, H, W)."""
    res = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return res if return_indices else res[0]
