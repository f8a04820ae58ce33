"""The profiler's level of the `bind` stack: one timed event per op, and the named ranges
around them.

Every op ember runs passes `bind`, so while a `Recorder` is the innermost level of a
thread's stack it sees each op that thread runs: `process` opens an event named as PyTorch
names the op (`aten_names`), runs the op, and closes it. It runs the op with itself still
innermost, so ops bound inside another op's evaluation are that op's children (its CPU
total includes them, its Self CPU does not). Code below the profiler (the backward engine,
an optimizer, `record_function`) opens named ranges through `_core.ranges`; ranges and ops
nest on one stack of open events.

While recording, an event is a few entries in flat lists (its name, parent, start and end
times): ints and strings, which the garbage collector never walks, so a long profile does
not slow the program it profiles. The `FunctionEvent` objects are built when asked for.
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
        # event i: _names[i], _parents[i] (an index, -1 for none), _starts[i] / _ends[i]
        # (ns since the start), in the order the events started
        self._names: list[str] = []
        self._parents: list[int] = []
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._shapes: dict[int, list] = {}  # (with record_shapes)
        self._stacks: dict[int, list] = {}  # (with with_stack)
        self._memory: dict[int, int] = {}  # bytes held at the start, then the change
        self._user: set[int] = set()  # the user annotations (record_function ranges)
        self._open: list[int] = []  # running now, innermost last
        self._thread = threading.get_ident()
        self._t0 = 0
        self._running = False
        self._built: list[FunctionEvent] | None = None

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
        if self._open:  # (a range an exception left open ends here)
            self._close(self._open[0], now)
        ranges.recorder = None
        dispatch.pop(self)
        if self.profile_memory:
            memory.stop_tracking()

    # -- ops -----------------------------------------------------------------------------

    def process(self, prim, args: tuple, params: dict):
        i = self._begin(op_name(prim, args, params))
        if self.record_shapes:
            self._shapes[i] = _shapes(args, params)
        try:
            if self.parent is None:
                return prim.impl(prim, args, params)
            return self.lower(prim, args, params)
        finally:
            now = perf_counter_ns() - self._t0
            if self._open[-1] == i and not self.profile_memory:  # (the common case)
                self._open.pop()
                self._ends[i] = now
            else:
                self._close(i, now)

    # -- ranges (through _core.ranges) ---------------------------------------------------

    def enter(self, name: str, inputs=(), user: bool = False) -> int | None:
        """Open a range named `name` (`inputs`: tensors whose shapes it records); returns
        the token `exit` takes."""
        if threading.get_ident() != self._thread:
            return None
        i = self._begin(name)
        if self.record_shapes:
            self._shapes[i] = [list(t._shape) if isinstance(t, Tensor) else []
                               for t in inputs]
        if user:
            self._user.add(i)
        return i

    def exit(self, token: int | None) -> None:
        if token is not None and token in self._open:
            self._close(token, perf_counter_ns() - self._t0)

    # -- events --------------------------------------------------------------------------

    def _begin(self, name: str) -> int:
        i = len(self._names)
        self._names.append(name)
        self._parents.append(self._open[-1] if self._open else -1)
        self._ends.append(0)
        self._open.append(i)
        if self.with_stack:
            self._stacks[i] = _user_stack()
        if self.profile_memory:
            self._memory[i] = _memory.tracker.live
        self._starts.append(perf_counter_ns() - self._t0)
        return i

    def _close(self, i: int, now: int) -> None:
        """End event i at `now`, and whatever it left open inside it."""
        while self._open:
            j = self._open.pop()
            self._ends[j] = now
            if self.profile_memory:
                self._memory[j] = _memory.tracker.live - self._memory[j]
            if j == i:
                break

    @property
    def events(self) -> list[FunctionEvent]:
        """The events recorded so far, as `FunctionEvent`s with their parents and children."""
        n = len(self._names)
        if self._built is None or len(self._built) != n:
            built: list[FunctionEvent] = []
            for i in range(n):
                p = self._parents[i]
                parent = built[p] if p >= 0 else None
                e = FunctionEvent(i, self._names[i], self._thread, parent,
                                  self._shapes.get(i, []), self._stacks.get(i, []),
                                  i in self._user)
                e.start_ns, e.end_ns = self._starts[i], self._ends[i]
                e.cpu_memory_usage = self._memory.get(i, 0) if i not in self._open else 0
                if parent is not None:
                    parent.cpu_children.append(e)
                built.append(e)
            self._built = built
        return self._built
