"""Muon: momentum SGD whose update for a 2-D weight is orthogonalised by a quintic
Newton-Schulz iteration in bfloat16, as `torch.optim.Muon` computes it."""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..ops.creation import zeros_like
from .asgd import _to_scalar
from .optimizer import Optimizer

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _newton_schulz(grad: Tensor, coefficients, steps: int, eps: float) -> Tensor:
    r"""Approximately $U V^\top$ of $G = U S V^\top$: normalise $X = G / \|G\|$, then
    $X \leftarrow aX + (bA + cA^2)X$ with $A = XX^\top$, on the wide orientation of $G$."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(steps):
        gram = x @ x.T
        x = x.addmm(gram.addmm(gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if tall else x


def _adjusted_lr(lr: float, how: str | None, shape) -> float:
    """The lr scaled for the weight's shape: sqrt(max(1, rows/cols)) ("original"), or
    0.2 sqrt(max(rows, cols)) to match AdamW's update RMS ("match_rms_adamw")."""
    rows, cols = shape[:2]
    if how is None or how == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if how == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    r"""Muon: $B \leftarrow \mathrm{lerp}(B, G, 1-\mu)$; $U = \mathrm{NS}(\mathrm{lerp}(G, B,
    \mu))$ (Nesterov) or $\mathrm{NS}(B)$; $\theta \leftarrow \theta(1-\gamma\lambda) -
    \gamma' U$ with $\gamma'$ the shape-adjusted lr. 2-D parameters only."""

    def __init__(self, params, lr=1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    _sparse_refusal = "Muon does not support sparse gradients"

    def _init_state(self, p, state, group) -> None:
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        state["momentum_buffer"] = zeros_like(p.grad)

    def _update(self, p, grad, state, group) -> None:
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        lr, momentum = _to_scalar(group["lr"]), group["momentum"]
        buf = state["momentum_buffer"]
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        update = _newton_schulz(update, group["ns_coefficients"], group["ns_steps"],
                                group["eps"])
        p.mul_(1 - lr * group["weight_decay"])
        p.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))


__all__ = ["Muon"]
