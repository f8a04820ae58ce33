r"""Optimizers that keep one running average of the gradient: SGD and Lion.

Each step's arithmetic follows MLX's order (the same float32 roundings), so a run
matches MLX's to the last bit where the ops are correctly rounded.
"""

from __future__ import annotations

from .. import core as mx
from .optimizer import Optimizer, Schedule


class SGD(Optimizer):
    r"""Stochastic gradient descent, with optional momentum, dampening, Nesterov
    momentum and L2 weight decay (added to the gradient).

    .. math::

        g_t &\leftarrow g_t + \omega w_t \\
        v_{t+1} &= \mu v_t + (1 - \tau) g_t \\
        w_{t+1} &= w_t - \lambda (g_t + \mu v_{t+1}) \text{ (Nesterov) or }
                   w_t - \lambda v_{t+1}

    Without momentum (:math:`\mu = 0`) the step is :math:`w_t - \lambda g_t` and no
    state is read.
    """

    def __init__(self, learning_rate: float | Schedule, momentum: float = 0.0,
                 weight_decay: float = 0.0, dampening: float = 0.0,
                 nesterov: bool = False) -> None:
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening.")
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.dampening = dampening
        self.nesterov = nesterov

    def init_single(self, parameter: mx.array, state: dict) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        if self.weight_decay != 0:
            gradient = gradient + self.weight_decay * parameter
        lr = self.learning_rate.astype(gradient.dtype)
        if self.momentum <= 0:
            return parameter - lr * gradient

        v = self.momentum * state["v"]
        if self.dampening > 0:
            v = v + (1 - self.dampening) * gradient
        else:
            v = v + gradient
        state["v"] = v
        step = gradient + self.momentum * v if self.nesterov else v
        return parameter - lr * step


class Lion(Optimizer):
    r"""Lion (Chen et al., 2023, "Symbolic Discovery of Optimization Algorithms"):
    a step of fixed size along the sign of an interpolated momentum, with decoupled
    weight decay.

    .. math::

        c_{t+1} &= \beta_1 m_t + (1 - \beta_1) g_t \\
        m_{t+1} &= \beta_2 m_t + (1 - \beta_2) g_t \\
        w_{t+1} &= (1 - \eta \lambda) w_t - \eta \operatorname{sign}(c_{t+1})

    The sign makes the steps large: use a learning rate a few times smaller, and a
    weight decay a few times larger, than AdamW's.
    """

    def __init__(self, learning_rate: float | Schedule, betas: list[float] | None = None,
                 weight_decay: float = 0.0) -> None:
        super().__init__()
        betas = [0.9, 0.99] if betas is None else betas
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Lion beta{i + 1} should be in [0, 1), {beta} was provided instead")
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.weight_decay = weight_decay

    def init_single(self, parameter: mx.array, state: dict) -> None:
        state["m"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = state["m"]
        c = b1 * m + (1 - b1) * gradient
        state["m"] = b2 * m + (1 - b2) * gradient
        if self.weight_decay > 0:
            parameter = (1 - lr * self.weight_decay) * parameter
        return parameter - lr * mx.sign(c)
