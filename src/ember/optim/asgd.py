"""ASGD (averaged SGD) and Rprop (resilient backprop): PyTorch's update arithmetic, op for
op, for its single-tensor path and (where it rounds differently) its foreach path."""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from ..ops.creation import full_like, ones, tensor, zeros, zeros_like
from .optimizer import Optimizer


def _scalar_dtype():
    """PyTorch's `_get_scalar_dtype()`: float64 under a float64 default, else float32."""
    return dt.float64 if dt.get_default_dtype() is dt.float64 else dt.float32


def _to_scalar(x):
    """PyTorch's `_to_scalar`: a 1-element tensor squeezed to 0-d, anything else as it is."""
    return x.squeeze() if isinstance(x, Tensor) and x.dim() != 0 else x


def _check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


class ASGD(Optimizer):
    r"""ASGD: $p \leftarrow p(1 - \lambda\eta_t) - \eta_t g$; the average
    $a \leftarrow a + \mu_t (p - a)$; $\eta_{t} = \gamma / (1 + \lambda\gamma t)^\alpha$,
    $\mu_t = 1 / \max(1, t - t_0)$."""

    def __init__(self, params, lr=1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach=None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    _capturable_names = ("params, mus, etas, and state_steps",
                         "params, mus, etas, and state_steps")
    _scalar_state = ("step", "eta", "mu")

    def _init_state(self, p, state, group) -> None:
        sd = _scalar_dtype()
        state["step"] = zeros((), dtype=sd, device=p.device)
        lr = _to_scalar(group["lr"])
        state["eta"] = (lr.to(dtype=sd, device=p.device) if isinstance(lr, Tensor)
                        else tensor(lr, dtype=sd, device=p.device)).clone().detach()
        state["mu"] = ones((), dtype=sd, device=p.device)
        state["ax"] = zeros_like(p)

    def _update(self, p, grad, state, group) -> None:
        lambd, alpha, t0 = group["lambd"], group["alpha"], group["t0"]
        lr, wd = _to_scalar(group["lr"]), group["weight_decay"]
        mu, ax, eta, step_t = state["mu"], state["ax"], state["eta"], state["step"]
        if grad.is_sparse:
            raise RuntimeError("ASGD does not support sparse gradients")
        if group["maximize"]:
            grad = -grad
        step_t += 1
        foreach = bool(group["foreach"])
        eta_value = eta.item()
        # NOTE: PyTorch's CPU kernels fuse `add(alpha=)` and `addcmul` into one multiply-add
        # (one rounding); these ops round twice, so values can differ in their last bit (a
        # fused step of its own would be one more core primitive, which the set has no room
        # for: tests/core/test_tables.py).
        if foreach:
            # NOTE: PyTorch's foreach update folds the decay into the gradient,
            # p - eta (g + wd p + lambd p), and adds mu (p - a) with addcmul: other roundings.
            inter = grad.add(p, alpha=wd) if wd != 0 else grad
            inter = inter.add(p, alpha=lambd)
            p.addcmul_(inter, eta, value=-1)
            ax.addcmul_(p.sub(ax), mu)
        else:
            if wd != 0:
                grad = grad.add(p, alpha=wd)
            p.mul_(1 - lambd * eta_value)
            p.add_(grad, alpha=-eta_value)
            if mu.item() != 1:
                ax.add_(p.sub(ax).mul_(mu))
            else:
                ax.copy_(p)
        if foreach:  # (the new eta in tensor ops on the step counter, in its dtype)
            eta.copy_(lr / ((1 + lambd * lr * step_t) ** alpha))
            mu.copy_(tensor(1 / max(1, step_t.item() - t0)))
            return
        step = step_t.item()
        new_eta = lr / ((1 + lambd * lr * step) ** alpha)
        eta.copy_(new_eta if isinstance(new_eta, Tensor) else tensor(new_eta))
        mu.copy_(tensor(1 / max(1, step - t0)))


class Rprop(Optimizer):
    r"""Rprop: per-coordinate step sizes grow by $\eta_+$ while the gradient keeps its sign
    and shrink by $\eta_-$ when it flips (clamped to `step_sizes`);
    $p \leftarrow p - \mathrm{sign}(g)\,\Delta$, skipping coordinates whose sign flipped."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    _capturable_names = ("params and state_steps", "params and state_steps")
    _capturable_xla = (True, True)
    _scalar_state = ("step",)

    def _init_state(self, p, state, group) -> None:
        state["step"] = zeros((), dtype=_scalar_dtype())
        state["prev"] = zeros_like(p)
        lr = _to_scalar(group["lr"])
        if p.is_complex():
            lr = complex(lr, lr)
        state["step_size"] = full_like(p, lr.item() if isinstance(lr, Tensor) else lr)

    def _update(self, p, grad, state, group) -> None:
        if grad.is_sparse:
            raise RuntimeError("Rprop does not support sparse gradients")
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        prev, step_size = state["prev"], state["step_size"]
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        sign = grad.mul(prev.clone() if group["differentiable"] else prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
