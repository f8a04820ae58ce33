"""SparseAdam: Adam's moments and step applied only to the rows a sparse gradient holds."""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..ops.creation import zeros_like
from .optimizer import Optimizer


class SparseAdam(Optimizer):
    r"""Masked Adam for sparse gradients (`nn.Embedding(sparse=True)`): for the rows $r$ of
    the gradient, $m_r \leftarrow m_r + (1-\beta_1)(g_r - m_r)$, $v_r \leftarrow v_r +
    (1-\beta_2)(g_r^2 - v_r)$, $p_r \leftarrow p_r - \gamma\frac{\sqrt{1-\beta_2^t}}
    {1-\beta_1^t}\frac{m_r}{\sqrt{v_r}+\epsilon}$; other rows are left as they are. The
    step count is a Python int, as PyTorch keeps it."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        sparse, complex_ = [], []
        for i, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([i, j])
                if p.is_complex():
                    complex_.append([i, j])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             "parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not "
                             "support complex parameters")

    def _step_groups(self) -> None:
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = group["lr"]
            lr = lr.item() if isinstance(lr, Tensor) else lr
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if not grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                _sparse_adam(p, grad, state, lr=lr, beta1=beta1, beta2=beta2,
                             eps=group["eps"], maximize=group.get("maximize", False))


def _sparse_adam(p: Tensor, grad: Tensor, state: dict, *, lr, beta1, beta2, eps,
                 maximize) -> None:
    """PyTorch's `sparse_adam` for one parameter, op for op on the gradient's rows (the
    sparse adds of its updates into the dense moments and parameter are row updates)."""
    if maximize:
        grad = -grad
    grad = grad.coalesce()  # (the update is non-linear: each row once)
    rows, values = tuple(grad._indices()), grad._values()
    if values.numel() == 0:
        return
    step = state["step"]
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    old_exp_avg = exp_avg[rows]
    exp_avg_update = values.sub(old_exp_avg).mul_(1 - beta1)
    exp_avg.index_put_(rows, exp_avg_update, accumulate=True)
    old_exp_avg_sq = exp_avg_sq[rows]
    exp_avg_sq_update = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2)
    exp_avg_sq.index_put_(rows, exp_avg_sq_update, accumulate=True)
    numer = exp_avg_update.add_(old_exp_avg)
    exp_avg_sq_update.add_(old_exp_avg_sq)
    denom = exp_avg_sq_update.sqrt_().add_(eps)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr * math.sqrt(bias_correction2) / bias_correction1
    p.index_put_(rows, -step_size * numer.div_(denom), accumulate=True)
