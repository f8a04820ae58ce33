"""Learnable fake quantisation (LSQ): `_fake_quantize_learnable_per_tensor_affine` and
`_fake_quantize_learnable_per_channel_affine`.

The forward pass is ordinary fake quantisation with the zero point rounded half to even
and clamped into [quant_min, quant_max]; the backward pass also gives gradients to the
scale and the zero point (Esser et al., "Learned Step Size Quantization"), each summed
over the elements and multiplied by `grad_factor`. The arithmetic follows PyTorch's CPU
kernels step by step in float32, including two quirks a program can see:

- the backward pass finds each level as `nearbyint(zero_point + x / scale)` (the forward
  pass rounds before adding the zero point), so a tie can land one level apart;
- per tensor, the backward pass takes the zero point as `trunc(zero_point + 0.5)` where the
  forward pass rounds it half to even (2.5 is 2 forward, 3 backward).

The backward pass has no derivative of its own, and it accepts float32 tensors only.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._tensor import Tensor
from .._view import broadcast_shapes
from ._arg_parser_text import not_tensor
from ._fma import fma
from .fake_quant import _ORDER_MSG, _check_channel_qparams, _check_input
from .registry import Member, apply, defjvp, defvjp, derivative_not_implemented
from .ternary import ternary_p

_F32 = np.float32
_FLOAT_ONLY = ("Expected {}_.scalar_type() == ScalarType::Float to be true, but got false.  "
               "(Could this error message be improved?  If so, please report an enhancement "
               "request to PyTorch.)")


def _forward_kernel(x, s, z, *, quant_min, quant_max, grad_factor, per_channel):
    """Fake quantisation as PyTorch's CPU kernels compute it: `x` times the float32
    reciprocal of the scale (in double for a float64 `x`), rounded half to even, plus the
    zero point (rounded half to even and clamped), clamped; the level minus the zero point
    times the scale formed in double and rounded to float32 (kept in double per channel
    for a float64 `x`). `s` and `z` broadcast against `x`."""
    z = np.clip(np.rint(z.astype(_F32) if not per_channel else z), quant_min, quant_max)
    s = s.astype(_F32)  # (per tensor PyTorch reads the scale as a float)
    double = x.dtype == np.float64
    work = np.float64 if double else _F32
    inv = (_F32(1) / s).astype(work)
    with np.errstate(all="ignore"):
        q = np.rint(x.astype(work) * inv) + z.astype(work)
        # NOTE: NaN becomes the integer C's float->int64 conversion gives (INT64_MIN):
        # quant_min; per channel the level is converted before the clamp, so also inf and
        # what is beyond 2**63 (per tensor those clamp to quant_max)
        lost = ~(np.abs(q) < 2.0 ** 63) if per_channel else np.isnan(q)
        q = np.clip(np.where(lost, quant_min, q), quant_min, quant_max)
        out = (q.astype(np.float64) - z.astype(np.float64)) * s.astype(work).astype(np.float64)
    if not (double and per_channel):
        out = out.astype(_F32)
    return out.astype(x.dtype)


def _factor_kernel(x, s, z, *, quant_min, quant_max, grad_factor, per_channel, which):
    """Float32 factors of PyTorch's backward kernel, per element, which the VJP multiplies
    the incoming gradient by in that kernel's order. A level `nearbyint(z + x / s)` inside
    [quant_min, quant_max] passes x's gradient (`which="inside"`: 1 or 0); the scale's
    gradient is `g * a * b * grad_factor`, with `a` the bound minus z outside the range and
    `(level - z) * s - x` inside, `b` 1 outside and `1 / s` inside."""
    if per_channel:
        z = np.clip(np.rint(z), quant_min, quant_max).astype(_F32)
    else:  # NOTE: PyTorch's backward: static_cast<int64_t>(zero_point + 0.5f), clamped
        z = np.trunc(np.clip(z.astype(_F32) + _F32(0.5), quant_min, quant_max))
    s = s.astype(_F32)
    shape = np.broadcast_shapes(x.shape, s.shape, z.shape)
    with np.errstate(all="ignore"):
        inv = _F32(1) / s
        lv = np.rint(z + x * inv)
        # NOTE: a level C's conversion to int64 cannot hold (NaN, inf, beyond 2**63)
        # becomes INT64_MIN on x86: below the range
        below = (lv < quant_min) | ~(np.abs(lv) < _F32(2.0 ** 63))
        above = lv > quant_max
        inside = np.broadcast_to(~(below | above), shape)
        if which == "inside":
            return inside.astype(_F32)
        if which == "b":
            return np.where(inside, inv, _F32(1)).astype(_F32)
        level = np.clip(np.where(below, quant_min, lv), quant_min, quant_max) - z
        # NOTE: PyTorch's compiler contracts `level * scale - x` into one fused multiply-add
        diff = fma(np.broadcast_to(level, shape).astype(_F32),
                   np.broadcast_to(s, shape).astype(_F32), np.broadcast_to(-x, shape))
        bound = np.where(below, _F32(quant_min) - z, _F32(quant_max) - z)
        return np.where(inside, diff, bound).astype(_F32)


def _forward_meta(x, s, z, **_):
    return broadcast_shapes(x._shape, s._shape, z._shape), x._dtype


def _factor_meta(x, s, z, **_):
    return broadcast_shapes(x._shape, s._shape, z._shape), dt.float32


def _aten(per_channel: bool) -> str:
    return f"_fake_quantize_learnable_per_{'channel' if per_channel else 'tensor'}_affine"


_forward = {pc: Member(ternary_p, _aten(pc), _forward_kernel, _forward_meta,
                       grad_name=f"FakeQuantizeLearnablePer{'Channel' if pc else 'Tensor'}"
                                 "AffineBackward0")
            for pc in (False, True)}
# the derivative factors: PyTorch's backward kernel, which has no derivative itself
_factor = {pc: Member(ternary_p, _aten(pc) + "_backward", _factor_kernel, _factor_meta)
           for pc in (False, True)}


def _check_backward(g, x, s, z, quant_min, quant_max, per_channel, index) -> None:
    """PyTorch's checks of the backward kernel, in its order."""
    for name, t in (("dY", g), ("X", x), ("scale", s), ("zero_point", z)):
        if t._dtype is not dt.float32:
            raise RuntimeError(_FLOAT_ONLY.format(name))
    if not (quant_min <= 0 <= quant_max):
        raise RuntimeError(
            "Expecting `quant_min` <= 0 and `quant_max` >= 0" if per_channel else
            "`quant_min` should be less than or         equal to `quant_max`, and the "
            "quantization range should include 0.")
    if per_channel and x.ndim == 1 and index:
        # NOTE: PyTorch sums over every dim but the channel's: for a 1-d input, the empty
        # list of dims, which sums everything, and its engine refuses the 0-d gradient
        raise RuntimeError(f"Function {_forward[True].grad_name} returned an invalid gradient "
                           f"at index {index} - got [] but expected shape compatible with "
                           f"[{x.shape[0]}]")


