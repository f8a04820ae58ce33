"""RMSprop, Adagrad and Adadelta: per-coordinate steps scaled by running squared gradients."""

from __future__ import annotations

import numpy as np

from .. import native
from .._tensor import Tensor
from ..native import calls
from ..ops._fma import fma
from ..ops.creation import full_like, zeros_like
from ..ops.registry import UpdatePrimitive, batch_by_loop, bind
from ..ops.sparse_functions import sparse_coo_tensor
from .adam import _lerp_
from .optimizer import (
    Optimizer,
    add_scaled,
    addcmul_into,
    axpy,
    check_fused,
    fusable,
    one_element_lr,
    scalar_step,
)


def _nonneg(**values) -> None:
    one_element_lr(values.get("lr"))
    for name, v in values.items():
        if not 0.0 <= v:
            label = {"lr": "learning rate", "eps": "epsilon value"}.get(name, f"{name} value")
            raise ValueError(f"Invalid {label}: {v}")


class RMSprop(Optimizer):
    r"""RMSprop: $v \leftarrow \alpha v + (1-\alpha) g^2$; centered subtracts $\bar g^2$;
    $p \leftarrow p - \gamma g / (\sqrt{v} + \epsilon)$, or through a momentum buffer
    $b \leftarrow \mu b + g / (\sqrt{v} + \epsilon)$, $p \leftarrow p - \gamma b$."""

    _sparse_refusal = "RMSprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _nonneg(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    _capturable_xla = (True, True)
    _scalar_state = ("step",)

    def _init_state(self, p, state, group) -> None:
        state["step"] = scalar_step()
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)

    def _update(self, p, grad, state, group) -> None:
        alpha, eps, lr = group["alpha"], group["eps"], group["lr"]
        extra = [state[k] for k in ("grad_avg", "momentum_buffer") if k in state]
        if fusable(p, grad, state["square_avg"], *extra) and fusable(state["step"]):
            bind(rms_step_p, p, grad, state["square_avg"],
                 state["grad_avg"] if group["centered"] else None,
                 state["momentum_buffer"] if group["momentum"] > 0 else None, state["step"],
                 lr=lr, alpha=alpha, lr_decay=0.0, eps=eps, weight_decay=group["weight_decay"],
                 momentum=group["momentum"], maximize=group["maximize"])
            return
        if group["maximize"]:
            grad = -grad
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg = state["square_avg"]
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf.mul_(group["momentum"]).addcdiv_(grad, avg)
            p.add_(buf, alpha=-lr)
        else:
            p.addcdiv_(grad, avg, value=-lr)


