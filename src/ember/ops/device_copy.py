"""Copies between devices (cpu <-> meta <-> cuda); the graph flows through them."""

from __future__ import annotations

from .._device import device
from .._tensor import Tensor, _meta
from .._view import like_strides
from .registry import Primitive, defvjp


def _to_device_vjp(g, out, x, *, dst, src, dtype):
    return to_device(g, src, None)


to_device_p = Primitive("to_device", None, None, grad_name="ToCopyBackward0")
defvjp(to_device_p, _to_device_vjp, reads=((),))


def to_device(x: Tensor, dst: device, dtype=None) -> Tensor:
    from .. import _grad_mode as grad_mode
    from .._core.dispatch import autograd
    from .registry import MISSING, vjp_rules

    src = x.device
    d = x._dtype if dtype is None else dtype
    if dst.type == "cuda":
        from ..backends import cuda

        cuda.require()
    if dst.type == "meta":
        out = _meta(x._shape, d, like_strides(x._shape, x.stride()))
    elif dst.type == "cpu" and src.type == "meta":
        raise NotImplementedError(
            "Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() "
            "instead of torch.nn.Module.to() when moving module from meta to a different device."
        )
    else:
        out = x.detach().to(d).clone() if src.type == "cpu" else x
    if grad_mode.state.enabled and x._requires_grad:
        autograd.record(to_device_p, vjp_rules.get(to_device_p, MISSING), (x,),
               {"dst": dst, "src": src, "dtype": dtype}, out)
    return out
