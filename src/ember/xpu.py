"""ember.xpu: Intel GPUs are never present; the answers of PyTorch's CPU build.

Programs probe `torch.xpu.is_available()` to pick a device; the queries answer "none"
and the calls that need a device raise AssertionError, as PyTorch's CPU build does.
"""

from __future__ import annotations

_NOT_BUILT = "Torch not compiled with XPU enabled"


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Seeds XPU generators: a no-op without an XPU, as in PyTorch."""


def manual_seed_all(seed: int) -> None:
    """A no-op without an XPU, as in PyTorch."""


def seed() -> None:
    """A no-op without an XPU, as in PyTorch."""


def seed_all() -> None:
    """A no-op without an XPU, as in PyTorch."""


def empty_cache() -> None:
    """Nothing cached without an XPU."""


def memory_allocated(device=None) -> int:
    return 0


def max_memory_allocated(device=None) -> int:
    return 0


def _require(*args, **kwargs):
    raise AssertionError(_NOT_BUILT)


init = current_device = set_device = synchronize = get_device_name = _require
get_device_properties = get_rng_state = set_rng_state = initial_seed = _require


def __getattr__(name: str):
    from .compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
