"""torch.backends.cudnn's flags, for programs that set them; no cuDNN runs here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ._flags import bool_flags

benchmark_limit = None  # (PyTorch reads None without cuDNN)
_FLAGS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}


def is_available() -> bool:
    return False


def version():
    return None


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
              _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None) -> tuple:
    """Set the flags that are given; return the previous ones in PyTorch's order (the
    benchmark limit reads None, as PyTorch reports it without cuDNN)."""
    f = _FLAGS
    before = (f["enabled"], f["benchmark"], None, f["deterministic"], f["allow_tf32"], "none",
              "auto")
    for name, value in (("enabled", _enabled), ("benchmark", _benchmark),
                        ("deterministic", _deterministic), ("allow_tf32", _allow_tf32)):
        if value is not None:
            f[name] = bool(value)
    return before


@contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none",
          depthwise_kernel: str = "auto") -> Iterator[None]:
    """`with flags(enabled=False):` the flags for the block, restored after it."""
    before = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                       fp32_precision, depthwise_kernel)
    try:
        yield
    finally:
        set_flags(*before)


# NOTE: PyTorch names the cuBLAS setter for cudnn.allow_tf32's refusal too.
bool_flags(__name__, _FLAGS, {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
                              "deterministic": "set_deterministic_cudnn",
                              "allow_tf32": "set_allow_tf32_cublas"})
