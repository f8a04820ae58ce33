r"""Optimizers that orthogonalize their step: Muon.

The arithmetic follows MLX 0.32.4's `Muon` op for op (the same Newton-Schulz
coefficients and `addmm` calls), so a run matches MLX's up to matmul rounding.
"""

from __future__ import annotations

from .. import core as mx
from .optimizer import Optimizer, Schedule

# The quintic Newton-Schulz coefficients of Keller Jordan's Muon (and MLX's).
_NS_A, _NS_B, _NS_C = 3.4445, -4.7750, 2.0315


def _orthogonalize(x: mx.array, steps: int) -> mx.array:
    """About `U V^T` of the matrix `x = U S V^T`: `steps` quintic Newton-Schulz iterations
    from `x` scaled to Frobenius norm 1 (run on the wide orientation, so `x x^T` is the
    smaller Gram matrix)."""
    if x.ndim != 2:
        raise AssertionError(f"Expected a 2D array for Newton-Schulz iteration, got shape "
                             f"{x.shape} instead.")
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = x.T
    x = x / (mx.linalg.norm(x, keepdims=True) + 1e-7)
    for _ in range(steps):
        gram = x @ x.T
        poly = mx.addmm(_NS_B * gram, gram, gram, beta=1.0, alpha=_NS_C)
        x = mx.addmm(_NS_A * x, poly, x, beta=1.0, alpha=1.0)
    return x.T if tall else x


class Muon(Optimizer):
    r"""Muon (MomentUm Orthogonalized by Newton-Schulz; Jordan et al., 2024): SGD momentum
    whose step, for matrices, is replaced by its nearest semi-orthogonal matrix.

    .. math::

        g_t &\leftarrow g_t + \omega w_t \\
        v_{t+1} &= \mu v_t + (1 - \mu) g_t \\
        u_t &= (1 - \mu) g_t + \mu v_{t+1} \text{ (Nesterov) or } v_{t+1} \\
        w_{t+1} &= w_t - \lambda \sqrt{\max(1, r / c)}\, \mathrm{NS}(u_t)

    For parameters of 2 or more dimensions, `NS` orthogonalizes `u_t` reshaped to
    (rows, -1) (:math:`r \times c`); 0-d and 1-d parameters take the plain momentum
    step. Use it for hidden layers; embeddings and output layers do better with AdamW.
    """

    def __init__(self, learning_rate: float | Schedule, momentum: float = 0.95,
                 weight_decay: float = 0.01, nesterov: bool = True,
                 ns_steps: int = 5) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.ns_steps = ns_steps

    def init_single(self, parameter: mx.array, state: dict) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        v = self.momentum * state["v"]
        v = v + (1 - self.momentum) * gradient
        state["v"] = v
        update = gradient * (1 - self.momentum) + v * self.momentum if self.nesterov else v
        lr = self.learning_rate.astype(gradient.dtype)
        if update.ndim >= 2:
            shape = update.shape
            update = _orthogonalize(update.reshape(shape[0], -1), self.ns_steps)
            update = update.reshape(shape)
            lr = lr * max(1, update.shape[-2] / update.shape[-1]) ** 0.5
        return parameter - lr * update
