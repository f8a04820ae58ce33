"""MLX's convolution geometry: the checks `conv_general` runs on its operands and
parameters (in MLX's order, with its messages) and the output shape they give.

Every MLX convolution (conv1d/2d/3d, the transposes, conv_general) ends in one general
convolution with per-axis vectors: stride, low and high padding, kernel and input
dilation. A vector of one entry stands for every spatial axis (so `conv1d` of a 4-d
input is a 2-d convolution); negative padding crops the input instead.
"""

from __future__ import annotations

from dataclasses import dataclass


def _vec(values) -> str:
    return "(" + ",".join(str(v) for v in values) + ")"


@dataclass(frozen=True)
class ConvPlan:
    """A checked convolution: per-axis parameters (one entry per spatial axis), the
    input window left after negative padding (`starts`, `stops` per spatial axis) and the
    output shape."""

    stride: tuple
    lo: tuple
    hi: tuple
    kernel_dilation: tuple
    input_dilation: tuple
    starts: tuple
    stops: tuple
    out_shape: tuple


def _check_operands(x_shape: tuple, x_dtype, w_shape: tuple, nd: int, groups: int) -> None:
    if x_dtype.kind != "f":  # complex inputs too: MLX's floating excludes them
        raise ValueError(f"[conv] Invalid input array with type {x_dtype.name}. "
                         "Convolution currently only supports floating point types")
    if len(x_shape) != nd + 2:
        raise ValueError(f"[conv] Invalid input array with {len(x_shape)} dimensions for "
                         f"{nd}D convolution. Expected an array with {nd + 2} dimensions "
                         "following the format [N, ..., C_in].")
    if len(w_shape) != nd + 2:
        raise ValueError(f"[conv] Invalid weight array with {len(w_shape)} dimensions for "
                         f"{nd}D convolution. Expected an array with {nd + 2} dimensions "
                         "following the format [C_out, ..., C_in].")
    c_in = x_shape[-1]
    if c_in % groups:
        raise ValueError("[conv] The input channels must be divisible by the number of "
                         f"groups. Got input with shape {_vec(x_shape)} and {groups} groups.")
    if groups > 1 and w_shape[0] % groups:
        raise ValueError("[conv] If groups > 1, the output channels must be divisible by "
                         f"the number of groups. Got {w_shape[0]} output channels and "
                         f"{groups} groups.")
    if c_in != groups * w_shape[-1]:
        if groups == 1:
            raise ValueError("[conv] Expect the input channels in the input and weight array "
                             f"to match but got shapes - input: {_vec(x_shape)} and weight: "
                             f"{_vec(w_shape)}")
        raise ValueError(f"Given groups={groups} and weights of shape {_vec(w_shape)}, "
                         f"expected to have {groups * w_shape[-1]} input channels but got "
                         f"{c_in} input channels instead.")


def _spread(values, nd: int, fill: int) -> tuple:
    """A vector of at most one entry stands for every spatial axis."""
    values = tuple(values)
    return values if len(values) > 1 else (values[0] if values else fill,) * nd


def _truncated(num: int, den: int) -> int:
    """C++ integer division (rounds toward zero), which MLX's output size uses."""
    q = abs(num) // abs(den)
    return q if (num >= 0) == (den >= 0) else -q


def _crop_stop(size: int, hi: int) -> int:
    """Where a crop by high padding `hi` ends. MLX slices to `size + hi`, and its slice
    reads a stop below zero from the end, as a negative index (then clamps at 0): so
    cropping 9 of 5 keeps 1 element, while cropping 10 keeps none."""
    stop = size + min(hi, 0)
    return max(stop + size if stop < 0 else stop, 0)


def plan(x_shape: tuple, x_dtype, w_shape: tuple, stride, lo, hi, kernel_dilation,
         input_dilation, groups: int) -> ConvPlan:
    """Check a general convolution as MLX does; raise its ValueError or give its plan."""
    if groups != 1 and len(x_shape) not in (3, 4):
        raise ValueError("[conv] Can only handle groups != 1 in 1D or 2D convolutions.")
    nd = len(x_shape) - 2
    if not 1 <= nd <= 3:
        raise ValueError("[conv] Only works for inputs with 1-3 spatial dimensions. The "
                         "inputs must be in the format [N, ..., C_in]")
    _check_operands(x_shape, x_dtype, w_shape, nd, groups)
    stride, lo, hi = _spread(stride, nd, 1), _spread(lo, nd, 0), _spread(hi, nd, 0)
    kdil, idil = _spread(kernel_dilation, nd, 1), _spread(input_dilation, nd, 1)
    # negative padding crops the input (and counts as zero) before anything else looks
    # at it; MLX reads only the first nd entries here, whatever the vectors' lengths
    lo_nd, hi_nd = (lo + (0,) * nd)[:nd], (hi + (0,) * nd)[:nd]
    starts = tuple(min(max(-p, 0), s) for s, p in zip(x_shape[1:-1], lo_nd))
    stops = tuple(_crop_stop(s, p) for s, p in zip(x_shape[1:-1], hi_nd))
    stops = tuple(max(a, b) for a, b in zip(starts, stops))  # (a crop past the end: empty)
    shape = (x_shape[0], *(b - a for a, b in zip(starts, stops)), x_shape[-1])
    lo = tuple(max(p, 0) for p in lo_nd) + lo[nd:]
    hi = tuple(max(p, 0) for p in hi_nd) + hi[nd:]
    if len(stride) != nd:
        raise ValueError(f"[conv] Invalid strides {_vec(stride)} for {nd}D convolution.")
    if len(lo) != nd or len(hi) != nd:
        raise ValueError(f"[conv] Invalid padding {_vec(lo)} | {_vec(hi)} for {nd}D "
                         "convolution.")
    for name, values in (("kernel dilation", kdil), ("input dilation", idil)):
        if len(values) != nd:
            raise ValueError(f"[conv] Invalid {name} {_vec(values)} for {nd}D convolution.")
    out = [shape[0]]
    for axis in range(nd):
        if kdil[axis] <= 0:
            raise ValueError("[conv] Kernel dilation sizes must be positive. Got kernel "
                             f"dilation {_vec(kdil)}.")
        if idil[axis] <= 0:
            raise ValueError("[conv] Input dilation sizes must be positive. Got input "
                             f"dilation {_vec(idil)}.")
        if stride[axis] <= 0:
            raise ValueError(f"[conv] Stride sizes must be positive. Got strides "
                             f"{_vec(stride)}.")
        k = 1 + kdil[axis] * (w_shape[axis + 1] - 1)
        n = 1 + idil[axis] * (shape[axis + 1] - 1)
        size = _truncated(n + lo[axis] + hi[axis] - k, stride[axis]) + 1
        if size <= 0:
            raise ValueError(
                "[conv] Spatial dimensions of input after padding cannot be smaller than "
                f"weight spatial dimensions. Got error at axis {axis + 1} for input with "
                f"shape {_vec(shape)}, padding low {_vec(lo)}, padding high {_vec(hi)}, "
                f"and weight of shape {_vec(w_shape)}.")
        out.append(size)
    out.append(w_shape[0])
    return ConvPlan(stride, lo, hi, kdil, idil, starts, stops, tuple(out))
