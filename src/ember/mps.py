"""ember.mps: Apple's Metal backend is never present; the answers of PyTorch's CPU build.

The queries answer "none"; the calls that need the backend raise RuntimeError naming the
operation, as PyTorch's CPU build does.
"""

from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Seeds the MPS generator: a no-op without MPS, as in PyTorch."""


def _needs(what: str):
    def call(*args, **kwargs):
        raise RuntimeError(f"Cannot execute {what}() without MPS backend.")

    call.__name__ = what
    return call


synchronize = _needs("deviceSynchronize")
seed = get_rng_state = set_rng_state = _needs("getDefaultGenerator")
empty_cache = _needs("emptyCache")
current_allocated_memory = _needs("getCurrentAllocatedMemory")
driver_allocated_memory = _needs("getDriverAllocatedMemory")
recommended_max_memory = _needs("getRecommendedMaxMemory")
set_per_process_memory_fraction = _needs("setMemoryFraction")


def __getattr__(name: str):
    from .compat import submodule_or_missing

    return submodule_or_missing(__name__, name)
