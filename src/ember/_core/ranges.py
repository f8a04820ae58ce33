"""Named ranges the profiler records from code below it: the backward engine's nodes, an
optimizer's `step` and `zero_grad`, a DataLoader's `__next__`, `record_function` blocks.

`ranges.recorder` is the recording profiler, or None; code that marks a range reads it once
and does nothing more when it is None, so with no profiler recording a range costs one
attribute read. The recorder keeps to its own thread (`enter` returns None elsewhere).
"""

from __future__ import annotations


class _Ranges:
    # recorder.enter(name, inputs=(), user=False) -> a token; recorder.exit(token) closes it.
    # `user`: a range PyTorch marks with record_function (a "user annotation" in its trace)
    recorder = None


ranges = _Ranges()


def run_in_range(name: str, fn, /, *args, **kwargs):
    """`fn(*args, **kwargs)` inside a range named `name` when a profiler records (a
    user annotation, as PyTorch's record_function makes)."""
    rec = ranges.recorder
    if rec is None:
        return fn(*args, **kwargs)
    token = rec.enter(name, user=True)
    try:
        return fn(*args, **kwargs)
    finally:
        rec.exit(token)
