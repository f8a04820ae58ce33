"""torch.nn.attention: the scaled-dot-product-attention backends (`SDPBackend`) and the
`sdpa_kernel` context manager that chooses among them.

On a CPU build two backends can run: MATH (the composite) and FLASH_ATTENTION (the fused
CPU kernel, which takes only 4-D inputs without dropout). The others are CUDA kernels:
enabling only them leaves no kernel, and attention raises as PyTorch does. The switches
live in `ember.backends.cuda` (as PyTorch's `torch.backends.cuda.enable_*_sdp`).
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator

from ..._user_warnings import user_stacklevel
from ...backends import cuda as _flags
from ._registry import (
    activate_flash_attention_impl,
    current_flash_attention_impl,
    list_flash_attention_impls,
    register_flash_attention_impl,
    restore_flash_attention_impl,
)

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """The attention kernels PyTorch knows, with its integer values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self) -> int:
        return self.value

    __index__ = __int__

    def __repr__(self) -> str:
        return f"<SDPBackend.{self.name}: {self.value}>"


# flag name in ember.backends.cuda -> the backend it switches (PyTorch's order)
_FLAG_OF = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
            "overrideable": SDPBackend.OVERRIDEABLE}


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list[SDPBackend]:
    """The enabled backends, in flag order or (with_priority) in priority order."""
    on = [b for name, b in _FLAG_OF.items() if _flags.SDP_ENABLED[name]]
    if with_priority:
        on.sort(key=lambda b: _flags.SDP_PRIORITY.index(b.value))
    return on


def _sdpa_kernel(backends, set_priority: bool = False) -> None:
    """Enable exactly `backends`; with set_priority, put them first in the priority order."""
    for name, b in _FLAG_OF.items():
        _flags.SDP_ENABLED[name] = b in backends
    if set_priority:
        order = [b.value for b in backends]
        order += [v for v in _flags.SDP_PRIORITY if v not in order]
        _flags.SDP_PRIORITY[:] = order


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend,
                set_priority: bool = False) -> Iterator[dict]:
    """Run the block with only `backends` enabled for F.scaled_dot_product_attention;
    the previous switches (and priority order) come back on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    previous_order = list(_flags.SDP_PRIORITY)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, False)
        _flags.SDP_PRIORITY[:] = previous_order


def choose_cpu_backend(flash_fits: bool, why_not: str = "") -> SDPBackend:
    """The backend F.scaled_dot_product_attention runs on a CPU build: FLASH_ATTENTION when
    it is enabled and `flash_fits` the inputs (and comes before MATH in the priority order,
    or MATH is off), else MATH; RuntimeError, as PyTorch's, when neither may run."""
    flash, math_ = _flags.SDP_ENABLED["flash"], _flags.SDP_ENABLED["math"]
    if not flash and not math_:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. "
                           "This is likely due to turning off both the math kernel and the "
                           "fused kernels.")
    order = _flags.SDP_PRIORITY
    if flash and flash_fits and (not math_ or order.index(1) < order.index(0)):
        return SDPBackend.FLASH_ATTENTION
    if math_:
        return SDPBackend.MATH
    import warnings

    warnings.warn("Flash attention kernel not used because:", UserWarning,
                  stacklevel=user_stacklevel())
    if why_not:
        warnings.warn(why_not, UserWarning, stacklevel=user_stacklevel())
    raise RuntimeError("No available kernel.  Aborting execution.")
