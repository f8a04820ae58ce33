"""RMSprop, Adagrad and Adadelta: per-coordinate steps scaled by running squared gradients."""

from __future__ import annotations

import numpy as np

from ..ops.creation import full_like, zeros_like
from ..ops.registry import UpdatePrimitive, batch_by_loop, bind
from .optimizer import Optimizer, add_scaled, axpy, check_fused, fusable, scalar_step


def _nonneg(**values) -> None:
    for name, v in values.items():
        if not 0.0 <= v:
            label = {"lr": "learning rate", "eps": "epsilon value"}.get(name, f"{name} value")
            raise ValueError(f"Invalid {label}: {v}")


class RMSprop(Optimizer):
    r"""RMSprop: $v \leftarrow \alpha v + (1-\alpha) g^2$; centered subtracts $\bar g^2$;
    $p \leftarrow p - \gamma g / (\sqrt{v} + \epsilon)$, or through a momentum buffer
    $b \leftarrow \mu b + g / (\sqrt{v} + \epsilon)$, $p \leftarrow p - \gamma b$."""

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

    def _init_state(self, p, state, group) -> None:
        state["step"] = scalar_step()
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)

    def _update(self, p, grad, state, group) -> None:
        alpha, eps, lr = group["alpha"], group["eps"], group["lr"]
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

    def _init_state(self, p, state, group) -> None:
        state["step"] = scalar_step(group["fused"])
        state["sum"] = full_like(p, group["initial_accumulator_value"])

    def _update(self, p, grad, state, group) -> None:
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


class Adadelta(Optimizer):
    r"""Adadelta: $v \leftarrow \rho v + (1-\rho) g^2$, $\Delta = \frac{\sqrt{u + \epsilon}}
    {\sqrt{v + \epsilon}} g$, $u \leftarrow \rho u + (1-\rho)\Delta^2$, $p \leftarrow p -
    \gamma\Delta$."""

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
    one_minus = p.dtype.type(1 - rho)  # (addcmul casts its value to the tensor's dtype)
    std = np.multiply(grad, grad)
    np.multiply(std, one_minus, out=std)
    np.multiply(square_avg, rho, out=square_avg)
    np.add(square_avg, std, out=square_avg)
    np.add(square_avg, eps, out=std)
    np.sqrt(std, out=std)
    delta = np.add(acc_delta, eps)
    np.sqrt(delta, out=delta)
    np.divide(delta, std, out=delta)
    np.multiply(delta, grad, out=delta)
    np.multiply(delta, delta, out=std)
    np.multiply(std, one_minus, out=std)
    np.multiply(acc_delta, rho, out=acc_delta)
    np.add(acc_delta, std, out=acc_delta)
    axpy(p, delta, -lr)


# the fused update: writes the parameter, both running averages and the step counter
adadelta_step_p = UpdatePrimitive("adadelta_step", _adadelta_kernel, writes=(0, 2, 3, 4))
batch_by_loop(adadelta_step_p, "an optimizer step writes its parameters and running averages "
                               "in place and returns nothing: each batch element is an "
                               "update of its own")
