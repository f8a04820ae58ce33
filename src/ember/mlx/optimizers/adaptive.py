r"""Optimizers that scale each coordinate by its gradients' history: RMSprop,
Adagrad and AdaDelta (each in MLX's arithmetic order, to match its float32 bits).
"""

from __future__ import annotations

from .. import core as mx
from .optimizer import Optimizer, Schedule


class RMSprop(Optimizer):
    r"""RMSprop (Tieleman and Hinton, 2012): steps divided by a running root mean
    square of the gradient.

    .. math::

        v_{t+1} &= \alpha v_t + (1 - \alpha) g_t^2 \\
        w_{t+1} &= w_t - \lambda \frac{g_t}{\sqrt{v_{t+1}} + \epsilon}
    """

    def __init__(self, learning_rate: float | Schedule, alpha: float = 0.99,
                 eps: float = 1e-8) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.alpha = alpha
        self.eps = eps
        if alpha < 0.0:
            raise ValueError(f"RMSprop alpha should be >=0, {alpha} was provided instead")
        if eps <= 0.0:
            raise ValueError(f"RMSprop epsilon should be >0, {eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        lr = self.learning_rate.astype(gradient.dtype)
        v = self.alpha * state["v"] + (1 - self.alpha) * mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al., 2011): steps divided by the root of the sum of all
    squared gradients so far.

    .. math::

        v_{t+1} &= v_t + g_t^2 \\
        w_{t+1} &= w_t - \lambda \frac{g_t}{\sqrt{v_{t+1}} + \epsilon}
    """

    def __init__(self, learning_rate: float | Schedule, eps: float = 1e-8) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        if eps <= 0.0:
            raise ValueError(f"Adagrad epsilon should be >0, {eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict) -> None:
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        lr = self.learning_rate.astype(gradient.dtype)
        v = state["v"] + mx.square(gradient)
        state["v"] = v
        return parameter - lr * gradient / (mx.sqrt(v) + self.eps)


class AdaDelta(Optimizer):
    r"""AdaDelta (Zeiler, 2012), with a learning rate: the step is the gradient
    times the ratio of the running RMS of past steps to that of the gradients.

    .. math::

        v_{t+1} &= \rho v_t + (1 - \rho) g_t^2 \\
        \Delta_{t+1} &= \frac{\sqrt{u_t + \epsilon}}{\sqrt{v_{t+1} + \epsilon}} g_t \\
        u_{t+1} &= \rho u_t + (1 - \rho) \Delta_{t+1}^2 \\
        w_{t+1} &= w_t - \lambda \Delta_{t+1}
    """

    def __init__(self, learning_rate: float | Schedule, rho: float = 0.9,
                 eps: float = 1e-6) -> None:
        super().__init__()
        self._maybe_schedule("learning_rate", learning_rate)
        self.rho = rho
        self.eps = eps
        if rho < 0.0:
            raise ValueError(f"AdaDelta rho should be >=0, {rho} was provided instead")
        if eps <= 0.0:
            raise ValueError(f"AdaDelta epsilon should be >0, {eps} was provided instead")

    def init_single(self, parameter: mx.array, state: dict) -> None:
        state["v"] = mx.zeros_like(parameter)
        state["u"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        lr = self.learning_rate.astype(gradient.dtype)
        rho, eps = self.rho, self.eps
        u = state["u"]
        v = rho * state["v"] + (1 - rho) * mx.square(gradient)
        delta = mx.sqrt(u + eps) / mx.sqrt(v + eps) * gradient
        state["v"] = v
        state["u"] = rho * u + (1 - rho) * mx.square(delta)
        return parameter - lr * delta
