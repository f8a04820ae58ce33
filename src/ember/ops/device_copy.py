"""Copies between devices (cpu <-> meta <-> cuda); the graph flows through them."""

from __future__ import annotations

from .. import _grad_mode as grad_mode
from .._core.dispatch import autograd
from .._device import device
from .._tensor import Tensor, _meta
from .._view import like_strides
from .registry import Primitive, bind, defbatch, deflinear, defvjp, vjp_rule


def _to_device_vjp(g, out, x, *, dst, src, dtype):
    return to_device(g, src, None)


def _to_device_meta(x: Tensor, *, dst, src, dtype) -> tuple:
    return x._shape, x._dtype if dtype is None else dtype, like_strides(x._shape, x.stride())


def _eval_to_device(prim, args: tuple, params: dict) -> Tensor:
    """Eager evaluation: a copy on `dst` (shapes only on meta), and its node."""
    x, dst, dtype = args[0], params["dst"], params["dtype"]
    src = x.device
    d = x._dtype if dtype is None else dtype
    if dst.type != "cpu" and dst.type != "meta":
        from ..backends import cuda, refuse_unavailable

        refuse_unavailable(dst)
        cuda.require()
    if dst.type == "meta":
        out = _meta(*_to_device_meta(x, **params))
    elif dst.type == "cpu" and src.type == "meta":
        raise NotImplementedError(META_NO_DATA)
    else:
        out = x.detach().to(d).clone() if src.type == "cpu" else x
    if grad_mode.state.enabled and x._requires_grad:
        autograd.record(prim, vjp_rule(prim, params), args, params, out)
    return out


# What torch says when a meta tensor's (absent) values are asked for on another device;
# `Module.to` adds a pointer to `to_empty`.
META_NO_DATA = "Cannot copy out of meta tensor; no data!"

to_device_p = Primitive("to_device", None, _to_device_meta, impl=_eval_to_device,
                        grad_name="ToCopyBackward0")
defvjp(to_device_p, _to_device_vjp, reads=((),))
deflinear(to_device_p)
defbatch(to_device_p, lambda args, dims, **params: (bind(to_device_p, *args, **params), dims[0]))


def to_device(x: Tensor, dst: device, dtype=None) -> Tensor:
    """`x` copied to device `dst` (and cast to `dtype`), differentiably."""
    return bind(to_device_p, x, dst=dst, src=x.device, dtype=dtype)
