"""Autocast: inside `with autocast("cpu")`, matmul-like ops run in bfloat16 and the
precision-sensitive ones (losses, reductions) in float32, as PyTorch's CPU policy does.

Ops opt in by calling `cast_for(policy, *tensors)` on their inputs: "lower" for the
matmul/conv/attention family, "fp32" for losses and other ops that need range.
"""

from __future__ import annotations

import functools
import threading
import warnings

from .. import _dtype as dt

_state = threading.local()


def _get() -> tuple[bool, dt.dtype]:
    return getattr(_state, "enabled", False), getattr(_state, "dtype", dt.bfloat16)


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether an autocast region is active for `device_type` (no argument means CUDA)."""
    return _get()[0] if device_type == "cpu" else False


def is_autocast_cpu_enabled() -> bool:
    return _get()[0]


def get_autocast_dtype(device_type: str = "cpu") -> dt.dtype:
    return _get()[1] if device_type == "cpu" else dt.float16


def get_autocast_cpu_dtype() -> dt.dtype:
    return _get()[1]


def is_autocast_available(device_type: str) -> bool:
    return device_type in ("cpu", "cuda")


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator for a custom Function's forward; ember's autocast needs no bookkeeping."""
    if fwd is None:
        return lambda f: f
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    if bwd is None:
        return lambda f: f
    return bwd


def cast_for(policy: str, *tensors):
    """The inputs as an autocast region wants them for an op of this policy.

    "lower": floating tensors other than float64 go to the region's dtype (bfloat16 on
    the CPU by default); "fp32": float16/bfloat16 tensors go to float32. Anything else
    (None, numbers, integer tensors) passes through. Outside a region this returns
    `tensors` untouched, so ops can call it unconditionally.
    """
    if not getattr(_state, "enabled", False):
        return tensors
    low = _state.dtype
    out = []
    for t in tensors:
        d = getattr(t, "_dtype", None)
        if d is not None and d.is_floating_point:
            if policy == "lower" and d is not low and d is not dt.float64:
                t = t.to(low)
            elif policy == "fp32" and d in (dt.float16, dt.bfloat16):
                t = t.to(dt.float32)
        out.append(t)
    return tuple(out)


class autocast:
    """`with autocast("cpu", dtype=bfloat16)`; also usable as a decorator."""

    def __init__(self, device_type: str = "cpu", dtype: dt.dtype | None = None,
                 enabled: bool = True, cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device_type = device_type
        self.fast_dtype = dt.bfloat16 if dtype is None else dtype
        self._enabled = enabled
        if device_type == "cuda" and enabled:
            from ..backends.cuda import is_available

            if not is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                              "Disabling", stacklevel=2)
                self._enabled = False
        if device_type == "cpu" and self.fast_dtype not in (dt.bfloat16, dt.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtype of torch.bfloat16, "
                          "torch.float16 currently.", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self._prev = _get()
        if self.device_type == "cpu":
            _state.enabled, _state.dtype = self._enabled, self.fast_dtype
        return self

    def __exit__(self, *exc) -> None:
        _state.enabled, _state.dtype = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)

        return wrapper
