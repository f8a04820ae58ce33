"""`profile`: PyTorch's profiler context manager, over ember's recorder, and `record_function`.

`with profile() as prof:` records every op the block runs in this thread; `prof.step()`
moves a `schedule` on, recording only in its RECORD steps and calling `on_trace_ready` at
the end of each cycle. The transitions between a schedule's actions are PyTorch's.
"""

from __future__ import annotations

import functools
import json
import time
import warnings
from collections.abc import Callable, Iterable

from .._core.ranges import ranges
from .._user_warnings import user_stacklevel
from .events import EventList
from .recorder import Recorder
from .schedule import ProfilerAction, ProfilerActivity, record_always
from .trace import write_chrome_trace

_A = ProfilerAction


class record_function:
    """A named range in the profile (a context manager, or a decorator of a function whose
    every call is one): nothing happens unless a profiler is recording."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._recorder = None
        self._token = None

    def __enter__(self) -> record_function:
        rec = ranges.recorder
        if rec is not None:
            self._recorder = rec
            self._token = rec.enter(self.name, user=True)
        return self

    def __exit__(self, *exc) -> bool:
        if self._token is not None:
            self._recorder.exit(self._token)
            self._recorder = self._token = None
        return False

    def __call__(self, fn: Callable) -> Callable:
        name, args = self.name, self.args

        @functools.wraps(fn)
        def ranged(*a, **kw):
            with record_function(name, args):
                return fn(*a, **kw)

        return ranged


class profile:
    """PyTorch's `torch.profiler.profile` (see the module docstring)."""

    def __init__(self, *, activities: Iterable | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None) -> None:
        wanted = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if use_cuda:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=user_stacklevel())
        if not wanted:
            raise AssertionError("No valid profiler activities found")
        if use_cuda:
            wanted.add(ProfilerActivity.CUDA)
        for other in sorted(wanted - {ProfilerActivity.CPU}, key=lambda a: a.value):
            # (what PyTorch's CPU-only build says: ember records CPU activity only)
            warnings.warn(f"{other.name} is not available, disabling {other.name} profiling",
                          stacklevel=user_stacklevel())
        self.activities = wanted
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.on_trace_ready = on_trace_ready
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else record_always
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._recorder: Recorder | None = None  # the cycle being (or last) recorded
        self._base_ns = 0
        self._step_range: record_function | None = None
        self._metadata: dict = {}

    # -- the context manager and the schedule -----------------------------------------------

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self._transit(_A.NONE, self.current_action)
        self._open_step()

    def stop(self) -> None:
        self._close_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """The next step of the schedule begins."""
        self._close_step()
        before = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(before, self.current_action)
        self._open_step()

    def _open_step(self) -> None:
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}").__enter__()

    def _close_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _transit(self, before, after) -> None:
        """What PyTorch's profiler does when the schedule's action changes."""
        prepare, start, stop, ready = (self._prepare_trace, self._start_trace,
                                       self._stop_trace, self._trace_ready)

        def warn(text):
            return lambda: warnings.warn(text, stacklevel=user_stacklevel())

        steps = {
            (_A.NONE, _A.WARMUP): [prepare],
            (_A.NONE, _A.RECORD): [prepare, start],
            (_A.NONE, _A.RECORD_AND_SAVE): [prepare, start],
            (_A.WARMUP, _A.NONE): [warn("Incorrect schedule: WARMUP followed by NONE"),
                                   start, stop],
            (_A.WARMUP, _A.RECORD): [start],
            (_A.WARMUP, _A.RECORD_AND_SAVE): [start],
            (_A.RECORD, _A.NONE): [warn("Incorrect schedule: RECORD followed by NONE"), stop],
            (_A.RECORD, _A.WARMUP): [warn("Incorrect schedule: RECORD followed by WARMUP"),
                                     stop],
            (_A.RECORD_AND_SAVE, _A.NONE): [stop, ready],
            (_A.RECORD_AND_SAVE, _A.WARMUP): [stop, ready, prepare],
            (_A.RECORD_AND_SAVE, _A.RECORD): [stop, ready, prepare, start],
            (_A.RECORD_AND_SAVE, _A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (_A.WARMUP, None): [start, stop],
            (_A.RECORD, None): [stop, ready],
            (_A.RECORD_AND_SAVE, None): [stop, ready],
        }.get((before, after), [])
        for action in steps:
            action()

    def _prepare_trace(self) -> None:
        self._recorder = Recorder(self.record_shapes, self.profile_memory, self.with_stack)

    def _start_trace(self) -> None:
        if self._recorder is None:
            self._prepare_trace()
        self._base_ns = time.time_ns()
        self._recorder.start()

    def _stop_trace(self) -> None:
        if self._recorder is not None:
            self._recorder.stop()

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results -------------------------------------------------------------------------

    def events(self) -> EventList:
        """Every op call and range of the last recorded cycle, in the order they started."""
        events = self._recorder.events if self._recorder is not None else []
        return EventList(events, profile_memory=self.profile_memory)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """The last cycle as a Chrome trace (Perfetto, chrome://tracing) at `path`."""
        write_chrome_trace(self.events(), path, self._base_ns, self.record_shapes,
                           self.profile_memory, self._metadata)

    def add_metadata(self, key: str, value: str) -> None:
        """A string entry in the trace file's header."""
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """A JSON entry in the trace file's header."""
        self._metadata[key] = json.loads(value)
