"""When a scheduled profiler records: `schedule(wait, warmup, active, repeat)` and its actions.

A schedule maps the step number (`prof.step()` counts them) to an action. The profiler
records in RECORD steps and hands the trace to `on_trace_ready` at the end of each
RECORD_AND_SAVE step. WARMUP steps run unrecorded: PyTorch warms its tracer up there, and
ember's recorder needs no warming, so to ember they are steps that wait.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from enum import Enum

from .._user_warnings import user_stacklevel


class ProfilerAction(Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class ProfilerActivity(Enum):
    """What a profiler records. ember runs on the CPU only, as PyTorch's CPU build does."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set:
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """Skip `skip_first` steps, then cycle: `wait` steps idle, `warmup` steps warming up,
    `active` steps recorded (the last of them RECORD_AND_SAVE); `repeat` cycles (0: for as
    long as the program steps). `skip_first_wait` drops the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=user_stacklevel())
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def record_always(step: int) -> ProfilerAction:
    """The schedule of a profiler given none: every step recorded."""
    return ProfilerAction.RECORD
