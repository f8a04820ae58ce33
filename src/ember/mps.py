"""ember.mps: Apple's Metal backend, which ember never has (PyTorch's answers without it)."""

from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """A no-op without the backend, as in PyTorch."""


def seed() -> None:
    """A no-op without the backend, as in PyTorch."""


def synchronize() -> None:
    raise RuntimeError("Cannot execute deviceSynchronize() without MPS backend.")


def empty_cache() -> None:
    raise RuntimeError("Cannot execute emptyCache() without MPS backend.")


def __getattr__(name: str):
    from .compat import missing

    raise missing(__name__, name)
