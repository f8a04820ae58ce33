"""Anomaly detection: remember where each node was made, and stop at the first NaN.

Under `detect_anomaly()` (or `set_detect_anomaly(True)`) every recorded node
keeps the traceback of the forward call that created it. When a backward
function fails, or (with `check_nan`) returns NaN, the engine warns with that
traceback and raises a RuntimeError naming the node, as PyTorch does.
"""

from __future__ import annotations

import warnings

from .._user_warnings import user_stacklevel
from .graph import _anomaly


def is_anomaly_enabled() -> bool:
    return _anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _anomaly.check_nan


class detect_anomaly:
    """Context manager (or decorator) that turns anomaly detection on inside it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _anomaly.enabled
        self.check_nan = check_nan
        self.prev_check_nan = _anomaly.check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.", UserWarning, stacklevel=user_stacklevel())

    def __enter__(self) -> None:
        self.prev, self.prev_check_nan = _anomaly.enabled, _anomaly.check_nan
        _anomaly.enabled = True
        _anomaly.check_nan = self.check_nan

    def __exit__(self, *exc) -> None:
        _anomaly.enabled = self.prev
        _anomaly.check_nan = self.prev_check_nan

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turns anomaly detection on or off; takes effect at construction, like set_grad_enabled."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev, self.prev_check_nan = _anomaly.enabled, _anomaly.check_nan
        _anomaly.enabled = bool(mode)
        _anomaly.check_nan = bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _anomaly.enabled = self.prev
        _anomaly.check_nan = self.prev_check_nan


__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]
