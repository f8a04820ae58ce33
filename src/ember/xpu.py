"""ember.xpu: Intel GPUs, which ember never has (PyTorch's CPU-build answers)."""

from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def _not_compiled():
    raise AssertionError("Torch not compiled with XPU enabled")


def synchronize(device=None) -> None:
    _not_compiled()


def current_device() -> int:
    _not_compiled()


def get_device_name(device=None) -> str:
    _not_compiled()


def manual_seed(seed: int) -> None:
    """A no-op without the device, as in PyTorch."""


def manual_seed_all(seed: int) -> None:
    """A no-op without the device, as in PyTorch."""


def empty_cache() -> None:
    """Nothing cached without the device."""


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
