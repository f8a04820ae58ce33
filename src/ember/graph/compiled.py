"""A compiled function: the Python runs on every call, its ops are captured into graphs,
and each graph runs as a compiled program looked up by the graph's structure.

What decides reuse is the recorded graph itself, used as the key of a cache of programs:
its nodes (primitives, members, static params, Python scalars that reached an op) and its
inputs' shapes, dtypes and strides. Whatever changes one of those (a new shape, dtype or
layout, `train()` / `eval()` taking another path, grad mode recording other ops, a new
Python number) records another graph and compiles it once. There are no guards to get
wrong: the Python that decides what runs runs every time, as in eager mode, so side
effects (print, appending to a list, mutating a module) happen on every call.

Past `config.recompile_limit` programs for one function, further new graphs run without
compiling (op by op, as eager) and one warning names what changed.
"""

from __future__ import annotations

import functools
import os
import sys
import types
import warnings
import weakref
from collections.abc import Callable
from contextlib import nullcontext

from .. import _grad_mode
from .._core.dispatch import _stack, push, unwind
from .._core.memo_seam import memos
from .._user_warnings import user_stacklevel
from ..autograd import engine as _engine
from ..nn.modules.module import mode_changes
from ..optim.optimizer import step_watchers
from . import memo as _memo  # noqa: F401  (plugs the call memos into nn and optim)
from . import proof
from .capture import Break, Session, active
from .ir import Graph, freeze
from .passes import optimized
from .program import Program, lower_python
from .replay import Replay, replayable, signature

_grad_state = _grad_mode.state


class Config:
    """`torch._dynamo.config`'s settings that ember honours."""

    recompile_limit = 8

    @property
    def cache_size_limit(self) -> int:
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, value: int) -> None:
        self.recompile_limit = value


config = Config()


class TorchDynamoException(RuntimeError):
    """The base of what `fullgraph=True` raises (`torch._dynamo.exc.TorchDynamoException`)."""


class Unsupported(TorchDynamoException):
    """A graph break under `fullgraph=True` (PyTorch's `torch._dynamo.exc.Unsupported`)."""


class UserError(TorchDynamoException):
    """Python control flow on a tensor's value under `fullgraph=True` (`bool(t)`), which
    PyTorch raises as `torch._dynamo.exc.UserError`."""


class TorchRuntimeError(TorchDynamoException):
    """An op that fails while a compiled call records it (a shape or dtype mistake): PyTorch
    meets the error running the op on fake tensors and raises it as this."""


# (they print as the exceptions of `torch._dynamo.exc`, where `ember._dynamo.exc` exports them)
for _cls in (TorchDynamoException, Unsupported, UserError, TorchRuntimeError):
    _cls.__module__ = "ember._dynamo.exc"


def _as_dynamo_error(e: Exception, fullgraph: bool) -> TorchDynamoException | None:
    """What PyTorch raises instead of `e` when `e` escapes a compiled call, or None where it
    lets `e` through. An op's own check failing while the call records (ember's counterpart
    of an ATen kernel's meta check: a shape or dtype mistake) is a TorchRuntimeError, as
    PyTorch meets it running the op on fake tensors. Errors a kernel raises on the values
    (a non-positive-definite Cholesky), IndexErrors and Dynamo's own pass; any other error
    (the user's `raise`, PyTorch's Python checks such as an optimizer's, a TypeError about
    an argument, a backward pass or a `torch.compiler.disable` helper) passes as in eager
    mode, but under `fullgraph=True` is Unsupported (PyTorch cannot trace past it)."""
    if isinstance(e, (TorchDynamoException, IndexError)):
        return None
    frames, tb = [], e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    if any(c.co_filename == _PROGRAM or c.co_name in _KERNEL_CALLS for c in frames):
        return None
    if frames and frames[-1].co_filename.startswith(_OPS) and not (
            isinstance(e, TypeError) and "argument" in str(e)) and \
            not any(c is _EAGER_CODE or c.co_filename == _ENGINE for c in frames):
        return TorchRuntimeError(
            "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run "
            f"FX node with fake tensors: got {e!r}\n  Hint: Your code may result in an error "
            "when running in eager. Please double check that your code doesn't contain a "
            "similar error when actually running eager/uncompiled. You can do this by "
            "removing the `torch.compile` call, or by using "
            "`torch.compiler.set_stance(\"force_eager\")`. ")
    if fullgraph:
        return Unsupported(f"Observed exception: {e!r}; fullgraph=True requires the whole "
                           "function to be one graph")
    return None


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# where ember's ops check their arguments and compute shapes (what ATen does in PyTorch)
_OPS = tuple(_PACKAGE + p for p in ("ops" + os.sep, "_core" + os.sep, "linalg" + os.sep,
                                    "_view.py"))
