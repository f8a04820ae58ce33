"""Plans of checked calls, kept by what the checks read (the call's key), so that a call
like one seen before skips its checks and setup: avg_pool.py's window sums, interpolate's
taps, the gather pads' index grids, unfold / fold's positions.

A program that calls an op with ever new shapes (variable-length sequences) would grow
such a cache without end: `Plans` forgets everything once it holds `limit` plans, which
costs the calls after it their checks once more and nothing else.
"""

from __future__ import annotations

from .._tensor import Tensor


class Plans(dict):
    """A dict of plans by call key that empties itself when full."""

    def __init__(self, limit: int = 256) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key, plan) -> None:
        if len(self) >= self.limit:
            self.clear()
        super().__setitem__(key, plan)


def window_key(nd: int, input: Tensor, sizes: tuple, flags: tuple) -> tuple | None:
    """What a pooling's checks read: the input's shape and dtype, the window sizes as given
    (ints, tuples of ints, None) and the flags (bools); None for arguments of other types,
    or a tensor not of ember's own class, which take every check (and its refusal's
    words)."""
    if input.__class__ is not Tensor:
        return None
    for v in sizes:
        if v.__class__ is not int and v is not None and not (
                v.__class__ is tuple and all(e.__class__ is int for e in v)):
            return None
    for f in flags:
        if f.__class__ is not bool:
            return None
    return (nd, input._shape, input._dtype) + sizes + flags
