"""ember.cuda: honest answers on a machine without a GPU, CuPy where there is one."""

from __future__ import annotations

from ..backends import cuda as _backend


def is_available() -> bool:
    return _backend.is_available()


def device_count() -> int:
    return _backend.device_count()


def current_device() -> int:
    _backend.require()
    return 0


def set_device(device) -> None:
    """Select the current GPU; raises a clear RuntimeError where there is none."""
    _backend.require()


def synchronize(device=None) -> None:
    if is_available():
        _backend.require().cuda.runtime.deviceSynchronize()


def manual_seed(seed: int) -> None:
    """Seeds CUDA generators; a no-op without a GPU, as in PyTorch."""


def manual_seed_all(seed: int) -> None:
    """Seeds every CUDA generator; a no-op without a GPU, as in PyTorch."""


def empty_cache() -> None:
    """Frees cached GPU memory; nothing to do without a GPU."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


def get_device_name(device=None) -> str:
    _backend.require()
    return "cuda"


from . import amp  # noqa: E402


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
