"""MLX 0.32.4 as an oracle: one expression evaluated with `mx` bound to ember's MLX face
and to MLX itself, for tests that compare what each gives (value or exception)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# arrays several comparison tests evaluate their expressions on: ints with both signs,
# floats with NaN and infinities, and a small float matrix
SMALL = ("a = mx.array([[1, -2, 3], [4, 5, -6]]);"
         "f = mx.array([1.5, -2.5, float('nan'), float('inf'), -float('inf')]);"
         "x = mx.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0]])")


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


def grad_repr(fn: str, arg: str, module) -> str:
    """The repr of `module.grad(fn)(arg)`, both given as source with `mx` bound."""
    scope = {"mx": module}
    return repr(module.grad(eval(fn, scope))(eval(arg, scope)))
