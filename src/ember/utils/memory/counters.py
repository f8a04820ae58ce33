"""ember.utils.memory counters: how many bytes CPU tensors hold (`allocated`), and the most they
have held since `reset_peak` (`max_allocated`): what `torch.cuda.memory_allocated` /
`max_memory_allocated` / `reset_peak_memory_stats` report for a GPU, for ember's CPU
tensors. (`torch.cuda`'s own functions keep the CPU-only build's answers.)

A buffer shared by views and aliases is counted once. `allocated()` counts the buffers of
the live tensors when asked. A peak needs every allocation as it happens, which costs each
op a little while it is measured, so measuring starts at the first `reset_peak()` and goes
on from there (see `ember._memory`).
"""

from __future__ import annotations

import gc

from ..._memory import buffers_of, tracker
from ..._tensor import Tensor

_measuring = [False]  # reset_peak() has started the tracker for this module


def live_buffers() -> list:
    """Every buffer under a live CPU tensor, once each."""
    found = {}
    for obj in gc.get_objects():
        if issubclass(type(obj), Tensor):  # (not isinstance: no proxy's __class__ is asked)
            for arr in buffers_of(obj):
                found[id(arr)] = arr
    return list(found.values())


def start_tracking() -> None:
    """Count allocations and frees as they happen (until as many `stop_tracking` calls)."""
    tracker.start(live_buffers)


def stop_tracking() -> None:
    tracker.stop()


def allocated() -> int:
    """Bytes held by CPU tensors now."""
    return tracker.live if tracker.on else sum(a.nbytes for a in live_buffers())


def max_allocated() -> int:
    """The most bytes CPU tensors have held since `reset_peak()` (before the first
    `reset_peak()`, nothing has been measured: the bytes held now)."""
    return tracker.peak if _measuring[0] else allocated()


def reset_peak() -> None:
    """Start the peak afresh from the bytes held now (and keep measuring from here on)."""
    if not _measuring[0]:
        start_tracking()
        _measuring[0] = True
    tracker.reset_peak()


__all__ = ["allocated", "live_buffers", "max_allocated", "reset_peak", "start_tracking",
           "stop_tracking"]
