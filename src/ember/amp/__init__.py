"""ember.amp: autocast (bfloat16 matmuls on the CPU) and GradScaler, as in torch.amp."""

from .autocast_mode import autocast, cast_for, get_autocast_dtype, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype", "cast_for"]
