"""MLX 0.32.4 as an oracle: one expression evaluated with `mx` bound to ember's MLX face
and to MLX itself, for tests that compare what each gives (value or exception)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def outcome(expr: str, module, setup: str = "", show: Callable | None = repr) -> tuple:
    """`("ok", show(value))` of `expr` run with `mx` (and `np`) bound, after the
    statements `setup`; `(exception type name, message)` where it raises."""
    scope = {"mx": module, "np": np}
    if setup:
        exec(setup, scope)
    try:
        value = eval(expr, scope)
        return "ok", value if show is None else show(value)
    except Exception as e:  # noqa: BLE001  (the exception is what is compared)
        return type(e).__name__, str(e)
