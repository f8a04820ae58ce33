"""ember.utils.memory: how many bytes CPU tensors hold (`allocated`), and the most they
have held since `reset_peak` (`max_allocated`): what `torch.cuda.memory_allocated` /
`max_memory_allocated` / `reset_peak_memory_stats` report for a GPU, for ember's CPU
tensors. (`torch.cuda`'s own functions keep the CPU-only build's answers.)

A buffer shared by views and aliases is counted once. `allocated()` counts the buffers of
the live tensors when asked. A peak needs every allocation as it happens, which costs each
op a little while it is measured, so measuring starts at the first `reset_peak()` and goes
on from there (see `ember._memory`).
"""

from __future__ import annotations

from .._memory import live_bytes, tracker

_measuring = [False]  # reset_peak() has started the tracker for this module


def allocated() -> int:
    """Bytes held by CPU tensors now."""
    return tracker.live if tracker.on else live_bytes()


def max_allocated() -> int:
    """The most bytes CPU tensors have held since `reset_peak()` (before the first
    `reset_peak()`, nothing has been measured: the bytes held now)."""
    return tracker.peak if _measuring[0] else allocated()


def reset_peak() -> None:
    """Start the peak afresh from the bytes held now (and keep measuring from here on)."""
    if not _measuring[0]:
        tracker.start()
        _measuring[0] = True
    tracker.reset_peak()


__all__ = ["allocated", "max_allocated", "reset_peak"]