_ENGINE = os.path.abspath(_engine.__file__)
# frames that run kernels on values (a graph's program, an op run eagerly): an error there
# depends on the data, which PyTorch meets at run time, unwrapped
_PROGRAM = "<ember graph>"
_KERNEL_CALLS = frozenset({"eval_kernel", "eval_member", "run_quiet"})

# Breaks that `fullgraph=True` lets pass: PyTorch traces these (a tensor's number or
# array read into arithmetic, an op whose output shape depends on the values) with
# symbolic sizes and raises nothing; ember runs the graph there and goes on.
_SYMBOLIC_IN_PYTORCH = frozenset({".item()", ".numpy()", "dynamic shape operator"})


def _print_sites(fn: Callable) -> frozenset:
    """The code objects of `fn` (a compiled module's `forward`) that name `print`."""
    owner = getattr(fn, "__self__", None)
    if getattr(fn, "__name__", None) == "_call_uncompiled" and owner is not None:
        fn = type(owner).forward
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return frozenset({code}) if code is not None and "print" in code.co_names else \
        frozenset()


def _refusing_print(owner: Compiled, args: tuple, kwargs: dict):
    """Run a `fullgraph=True` call whose code names `print`, raising `Unsupported` when a
    call of the built-in `print` is about to run there (PyTorch's tracer refuses it before
    anything is printed). A profile function sees the call (chained to any already set)."""
    import builtins

    before = sys.getprofile()
    sites = owner._print_sites

    def refuse(frame, event, arg):
        if event == "c_call" and arg is builtins.print and frame.f_code in sites:
            raise Unsupported(f"graph break: print (at {frame.f_code.co_filename}:"
                              f"{frame.f_lineno}); fullgraph=True requires the whole "
                              "function to be one graph")
        if before is not None:
            before(frame, event, arg)

    sys.setprofile(refuse)
    try:
        return owner._call(args, kwargs)
    finally:
        sys.setprofile(before)


class _Capturing:
    """`with Compiled.capturing():` a new session, the thread's and the innermost
    interpreter inside the block; it runs its last graph when the block ends normally.
    (A class, not a generator: this wraps every compiled call.)"""

    __slots__ = ("owner", "backward", "session", "outer")

    def __init__(self, owner: Compiled, backward: bool) -> None:
        self.owner, self.backward = owner, backward

    def __enter__(self) -> Session:
        owner = self.owner
        self.outer = active.session
        compile_graph = owner._compile_backward if self.backward else owner._compile
        session = self.session = Session(owner.programs, compile_graph, on_run=owner._ran,
                                         owner=owner, expected=owner.expected)
        active.session = session
        memos.active += 1
        push(session)
        return session

    def __exit__(self, kind, value, tb) -> bool:
        try:
            unwind(self.session)
            if kind is None:
                self.session.flush("end of call")
        finally:
            memos.active -= 1
            active.session = self.outer
        return False


