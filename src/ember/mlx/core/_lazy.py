"""MLX's lazy evaluation on ember's graph layer.

Each thread has one long-lived capture session (`graph.capture.Session`, the recorder
`ember.compile` uses). An `mx` op pushes it for its duration, so the ember ops it binds
record nodes of a graph instead of running, and its array holds a `LazyTensor`.
The pending graph runs when a value is needed: `mx.eval`, printing, `.item()`,
`.tolist()`, NumPy conversion, saving, `if arr:`, an op the recorder does not capture
(it runs the graph first, then itself), or the start of a transform (`grad`, `vmap`,
`compile`, which work on computed arrays). Running computes every pending array still
referenced and nothing else, then each becomes an ordinary tensor: evaluated arrays keep
no graph.

A graph whose structure recurs (the same training step, eval after eval) is run by
generated code fused into C from its second run on; a one-off graph runs node by node, its
kernels called straight from the graph (no code is written for it), so nothing waits on code
generation or a C compiler for a graph that never comes back. Both
give the same bits (MLX's `f(x)` is `f(x)` on every call): the fused loops leave the
transcendentals whose C differs from NumPy's kernels by some ulps to those kernels.
`EMBER_MLX_LAZY=0` runs every op at once instead.

Recording a graph costs about what running its ops at once does, and only a graph that
comes back repays it. So where graphs keep being new (a generation loop over a growing
cache, random crops: `MISSES` in a row), ops run at once for a while (a pause of some
graphs' worth of ops, doubling while the two graphs recorded after each pause are new),
then recording resumes to look again; a graph that comes back ends the backing off.
Gradients (`grad`, `value_and_grad`) and optimizer updates record even then: a training
step's graph comes back, and its recorded backward is replayed, where computing it at once
costs more. Either way the arrays hold the same bits, so only the time differs.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from ..._core import dispatch
from ..._core.dispatch import run_quiet
from ..._core.ranges import ranges
from ..._tensor import Tensor
from ...graph.capture import Session
from ...graph.compiled import hook_backward
from ...graph.direct import _RESHAPES as RESHAPES
from ...graph.direct import _reshape_view as reshape_view
from ...graph.fuse import lower_fused
from ...graph.ir import Scalar, Value
from ...graph.passes import live_nodes, optimized
from ...graph.program import Program, kernel_of, lower_python
from ...ops.views import view_p
from ._binding import bad_call
from ._device import _thread as _device_thread
from ._device import first_op
from ._errors import as_value_error, from_core
from ._silence import silently
from ._stream_texts import STREAM_TEXTS

_stack = dispatch._stack
_push, _unwind = dispatch.push, dispatch.unwind
enabled = [os.environ.get("EMBER_MLX_LAZY", "1") not in ("0", "")]

FUSE_FROM_RUN = 2  # a graph's run from which its fused program is used
_KEEP = 256  # programs kept per thread (the least recently used go first)
MISSES = 4  # new graphs in a row after which ops run at once for a while (at least 2)
PAUSE = 8  # graphs' worth of ops the first such pause lasts (doubling, up to PAUSE_MOST)
PAUSE_MOST = 512


def lower(graph) -> Program:
    """A recurring graph's fused program, computing its first run's bits: the loops leave
    the transcendentals whose C lands some ulps from their kernels (`deflower(ulps=)`) to
    those kernels, so that `f(x)` is `f(x)` on every call, as in MLX."""
    return lower_fused(optimized(graph), exact=True)


class Recurring:
    """A graph's program: the graph interpreted node by node on its first run (a one-off
    graph, as a loop over random crops or a growing cache makes, costs no code
    generation), then the fused program from the run where the graph has come back
    (compiled once, at that run)."""

    __slots__ = ("graph", "program", "runs", "fused")

    def __init__(self, graph) -> None:
        self.graph = graph
        self.program = None
        self.runs = 0
        self.fused = False

    def run(self, arrays: list) -> list:
        self.runs += 1
        if self.runs == FUSE_FROM_RUN:
            self.program = lower(self.graph)
            self.fused = True
        if self.program is None:
            if ranges.recorder is None:
                return run_quiet(interpret, self.graph, arrays)
            self.program = lower_python(self.graph)  # (its lines are the profiler's ranges)
        return self.program.run(arrays)


def interpret(graph, arrays: list) -> list:
    """What `lower_python(graph).run(arrays)` returns, without writing its code: each live
    node's kernel called in order with the same arguments (a product or transpose that
    `direct` writes as a NumPy call is that kernel's own call, the same bits; a reshape
    takes `direct`'s way), each intermediate dropped after the node that reads it last,
    as the generated code deletes it."""
    nodes = live_nodes(graph)
    env: dict = dict(zip(graph.inputs, arrays))
    env.update(zip(graph.scalars, arrays[len(graph.inputs):]))
    kept = set(graph.outputs)
    last: dict = {}
    for i, n in enumerate(nodes):
        for o in n.outs:
            last[o] = i
        for a in n.args:
            if a.__class__ is Value:
                last[a] = i
    dead: dict = {}
    for v, i in last.items():
        if v.node is not None and v not in kept:
            dead.setdefault(i, []).append(v)
    for i, n in enumerate(nodes):
        kernel, params = kernel_of(n)
        args = [env[a] if a.__class__ is Value or a.__class__ is Scalar else a
                for a in n.args]
        if any(v.__class__ is Scalar for v in params.values()):
            params = {k: env[v] if v.__class__ is Scalar else v for k, v in params.items()}
        if n.prim is view_p and n.params["fn"] in RESHAPES:
            # (as the generated line: a layout the view does not fit reshapes by a copy)
            out = reshape_view(args[0], tuple(params["size"]), kernel)
        else:
            out = kernel(*args, **params)
        if len(n.outs) == 1:
            env[n.outs[0]] = out
        elif n.outs:  # (a write into an input has none)
            env.update(zip(n.outs, out))
        del args, out  # (so that a value dropped below is freed there, not a node later)
        for v in dead.get(i, ()):
            del env[v]
    returned: set = set()
    outs = []
    for v in graph.outputs:  # (two outputs that are one value: a copy each, as generated)
        outs.append(env[v] if v not in returned else np.copy(env[v]))
        returned.add(v)
    return outs


class _Programs(OrderedDict):
    """Programs by graph structure, the least recently used dropped past `_KEEP`."""

    def get(self, key, default=None):
        p = OrderedDict.get(self, key)
        if p is None:
            return default
        self.move_to_end(key)
        return p

    def __setitem__(self, key, value) -> None:
        OrderedDict.__setitem__(self, key, value)
        if len(self) > _KEEP:
            self.popitem(last=False)


_BOOKKEEPING = 1024  # elements: integer ops this small on computed tensors run at once


def _bookkeeping(args: tuple) -> bool:
    """Whether an op reads only computed integer (or bool) tensors of a few elements (a
    step counter's increment, class indices cast to int64): it runs at once instead of
    joining the graph, whose compiled program would otherwise have to carry integer
    arithmetic its C does not cover."""
    seen = False
    for a in args:
        if isinstance(a, Tensor):
            if a.__class__ is not Tensor or a._dtype.is_floating_point or \
                    a._dtype.is_complex or a.numel() > _BOOKKEEPING:
                return False
            seen = True
    return seen


class World(Session):
    """The thread's lazy session: every flush starts the next graph afresh."""

    def __init__(self) -> None:
        super().__init__(_Programs(), lambda graph, segment: Recurring(graph))
        self.evaluations = 0  # graphs run so far
        self.settle()
        hook_backward()  # (a step's backward, recorded here, is replayed when it recurs)

    def settle(self) -> None:
        """Forget how recent graphs went: record every op again from now (module doc)."""
        self.ops = 0  # mx ops recorded since the last graph ran
        self.misses = 0  # graphs in a row that ran for the first time
        self.pause = 0  # ops left to run at once
        self.span = PAUSE  # graphs' worth of ops the next pause lasts
        self.depth = 0  # 1 inside an op run at once during a pause

    def _learn(self, program) -> None:
        """After a graph ran: whether it had run before, and so whether to pause."""
        ops, self.ops = self.ops, 0
        if program.runs > 1:
            self.misses, self.span = 0, PAUSE
            return
        self.misses += 1
        if self.misses >= MISSES:
            self.pause = max(ops, 1) * self.span
            self.span = min(2 * self.span, PAUSE_MOST)
            # (after the pause, two more new graphs pause again: a graph that first came
            # during the pause has its first recorded run then, and may come back)
            self.misses = MISSES - 2

    def process(self, prim, args: tuple, params: dict):
        if _bookkeeping(args):
            return self.lower(prim, args, params)
        return Session.process(self, prim, args, params)

    def flush(self, reason: str = "value needed", op: str | None = None) -> None:
        had = bool(self.graph.nodes)
        silently(super().flush, reason, op)  # (its kernels warn as PyTorch's; MLX is silent)
        if self.runs and self.runs[-1].program.__class__ is Recurring:
            self._learn(self.runs[-1].program)
        self.runs.clear()
        self.segment = 0  # (each graph is the first of its "call": following finds it)
        self.evaluations += had


class _Local(threading.local):
    world: World | None = None


_local = _Local()


def world() -> World:
    w = _local.world
    if w is None:
        w = _local.world = World()
    return w


def lazy(fn: Callable, check_stream: Callable | None = None) -> Callable:
    """`fn` with this thread's lazy session innermost while it runs, unless another
    interpreter is already there (a transform, `compile`, a profiler, or the session).
    With `check_stream`, a `stream=` keyword is taken off and checked by it first. ember's
    core errors leave as MLX's types (`_errors`); its warnings do not leave (`_silence`)."""
    def op(*args, **kwargs):
        if not _device_thread.defaults:  # (this thread's first op makes its default stream)
            first_op()
        try:
            if _stack.top is not None or not enabled[0]:
                return silently(fn, *args, **kwargs)
            w = _local.world or world()
            if w.pause:  # (graphs kept being new: this op runs at once)
                return _at_once(w, fn, args, kwargs)
            w.ops += 1
            _push(w)
            try:
                return silently(fn, *args, **kwargs)
            finally:
                _unwind(w)
        except RuntimeError as e:
            if from_core(e):
                raise as_value_error(e) from None
            raise
    if check_stream is None:
        return _named(op, fn)

    def op_on_stream(*args, stream=None, **kwargs):
        if stream is not None and check_stream(stream) is False:
            return _wrong_stream(fn, op, args, kwargs, stream)
        return op(*args, **kwargs)
    return _named(op_on_stream, fn)


def _at_once(w: World, fn: Callable, args: tuple, kwargs: dict):
    """`fn` run at once during a pause, which counts the calls not made inside another, as
    recording counts them (there the session is innermost inside a call)."""
    if w.depth:
        return silently(fn, *args, **kwargs)
    w.pause -= 1
    w.depth = 1
    try:
        return silently(fn, *args, **kwargs)
    finally:
        w.depth = 0


def _wrong_stream(fn: Callable, op: Callable, args: tuple, kwargs: dict, stream):
    """A `stream=` of a type MLX's binding refuses: `fn`'s binding check refuses it in
    MLX's words where `fn` has one (`_strict`), else with MLX's signature text where
    `_stream_texts` has it (or `...` for the parameters)."""
    named = {**kwargs, "stream": stream}
    if getattr(fn, "binds_stream", False):
        return op(*args, **named)
    name = fn.__name__
    text = STREAM_TEXTS.get(name, "..., *, stream: StreamOrDevice = None) -> array")
    raise bad_call(name, f"{name}({text}", args, named)


def _named(op: Callable, fn: Callable) -> Callable:
    op.__name__ = op.__qualname__ = fn.__name__
    op.__doc__ = fn.__doc__
    op.__wrapped__ = fn
    return op


def evaluate(reason: str) -> None:
    """Run this thread's pending graph (if any)."""
    w = _local.world
    if w is not None and w.graph.nodes:
        w.flush(reason)


def settle() -> None:
    """Record this thread's ops again from now on, forgetting how its recent graphs went
    (tests that look at recording start here)."""
    w = _local.world
    if w is not None:
        w.settle()


def graph_size() -> int:
    """How many nodes this thread's pending graph holds (ember's own: MLX has no such
    call; it shows why a loop should evaluate each step)."""
    w = _local.world
    return 0 if w is None else len(w.graph.nodes)


def recording() -> World | None:
    """This thread's lazy session when ops bound here would be recorded by it (lazy mode
    on, and no interpreter but the session on the stack), else None."""
    if not enabled[0]:
        return None
    top = _stack.top
    if top is None:  # (during a pause too: a gradient's graph recurs with its step)
        return _local.world or world()
    return top if top is _local.world else None


def transforming() -> bool:
    """Whether an interpreter other than the lazy session is innermost (a vmap, a jvp,
    `compile`'s tracer, a profiler)."""
    top = _stack.top
    return top is not None and top is not _local.world


class inside:
    """`with inside(w):` session `w` innermost for the block (already there: nothing)."""

    __slots__ = ("w", "pushed")

    def __init__(self, w: World) -> None:
        self.w = w

    def __enter__(self) -> World:
        self.pushed = _stack.top is not self.w
        if self.pushed:
            _push(self.w)
        return self.w

    def __exit__(self, *exc) -> bool:
        if self.pushed:
            _unwind(self.w)
        return False


def eager(fn: Callable, *args, **kwargs):
    """`fn(*args, **kwargs)` with the pending graph run first and ops bound at once (for
    the transforms built on ember.func, which work on computed tensors)."""
    evaluate("transform")
    w = _local.world
    if w is not None and _stack.top is w:
        return w.below(fn, *args, **kwargs)
    return fn(*args, **kwargs)