def _rule(index: int):
    """The VJP for input `index` (x, scale, zero point): the incoming gradient times the
    backward kernel's factors, in its order, so each element's term has its bits."""
    def rule(g, out, x, s, z, *, quant_min, quant_max, grad_factor, per_channel):
        _check_backward(g, x, s, z, quant_min, quant_max, per_channel, index)
        if x.numel() == 0:  # NOTE: PyTorch hands back the inputs themselves as the gradients
            return (x, s, z)[index].detach()
        params = dict(quant_min=quant_min, quant_max=quant_max, grad_factor=grad_factor,
                      per_channel=per_channel)

        def factor(which):
            return apply(ternary_p, x, s, z, fn=_factor[per_channel], which=which, **params)

        gf = float(_F32(grad_factor))
        inside = factor("inside")
        if index == 0:
            return g * inside
        # NOTE: + 0.0: PyTorch sums the terms from +0, so even a lone -0 term sums to +0
        if index == 1:
            return g * factor("a") * factor("b") * gf + 0.0
        # (times 1 - inside, exactly 1 there: the term then passes the factor's node, whose
        # backward refuses, as PyTorch's backward kernel has no derivative)
        term = (-g) * s * gf * (1 - inside) + 0.0
        return term.where(inside == 0, term.new_zeros(()))
    return rule