def user_frame() -> str:
    """`file:line` of the innermost frame outside ember: where the user's code was."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f = sys._getframe(1)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        if not path.startswith(root):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return "?"


def logs() -> set:
    """The TORCH_LOGS artifacts ember prints: graph_code, graph_breaks, recompiles, guards,
    output_code (comma-separated, `+` prefixes allowed)."""
    raw = os.environ.get("TORCH_LOGS", "")
    return {p.strip().lstrip("+") for p in raw.split(",") if p.strip()}


class Compiled:
    """`ember.compile(fn)`: call it as `fn`; see the module docstring."""

    def __init__(self, fn: Callable, *, fullgraph: bool = False, dynamic=None,
                 backend: str = "inductor", mode: str | None = None,
                 options: dict | None = None) -> None:
        functools.update_wrapper(self, fn, updated=())
        self.fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend = backend
        self.mode = mode or "default"
        self.options = dict(options or {})
        self.programs: dict = {}
        self.expected: dict = {}  # segment -> graphs that ran there lately (capture.Session)
        self.graphs: list[Graph] = []  # one per program compiled, in order
        self.breaks: list[Break] = []  # every graph break seen, with where it happened
        self.recompiles: list[str] = []  # what changed, for each program after the first
        # graph index within a call (("backward", index) in a backward pass) -> its graphs
        self.per_segment: dict = {}
        pure = self.options.get("pure", "proven")
        self.pure = pure is True or (pure not in (False, "proven") and bool(pure))
        # default mode skips the Python of calls it proves free of Python effects (proof.py)
        self.proven = pure == "proven" and proof.scan(fn)
        if self.proven:
            code, chains, n_args = self.proven
            self.proven = (code, [proof._getter(fn, c) for c in chains], n_args)
        # fullgraph=True refuses `print` before it runs, as PyTorch's tracer does
        self._print_sites = _print_sites(fn) if fullgraph else frozenset()
        if self._print_sites:
            self.proven = None  # (the audit's profile function would replace the refusal's)
        self.proofs: dict = {}  # call signature -> the Proof of its replay
        self.misses = 0  # calls in a row a proven replay could not take
        self.replays: dict = {}  # call signature -> Replay (pure mode)
        self._seen: dict = {}  # call signature -> (graph key, numbers) of its last trace
        self.not_replayed: list[str] = []  # why traced calls could not become replays
        self.replayed = 0
        self.backward_replays = 0  # backward passes replayed from a memo (backward.py)
        self.call_memo_hits = 0  # module calls and optimizer steps taken from a memo (memo.py)
        self.calls = 0
        self.over_limit = False
        _every.add(self)
        if not _live[0]:
            _live[0] = True
            hook_backward()

    @property
    def name(self) -> str:
        """What messages call the function: a compiled module's is `Class.forward`."""
        fn = self.fn
        owner = getattr(fn, "__self__", None)
        if getattr(fn, "__name__", None) == "_call_uncompiled" and owner is not None:
            return f"{type(owner).__name__}.forward"
        return getattr(fn, "__name__", "function")

    def __get__(self, obj, objtype=None):
        """A compiled function in a class body is a method, as the function PyTorch
        returns is: `@torch.compile def forward(self, x)` binds `self` (one cache for all
        instances: `self` is an argument like any other)."""
        return self if obj is None else types.MethodType(self, obj)

    # -- running ------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if _stance[0] == "force_eager":
            return self.fn(*args, **kwargs)
        if active.session is not None:
            # called from compiled code: its ops join the caller's graph (PyTorch inlines a
            # compiled function there too); capturing it apart would break the caller's
            return self.fn(*args, **kwargs)
        self.calls += 1
        try:
            if self._print_sites:
                return _refusing_print(self, args, kwargs)
            return self._call(args, kwargs)
        except (RuntimeError, TypeError, ValueError) as e:
            wrapped = _as_dynamo_error(e, self.fullgraph)
            if wrapped is None:
                raise
            raise wrapped from None

    def _call(self, args: tuple, kwargs: dict):
        if self.pure:
            return self._pure_call(args, kwargs)
        if self.proven and not kwargs and len(args) == self.proven[2]:
            return self._proven_call(args)
        with _Capturing(self, False):
            return self.fn(*args, **kwargs)

    def _pure_call(self, args: tuple, kwargs: dict):
        """Pure mode: replay a recorded call that matches, else trace (see replay.py)."""
        got = signature(args, kwargs, _grad_state.enabled)
        if got is not None:
            sig, leaves = got
            plan = self.replays.get(sig)
            if plan is not None:
                if plan.current():
                    self.replayed += 1
                    return plan(leaves)
                del self.replays[sig]  # a setting changed: trace again (same program)
        stepped: list = []
        step_watchers.append(stepped.append)
        try:
            with self.capturing() as session:
                out = self.fn(*args, **kwargs)
        finally:
            step_watchers.remove(stepped.append)
        if got is not None:
            why = replayable(session, leaves, out)
            if why is None:
                (run,) = session.runs
                seen = (run.key, tuple(freeze(x) for x in run.scalars))
                if self._seen.get(sig) == seen:
                    self.replays[sig] = Replay(run, leaves, out,
                                               list({id(o): o for o in stepped}.values()))
                self._seen[sig] = seen
            elif why not in self.not_replayed:
                self.not_replayed.append(why)
        return out

    def _proven_call(self, args: tuple):
        """Default mode on a function `proof.scan` passed: replay a matching call whose
        proof holds, else trace (the second trace of a signature audited)."""
        got = signature(args, {}, _grad_state.enabled)
        if got is None:
            with _Capturing(self, False):
                return self.fn(*args)
        sig, leaves = got
        plan = self.replays.get(sig)
        if plan is not None:
            check = self.proofs[sig]
            if plan.modes == mode_changes[0] and check.holds(args):
                self.replayed += 1
                self.misses = 0
                out = plan(leaves)
                check.after()
                return out
            del self.replays[sig]
            self._miss("its proven replays kept failing their checks")
        if not self.proven:
            with _Capturing(self, False):
                return self.fn(*args)
        code, getters, _ = self.proven
        audit = proof.Audit(code) if sig in self._seen else None
        then = proof.resolve_all(getters, args) if audit is not None else None
        with self.capturing() as session:
            out = proof.audited(audit, lambda: self.fn(*args)) if audit is not None else \
                self.fn(*args)
        why = replayable(session, leaves, out) or (
            "it makes a tensor from Python data" if session.made else None)
        if why is None:
            (run,) = session.runs
            seen = (run.key, tuple(freeze(x) for x in run.scalars))
            if audit is not None and self._seen.get(sig) != seen:
                why = "two traces in a row differ (another graph or Python number)"
            self._seen[sig] = seen
        if audit is not None and audit.why is not None:
            self._miss(audit.why, at_once=True)  # (straight-line code: it calls it again)
        elif why is not None or (audit is not None and then is None):
            self._miss(why or "a name it reads cannot be read")
        elif audit is not None:
            captured = [t for t in run.inputs if not any(t is x for x in leaves)]
            self.replays[sig] = Replay(run, leaves, out, audit.stepped)
            check = self.proofs[sig] = proof.Proof(getters, then, audit, captured)
            if "guards" in logs():
                print(f"[ember.compile] calls of {self.name} like this one now replay "
                      f"without their Python while:\n{check.describe()}", file=sys.stderr)
        return out

    def _miss(self, why: str, at_once: bool = False) -> None:
        """Note why a call was not replayed; stop proving this function at once, or after
        `proof.MAX_MISSES` such calls in a row."""
        if why not in self.not_replayed:
            self.not_replayed.append(why)
        self.misses += 1
        if at_once or self.misses >= proof.MAX_MISSES:
            self.proven = None

    def capturing(self, backward: bool = False) -> _Capturing:
        """Capture what runs inside into this function's graphs (a call, or with `backward`
        a backward pass through a forward it recorded); the last graph runs at the end."""
        return _Capturing(self, backward)

    def _compile_backward(self, graph: Graph, segment: int) -> Program:
        """A backward pass's graphs are counted apart from the calls' (PyTorch compiles a
        backward with its forward: neither a recompile nor toward the limit)."""
        return self._compile(graph, ("backward", segment))

    def _compile(self, graph: Graph, segment) -> Program:
        seen = self.per_segment.setdefault(segment, [])
        if len(seen) >= config.recompile_limit:
            if not self.over_limit:
                self.over_limit = True
                warnings.warn(
                    f"ember.compile: {self.name} reached the "
                    f"recompile limit ({config.recompile_limit}); "
                    f"{self._what_changed(graph, seen[-1])}: new graphs now run op by op without "
                    "(torch._dynamo.config.recompile_limit)", RuntimeWarning,
                    stacklevel=user_stacklevel())
            return lower_python(graph)
        if seen:
            change = self._what_changed(graph, seen[-1])
            self.recompiles.append(change)
            if "recompiles" in logs():
                print(f"[ember.compile] recompiling {self.name}: {change}",
                      file=sys.stderr)
        program = lower(graph, self.backend)
        self.graphs.append(graph)
        seen.append(graph)
        wanted = logs()
        name = self.name
        if "graph_code" in wanted:
            print(f"[ember.compile] graph {len(self.graphs)} of {name}:\n"
                  f"{graph.table()}\n{program.code}", file=sys.stderr)
        if "output_code" in wanted and hasattr(program, "c_source"):
            print(f"[ember.compile] C of graph {len(self.graphs)} of {name}:\n"
                  f"{program.c_source}", file=sys.stderr)
        if "guards" in wanted:
            print(f"[ember.compile] graph {len(self.graphs)} of {name} is reused for inputs "
                  "of " + ", ".join(f"{v.meta()} stride {v.stride}" for v in graph.inputs)
                  + f" and the same {len(graph.nodes)} ops with the same params",
                  file=sys.stderr)
        return program

    def _ran(self, graph: Graph, program: Program, brk: Break) -> None:
        if brk.reason == "end of call":
            return
        where = user_frame()
        brk.op = f"{brk.op or ''} at {where}".strip()
        self.breaks.append(brk)
        if "graph_breaks" in logs():
            print(f"[ember.compile] graph break in {self.name}: {brk.reason} "
                  f"({brk.op})", file=sys.stderr)
        if self.fullgraph and brk.reason not in _SYMBOLIC_IN_PYTORCH:
            error = UserError if brk.reason == "bool()" else Unsupported
            raise error(f"graph break: {brk.reason} ({brk.op}); fullgraph=True "
                        "requires the whole function to be one graph")

    def _what_changed(self, graph: Graph, last: Graph) -> str:
        a = [(v.shape, v.dtype, v.stride) for v in last.inputs]
        b = [(v.shape, v.dtype, v.stride) for v in graph.inputs]
        for i, (x, y) in enumerate(zip(a, b)):
            if x[0] != y[0]:
                return f"input {i} changed shape from {list(x[0])} to {list(y[0])}"
            if x[1] != y[1]:
                return f"input {i} changed dtype from {x[1]} to {y[1]}"
            if x[2] != y[2]:
                return f"input {i} changed strides from {x[2]} to {y[2]}"
        if len(a) != len(b):
            return f"the graph reads {len(b)} tensors instead of {len(a)}"
        for i, (m, n) in enumerate(zip(last.nodes, graph.nodes)):
            if (m.prim, m.member) != (n.prim, n.member):
                return f"op {i} is {n.op} instead of {m.op}"
            if m.key_params() != n.key_params():
                return f"op {i} ({n.op}) has other params or Python scalars"
        return f"the graph has {len(graph.nodes)} ops instead of {len(last.nodes)}"

    def reset(self) -> None:
        self.programs.clear()
        self.expected.clear()
        self.graphs.clear()
        self.breaks.clear()
        self.recompiles.clear()
        self.per_segment.clear()
        self.replays.clear()
        self.proofs.clear()
        self._seen.clear()
        self.over_limit = False


