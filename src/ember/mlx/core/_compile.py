"""`mx.compile` with MLX's rules on ember's graph layer, and `mx.eval`.

`compile(fun)` traces `fun` on the first call of each signature and replays the trace on
later calls without running the Python (a `print` inside runs only while tracing). The
signature is what MLX keys its cache on: the structure of the arguments (lists, tuples,
dicts), every Python constant in it (ints, floats, strings, None: a new value retraces),
and each array's ndim and dtype and, unless `shapeless=True`, its shape; the arrays of
`inputs=` count as arguments.

The trace is ember's capture (`graph.capture.Session`): the arguments (and the arrays of
`inputs=`) are handed to `fun` as pending tensors that are graph inputs, every op `fun`
binds (its `mx.grad`s' backward passes included) records a node, and the recorded graph
runs once at the end as a program (`_lazy.Recurring`: node by node, fused from the
second run on). A replay runs that program on the current arguments. Arrays `fun` reads
that are neither arguments nor in `inputs=` (closures, globals, a model not listed) are
constants of the trace: frozen at their traced value. After each call the arrays the trace
left in the `outputs=` trees are put back into them (tree positions, as MLX's `tree_fill`).
`mx.random.state` in a tree stands for the calling thread's key.

Reading a traced value inside `fun` (`print(y)`, `y.item()`, `if y:`, `np.array(y)`,
`mx.eval(y)`) raises MLX's ValueError. What the trace cannot record as one graph (an op
ember does not capture, or a random draw whose key is traced: `mx.random.state` in
`inputs=`; ember's draws run in NumPy) makes the graph break; that call still computes
what `fun` computes, and later calls with its signature run `fun` as written, op by op
(so its Python, prints included, runs on each of them). A compiled function called under
a transform (`mx.grad(compiled)`, `vmap`, or with arrays that require grad) or inside
another trace runs as written too, so the transform sees its ops. With `shapeless=True`,
a call whose shapes differ from the traced ones runs the graph as generated Python over
NumPy kernels when nothing in it depends on the traced shapes; a graph holding numbers of
them (a mean's 1/n, a reshape's size) is traced again once per new set of shapes, its
prints silenced and the shapes its Python reads answered as the first trace answered them,
so what MLX's ops derive from shapes follows the call and what Python derived stays as
traced, as in MLX (`_compile_shapes`).
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import struct
import sys
import threading
import weakref
from collections.abc import Callable

import numpy as np

from ..._core.dispatch import _stack, push, unwind
from ..._tensor import Tensor
from ..._tensor import _wrap as _tensor_of
from ..._view import contiguous_strides
from ...graph.capture import Session
from ...graph.lazy import LazyTensor, become, make_lazy
from ...graph.program import lower_python
from . import _compile_shapes as _shapes
from . import _lazy, _trees
from . import random as _random
from ._array import _wrap, array
from ._binding import bad_call
from ._tracers import ASYNC_EVAL_IN_TRANSFORM, EVAL_IN_TRANSFORM, is_vmap_tracer

_disabled = [os.environ.get("MLX_DISABLE_COMPILE", "") not in ("", "0")]

_UNCAPTURED = ("[compile] Attempting to compile a function with uncaptured inputs is not "
               "allowed.")


def disable_compile() -> None:
    """Make `mx.compile` return functions that run as written (as MLX_DISABLE_COMPILE)."""
    _disabled[0] = True


def enable_compile() -> None:
    _disabled[0] = False


# -- trees of state: MLX's tree_visit / tree_fill, with `mx.random.state` as the key --------

def _state_leaves(tree) -> list:
    """The arrays of an `inputs=` / `outputs=` tree, depth first (non-arrays skipped)."""
    out: list = []
    _collect_state(tree, out)
    return out


def _collect_state(t, out: list) -> None:
    # (a module function: a closure calling itself would be a cycle holding the arrays)
    if isinstance(t, _random._RandomState):
        out.append(_random._state_key())
    elif isinstance(t, list | tuple):
        for v in t:
            _collect_state(v, out)
    elif isinstance(t, dict):
        for v in t.values():
            _collect_state(v, out)
    elif isinstance(t, array):
        out.append(t)


def _state_update(tree, fn: Callable) -> object:
    """Replace each array of `tree` in place by `fn(array)` (lists and dicts in place,
    tuples rebuilt into their parent; the random key through its setter)."""
    if isinstance(tree, _random._RandomState):
        _random._set_state_key(fn(_random._state_key()))
        return tree
    if isinstance(tree, list):
        for i, v in enumerate(tree):
            tree[i] = _state_update(v, fn)
        return tree
    if isinstance(tree, tuple):
        items = [_state_update(v, fn) for v in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, dict):
        for k, v in tree.items():
            tree[k] = _state_update(v, fn)
        return tree
    return fn(tree) if isinstance(tree, array) else tree


def _state_fill(tree, values: list) -> None:
    it = iter(values)
    _state_update(tree, lambda _: next(it))


def _state_replace(tree, swap: dict) -> None:
    """Put `swap[id(a)]` where array `a` is in `tree` (the tracers back to the originals)."""
    _state_update(tree, lambda a: swap.get(id(a), a))


# -- the signature of a call ---------------------------------------------------------------

_LIST, _DICT, _ARRAY, _NONE = "list", "dict", "array", "none"


def _type_name(x) -> str:
    t = type(x)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _flatten_args(tree, constants: list, arrays: list) -> None:
    """MLX's walk of a call's arguments: the arrays, and everything else as constants."""
    if isinstance(tree, list | tuple):
        constants.append(_LIST)
        for x in tree:
            _flatten_args(x, constants, arrays)
    elif isinstance(tree, dict):
        constants.append(_DICT)
        for k, v in tree.items():
            constants.append(hash(k))
            _flatten_args(v, constants, arrays)
    elif isinstance(tree, array):
        arrays.append(tree)
        constants.append(_ARRAY)
    elif isinstance(tree, str):
        constants.append(("str", tree))
    elif isinstance(tree, int):  # (bools too: True is 1, as MLX casts them)
        constants.append(int(tree))
    elif isinstance(tree, float):  # (by its bits, as MLX: -0.0 is not 0.0, nan is nan)
        constants.append(("float", struct.pack("<d", tree)))
    elif tree is None:
        constants.append(_NONE)
    else:
        raise ValueError("[compile] Function arguments must be trees of arrays or constants "
                         "(floats, ints, strings, or None), but received type "
                         f"{_type_name(tree)}.")


def _substitute(tree, new: dict):
    """`tree` with each array `a` that is a key of `new` (by id) replaced by a new array of
    `new[id(a)]`'s value (structure kept): as in MLX, a compiled function returning its
    argument returns another array object (writing into it leaves the argument as it was)."""
    def swap(a):
        if not isinstance(a, array) or id(a) not in new:
            return a
        return _wrap(new[id(a)]._t, a._dtype)

    if isinstance(tree, list | tuple | dict):
        return _trees.tree_map(swap, tree)
    return swap(tree)


# -- tracing ---------------------------------------------------------------------------------

class _Tracing(threading.local):
    depth = 0  # traces running on this thread (a compiled call inside one is inlined)


_tracing = _Tracing()

# the array methods that read values for the user (a read from ember's own code, as a
# random draw's read of its key, is a graph break instead of MLX's error)
_READERS = frozenset(getattr(array, name).__code__ for name in (
    "item", "tolist", "__array__", "__bool__", "__int__", "__float__", "__index__",
    "__format__"))
_READS = frozenset({"data read", ".item()", ".tolist()", ".numpy()", "bool()", "print"})


def _user_read() -> bool:
    """Whether the value read now comes from a user-facing read (item, print, ...)."""
    from ._printing import array_repr

    codes = _READERS | {array_repr.__code__}
    f = sys._getframe(2)
    while f is not None:
        if f.f_code in codes:
            return True
        f = f.f_back
    return False


class _Trace(Session):
    """The capture of one traced call: pending tensors (tracers) for the arguments, MLX's
    error for a value read, and the tracers turned into ordinary tensors at each flush."""

    def __init__(self, programs: dict) -> None:
        super().__init__(programs, lambda graph, segment: _lazy.Recurring(graph))
        self.data_of: dict = {}  # a tracer's graph input -> its data
        # (the tracers and aliases of them (`stop_gradient`) that became an input's data,
        # with that input's value: what the plan reads from the call's arguments)
        self.became: list = []
        self.broke: str | None = None  # why a graph ended before the call did

    def tracer(self, t: Tensor) -> tuple[LazyTensor, Tensor]:
        """A pending tensor standing for `t`, and the tensor that feeds it: a new graph input
        (each its own, so the same array passed twice is two inputs, as in MLX), fed `t`'s
        data laid out C-contiguous."""
        data = _c_order(t._array())
        real = _tensor_of(data, t._dtype)
        v = self.graph.add_input(real._shape, t._dtype, tuple(contiguous_strides(real._shape)))
        self.input_tensors.append(real)
        tr = make_lazy(self, v, t._dtype, None, None)
        self.lazies.append(weakref.ref(tr))
        self.data_of[v] = data
        return tr, real

    def flush(self, reason: str = "value needed", op: str | None = None) -> None:
        if reason in _READS and _user_read():
            raise ValueError(EVAL_IN_TRANSFORM)
        if reason != "end of call" and self.broke is None:
            self.broke = reason
        # (the tracers and their aliases (`detach`) hold their data from here on; the graph
        # runs without them even when it has no nodes)
        data_of = self.data_of
        for ref in self.lazies:
            t = ref()
            if t is not None and t.__class__ is LazyTensor:
                data = data_of.get(t.__dict__["_lazy_value"])
                if data is not None:
                    self.became.append((t, t.__dict__["_lazy_value"]))
                    become(t, data)
        super().flush(reason, op)


def _c_order(a: np.ndarray) -> np.ndarray:
    """`a`, copied C-contiguous when it is not (a trace's inputs are laid out so)."""
    return a if a.flags.c_contiguous else a.copy(order="C")


class _Plan:
    """A traced call, replayable: where each program input comes from (an argument, an
    `inputs=` array, a frozen constant), the Python numbers the graph read, and where each
    returned array and each `outputs=` array comes from."""

    def __init__(self, run, origin: dict, returned, out_leaves: list, shapes: list,
                 derived: frozenset = frozenset(), key=None) -> None:
        self.program = run.program if run is not None else None
        self.graph = run.graph if run is not None else None
        self.scalars = list(run.scalars) if run is not None else []
        self.shapes = shapes  # the traced arrays' shapes (a shapeless call may differ)
        self.generic = None  # the graph as generated Python, for other shapes (shapeless)
        # (shapeless: which constants an op derived from a shape, whether the graph may hold
        # numbers of the traced shapes, the random key the trace began with, the traces
        # made again at other shapes, and the shapes the Python read: `_compile_shapes`)
        self.follow: list = []
        self.bound: bool | None = None
        self.key = key
        self.at: dict = {}
        self.reads: list | None = None
        where = {id(t): i for t, i in run.live} if run is not None else {}
        self.sources = []
        for t in run.inputs if run is not None else ():
            src = origin.get(id(t))
            if src is None:
                self.sources.append(("const", t._array()))
            else:
                self.sources.append(src)
            self.follow.append(src is None and id(t) in derived)

        def slot(a):
            if not isinstance(a, array):
                return a
            t = a._t
            if id(t) in where:
                return _Slot("out", where[id(t)], a._dtype, t._dtype)
            src = origin.get(id(t))
            if src is not None:  # (an argument, or an alias of one: it follows the call)
                return _Slot(src[0], src[1], a._dtype)
            return _Slot("const", a)

        self.returns = _trees.tree_map(slot, returned)
        self.outputs = [slot(a) for a in out_leaves]

    def __call__(self, args: list, state: list):
        outs: list = []
        if self.program is not None:
            arrays = []
            for kind, i in self.sources:
                if kind == "const":
                    arrays.append(i)
                else:
                    a = args[i] if kind == "arg" else state[i]
                    arrays.append(_c_order(a._t._array()))
            outs = self._run(arrays, args + state)
        made: dict = {}

        def value(s):
            if not isinstance(s, _Slot):
                return s
            if s.kind == "out":
                a = made.get(s.index)
                if a is None:
                    a = made[s.index] = _wrap(_tensor_of(outs[s.index], s.tensor_dtype),
                                              s.dtype)
                return a
            if s.kind == "const":
                return s.index
            a = args[s.index] if s.kind == "arg" else state[s.index]
            return _wrap(a._t, s.dtype)  # (a new array object, as MLX's)

        return _trees.tree_map(value, self.returns), [value(s) for s in self.outputs]

    def _run(self, arrays: list, now: list) -> list:
        if [a.shape for a in now] == self.shapes:
            return self.program.run(arrays + self.scalars)
        # shapeless: the same graph on other shapes, as generated Python over NumPy kernels
        if self.generic is None:
            self.generic = lower_python(self.graph)
        return self.generic.run(arrays + self.scalars)


class _Slot:
    """Where one array of a replayed call comes from."""

    __slots__ = ("kind", "index", "dtype", "tensor_dtype")

    def __init__(self, kind: str, index, dtype=None, tensor_dtype=None) -> None:
        self.kind, self.index, self.dtype, self.tensor_dtype = kind, index, dtype, tensor_dtype


_EAGER = object()  # a signature whose trace broke: its calls run `fun` as written
_AT_SHAPES = 64  # the traces at other shapes a shapeless plan keeps (the oldest dropped first)


# MLX's compile cache: id(fun) -> {(shapeless, outputs given): {signature -> _Plan or
# _EAGER}}. It is keyed by the Python function, so `mx.compile(f)` made twice shares f's
# traces, and the first compiled function of f to be collected drops them all (MLX's
# `compile_erase` in its destructor). NOTE: MLX's key leaves `outputs=` out (a trace made
# without it then serves a call with it, writing no state); ember keeps the two apart.
_cache: dict[int, dict] = {}


def _erase(fun_id: int) -> None:
    _cache.pop(fun_id, None)


class _Compiled:
    """What `mx.compile` returns (see the module docstring)."""

    def __init__(self, fun: Callable, inputs, outputs, shapeless: bool) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.inputs = inputs
        self.outputs = outputs
        self.shapeless = shapeless
        # (MLX's compile refuses a shapeless graph of ops that cannot say their output
        # shapes; its export_function writes one, and refuses it when it is called)
        self.refuse = True
        self.programs: dict = {}  # graph key -> program (shared by this function's traces)
        self.traces = 0  # how many times `fun` was traced (ember's own: for tests, tools)
        weakref.finalize(self, _erase, id(fun))

    @property
    def plans(self) -> dict:
        """signature -> _Plan (or _EAGER), shared with every compiled function of `fun`
        of the same kind (see `_cache`)."""
        kinds = _cache.setdefault(id(self.fun), {})
        return kinds.setdefault((self.shapeless, self.outputs is not None), {})

    def __call__(self, *args, **kwargs):
        if _disabled[0] or _tracing.depth or _stack.top is not None:
            # (inside a trace it is traced as part of it; under a transform (`mx.grad` of a
            # compiled function) it runs as written, so the transform sees its ops)
            return self.fun(*args, **kwargs)
        _lazy.evaluate("mx.compile")
        constants: list = []
        arrays: list = []
        _flatten_args(args, constants, arrays)
        _flatten_args(kwargs, constants, arrays)
        if any(a._t._requires_grad for a in arrays):
            return self.fun(*args, **kwargs)  # (ember.func's reverse mode: its tape)
        state = _state_leaves(self.inputs) if self.inputs is not None else []
        key = (tuple(constants), tuple(
            (a.ndim, None if self.shapeless else a.shape, a._dtype) for a in arrays + state))
        plan = self.plans.get(key)
        if isinstance(plan, str):  # (a refused shapeless trace: its message)
            raise _shapes.refusal(plan)
        if plan is not None and self.shapeless and plan is not _EAGER:
            plan = self._at_shapes(plan, args, kwargs, arrays, state)
        if plan is _EAGER:
            return self.fun(*args, **kwargs)
        if plan is not None:
            out, written = plan(arrays, state)
            if self.outputs is not None:
                _state_fill(self.outputs, written)
            return out
        return self._trace(key, args, kwargs, arrays, state)

    def _at_shapes(self, plan: _Plan, args, kwargs, arrays: list, state: list):
        """The plan for a shapeless call at these shapes: `plan` itself at its traced
        shapes or when its graph holds no number of them, else `fun` traced again at these
        shapes, its Python reading the traced ones (once per set of shapes;
        `_compile_shapes`)."""
        shapes = [a.shape for a in arrays + state]
        if shapes == plan.shapes:
            return plan
        if plan.bound is None:
            plan.bound = _shapes.is_bound(plan)
        if not plan.bound:
            return plan
        key = tuple(shapes)
        again = plan.at.get(key)
        if again is None:
            held = _random._thread.key
            _random._thread.key = plan.key  # (the draws the first trace made, made again)
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # (MLX runs `fun` once)
                    again, _ = self._record(args, kwargs, arrays, state, plan.reads)
            finally:
                _random._thread.key = held
            if len(plan.at) >= _AT_SHAPES:
                plan.at.pop(next(iter(plan.at)))
            plan.at[key] = again
        return again

    def _trace(self, key, args, kwargs, arrays: list, state: list):
        try:
            plan, result = self._record(args, kwargs, arrays, state)
        except ValueError as e:
            if _shapes.is_refusal(e):
                self.plans[key] = str(e)
            raise
        self.plans[key] = plan
        return result

    def _record(self, args, kwargs, arrays: list, state: list, reads: list | None = None
                ) -> tuple:
        """`fun` traced on these arguments: its plan (or `_EAGER`) and what it returned;
        shapeless, the shapes its Python read (answered from `reads` when given)."""
        self.traces += 1
        first_key = _random._thread.key if self.shapeless else None
        session = _Trace(self.programs)
        origin: dict = {}  # id(tracer tensor) -> ("arg" | "state", index)
        of_input: dict = {}  # a tracer's graph input -> ("arg" | "state", index)
        back: dict = {}  # id(tracer array) -> the original array
        traced = []
        for kind, leaves in (("arg", arrays), ("state", state)):
            for i, a in enumerate(leaves):
                t, real = session.tracer(a._t)
                tr = _wrap(t, a._dtype)
                origin[id(t)] = origin[id(real)] = of_input[t.__dict__["_lazy_value"]] = (kind, i)
                back[id(tr)] = a
                traced.append(tr)
        it = iter(traced[:len(arrays)])  # (by position: an array passed twice is two inputs)
        args_in, kwargs_in = _trees.tree_map(
            lambda x: next(it) if isinstance(x, array) else x, (tuple(args), kwargs))
        if self.inputs is not None:
            _state_fill(self.inputs, traced[len(arrays):])
        collecting = _shapes.start(self.refuse) if self.shapeless else None
        log = _shapes.ShapeReads(reads) if self.shapeless else contextlib.nullcontext()
        _tracing.depth += 1
        push(session)
        try:
            try:
                with log:
                    out = self.fun(*args_in, **kwargs_in)
            finally:
                unwind(session)
            session.flush("end of call")
            for t, v in session.became:  # (kept alive by `became`: their ids stay theirs)
                origin.setdefault(id(t), of_input[v])
            out_leaves = _state_leaves(self.outputs) if self.outputs is not None else []
            run = session.runs[-1] if session.runs else None
            originals = {id(a._t) for a in arrays + state}
            if run is not None and any(id(t) in originals and id(t) not in origin
                                       for t in run.inputs):
                raise ValueError(_UNCAPTURED)
        except BaseException:
            for tree in (self.inputs, self.outputs):
                if tree is not None:
                    _state_replace(tree, back)
            raise
        finally:
            _tracing.depth -= 1
            derived = frozenset(_shapes.finish(collecting)) if self.shapeless else frozenset()
        if self.inputs is not None:
            _state_replace(self.inputs, back)
        if session.broke is not None or len(session.runs) > 1 or (
                run is not None and run.written):
            plan = _EAGER
        else:
            plan = _Plan(run, origin, out, out_leaves, [a.shape for a in arrays + state],
                         derived, first_key)
            plan.reads = log.values if self.shapeless else None
        if self.outputs is not None:
            _state_fill(self.outputs, [back.get(id(a), a) for a in out_leaves])
        return plan, _substitute(out, back)


def compile(fun: Callable, inputs=None, outputs=None, shapeless: bool = False) -> Callable:  # noqa: A001
    """`fun` traced once per signature and replayed after (see the module docstring)."""
    return _Compiled(fun, inputs, outputs, shapeless)


def eval(*trees, **kwargs) -> None:  # noqa: A001  (MLX's name)
    """Compute every array in `trees` (lists, tuples, dicts; other leaves are ignored)."""
    if kwargs:
        raise bad_call("eval", "eval(*args) -> None", trees, kwargs)
    leaves = _trees.leaves(list(trees))
    if any(isinstance(x, array) and is_vmap_tracer(x._t) for x in leaves):
        raise ValueError(EVAL_IN_TRANSFORM)
    for x in leaves:
        if isinstance(x, array) and x._t.__class__ is not Tensor:
            if _tracing.depth and isinstance(x._t.__dict__.get("_lazy_session"), _Trace):
                raise ValueError(EVAL_IN_TRANSFORM)
            _lazy.evaluate("mx.eval")
            return


def async_eval(*trees, **kwargs) -> None:
    """As `eval` (the CPU computes in order, so there is nothing to run in the background),
    but refusing, as MLX does, an array a transform is tracing (vmap's, compile's, or
    grad's input) with its own message."""
    if kwargs:
        raise bad_call("async_eval", "async_eval(*args)", trees, kwargs)
    if any(isinstance(x, array) and (is_vmap_tracer(x._t) or x._t.requires_grad or (
            _tracing.depth and isinstance(x._t.__dict__.get("_lazy_session"), _Trace)))
           for x in _trees.leaves(list(trees))):
        raise ValueError(ASYNC_EVAL_IN_TRANSFORM)
    eval(*trees)
