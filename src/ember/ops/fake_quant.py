"""Fake quantisation: `fake_quantize_per_tensor_affine` and `fake_quantize_per_channel_affine`.

Each value is quantised to an integer level and straight back to floating point,
`(clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale`, with
PyTorch's CPU arithmetic: `x` is multiplied by the float32 reciprocal of the scale, rounded
half to even, and the level times the scale is formed in double and rounded once to float32
(kept in double for a float64 input per channel), then to the input's dtype. The gradient is
the straight-through estimator masked to the values whose level fell inside
[quant_min, quant_max].

Both are composites: the values are computed without a graph, and the gradient comes from
subtracting an exact +0 whose derivative is the mask (`fq` keeps its sign of zero); the
last node takes PyTorch's name.
"""

from __future__ import annotations

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import transform_active
from .._tensor import Tensor
from ._common import type_name
from .registry import rename_node

_ORDER_MSG = "`quant_min` should be less than or         equal to `quant_max`."
_ZERO_POINT_MSG = "`zero_point` must be between `quant_min` and `quant_max`."
_FLOATS = (dt.float16, dt.bfloat16, dt.float32, dt.float64)


def _check_input(x: Tensor, kernel: str) -> None:
    if x._dtype not in _FLOATS:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(x._dtype)}\'')


def _levels(x: Tensor, scale: Tensor, zero_point: Tensor, quant_min: int, quant_max: int,
            *, float_zero_point: bool, double_out: bool,
            int64_levels: bool = False) -> tuple[Tensor, Tensor]:
    """(fake-quantised values in x's dtype, mask of levels within range), without a graph.

    A float64 `x` is scaled in double except with a float zero point; the level times the
    scale is a double, rounded to float32 first unless `double_out` (as PyTorch's kernels).
    With `int64_levels` (the per-channel kernel) a level is converted to int64 before it is
    clamped, so one no int64 holds (inf, or beyond 2**63) becomes quant_min as NaN does.
    """
    with grad_mode.no_grad():
        double = x._dtype is dt.float64
        work = dt.float64 if double and not float_zero_point else dt.float32
        xc = x.detach().to(work)
        inv = scale.to(dt.float32).reciprocal()  # NOTE: PyTorch's `float inv_scale = 1.0f / scale`
        if float_zero_point:  # rounded after adding the offset, as PyTorch's float-offset kernel
            zp = zero_point.to(work)
            q = (xc * inv + zp).round()
        else:
            zp = zero_point.to(dt.int64).to(work)
            q = (xc * inv).round() + zp
        mask = (q >= quant_min) & (q <= quant_max)
        # NOTE: NaN becomes the integer C's float->int64 conversion gives (INT64_MIN): quant_min
        if int64_levels:  # NOTE: x86 converts what int64 cannot hold to INT64_MIN
            q = q.masked_fill(~(q.abs() < 2.0 ** 63), float(quant_min))
        q = q.nan_to_num(nan=float(quant_min)).clamp(quant_min, quant_max).to(dt.float64)
        zp64 = zero_point.to(dt.float64) if float_zero_point else zp.to(dt.float64)
        out = (q - zp64) * scale.to(work).to(dt.float64)
        # NOTE: a 16-bit result is rounded from float, as c10 converts a double to half
        out = (out if double and double_out else out.to(dt.float32)).to(x._dtype)
    return out, mask


def _with_gradient(x: Tensor, values: Tensor, mask: Tensor, name: str) -> Tensor:
    """`values`, with the derivative `mask` with respect to `x` when x needs a gradient."""
    if not (x.requires_grad and grad_mode.is_grad_enabled()) and not transform_active():
        return values  # (under ember.func transforms x is traced, not marked requires_grad)
    # NOTE: PyTorch's backward is `grad * mask`: a masked-out gradient is a signed zero, or
    # NaN where grad is NaN. `finite - finite.detach()` is an exact +0 with derivative 1
    # (times isfinite, and mask is False where x is not finite)
    finite = x.nan_to_num(0.0, 0.0, 0.0)
    out = values - (finite.detach() - finite) * mask.to(x._dtype)
    rename_node(out.grad_fn, name)
    return out


def _refuse_grad(t, arg: str) -> None:
    if isinstance(t, Tensor) and t.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(
            "The function '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams' is not "
            f"differentiable with respect to argument '{arg}'. This input cannot have "
            "requires_grad True.")


