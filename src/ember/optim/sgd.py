"""Stochastic gradient descent, with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

import numpy as np

from .. import native
from .._tensor import Tensor
from ..native import calls
from ..ops.registry import UpdatePrimitive, batch_by_loop, bind
from .optimizer import (
    Optimizer,
    add_scaled,
    axpy,
    check_fused,
    fusable,
    native_update,
    one_element_lr,
    required,
)


class SGD(Optimizer):
    r"""SGD: $g \leftarrow g + \lambda p$; $b \leftarrow \mu b + (1-\tau) g$ (first step
    $b = g$); $g \leftarrow g + \mu b$ if Nesterov else $b$; $p \leftarrow p - \gamma g$.
    """

    def __init__(self, params, lr=1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None) -> None:
        one_element_lr(lr)
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    _foreach_refuses_autograd = False  # (PyTorch's foreach SGD records its ops)
    _fused_check_once = True

    def _init_state(self, p: Tensor, state: dict, group: dict) -> None:
        if group["momentum"] != 0:
            state["momentum_buffer"] = None

    def _update(self, p: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        buf = state.get("momentum_buffer")
        lr = group["lr"]
        if isinstance(lr, Tensor) and not lr.requires_grad:
            lr = lr.item()  # (PyTorch passes it as `alpha=`, a number)
        first = buf is None and group["momentum"] != 0  # (the ops below make the buffer)
        if not isinstance(lr, Tensor) and not first and fusable(
                p, grad, *(() if buf is None else (buf,))):
            bind(sgd_step_p, p, grad, buf, lr=lr, momentum=group["momentum"],
                 dampening=group["dampening"], weight_decay=group["weight_decay"],
                 nesterov=group["nesterov"], maximize=group["maximize"])
            return
        if group["maximize"]:
            grad = -grad
        wd, momentum = group["weight_decay"], group["momentum"]
        if wd != 0:
            grad = grad.add(p, alpha=wd)
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.detach().clone()
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
            grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
        if isinstance(lr, Tensor):  # (a learning rate that requires grad: recorded)
            p.addcmul_(grad, lr, value=-1)
        else:
            p.add_(grad, alpha=-lr)


def _sgd_kernel(p, grad, buf, *, lr, momentum, dampening, weight_decay, nesterov,
                maximize) -> None:
    """The update above on NumPy arrays, in place (parameter and momentum buffer, which
    exists whenever momentum is nonzero), rounding as the tensor ops round."""
    if maximize:
        grad = np.negative(grad)
    if weight_decay != 0:
        grad = add_scaled(grad, p, weight_decay)
    if momentum != 0:
        np.multiply(buf, momentum, out=buf)
        axpy(buf, grad, 1 - dampening)
        grad = add_scaled(grad, buf, momentum) if nesterov else buf
    axpy(p, grad, -lr)


_SGD_ARGS = [calls.P, calls.P, calls.P, calls.I64] + [calls.F64] * 4 + [calls.INT] * 2
_SGD_NAMES = {sfx: f"sgd_step_{sfx}" for sfx in calls.SUFFIX.values()}


def _sgd_native(lib, p, grad, buf, *, lr, momentum, dampening, weight_decay, nesterov,
                maximize):
    """The same update in C (csrc/optim.c): one pass, the same roundings. (On the hot path
    of every small model's step: the checks are inline.)"""
    d = p.dtype
    sfx = calls.SUFFIX.get(d)
    if sfx is None or p.size < native_update["min_size"] or grad.dtype != d or \
            not p.flags.c_contiguous or not grad.flags.c_contiguous or buf is not None and (
                buf.dtype != d or not buf.flags.c_contiguous):
        return NotImplemented
    ptr = calls.ptr
    calls.entry(lib, _SGD_NAMES[sfx], _SGD_ARGS)(
        ptr(p), ptr(grad), ptr(buf), p.size, lr, momentum, dampening, weight_decay,
        int(nesterov), int(maximize))
    return None


sgd_step_p = UpdatePrimitive("sgd_step", _sgd_kernel, writes=(0, 2))
native.register(sgd_step_p, "optim", _sgd_native)
batch_by_loop(sgd_step_p, "an optimizer step writes its parameters and momentum buffers in place "
                          "and returns nothing: each batch element is an update of its own")
