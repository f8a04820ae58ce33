"""ember.cuda: PyTorch's CPU-build answers on a machine without a GPU (ember has no CUDA
kernels; where CuPy finds a GPU the queries below ask CuPy, untested).

Without a GPU (or without CuPy) this module behaves as `torch.cuda` does in PyTorch's CPU
build: the queries answer (`is_available()` is False, `device_count()` 0, the seeding and
cache calls do nothing) and whatever needs a device raises
`AssertionError: Torch not compiled with CUDA enabled`.
"""

from __future__ import annotations

from ..backends import cuda as _backend


def is_available() -> bool:
    return _backend.is_available()


def device_count() -> int:
    return _backend.device_count()


def is_initialized() -> bool:
    return _backend.is_available()


def _lazy_init():
    """CuPy, or PyTorch's CPU-build AssertionError when there is no GPU."""
    if not _backend.is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return _backend.require()


def init() -> None:
    _lazy_init()


def current_device() -> int:
    _lazy_init()
    return 0


def set_device(device) -> None:
    """Select the current GPU (AssertionError where there is none)."""
    _lazy_init()


def synchronize(device=None) -> None:
    _lazy_init().cuda.runtime.deviceSynchronize()


def get_device_name(device=None) -> str:
    _lazy_init()
    return "cuda"


def get_device_capability(device=None) -> tuple[int, int]:
    cc = _lazy_init().cuda.Device().compute_capability
    return int(cc[:-1]), int(cc[-1])


def manual_seed(seed: int) -> None:
    """Seeds CUDA generators; a no-op without a GPU, as in PyTorch."""


def manual_seed_all(seed: int) -> None:
    """Seeds every CUDA generator; a no-op without a GPU, as in PyTorch."""


def seed() -> None:
    """Seeds CUDA generators at random; a no-op without a GPU, as in PyTorch."""


def seed_all() -> None:
    """As `seed`, for every GPU."""


def empty_cache() -> None:
    """Frees cached GPU memory; nothing to do without a GPU."""
    if _backend.is_available():
        _backend.require().get_default_memory_pool().free_all_blocks()


def memory_allocated(device=None) -> int:
    """Bytes held by tensors on the GPU (0 without one, as in PyTorch)."""
    return _backend.require().get_default_memory_pool().used_bytes() if is_available() else 0


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds from the driver (0 without a GPU, as in PyTorch)."""
    return _backend.require().get_default_memory_pool().total_bytes() if is_available() else 0


def max_memory_allocated(device=None) -> int:
    """Peak bytes held by tensors (0 without a GPU, as in PyTorch; CuPy keeps no peak)."""
    if is_available():
        raise NotImplementedError("ember does not track peak GPU memory")
    return 0


def max_memory_reserved(device=None) -> int:
    return max_memory_allocated(device)


def get_device_properties(device=None):
    return _lazy_init().cuda.runtime.getDeviceProperties(0)


def initial_seed() -> int:
    _lazy_init()
    raise NotImplementedError("ember has no CUDA generator")


def get_rng_state(device="cuda"):
    _lazy_init()
    raise NotImplementedError("ember has no CUDA generator")


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return is_available()


from . import amp  # noqa: E402


def __getattr__(name: str):
    from ..compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
