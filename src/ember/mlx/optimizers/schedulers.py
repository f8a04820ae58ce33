"""`mlx.optimizers.schedulers`: the module MLX defines its learning-rate schedules in.

Kept as a module of its own so `from mlx.optimizers.schedulers import cosine_decay` works.
"""

import math

from .. import core as mx
from .schedules import (
    cosine_decay,
    exponential_decay,
    join_schedules,
    linear_schedule,
    step_decay,
)

__all__ = ["cosine_decay", "exponential_decay", "join_schedules", "linear_schedule",
           "step_decay", "math", "mx"]
