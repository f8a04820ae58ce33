"""ember.cpu: `torch.cpu`'s device queries (there is always exactly one CPU device)."""

from __future__ import annotations

from . import amp


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """CPU kernels finish before they return; nothing to wait for."""


def __getattr__(name: str):
    from ..compat import missing

    raise missing(__name__, name)
