"""The Adam family: Adam, AdamW, Adamax, NAdam, RAdam (each one per-parameter update)."""

from __future__ import annotations

import math

import numpy as np

from .. import native, ops
from .._tensor import Tensor
from ..native import calls
from ..ops._fma import fma
from ..ops.creation import zeros_like
from ..ops.registry import UpdatePrimitive, batch_by_loop, bind
from .optimizer import (
    Optimizer,
    add_scaled,
    addcmul_into,
    check_fused,
    fusable,
    one_element_lr,
    scalar_step,
)


def _check(lr, eps, betas, weight_decay) -> None:
    one_element_lr(lr)
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_betas(betas, foreach, capturable) -> None:
    """Adam's (and AdamW's) betas: two Python floats, or two one-element tensors."""
    if not (all(isinstance(b, float) for b in betas[:2])
            or all(isinstance(b, Tensor) for b in betas[:2])):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas[:2]):
        if isinstance(b, Tensor):
            if foreach and not capturable:
                raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                 "capturable=False and foreach=True")
            if b.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")


def _moments(p: Tensor, state: dict, *names: str, fused=False) -> None:
    state["step"] = scalar_step(fused)
    for name in names:
        state[name] = zeros_like(p)


def _bump(state: dict) -> float:
    """Count one more step and return the new count (bias corrections read it)."""
    step = state["step"]
    step.add_(1)
    return step.item()


