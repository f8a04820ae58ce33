r"""Adam and its variants: AdamW (decoupled weight decay) and Adamax (infinity norm).

MLX leaves out Adam's bias correction by default (`bias_correction=False`), unlike
PyTorch; the arithmetic follows MLX's order so float32 results match its bits.
"""

from __future__ import annotations

from .. import core as mx
from .optimizer import Optimizer, Schedule


class Adam(Optimizer):
    r"""Adam (Kingma and Ba, 2015): steps scaled by running averages of the gradient
    and of its square.

    .. math::

        m_{t+1} &= \beta_1 m_t + (1 - \beta_1) g_t \\
        v_{t+1} &= \beta_2 v_t + (1 - \beta_2) g_t^2 \\
        w_{t+1} &= w_t - \lambda \frac{m_{t+1}}{\sqrt{v_{t+1}} + \epsilon}

    With `bias_correction=True`, :math:`m` is divided by :math:`1 - \beta_1^t` and
    :math:`\sqrt{v}` by :math:`\sqrt{1 - \beta_2^t}`.
    """

    def __init__(self, learning_rate: float | Schedule, betas: list[float] | None = None,
                 eps: float = 1e-8, bias_correction: bool = False) -> None:
        super().__init__()
        betas = [0.9, 0.999] if betas is None else betas
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(
                    f"Adam beta{i + 1} should be in [0, 1), {beta} was provided instead")
        if not 0.0 <= eps:
            raise ValueError(f"Adam epsilon should be >=0, {eps} was provided instead")
        self._maybe_schedule("learning_rate", learning_rate)
        self.betas = betas
        self.eps = eps
        self.bias_correction = bias_correction

    def init_single(self, parameter: mx.array, state: dict) -> None:
        state["m"] = mx.zeros_like(parameter)
        state["v"] = mx.zeros_like(parameter)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = b2 * state["v"] + (1 - b2) * mx.square(gradient)
        state["m"], state["v"] = m, v
        if not self.bias_correction:
            return parameter - lr * m / (mx.sqrt(v) + self.eps)
        step = self.step
        c1 = (lr / (1 - b1**step)).astype(gradient.dtype)
        c2 = mx.rsqrt(1 - b2**step).astype(gradient.dtype)
        return parameter - (c1 * m) / (mx.sqrt(v) * c2 + self.eps)


class AdamW(Adam):
    r"""AdamW (Loshchilov and Hutter, 2019): Adam on weights first shrunk by
    :math:`1 - \lambda \omega`, the decay kept out of the moment estimates.

    .. math::

        w_{t+1} = w_t (1 - \lambda \omega) - \lambda \frac{m_{t+1}}{\sqrt{v_{t+1}} + \epsilon}

    MLX's default `weight_decay` is 0.01, as PyTorch's.
    """

    def __init__(self, learning_rate: float | Schedule, betas: list[float] | None = None,
                 eps: float = 1e-8, weight_decay: float = 0.01,
                 bias_correction: bool = False) -> None:
        super().__init__(learning_rate=learning_rate, betas=betas, eps=eps,
                         bias_correction=bias_correction)
        self.weight_decay = weight_decay

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        lr = self.learning_rate.astype(gradient.dtype)
        return super().apply_single(gradient, parameter * (1 - lr * self.weight_decay), state)


class Adamax(Adam):
    r"""Adamax (Kingma and Ba, 2015): Adam with the second moment replaced by a
    decaying infinity norm, no bias correction.

    .. math::

        m_{t+1} &= \beta_1 m_t + (1 - \beta_1) g_t \\
        v_{t+1} &= \max(\beta_2 v_t, |g_t|) \\
        w_{t+1} &= w_t - \lambda \frac{m_{t+1}}{v_{t+1} + \epsilon}
    """

    def __init__(self, learning_rate: float | Schedule, betas: list[float] | None = None,
                 eps: float = 1e-8) -> None:
        super().__init__(learning_rate, betas, eps)

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        lr = self.learning_rate.astype(gradient.dtype)
        b1, b2 = self.betas
        m = b1 * state["m"] + (1 - b1) * gradient
        v = mx.maximum(b2 * state["v"], mx.abs(gradient))
        state["m"], state["v"] = m, v
        return parameter - lr * m / (v + self.eps)
