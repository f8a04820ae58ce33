"""`fused_moving_avg_obs_fake_quant`: a moving-average min/max observer, the quantisation
parameters it implies, and fake quantisation, in one call (the op behind QAT's default
`FusedMovingAvgObsFakeQuantize`).

The observer's running min / max and the scale / zero point tensors are updated in place.
The parameters follow PyTorch's `ChooseQuantizationParams` step by step (float and double
as it mixes them): the range is widened to contain 0, a scale of 0 becomes 0.1, a scale
below 6.1e-5 is raised to it with the range stretched to match, and the zero point comes
from whichever end adds smaller terms, nudged to an integer half to even.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from ._arg_parser_text import not_tensor
from ._common import type_name
from .fake_quant import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine
from .registry import rename_node

_F32 = np.float32
_SMALL_SCALE = _F32(6.1e-5)
_INT32_MIN = -(2 ** 31)
_NODE = "FusedMovingAvgObsFqHelperBackward0"


def choose_qparams(lo: float, hi: float, qmin: int, qmax: int,
                   symmetric: bool) -> tuple[float, int]:
    """(scale, zero point) for the float32 range [lo, hi], as PyTorch's
    `ChooseQuantizationParams`: the scale a double, the zero point an int32."""
    lo, hi = _F32(lo), _F32(hi)
    if symmetric and lo < 0 < hi:
        s_min = -((qmax - qmin) // 2 + 1)
        s_max = (qmax - qmin) // 2
        with np.errstate(all="ignore"):
            step = float(max(abs(lo / _F32(s_min)), abs(hi / _F32(s_max))))
            lo, hi = _F32(step * s_min), _F32(step * s_max)
    # NOTE: std::min / std::max keep NaN in their first argument
    lo = lo if not _F32(0) < lo else _F32(0)
    hi = hi if not hi < _F32(0) else _F32(0)
    with np.errstate(all="ignore"):
        scale = (float(hi) - float(lo)) / (qmax - qmin) if qmax != qmin else (
            math.copysign(math.inf, float(hi) - float(lo)) if hi != lo else math.nan)
        if _F32(scale) == 0 or math.isinf(_F32(1) / _F32(scale)):
            scale = 0.1
        if scale < _SMALL_SCALE:
            old = _F32(scale)
            scale = float(_SMALL_SCALE)
            if lo == 0:
                hi = _SMALL_SCALE * _F32(qmax - qmin)
            elif hi == 0:
                lo = -_SMALL_SCALE * _F32(qmax - qmin)
            else:
                amp = _SMALL_SCALE / old
                lo, hi = lo * amp, hi * amp
        from_min = qmin - float(lo) / scale
        from_max = qmax - float(hi) / scale
        err_min = abs(qmin) - abs(float(lo) / scale)
        err_max = abs(qmax) - abs(float(hi) / scale)
    zp = from_min if err_min < err_max else from_max
    if symmetric and lo < 0 < hi:
        zp = (qmin + qmax) / 2
    if zp < qmin:
        return scale, qmin
    if zp > qmax:
        return scale, qmax
    # NOTE: NaN becomes what x86's conversion to int32 gives
    return scale, (int(np.rint(zp)) if math.isfinite(zp) else _INT32_MIN)


def _observe(y: Tensor, running_min: Tensor, running_max: Tensor, c: float,
             per_row: bool, axis: int) -> None:
    """Move the running min / max towards `y`'s (per row with `per_row`), in float32;
    an infinite running value (the start) takes the batch's value."""
    if per_row and axis != 0:
        raise RuntimeError("Per-channel FakeQuant in fused_moving_avg_obs_fake_quant is only "
                           "supported on axis == 0")
    lo, hi = y.aminmax(dim=1) if per_row else y.aminmax()
    for t in (lo, running_min, running_max):
        if t._dtype is not dt.float32:
            raise RuntimeError(f"expected scalar type Float but found {type_name(t._dtype)}")
    c32 = float(_F32(c))
    for run, cur in ((running_min, lo), (running_max, hi)):
        moved = run + (cur - run) * c32
        run.copy_(cur.where(run.isinf(), moved).reshape(run.shape))


def fused_moving_avg_obs_fake_quant(input: Tensor, observer_on: Tensor, fake_quant_on: Tensor,
                                    running_min: Tensor, running_max: Tensor, scale: Tensor,
                                    zero_point: Tensor, averaging_const: float, quant_min: int,
                                    quant_max: int, ch_axis: int, per_row_fake_quant: bool = False,
                                    symmetric_quant: bool = False) -> Tensor:
    """Update a moving-average min/max observer with `input` (when `observer_on`), recompute
    `scale` / `zero_point` from it in place, and fake-quantise `input` (when
    `fake_quant_on`; otherwise return a copy). `per_row_fake_quant` keeps one range and
    one pair of parameters per slice along `ch_axis` (0 only)."""
    names = ("input", "observer_on", "fake_quant_on", "running_min", "running_max", "scale",
             "zero_point")
    args = (input, observer_on, fake_quant_on, running_min, running_max, scale, zero_point)
    for pos, (name, t) in enumerate(zip(names, args), 1):
        if not isinstance(t, Tensor):
            raise not_tensor("fused_moving_avg_obs_fake_quant", name, pos, t)
    if input.numel() == 0:  # (nothing is observed or updated)
        return input.clone()
    qmin, qmax, axis = int(quant_min), int(quant_max), int(ch_axis)
    if axis >= input.ndim:
        raise RuntimeError("Error in fused_moving_avg_obs_fake_quant_cpu: ch_axis must be < "
                           "self.dim()")
    with grad_mode.no_grad():
        observe = int(observer_on.item())
        if per_row_fake_quant:
            y = input
            if input.ndim != 2:
                order = list(range(input.ndim))
                order[axis], order[0] = 0, axis
                y = input.permute(order).flatten(1)
            size = input.size(axis)
            if running_min.numel() == 0:
                for t, fill in ((running_min, math.inf), (running_max, -math.inf)):
                    t.resize_(size).fill_(fill)
                scale.resize_(size)
                zero_point.resize_(size)
            elif running_min.numel() != size:  # (PyTorch writes past the end, then refuses)
                raise RuntimeError("dimensions of scale and zero-point are not consistent "
                                   "with input tensor")
            if observe:
                _observe(y, running_min, running_max, averaging_const, True, axis)
        elif observe:
            _observe(input, running_min, running_max, averaging_const, False, axis)
        fake_quant = int(fake_quant_on.item())
        if fake_quant:
            lows, highs = running_min.tolist(), running_max.tolist()
            if not per_row_fake_quant:
                lows, highs = lows[:1], highs[:1]
            pairs = [choose_qparams(lo, hi, qmin, qmax, bool(symmetric_quant))
                     for lo, hi in zip(lows, highs)]
            n = len(pairs)
            scale.reshape(-1)[:n].copy_(scale.new_tensor([p[0] for p in pairs]))
            zero_point.reshape(-1)[:n].copy_(zero_point.new_tensor([p[1] for p in pairs]))
    if not fake_quant:
        out = input.clone()  # (PyTorch's mask is all True: the gradient passes unchanged)
    elif per_row_fake_quant:
        out = fake_quantize_per_channel_affine(input, scale, zero_point, axis, qmin, qmax)
    else:
        out = fake_quantize_per_tensor_affine(input, scale, zero_point, qmin, qmax)
    if out.grad_fn is not None:
        rename_node(out.grad_fn, _NODE)
    return out


TENSOR_METHODS: dict = {}

__all__ = ["fused_moving_avg_obs_fake_quant"]