def captured_backward(roots):
    """The engine's hook: a backward pass from outputs of a compiled forward, outside any
    capture, is captured into the forward's compiled function (its own graphs)."""
    if not _live[0] or active.session is not None or _stance[0] == "force_eager":
        return _NOTHING  # (no compiled function: an eager backward pays this test only)
    # (the loss is usually computed eagerly from a compiled model's output: look a few
    # nodes back from the roots, breadth first)
    todo = [node for node, _ in roots if node is not None]
    seen = set()
    while todo and len(seen) < 32:
        node = todo.pop(0)
        if node in seen:
            continue
        seen.add(node)
        owner = getattr(node, "_compiled", None)
        if owner is not None:
            return owner.capturing(backward=True)
        todo += [n for n, _ in getattr(node, "_edges", ()) if n is not None]
    return _NOTHING


_NOTHING = nullcontext()


def recorded_backward(roots, root_grads, retain_graph: bool, engine: Callable):
    """The engine's hook for a backward pass bound while a session records (a compiled
    call's, or the MLX face's lazy one innermost on the stack): the session replays or
    runs it (capture.Session.backward); NotImplemented outside one."""
    session = active.session
    if session is None:
        session = _stack.top
        if not isinstance(session, Session):
            return NotImplemented
    return session.backward(roots, root_grads, retain_graph, engine)