_OVERLOADS = (("Tensor input", "Tensor scale", "Tensor zero_point", "int quant_min",
               "int quant_max"),
              ("Tensor input", "float scale", "int zero_point", "int quant_min",
               "int quant_max"))


def _fits(value, kind: str) -> bool:
    if kind == "Tensor":
        return isinstance(value, Tensor)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool)


def _check_number_overload(*args) -> None:
    """PyTorch's TypeError when the numbers given for scale / zero point fit no overload."""
    if all(_fits(a, p.split()[0]) for a, p in zip(args, _OVERLOADS[1])):
        return
    got = ", ".join(type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args)
    lines = [f"fake_quantize_per_tensor_affine() received an invalid combination of arguments "
             f"- got ({got}), but expected one of:"]
    for params in _OVERLOADS:
        marked = ", ".join(n if _fits(a, p.split()[0]) else f"!{n}!"
                           for a, p, n in zip(args, params, got.split(", ")))
        lines.append(f" * ({', '.join(params)})")
        lines.append("      didn't match because some of the arguments have invalid types: "
                     f"({marked})")
    raise TypeError("\n".join(lines) + "\n")


def fake_quantize_per_tensor_affine(input: Tensor, scale, zero_point, quant_min: int,
                                    quant_max: int) -> Tensor:
    """`input` quantised with one scale and zero point and dequantised again."""
    quant_min, quant_max = int(quant_min), int(quant_max)
    tensor_qparams = isinstance(scale, Tensor)
    if tensor_qparams:
        _refuse_grad(scale, "scale")
        _refuse_grad(zero_point, "zero_point")
        s = float(scale.item())
        zp = int(zero_point.item()) if isinstance(zero_point, Tensor) else int(zero_point)
    else:
        _check_number_overload(input, scale, zero_point, quant_min, quant_max)
        s, zp = float(scale), int(zero_point)
    if quant_min > quant_max:
        raise RuntimeError(_ORDER_MSG)
    # NOTE: only the overload with Python numbers checks the zero point's range
    if not tensor_qparams and not quant_min <= zp <= quant_max:
        raise RuntimeError(_ZERO_POINT_MSG)
    _check_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    values, mask = _levels(input, input.new_tensor(s, dtype=dt.float32),
                           input.new_tensor(zp, dtype=dt.int64), quant_min, quant_max,
                           float_zero_point=False, double_out=False)
    name = ("FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0" if tensor_qparams
            else "FakeQuantizePerTensorAffineCachemaskBackward0")
    return _with_gradient(input, values, mask, name)


def _check_channel_qparams(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int,
                           quant_min: int, quant_max: int, *, clamped: bool = False) -> None:
    """PyTorch's checks, in its order (`clamped`: the zero points were clamped into range,
    so their range check, which reads their values, cannot fail)."""
    if scale._dtype not in (dt.float32, dt.bfloat16):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {type_name(scale._dtype)}")
    if zero_point._dtype not in (dt.int32, dt.float32, dt.float16):
        raise RuntimeError("Zero-point must be Int32, Float or Half, found "
                           f"{type_name(zero_point._dtype)}")
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.size(axis):
        raise RuntimeError(
            "dimensions of scale and zero-point are not consistent with input tensor")
    if quant_min > quant_max:
        raise RuntimeError(_ORDER_MSG)
    if not clamped and not zero_point._dtype.is_floating_point and zero_point.numel() and not (
            int(zero_point.min().item()) >= quant_min
            and int(zero_point.max().item()) <= quant_max):
        raise RuntimeError(_ZERO_POINT_MSG)
    if not 0 <= axis <= input.ndim:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")


def fake_quantize_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor,
                                     axis: int, quant_min: int, quant_max: int) -> Tensor:
    """`input` quantised with a scale and zero point per slice along `axis`, and
    dequantised again."""
    quant_min, quant_max, axis = int(quant_min), int(quant_max), int(axis)
    _check_channel_qparams(input, scale, zero_point, axis, quant_min, quant_max)
    _check_input(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    shape = [1] * input.ndim
    shape[axis] = -1
    s = scale.detach().reshape(shape)
    zp = zero_point.detach().reshape(shape)
    values, mask = _levels(input, s, zp, quant_min, quant_max,
                           float_zero_point=zero_point._dtype.is_floating_point,
                           double_out=True, int64_levels=True)
    return _with_gradient(input, values, mask, "FakeQuantizePerChannelAffineCachemaskBackward0")


TENSOR_METHODS: dict = {}

__all__ = ["fake_quantize_per_channel_affine", "fake_quantize_per_tensor_affine"]
