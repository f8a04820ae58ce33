"""torch.backends.mkldnn's flags (ember computes through NumPy's BLAS: `enabled` only says
which node names PyTorch's oneDNN paths would record, e.g. an LSTM's MkldnnRnnLayerBackward0)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from .._user_warnings import user_stacklevel
from ._flags import bool_flags

allow_tf32 = None  # (PyTorch answers None: TF32 on oneDNN is for Intel GPUs)
_FLAGS = {"enabled": True, "deterministic": False}


def is_available() -> bool:
    return False


def set_flags(_enabled=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none") -> tuple:
    """Set the flags that are given; return the previous ones (PyTorch's order)."""
    before = (_FLAGS["enabled"], _FLAGS["deterministic"], allow_tf32, "none")
    if _enabled is not None:
        _FLAGS["enabled"] = bool(_enabled)
    if _deterministic is not None:
        _FLAGS["deterministic"] = bool(_deterministic)
    if _allow_tf32 is not None:
        # NOTE: PyTorch's CPU build warns at every write of this flag, whatever its value,
        # and keeps reading None (TF32 on oneDNN is for Intel GPUs)
        warnings.warn("TF32 acceleration on top of oneDNN is available for Intel GPUs. The "
                      "current Torch version does not have Intel GPU Support.", UserWarning,
                      stacklevel=user_stacklevel())
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


bool_flags(__name__, _FLAGS, {"enabled": "set_enabled_mkldnn",
                              "deterministic": "set_deterministic_mkldnn"})
