"""Plans of checked calls, kept by what the checks read (the call's key), so that a call
like one seen before skips its checks and setup: avg_pool.py's window sums, interpolate's
taps, the gather pads' index grids, unfold / fold's positions.

A program that calls an op with ever new shapes (variable-length sequences) would grow
such a cache without end: `Plans` forgets everything once it holds `limit` plans, which
costs the calls after it their checks once more and nothing else.
"""

from __future__ import annotations


class Plans(dict):
    """A dict of plans by call key that empties itself when full."""

    def __init__(self, limit: int = 256) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key, plan) -> None:
        if len(self) >= self.limit:
            self.clear()
        super().__setitem__(key, plan)
