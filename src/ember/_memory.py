"""How many bytes CPU tensors hold, and the most they have held.

The bytes a tensor holds live in one NumPy buffer (its kernel's fresh result, or the array
under its storage), shared by its views and aliases; a buffer is freed when the last of
them goes, which only the buffer itself knows. So:

- `ember.utils.memory.allocated()` counts the buffers under the live tensors when asked
  (exact, and free until then);
- a peak needs every allocation and free as it happens: `tracker`, while on, counts each
  new buffer and holds a weak reference to it whose callback counts the free. That costs
  about a quarter of a small op's time, so it is on only while someone needs it: a profiler
  recording memory, or `ember.utils.memory` once `reset_peak()` has asked for a peak.
  While off, an op pays one attribute test (`_wrap` and `Storage` check `tracker.on`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable

import numpy as np


def _root(arr):
    """The array that owns `arr`'s memory (the end of its chain of bases)."""
    while True:
        base = arr.base
        if base.__class__ is not np.ndarray:
            return arr
        arr = base


def buffers_of(tensor):
    """The buffers (owning arrays) under a CPU tensor: its kernel result, its storage's."""
    a = tensor._np
    if a is not None:
        yield _root(a)
    s = tensor._storage
    if s is not None and s.data is not None:
        yield _root(s.data)


class _Buffer(weakref.ref):
    """A weak reference to a counted buffer, carrying what its free must uncount."""

    __slots__ = ("key", "nbytes")


class Tracker:
    """Counts allocations and frees as they happen, while on (`start` / `stop`, nested)."""

    def __init__(self) -> None:
        self.on = False
        self.live = 0  # bytes held by tracked buffers
        self.peak = 0  # the most `live` has been since `reset_peak`
        self._users = 0
        self._refs: dict[int, _Buffer] = {}

    def start(self, live: Callable[[], Iterable]) -> None:
        """Count from now on; `live()` gives the buffers already held (read on the first
        start only)."""
        self._users += 1
        if self._users == 1:
            self.on = True
            for arr in live():
                self.add(arr)
            self.peak = self.live

    def stop(self) -> None:
        self._users -= 1
        if self._users == 0:
            self.on = False
            self._refs.clear()  # (the references die with their callbacks)
            self.live = 0

    def reset_peak(self) -> None:
        self.peak = self.live

    def add(self, arr) -> None:
        """Count `arr`'s buffer, unless it is counted already."""
        root = _root(arr)
        key = id(root)
        if key in self._refs:
            return
        ref = _Buffer(root, self._freed)
        ref.key = key
        ref.nbytes = n = root.nbytes
        self._refs[key] = ref
        self.live += n
        if self.live > self.peak:
            self.peak = self.live

    def _freed(self, ref: _Buffer) -> None:
        if self._refs.get(ref.key) is ref:
            del self._refs[ref.key]
            self.live -= ref.nbytes


tracker = Tracker()
