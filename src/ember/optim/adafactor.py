"""Adafactor (Shazeer & Stern 2018) with PyTorch's variant of it: `lr` caps the relative step
and scales the decoupled weight decay, and eps1 guards the factored estimate, not the factors.
"""

from __future__ import annotations

from .. import _dtype as dt
from .._tensor import Tensor
from ..ops.creation import zeros, zeros_like
from .asgd import _scalar_dtype, _to_scalar
from .optimizer import Optimizer


class Adafactor(Optimizer):
    r"""Adafactor: second moments of a matrix gradient kept as row and column means,
    $\hat V = R C / \max(\overline{R}, \epsilon_1)$ with $\hat\beta_{2,t} = 1 - t^{\tau}$;
    $U = G / \max(\sqrt{\hat V}, \epsilon_1)$ clipped to RMS $\le d$;
    $\theta \leftarrow \theta(1 - \gamma\lambda) - \max(\epsilon_2, \mathrm{RMS}(\theta))
    \min(\gamma, t^{-1/2})\,U$."""

    def __init__(self, params, lr=1e-2, beta2_decay: float = -0.8, eps=(None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach=None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    _sparse_refusal = "Adafactor does not support sparse gradients"
    _scalar_state = ("step",)

    def _init_state(self, p, state, group) -> None:
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state["step"] = zeros((), dtype=_scalar_dtype())
        g = p.grad
        if g.dim() > 1:
            state["row_var"] = g.new_zeros((*g.shape[:-1], 1))
            state["col_var"] = g.new_zeros((*g.shape[:-2], 1, g.shape[-1]))
        else:
            state["variance"] = zeros_like(g)

    def _update(self, p, grad, state, group) -> None:
        lr, d, wd = _to_scalar(group["lr"]), group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            # NOTE: PyTorch fills eps1 in from the first parameter (with a gradient) of
            # the group and keeps that value for the group's other parameters.
            first = next(q for q in group["params"] if q.grad is not None)
            eps1 = dt.finfo(first.dtype).eps
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        t = state["step"].item()
        one_minus_beta2 = t ** group["beta2_decay"]
        rho = min(lr, 1 / t ** 0.5)
        alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho
        if wd != 0:
            p.mul_(1 - lr * wd)
        foreach = bool(group["foreach"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            # (the means of g*g along a dim, as a squared norm over the length)
            row_var.lerp_(grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1)),
                          one_minus_beta2)
            col_var.lerp_(grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2)),
                          one_minus_beta2)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            state["variance"].lerp_(grad * grad, one_minus_beta2)
            estimate = state["variance"].clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_().mul_(grad)
        denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
        if foreach:  # (PyTorch's foreach update scales, then adds: two roundings)
            p.add_(update.mul_(-alpha / denom))
        else:
            p.add_(update, alpha=-alpha / denom)


__all__ = ["Adafactor"]
