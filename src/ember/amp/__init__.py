"""ember.amp: autocast (bfloat16 matmuls on the CPU) and GradScaler, as in torch.amp."""

from . import autocast_mode, grad_scaler
from .autocast_mode import (
    autocast,
    cast_for,
    custom_bwd,
    custom_fwd,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "custom_fwd", "custom_bwd",
           "cast_for"]


def __getattr__(name: str):
    from ..compat import missing

    raise missing(__name__, name)
