r"""Adafactor (Shazeer and Stern, 2018, "Adaptive Learning Rates with Sublinear
Memory Cost"): Adam-like steps whose second moment, for a matrix, is kept as one row
and one column average rather than a full array.
"""

from __future__ import annotations

from .. import core as mx
from .optimizer import Optimizer, Schedule


def _rms(x: mx.array) -> mx.array:
    return mx.sqrt(mx.mean(mx.square(x)))


class Adafactor(Optimizer):
    r"""Adafactor, in MLX's variant.

    With :math:`\hat\beta_{2,t} = 1 - t^{c}` (`decay_rate` :math:`c = -0.8`) and
    :math:`G = g_t^2 + \epsilon_1`, a parameter of two or more dimensions keeps the
    row and column means :math:`R, C` of :math:`G`'s running average and uses
    :math:`V = (R / \operatorname{mean}(R)) \, C^T`; a vector keeps :math:`V` itself. Then

    .. math::

        U &= g_t / \sqrt{V}, \quad U \leftarrow U / \max(1, \operatorname{RMS}(U) / d) \\
        \rho_t &= \min(10^{-2}, 1/\sqrt{t}) \text{ (relative step) or } \lambda \\
        w_{t+1} &= w_t - \rho_t \max(\epsilon_2, \operatorname{RMS}(w_t)) \, U

    (`scale_parameter=False` drops the :math:`\max(\epsilon_2, \cdot)` factor,
    `warmup_init=True` uses :math:`\min(10^{-6} t, 1/\sqrt{t})`, `beta_1` adds a running
    average of the steps, `weight_decay` shrinks :math:`w_t` by the same rate.)
    Without `relative_step`, a `learning_rate` is required.
    """

    def __init__(self, learning_rate: float | Schedule | None = None,
                 eps: tuple[float, float] = (1e-30, 1e-3), clip_threshold: float = 1.0,
                 decay_rate: float = -0.8, beta_1: float | None = None,
                 weight_decay: float = 0.0, scale_parameter: bool = True,
                 relative_step: bool = True, warmup_init: bool = False) -> None:
        super().__init__()
        if learning_rate is not None:
            self._maybe_schedule("learning_rate", learning_rate)
        self.eps = eps
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta_1 = beta_1
        self.weight_decay = weight_decay
        self.scale_parameter = scale_parameter
        self.relative_step = relative_step
        self.warmup_init = warmup_init

    def init_single(self, parameter: mx.array, state: dict) -> None:
        if parameter.ndim >= 2:
            shape, dtype = parameter.shape, parameter.dtype
            state["exp_avg_sq_row"] = mx.zeros(shape[:-1], dtype=dtype)
            state["exp_avg_sq_col"] = mx.zeros(shape[:-2] + shape[-1:], dtype=dtype)
        else:
            state["exp_avg_sq"] = mx.zeros_like(parameter)
        if self.beta_1 is not None:
            state["exp_avg"] = mx.zeros_like(parameter)

    def _step_size(self, parameter_rms: mx.array) -> mx.array:
        """The learning rate this step, scaled by the parameter's RMS."""
        step = self.step
        if self.relative_step:
            cap = 1e-6 * step if self.warmup_init else 1e-2
            size = mx.minimum(cap, mx.rsqrt(step))
        else:
            size = self.learning_rate
        size = size.astype(parameter_rms.dtype)
        if not self.scale_parameter:
            return size
        return mx.maximum(self.eps[1], parameter_rms) * size

    def apply_single(self, gradient: mx.array, parameter: mx.array, state: dict) -> mx.array:
        parameter_rms = _rms(parameter)
        lr = self._step_size(parameter_rms)
        beta_2 = 1.0 - (self.step**self.decay_rate).astype(parameter_rms.dtype)
        update = mx.square(gradient) + self.eps[0]

        if gradient.ndim >= 2:
            row = beta_2 * state["exp_avg_sq_row"] + (1 - beta_2) * mx.mean(update, axis=-1)
            col = beta_2 * state["exp_avg_sq_col"] + (1 - beta_2) * mx.mean(update, axis=-2)
            state["exp_avg_sq_row"], state["exp_avg_sq_col"] = row, col
            row_factor = mx.rsqrt(row / mx.mean(row, axis=-1, keepdims=True))
            col_factor = mx.rsqrt(col)
            update = mx.expand_dims(row_factor, axis=-1) * mx.expand_dims(col_factor, axis=-2)
            update = update * gradient
        else:
            avg = beta_2 * state["exp_avg_sq"] + (1 - beta_2) * update
            state["exp_avg_sq"] = avg
            update = mx.rsqrt(avg) * gradient

        update = update / mx.maximum(1.0, _rms(update) / self.clip_threshold)
        update = lr * update
        if self.beta_1 is not None:
            update = self.beta_1 * state["exp_avg"] + (1 - self.beta_1) * update
            state["exp_avg"] = update
        if self.weight_decay != 0:
            parameter = parameter + parameter * (-self.weight_decay * lr)
        return parameter - update
