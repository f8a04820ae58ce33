"""Schedules: functions of the step count that give a hyperparameter's value.

Pass one where an optimizer takes a learning rate; the optimizer calls it with its
`step` (a uint64 array) before every update and stores the value in its state. Each
one computes in MLX's order and dtypes (the step stays uint64 where MLX's does).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import core as mx

Schedule = Callable[[mx.array], mx.array]


def _capped(step, cap: int) -> mx.array:
    """min(step, cap) in `step`'s dtype (a Python int step becomes an int32 array)."""
    step = step if isinstance(step, mx.array) else mx.array(step)
    return mx.minimum(step, cap)


def exponential_decay(init: float, decay_rate: float) -> Schedule:
    r"""`init * decay_rate**step`."""

    def schedule(step):
        return init * decay_rate**step

    return schedule


def step_decay(init: float, decay_rate: float, step_size: int) -> Schedule:
    r"""`init * decay_rate**(step // step_size)`: a drop every `step_size` steps."""
    if step_size < 1:
        raise ValueError(f"step_size must be greater than 0, but got {step_size}.")

    def schedule(step):
        return init * (decay_rate ** (step // step_size))

    return schedule


def cosine_decay(init: float, decay_steps: int, end: float = 0.0) -> Schedule:
    r"""From `init` to `end` along half a cosine over `decay_steps` steps, then `end`:
    :math:`end + (init - end) (1 + \cos(\pi \min(t, T) / T)) / 2`."""
    if decay_steps < 1:
        raise ValueError(f"decay_steps must be greater than 0, but got {decay_steps}.")

    def schedule(step):
        t = _capped(step, decay_steps)
        decay = 0.5 * (1.0 + mx.cos((math.pi / decay_steps) * t))
        return end + decay * (init - end)

    return schedule


def linear_schedule(init: float, end: float, steps: int) -> Schedule:
    r"""From `init` to `end` in a straight line over `steps` steps, then `end`."""
    if steps < 1:
        raise ValueError(f"steps must be greater than 0, but got {steps}.")

    def schedule(step):
        t = _capped(step, steps)
        return t * ((end - init) / steps) + init

    return schedule


def join_schedules(schedules: list[Schedule], boundaries: list[int]) -> Schedule:
    r"""`schedules[0]` until `boundaries[0]`, then `schedules[1]` counting steps from
    that boundary, and so on (a warmup then a decay, say)."""
    if len(schedules) == 0:
        raise ValueError("Must provide at least 1 schedule to join.")
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(
            f"Received {len(boundaries)} boundaries but expected {len(schedules) - 1}.")

    def schedule(step):
        out = schedules[0](step)
        for boundary, later in zip(boundaries, schedules[1:]):
            # NOTE: every piece is computed at every step (an unsigned step before its
            # boundary wraps around; that value is discarded by the `where`)
            out = mx.where(step < boundary, out, later(step - boundary))
        return out

    return schedule