def hook_backward() -> None:
    """Let backward passes reach recording sessions (until then eager backward skips the
    test): once a compiled function or a lazy session exists."""
    _engine.hooks.captured = captured_backward
    _engine.hooks.recording = recorded_backward


# PyTorch's backends that run the captured graph as it is (`torch._dynamo.list_backends`
# lists them when debugging ones are not excluded); every other name fuses
EAGER_BACKENDS = frozenset({"aot_eager", "aot_eager_decomp_partition",
                            "aot_eager_default_partitioner", "eager", "eager_debug",
                            "eager_noexcept", "pre_dispatch_eager"})


def lower(graph: Graph, backend: str) -> Program:
    """The program of a graph for `backend` ("eager": one kernel per node; otherwise fused
    where the fusion pass finds chains)."""
    if backend in EAGER_BACKENDS:
        return lower_python(graph)
    from .fuse import lower_fused

    return lower_fused(optimized(graph))


_stance = ["default"]
_every: weakref.WeakSet = weakref.WeakSet()  # every compiled function, for reset()
_live = [False]  # whether any was ever made (until then an eager backward skips the hook)


def reset() -> None:
    """Drop every compiled program (`torch._dynamo.reset`, `torch.compiler.reset`)."""
    for c in list(_every):
        c.reset()