def _no_jvp(primals, tangents, out, *, per_channel, **_):
    raise NotImplementedError(f"Trying to use forward AD with {_aten(per_channel)} that does "
                              "not support it because it has not been implemented yet.")


_no_jvp.not_implemented = "_fake_quantize_learnable"  # (a refusal, not a derivative)
for _pc in (False, True):
    defvjp(_forward[_pc], _rule(0), _rule(1), _rule(2))
    defjvp(_forward[_pc], _no_jvp)
    derivative_not_implemented(_factor[_pc], _aten(_pc) + "_backward", (True, True, True))


def _bind(input, scale, zero_point, quant_min, quant_max, grad_factor, per_channel):
    return apply(ternary_p, input, scale, zero_point, fn=_forward[per_channel],
                 quant_min=quant_min, quant_max=quant_max, grad_factor=float(grad_factor),
                 per_channel=per_channel)


def _tensors(fname: str, scale, zero_point) -> None:
    for pos, (name, t) in enumerate((("scale", scale), ("zero_point", zero_point)), 2):
        if not isinstance(t, Tensor):
            raise not_tensor(fname, name, pos, t)


def _first(t: Tensor) -> None:
    """PyTorch reads `t[0]`: a 0-d or empty tensor has none."""
    if t.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    if t.shape[0] == 0:
        raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")


def _fake_quantize_learnable_per_tensor_affine(input: Tensor, scale: Tensor, zero_point: Tensor,
                                               quant_min: int, quant_max: int,
                                               grad_factor: float = 1.0) -> Tensor:
    """`input` fake-quantised with one scale and zero point, both of which get gradients
    (LSQ); `grad_factor` scales those two gradients."""
    _tensors("_fake_quantize_learnable_per_tensor_affine", scale, zero_point)
    _first(scale)
    _first(zero_point)
    quant_min, quant_max = int(quant_min), int(quant_max)
    if quant_min > quant_max:
        raise RuntimeError(_ORDER_MSG)
    _check_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    # (PyTorch reads the first element of each: its gradient lands there)
    return _bind(input, scale[0], zero_point[0], quant_min, quant_max, grad_factor, False)


def _fake_quantize_learnable_per_channel_affine(input: Tensor, scale: Tensor,
                                                zero_point: Tensor, axis: int, quant_min: int,
                                                quant_max: int,
                                                grad_factor: float = 1.0) -> Tensor:
    """`input` fake-quantised with a scale and zero point per slice along `axis`, all of
    which get gradients (LSQ); the zero points are rounded half to even and clamped."""
    _tensors("_fake_quantize_learnable_per_channel_affine", scale, zero_point)
    quant_min, quant_max, axis = int(quant_min), int(quant_max), int(axis)
    with grad_mode.no_grad():
        rounded = zero_point.round().clamp_(quant_min, quant_max).to(dt.int32)
    _check_channel_qparams(input, scale, rounded, axis, quant_min, quant_max, clamped=True)
    _check_input(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    shape = [1] * input.ndim
    shape[axis] = -1
    return _bind(input, scale.reshape(shape), zero_point.reshape(shape), quant_min, quant_max,
                 grad_factor, True)


TENSOR_METHODS: dict = {}

__all__ = ["_fake_quantize_learnable_per_channel_affine",
           "_fake_quantize_learnable_per_tensor_affine"]
