"""`torch._assert`: Python's assert as a function, so that a symbolic trace can record it
(an assert statement on a traced value would have to branch on it)."""

from __future__ import annotations

from typing import Any

from . import _torch_function as _tf


def _assert(condition: Any, message: str) -> None:
    """Raise AssertionError(message) unless `condition`; an overriding argument (an fx
    Proxy) records the call instead."""
    if type(condition) is not _tf._base[0] and _tf.overloaded_args((condition,)):
        from .overrides import handle_torch_function

        return handle_torch_function(_assert, (condition,), condition, message)
    if not condition:
        raise AssertionError(message)
    return None
