"""torch.backends.mkldnn's flags (ember computes through NumPy's BLAS: `enabled` only says
which node names PyTorch's oneDNN paths would record, e.g. an LSTM's MkldnnRnnLayerBackward0)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

enabled = True
deterministic = False
allow_tf32 = None  # (PyTorch answers None: TF32 on oneDNN is for Intel GPUs)


def is_available() -> bool:
    return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none") -> tuple:
    """Set the flags that are given; return the previous ones (PyTorch's order)."""
    global enabled, deterministic, allow_tf32
    before = (enabled, deterministic, allow_tf32, "none")
    if _enabled is not None:
        enabled = bool(_enabled)
    if _deterministic is not None:
        deterministic = bool(_deterministic)
    if _allow_tf32 is not None:
        allow_tf32 = bool(_allow_tf32)
    return before


@contextmanager
def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    """`with flags(enabled=False):` the flags for the block, restored after it."""
    before = set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        set_flags(*before)
