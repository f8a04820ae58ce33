"""ember.accelerator: the current accelerator (None here unless a CUDA GPU is present)."""

from __future__ import annotations

from ._device import device


def is_available() -> bool:
    from .cuda import is_available as cuda_ok

    return cuda_ok()


def current_accelerator(check_available: bool = False):
    return device("cuda") if is_available() else None


def device_count() -> int:
    from .cuda import device_count as n

    return n()


def synchronize(device=None) -> None:
    from .cuda import synchronize as sync

    sync(device)


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