class Adam(Optimizer):
    r"""Adam: $m \leftarrow \beta_1 m + (1-\beta_1) g$, $v \leftarrow \beta_2 v + (1-\beta_2)
    g^2$, $p \leftarrow p - \frac{\gamma}{1-\beta_1^t} \frac{m}{\sqrt{v}/\sqrt{1-\beta_2^t} +
    \epsilon}$ ($v$ replaced by its running max with `amsgrad`). Weight decay adds $\lambda p$
    to $g$, or with `decoupled_weight_decay` scales $p$ by $1-\gamma\lambda$ (AdamW).
    """

    _sparse_refusal = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None, decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        _check(lr, eps, betas, weight_decay)
        _check_betas(betas, foreach, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    _scalar_state = ("step",)

    def _init_state(self, p, state, group) -> None:
        names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
        _moments(p, state, *names, fused=group["fused"])

    def _update(self, p, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        if group["foreach"] and isinstance(lr, Tensor) and not group["capturable"]:
            raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                               "foreach=True")
        moments = [state["exp_avg"], state["exp_avg_sq"]]
        if group["amsgrad"]:
            moments.append(state["max_exp_avg_sq"])
        if fusable(p, grad, *moments) and fusable(state["step"]):
            bind(adam_step_p, p, grad, *moments[:2], moments[2] if len(moments) == 3 else None,
                 state["step"], lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=wd,
                 decoupled=group["decoupled_weight_decay"], maximize=group["maximize"])
            return
        if group["maximize"]:
            grad = -grad
        step = _bump(state)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)
        step_size = lr / (1 - beta1**step)
        bias_correction2_sqrt = (1 - beta2**step) ** 0.5
        if group["amsgrad"]:
            mx = state["max_exp_avg_sq"]
            mx.copy_(ops.binary_math.maximum(mx, exp_avg_sq))  # (no out=: differentiable)
            denom = (mx.sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        p.addcdiv_(exp_avg, denom, value=-step_size)


def _lerp_(start, end, weight: float, scratch) -> None:
    """start.lerp_(end, weight) for a scalar weight, with PyTorch's two-sided formula, each
    side one fused multiply-add (the weight and 1 - weight in the arrays' dtype)."""
    w = start.dtype.type(weight)
    np.subtract(end, start, out=scratch)
    if abs(w) < 0.5:
        np.copyto(start, fma(w, scratch, start))
    else:
        np.copyto(start, fma(np.negative(scratch, out=scratch), 1 - w, end))


def _adam_kernel(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_count, *, lr, beta1,
                 beta2, eps, weight_decay, decoupled, maximize) -> None:
    """Adam's update on NumPy arrays, in place: the step counter, parameter and moments
    (max_exp_avg_sq is None without amsgrad), step for step as `Adam._update`'s tensor ops,
    rounding for rounding."""
    np.add(step_count, 1, out=step_count)
    step = step_count.item()
    wd = weight_decay
    if maximize:
        grad = np.negative(grad)
    if wd != 0:
        if decoupled:
            np.multiply(p, 1 - lr * wd, out=p)
        else:
            grad = add_scaled(grad, p, wd)
    scratch = np.empty_like(exp_avg)
    _lerp_(exp_avg, grad, 1 - beta1, scratch)
    np.multiply(exp_avg_sq, beta2, out=exp_avg_sq)
    addcmul_into(exp_avg_sq, grad, grad, 1 - beta2)
    if max_exp_avg_sq is not None:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
    np.sqrt(exp_avg_sq if max_exp_avg_sq is None else max_exp_avg_sq, out=scratch)
    np.divide(scratch, (1 - beta2**step) ** 0.5, out=scratch)
    np.add(scratch, eps, out=scratch)
    # p.addcdiv_(exp_avg, denom, value=v) rounds v exp_avg first, then the quotient
    update = np.multiply(exp_avg, p.dtype.type(-lr / (1 - beta1**step)))
    np.divide(update, scratch, out=update)
    np.add(p, update, out=p)



def _adam_native(lib, p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step_count, *, lr, beta1,
                 beta2, eps, weight_decay, decoupled, maximize):
    """The same update in C (csrc/optim.c): one pass, the same roundings; the step count and
    the bias corrections are computed here, as the NumPy kernel computes them."""
    arrays = (p, grad, exp_avg, exp_avg_sq) + (() if max_exp_avg_sq is None
                                                else (max_exp_avg_sq,))
    sfx = calls.suffix(*arrays)
    if sfx is None or not all(a.flags.c_contiguous for a in arrays):
        return NotImplemented
    np.add(step_count, 1, out=step_count)
    step = step_count.item()
    P, F = calls.P, calls.F64
    calls.entry(lib, f"adam_step_{sfx}", [P] * 5 + [calls.I64] + [F] * 5
                + [calls.INT] * 2 + [F] * 2)(
        calls.ptr(p), calls.ptr(grad), calls.ptr(exp_avg), calls.ptr(exp_avg_sq),
        calls.ptr(max_exp_avg_sq), p.size, lr, beta1, beta2, eps, weight_decay,
        int(decoupled), int(maximize), (1 - beta2**step) ** 0.5, -lr / (1 - beta1**step))
    return None


# the fused update: writes the parameter, the moments and the step counter
adam_step_p = UpdatePrimitive("adam_step", _adam_kernel, writes=(0, 2, 3, 4, 5))
native.register(adam_step_p, "optim", _adam_native)
batch_by_loop(adam_step_p, "an optimizer step writes its parameters and moments in place "
                           "and returns nothing: each batch element is an update of its own")


class AdamW(Adam):
    r"""AdamW: Adam with decoupled weight decay, $p \leftarrow p(1-\gamma\lambda)$ before
    the Adam step (default $\lambda = 10^{-2}$)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adamax(Optimizer):
    r"""Adamax: $m \leftarrow \beta_1 m + (1-\beta_1) g$, $u \leftarrow \max(\beta_2 u, |g| +
    \epsilon)$, $p \leftarrow p - \frac{\gamma}{1-\beta_1^t} \frac{m}{u}$."""

    _sparse_refusal = "Adamax does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    _scalar_state = ("step",)

    def _init_state(self, p, state, group) -> None:
        _moments(p, state, "exp_avg", "exp_inf")

    def _update(self, p, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        step = _bump(state)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_inf.copy_(ops.binary_math.maximum(exp_inf.mul_(beta2),
                                               grad.abs().add_(group["eps"])))
        clr = group["lr"] / (1 - beta1**step)
        p.addcdiv_(exp_avg, exp_inf, value=-clr)


class NAdam(Optimizer):
    r"""NAdam: Adam with Nesterov momentum; $\mu_t = \beta_1(1 - \frac12 0.96^{t\psi})$,
    $p \leftarrow p - \gamma\frac{(1-\mu_t) g}{(1-\prod\mu)\,d} - \gamma\frac{\mu_{t+1} m}
    {(1-\prod\mu\,\mu_{t+1})\,d}$ with $d = \sqrt{v/(1-\beta_2^t)} + \epsilon$."""

    _sparse_refusal = "NAdam does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    _capturable_names = ("params, mu_products and state_steps",
                         "params, mu_products, and state_steps")
    _scalar_state = ("step", "mu_product")

    def _init_state(self, p, state, group) -> None:
        from ..ops.creation import ones

        state["step"] = scalar_step()
        state["mu_product"] = ones((), dtype=state["step"].dtype)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _update(self, p, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        lr, wd, eps, psi = group["lr"], group["weight_decay"], group["eps"], \
            group["momentum_decay"]
        if group["maximize"]:
            grad = -grad
        step = _bump(state)
        bias_correction2 = 1 - beta2**step
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        mu_product = state["mu_product"]
        mu_product.mul_(mu)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        prod = mu_product.item()
        mu_product_next = prod * mu_next
        denom.add_(eps)
        p.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - prod)))
        p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


class RAdam(Optimizer):
    r"""RAdam: Adam whose adaptive term is switched on only once the variance of its
    estimate is tractable ($\rho_t > 5$), scaled by the rectification factor $r_t$."""

    _sparse_refusal = "RAdam does not support sparse gradients"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    _scalar_state = ("step",)

    def _init_state(self, p, state, group) -> None:
        _moments(p, state, "exp_avg", "exp_avg_sq")

    def _update(self, p, grad, state, group) -> None:
        beta1, beta2 = group["betas"]
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        if group["maximize"]:
            grad = -grad
        step = _bump(state)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * wd)
            else:
                grad = grad.add(p, alpha=wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
            p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)
