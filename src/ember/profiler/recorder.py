"""The profiler's level of the `bind` stack: one timed event per op, and the named ranges
around them.

Every op ember runs passes `bind`, so while a `Recorder` is the innermost level of a
thread's stack it sees each op that thread runs: `process` opens an event named as PyTorch
names the op (`aten_names`), runs the op, and closes it. It runs the op with itself still
innermost, so ops bound inside another op's evaluation are that op's children (its CPU
total includes them, its Self CPU does not). Code below the profiler (the backward engine,
an optimizer, `record_function`) opens named ranges through `_core.ranges`; ranges and ops
nest on one stack of open events.
"""

from __future__ import annotations

import os
import sys
import threading
from time import perf_counter_ns

from .. import _memory
from .._core import dispatch
from .._core.ranges import ranges
from .._tensor import Tensor
from ..utils import memory
from .aten_names import op_name
from .events import FunctionEvent

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _shapes(args: tuple, params: dict) -> list:
    """PyTorch's Input Shapes: a tensor's shape, `[]` for any other argument (the static
    params are arguments of the aten op too)."""
    shapes = [list(a._shape) if isinstance(a, Tensor) else [] for a in args]
    shapes += [[] for k in params if k != "fn"]
    return shapes


def _user_stack() -> list:
    """The caller's Python frames outside ember, innermost first, as PyTorch prints them."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        path = f.f_code.co_filename
        if not path.startswith(_EMBER_DIR):
            out.append(f"{path}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


class Recorder(dispatch.Interpreter):
    """Records the ops and ranges of the thread that started it, until `stop`."""

    observer = True

    def __init__(self, record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.events: list[FunctionEvent] = []  # in the order they started
        self._open: list[FunctionEvent] = []  # running now, innermost last
        self._thread = threading.get_ident()
        self._t0 = 0
        self._running = False

    # -- life ----------------------------------------------------------------------------

    def start(self) -> None:
        if ranges.recorder is not None:
            raise RuntimeError("Profiler is already enabled: another profile is recording")
        if self.profile_memory:
            memory.start_tracking()
        self._t0 = perf_counter_ns()
        dispatch.push(self)
        ranges.recorder = self
        self._running = True

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        now = perf_counter_ns() - self._t0
        while self._open:  # (a range an exception left open ends here)
            self._close(self._open[-1], now)
        ranges.recorder = None
        dispatch.pop(self)
        if self.profile_memory:
            memory.stop_tracking()

    # -- ops -----------------------------------------------------------------------------

    def process(self, prim, args: tuple, params: dict):
        event = self._begin(op_name(prim, args, params),
                            _shapes(args, params) if self.record_shapes else [])
        try:
            if self.parent is None:
                return prim.impl(prim, args, params)
            return self.lower(prim, args, params)
        finally:
            self._end(event)

    # -- ranges (through _core.ranges) ---------------------------------------------------

    def enter(self, name: str, inputs=(), user: bool = False) -> FunctionEvent | None:
        """Open a range named `name` (`inputs`: tensors whose shapes it records)."""
        if threading.get_ident() != self._thread:
            return None
        shapes = [list(t._shape) if isinstance(t, Tensor) else [] for t in inputs] \
            if self.record_shapes else []
        return self._begin(name, shapes, user)

    def exit(self, event: FunctionEvent | None) -> None:
        if event is not None and event in self._open:
            self._end(event)

    # -- events --------------------------------------------------------------------------

    def _begin(self, name: str, shapes: list, user: bool = False) -> FunctionEvent:
        parent = self._open[-1] if self._open else None
        event = FunctionEvent(len(self.events), name, self._thread, parent, shapes,
                              _user_stack() if self.with_stack else [], user)
        if parent is not None:
            parent.cpu_children.append(event)
        self.events.append(event)
        self._open.append(event)
        if self.profile_memory:
            event._mem_at_start = _memory.tracker.live
        event.start_ns = perf_counter_ns() - self._t0
        return event

    def _end(self, event: FunctionEvent) -> None:
        now = perf_counter_ns() - self._t0
        if self._open[-1] is event and not self.profile_memory:  # (an op: the common case)
            self._open.pop()
            event.end_ns = now
        else:
            self._close(event, now)

    def _close(self, event: FunctionEvent, now: int) -> None:
        while self._open:  # (closing a range closes what it left open inside)
            e = self._open.pop()
            e.end_ns = now
            if self.profile_memory:
                e.cpu_memory_usage = _memory.tracker.live - e._mem_at_start
            if e is event:
                break
