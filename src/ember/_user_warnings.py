"""Warnings raised at the user's line: the first frame outside the ember package.

PyTorch's C++ kernels warn from below Python, so Python reports the warning at the line
that called the op. ember's ops are Python many frames deep (aliases, method bindings,
in-place wrappers), so a fixed `stacklevel` would name an ember file on some routes; these
helpers count the frames instead."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The `stacklevel` that makes a `warnings.warn` in the caller name the first frame
    outside ember (counted from the caller of this function)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_warned_once: set[str] = set()
warn_always = [False]  # torch.set_warn_always: the once-per-process warnings fire every time


def warn_at_user(message: str, category: type[Warning] = UserWarning, *,
                 once: bool = False) -> None:
    """`warnings.warn(message, category)` reported at the user's line, as a warning from
    PyTorch's C++ side is; `once=True` warns only the first time in the process (PyTorch's
    TORCH_WARN_ONCE, which no warnings filter brings back; `torch.set_warn_always(True)` does)."""
    if once and not warn_always[0]:
        if message in _warned_once:
            return
        _warned_once.add(message)
    # (user_stacklevel counts from this function: one more frame up for warnings.warn)
    warnings.warn(message, category, stacklevel=user_stacklevel())
