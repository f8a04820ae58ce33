"""Temporary elision: `a * b + c` writes the sum into the buffer of `a * b`.

In an expression, an intermediate tensor is referenced only by the interpreter's
stack while the next operator runs, and dies right after it. When that
intermediate owns a large fresh buffer, the operator can compute into it instead
of allocating (and page-faulting) another one, so the expression allocates no
more than its result. NumPy does the same for its own arrays.

A buffer is taken only when nothing else can see it: the operand is a plain
tensor whose reference count is that of a temporary (measured once, below, so a
Python whose stack references count differently simply never elides), the call
comes straight from a Python operator, no view, alias or autograd node holds it,
and its NumPy array owns its data and is referenced by that tensor alone.
"""

from __future__ import annotations

import dis
import sys

from .. import _grad_mode as grad_mode
from .._tensor import Tensor

MIN_BYTES = 1 << 18  # NumPy's threshold too: below it, allocation is cheap
_grad_state = grad_mode.state
_BINARY_OP = dis.opmap.get("BINARY_OP")


def _calibrate() -> int | None:
    """sys.getrefcount of a temporary left operand inside `__add__`, or None when a temporary
    cannot be told apart from a named operand on this interpreter."""
    seen = []

    class Probe:
        def __add__(self, other):
            seen.append(sys.getrefcount(self))
            return self

    Probe() + 0  # noqa: B018
    named = Probe()
    named + 0  # noqa: B018
    temp, held = seen
    return temp if _BINARY_OP is not None and temp < held else None


TEMP_REFS = _calibrate()


def reusable(x, refs: int, other, dtype, depth: int) -> bool:
    """True when operand `x` (with `refs` references, counted in the operator method that
    is `depth` frames up) is a dying temporary whose buffer can hold the result of
    combining it with `other` in `dtype`."""
    if refs != TEMP_REFS or x.__class__ is not Tensor or x._storage is not None:
        return False
    arr = x._np
    if arr is None or arr.nbytes < MIN_BYTES or x._dtype is not dtype or x._requires_grad:
        return False
    if not (arr.flags.owndata and arr.flags.writeable) or sys.getrefcount(arr) > 3:
        return False  # (x._np, `arr` here, and getrefcount's argument)
    if isinstance(other, Tensor):
        if other._np is None or other._requires_grad and _grad_state.enabled:
            return False
        s, o = arr.shape, other._shape
        if len(o) > len(s) or any(n not in (1, m) for n, m in zip(o[::-1], s[::-1])):
            return False  # the result would be larger than x
    frame = sys._getframe(depth + 1)  # the code that ran the operator
    return frame.f_code.co_code[frame.f_lasti] == _BINARY_OP
