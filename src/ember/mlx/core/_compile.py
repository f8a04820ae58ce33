"""`mx.compile` and `mx.eval` on ember's graph layer.

`compile(fun)` runs `fun` through `ember.compile`: its ops are captured as a graph, looked
up by structure and run as one fused program. This is ember's default compile mode, in
which the Python runs on every call; MLX's own rules (captured arrays frozen at the first
trace unless listed in `inputs=`, `shapeless=`) are not modelled yet: a program that relies
on a captured array staying frozen sees its new value here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import ember as E
from ember._tensor import Tensor

from . import _lazy, _trees
from ._array import array

_disabled = [os.environ.get("MLX_DISABLE_COMPILE", "") not in ("", "0")]


def disable_compile() -> None:
    """Make `mx.compile` return functions that run as written (as MLX_DISABLE_COMPILE)."""
    _disabled[0] = True


def enable_compile() -> None:
    _disabled[0] = False


def compile(fun: Callable, inputs=None, outputs=None, shapeless: bool = False) -> Callable:  # noqa: A001
    """`fun`, captured and run as compiled graphs (see the module docstring)."""
    compiled = E.compile(fun)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if _disabled[0]:
            return fun(*args, **kwargs)
        _lazy.evaluate("mx.compile")
        return compiled(*args, **kwargs)

    return wrapped


def eval(*trees) -> None:  # noqa: A001  (MLX's name)
    """Compute every array in `trees` (lists, tuples, dicts; other leaves are ignored)."""
    for x in _trees.leaves(list(trees)):
        if isinstance(x, array) and x._t.__class__ is not Tensor:
            _lazy.evaluate("mx.eval")
            return


def async_eval(*trees) -> None:
    """As `eval` (the CPU computes in order, so there is nothing to run in the background)."""
    eval(*trees)
