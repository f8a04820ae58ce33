"""Grad modes (`no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`).

They live in `ember._grad_mode`, at the bottom layer, because every op reads them;
this module is their public name, as in PyTorch (`torch.autograd.grad_mode`).
"""

from .._grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
    state,
)

__all__ = ["enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
           "no_grad", "set_grad_enabled", "state"]