class Adagrad(Optimizer):
    r"""Adagrad: $s \leftarrow s + g^2$, $p \leftarrow p - \frac{\gamma}{1 + (t-1)\eta}
    \frac{g}{\sqrt{s} + \epsilon}$."""

    def __init__(self, params, lr=1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        _nonneg(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        # PyTorch creates Adagrad's state eagerly, at construction.
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    _scalar_state = ("step",)
    _fused_check_once = True

    def _init_state(self, p, state, group) -> None:
        state["step"] = scalar_step(group["fused"])
        init = group["initial_accumulator_value"]
        # (complex: each of the real and imaginary parts starts at the value)
        state["sum"] = full_like(p, complex(init, init) if p.is_complex() else init)

    def _update(self, p, grad, state, group) -> None:
        if grad.__class__ is not Tensor and grad.is_sparse:
            return self._sparse_update(p, grad, state, group)
        if fusable(p, grad, state["sum"]) and fusable(state["step"]):
            bind(rms_step_p, p, grad, state["sum"], None, None, state["step"], lr=group["lr"],
                 alpha=None, lr_decay=group["lr_decay"], eps=group["eps"],
                 weight_decay=group["weight_decay"], momentum=0.0, maximize=group["maximize"])
            return
        if group["maximize"]:
            grad = -grad
        step = state["step"].add_(1).item()
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        state_sum = state["sum"]
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(group["eps"])
        p.addcdiv_(grad, std, value=-clr)

    @staticmethod
    def _sparse_update(p, grad, state, group) -> None:
        """Adagrad on a sparse gradient, as PyTorch's: only the rows it holds change (the
        sum grows by their squares, the step divides by the root of the sum there)."""
        if group["weight_decay"] != 0:
            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
        if group["maximize"]:
            grad = -grad
        step = state["step"].add_(1).item()
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        grad = grad.coalesce()
        indices, values = grad._indices(), grad._values()
        state_sum = state["sum"]
        state_sum.add_(sparse_coo_tensor(indices, values.pow(2), grad.shape))
        std = state_sum.sparse_mask(grad)._values().sqrt_().add_(group["eps"])
        p.add_(sparse_coo_tensor(indices, values / std, grad.shape), alpha=-clr)


class Adadelta(Optimizer):
    r"""Adadelta: $v \leftarrow \rho v + (1-\rho) g^2$, $\Delta = \frac{\sqrt{u + \epsilon}}
    {\sqrt{v + \epsilon}} g$, $u \leftarrow \rho u + (1-\rho)\Delta^2$, $p \leftarrow p -
    \gamma\Delta$."""

    _sparse_refusal = "Adadelta does not support sparse gradients"

    def __init__(self, params, lr=1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _nonneg(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    _capturable_xla = (False, False)
    _scalar_state = ("step",)

    def _init_state(self, p, state, group) -> None:
        state["step"] = scalar_step()
        state["square_avg"] = zeros_like(p)
        state["acc_delta"] = zeros_like(p)

    def _update(self, p, grad, state, group) -> None:
        rho, eps = group["rho"], group["eps"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        if fusable(p, grad, square_avg, acc_delta) and fusable(state["step"]):
            bind(adadelta_step_p, p, grad, square_avg, acc_delta, state["step"],
                 lr=group["lr"], rho=rho, eps=eps, weight_decay=group["weight_decay"],
                 maximize=group["maximize"])
            return
        if group["maximize"]:
            grad = -grad
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-group["lr"])


def _adadelta_kernel(p, grad, square_avg, acc_delta, step_count, *, lr, rho, eps,
                     weight_decay, maximize) -> None:
    """Adadelta's update on NumPy arrays, in place (parameter, both running averages, the
    step counter), step for step as `Adadelta._update`'s tensor ops, rounding for
    rounding, with two scratch arrays instead of a temporary per op (the MNIST CNN's
    step: 4.0 -> 2.2 ms)."""
    np.add(step_count, 1, out=step_count)
    if maximize:
        grad = np.negative(grad)
    if weight_decay != 0:
        grad = add_scaled(grad, p, weight_decay)
    np.multiply(square_avg, rho, out=square_avg)
    addcmul_into(square_avg, grad, grad, 1 - rho)
    std = np.add(square_avg, eps)
    np.sqrt(std, out=std)
    delta = np.add(acc_delta, eps)
    np.sqrt(delta, out=delta)
    np.divide(delta, std, out=delta)
    np.multiply(delta, grad, out=delta)
    np.multiply(acc_delta, rho, out=acc_delta)
    addcmul_into(acc_delta, delta, delta, 1 - rho)
    axpy(p, delta, -lr)


def _adadelta_native(lib, p, grad, square_avg, acc_delta, step_count, *, lr, rho, eps,
                     weight_decay, maximize):
    """The same update in C (csrc/optim.c): one pass, the same roundings."""
    arrays = (p, grad, square_avg, acc_delta)
    sfx = calls.suffix(*arrays)
    if sfx is None or not all(a.flags.c_contiguous for a in arrays):
        return NotImplemented
    np.add(step_count, 1, out=step_count)
    F = calls.F64
    calls.entry(lib, f"adadelta_step_{sfx}", [calls.P] * 4 + [calls.I64] + [F] * 4
                + [calls.INT])(
        *(calls.ptr(a) for a in arrays), p.size, lr, rho, eps, weight_decay, int(maximize))
    return None


# the fused update: writes the parameter, both running averages and the step counter
adadelta_step_p = UpdatePrimitive("adadelta_step", _adadelta_kernel, writes=(0, 2, 3, 4))
native.register(adadelta_step_p, "optim", _adadelta_native)
batch_by_loop(adadelta_step_p, "an optimizer step writes its parameters and running averages "
                               "in place and returns nothing: each batch element is an "
                               "update of its own")


def _rms_kernel(p, grad, square_avg, grad_avg, momentum_buffer, step_count, *, lr, alpha,
                lr_decay, eps, weight_decay, momentum, maximize) -> None:
    """RMSprop's update, or Adagrad's (alpha None), on NumPy arrays in place: parameter,
    running squares (Adagrad's sum), grad_avg (None unless centered), momentum buffer (None
    without momentum) and step counter, step for step as `RMSprop._update`'s or
    `Adagrad._update`'s tensor ops, rounding for rounding."""
    np.add(step_count, 1, out=step_count)
    if alpha is None:  # Adagrad: this step's learning rate lr / (1 + (t - 1) decay)
        lr = lr / (1 + (step_count.item() - 1) * lr_decay)
    if maximize:
        grad = np.negative(grad)
    if weight_decay != 0:
        grad = add_scaled(grad, p, weight_decay)
    if alpha is not None:
        np.multiply(square_avg, alpha, out=square_avg)
    addcmul_into(square_avg, grad, grad, 1 if alpha is None else 1 - alpha)
    avg = np.empty_like(square_avg)
    if grad_avg is not None:
        _lerp_(grad_avg, grad, 1 - alpha, avg)
        np.copyto(avg, fma(np.negative(grad_avg), grad_avg, square_avg))  # (addcmul, -1)
        np.sqrt(avg, out=avg)
    else:
        np.sqrt(square_avg, out=avg)
    np.add(avg, eps, out=avg)
    if momentum_buffer is not None:
        np.multiply(momentum_buffer, momentum, out=momentum_buffer)
        np.add(momentum_buffer, np.divide(grad, avg), out=momentum_buffer)
        axpy(p, momentum_buffer, -lr)
    else:
        # p.addcdiv_(grad, avg, value=-lr): the value times grad first, then the quotient
        update = grad if -lr == 1 else np.multiply(grad, p.dtype.type(-lr))
        np.add(p, np.divide(update, avg), out=p)


def _rms_native(lib, p, grad, square_avg, grad_avg, momentum_buffer, step_count, *, lr,
                alpha, lr_decay, eps, weight_decay, momentum, maximize):
    """The same update in C (csrc/optim.c): one pass, the same roundings; the step count
    and Adagrad's learning rate are computed here, as the NumPy kernel computes them."""
    arrays = [a for a in (p, grad, square_avg, grad_avg, momentum_buffer) if a is not None]
    sfx = calls.suffix(*arrays)
    if sfx is None or not all(a.flags.c_contiguous for a in arrays):
        return NotImplemented
    np.add(step_count, 1, out=step_count)
    if alpha is None:
        lr = lr / (1 + (step_count.item() - 1) * lr_decay)
    F = calls.F64
    calls.entry(lib, f"rms_step_{sfx}", [calls.P] * 5 + [calls.I64] + [F] * 5
                + [calls.INT] * 2)(
        calls.ptr(p), calls.ptr(grad), calls.ptr(square_avg), calls.ptr(grad_avg),
        calls.ptr(momentum_buffer), p.size, lr, 0.0 if alpha is None else alpha, eps,
        weight_decay, momentum, int(alpha is None), int(maximize))
    return None


# the fused update of RMSprop and Adagrad: writes the parameter, its running state and the
# step counter
rms_step_p = UpdatePrimitive("rms_step", _rms_kernel, writes=(0, 2, 3, 4, 5))
native.register(rms_step_p, "optim", _rms_native)
batch_by_loop(rms_step_p, "an optimizer step writes its parameters and running averages in "
                          "place and returns nothing: each batch element is an update of its "
                          "own")
