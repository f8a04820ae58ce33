"""torch.cuda.amp: the deprecated CUDA-specific spellings of ember.amp."""

from __future__ import annotations

import warnings

from .. import _dtype as dt
from .._user_warnings import user_stacklevel
from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast


class GradScaler(_GradScaler):
    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=user_stacklevel())
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


class autocast(_autocast):
    def __init__(self, enabled: bool = True, dtype=dt.float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=user_stacklevel())
        super().__init__("cuda", dtype, enabled, cache_enabled)