def set_stance(stance: str = "default", **_ignored) -> None:
    """`torch.compiler.set_stance`: "default" or "force_eager" (compiled functions run as
    plain eager code); PyTorch's other stances are accepted as "default"."""
    _stance[0] = "force_eager" if stance == "force_eager" else "default"


def is_compiling() -> bool:
    return active.session is not None


def run_eagerly(fn: Callable, *args, **kwargs):
    """`fn(*args)` outside any capture: the pending graph runs first (a graph break)."""
    s = active.session
    if s is None:
        return fn(*args, **kwargs)
    if getattr(s.owner, "fullgraph", False):  # (PyTorch: Unsupported, even with no ops yet)
        raise Unsupported(f"graph break: a call of torch.compiler.disable()d "
                          f"{getattr(fn, '__name__', 'function')}; fullgraph=True requires "
                          "the whole function to be one graph")
    s.flush("torch.compiler.disable", getattr(fn, "__name__", None))
    active.session = None
    try:
        return s.below(fn, *args, **kwargs)
    finally:
        active.session = s


def graph_break() -> None:
    """`torch._dynamo.graph_break()`: end the current graph here."""
    s = active.session
    if s is not None:
        s.flush("graph_break()")


_EAGER_CODE = run_eagerly.__code__

# (the engine's hook, `captured_backward`, is plugged in by the first compiled function made)
