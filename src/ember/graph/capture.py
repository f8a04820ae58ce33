"""Capture: an interpreter on the `bind` stack that records ops into a graph instead of
running them, and runs the graph when a value is needed.

While a `Session` is active, every op bound whose evaluation is a plain kernel (the
standard path and families), a view, or a factory is recorded as a `Node`, and its result
is a `LazyTensor`. Real tensors an op reads become graph inputs. Autograd records its nodes
as in eager mode (on the lazy results), so `backward()` works and is captured too.

The pending graph runs (`flush`) when:
- a value is read (`.item()`, `.numpy()`, `bool(t)`, printing): a *graph break*;
- an op that is not captured is bound (an in-place write, a random draw, a sparse op ...):
  the graph runs first, then the op eagerly, so its effects land in eager's order;
- the session ends (the compiled call returns).
Running a graph computes what is still alive afterwards (lazy tensors referenced by the
caller, by autograd's saved tensors or by other live tensors) and nothing else; each of
those objects then becomes an ordinary tensor. Graphs are looked up by their structure in a
cache of compiled programs (`program.py`), so a recurring graph is compiled once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

from .. import _grad_mode as grad_mode
from .._core.dispatch import Interpreter, autograd, bind, eval_kernel, eval_member, interpret
from .._core.primitive import meta_rules, vjp_rule
from .._tensor import Tensor, layout_strides
from .._view import broadcast_shapes, contiguous_strides
from ..autograd.graph import _seq as _autograd_seq
from ..autograd.graph import take_node
from ..ops.draws import _eval_draw
from ..ops.factories import _eval_factory, _eval_filled_like
from ..ops.movement import _eval_detach
from ..ops.registry import _eval_inplace, _eval_update, bump_version, check_inplace
from ..ops.views import _eval_view
from . import backward as _backward
from .ir import (
    RUNTIME_SCALARS,
    Graph,
    Node,
    Scalar,
    Value,
    same_const,
    same_node,
    same_param,
    same_params,
)
from .lazy import LazyTensor, become, make_lazy, pending_class

_grad_state = grad_mode.state
_ref = weakref.ref
_MISSING = object()


class _Active(threading.local):
    session = None  # the innermost capture session of this thread, or None


active = _Active()


class Break:
    """Why one graph ended: the reason, and the op that caused it (or None)."""

    __slots__ = ("reason", "op")

    def __init__(self, reason: str, op: str | None = None) -> None:
        self.reason = reason
        self.op = op

    def __repr__(self) -> str:
        return f"Break({self.reason!r}{', ' + self.op if self.op else ''})"


class Session(Interpreter):
    """One capture: the pending graph, its inputs, the live lazy results, and the cache of
    programs (shared by the calls of one compiled function)."""

    runs_factories = True  # (`_run_now`: a factory's result is an ordinary tensor)

    def __init__(self, programs: dict, compile_graph: Callable, on_run=None,
                 owner=None, expected: dict | None = None) -> None:
        self.owner = owner  # the compiled function (autograd nodes recorded here point to it)
        self.programs = programs
        # segment -> [(graph, program, key)]: the graphs that ran there lately, most recent
        # first; a recording that follows one node for node skips meta rules and the key
        self.expected = expected if expected is not None else {}
        self.compile_graph = compile_graph  # compile_graph(graph, segment) -> Program
        self.on_run = on_run  # called with (graph, program, break) after each graph runs
        self.segment = 0  # how many graphs this session has run
        self.runs: list = []  # what each graph run was (for pure mode: `replay.py`)
        self.drew = False  # whether a random draw ran (a replay would repeat its numbers)
        self.draws = 0  # how many (a call that drew is never memoised: memo.py)
        self.seq0 = next(_autograd_seq)  # autograd nodes recorded later belong to this session
        self._reset()

    def _reset(self) -> None:
        self.graph = Graph()
        self.input_of: dict = {}  # id(tensor) -> input Value
        self.input_tensors: list[Tensor] = []
        self.scalar_values: list = []
        self.lazies: list = []
        self.written: list = []  # (tensor, its own class): real tensors a node writes
        self.expect = None  # the (graph, program, key) this recording follows so far
        self.made: list = []  # weak references to tensors factories made while recording

    # -- recording ----------------------------------------------------------------------

    def process(self, prim, args: tuple, params: dict):
        kind = _CAPTURED.get(prim.impl)
        if kind is None or not _capturable(args, params):
            self.flush("eager op", prim.name)
            return self.lower(prim, args, params)
        return kind(self, prim, args, params)

    def _arg(self, a):
        if isinstance(a, Tensor):
            if a.__class__ is LazyTensor and a.__dict__.get("_lazy_session") is self:
                return a.__dict__["_lazy_value"]
            v = self.input_of.get(id(a))
            if v is None:
                stride = layout_strides(a)
                v = self.graph.add_input(a._shape, a._dtype, stride)
                self.input_of[id(a)] = v
                self.input_tensors.append(a)
            return v
        if a.__class__ in RUNTIME_SCALARS:
            self.scalar_values.append(a)
            return self.graph.add_scalar(a)
        return a

    def _record(self, prim, args, params, base=None, vc=None):
        # NOTE: the hot path of a compiled call (every op bound): kept flat
        graph = self.graph
        if self.expect is not None or not graph.nodes:
            known = self._follow(prim, args, params)
            if known is not None:  # (the node itself, its values and layout known)
                lazies = []
                refs = self.lazies
                for v in known.outs:
                    t = make_lazy(self, v, v.dtype, base, vc)
                    lazies.append(t)
                    refs.append(_ref(t))
                return lazies
        mark = (len(graph.inputs), len(graph.scalars), graph._count)
        vals = []
        for a in args:
            d = getattr(a, "__dict__", None) if a.__class__ is LazyTensor else None
            if d is not None and d.get("_lazy_session") is self:
                vals.append(d["_lazy_value"])
            else:
                vals.append(self._arg(a))
        node = Node(prim, params, tuple(vals), ())
        try:
            metas = _meta_of(prim, args, params)
        except BaseException:
            self._forget(mark)
            raise
        outs, lazies = [], []
        refs = self.lazies
        count = graph._count
        for i, (shape, dtype, stride) in enumerate(metas):
            v = Value(count, shape, dtype, stride, node, i)
            count += 1
            outs.append(v)
            t = make_lazy(self, v, dtype, base, vc)
            lazies.append(t)
            refs.append(_ref(t))
        graph._count = count
        node.outs = tuple(outs)
        graph.nodes.append(node)
        return lazies

    def _follow(self, prim, args, params, scalar_params: bool = False):
        """The node of the expected graph that this op repeats, now part of the recording
        (with the graph inputs and numbers it reads), or None: nothing is added, and from
        then on this recording follows no graph. Following reuses the expected graph's
        own nodes and values, so a repeated recording builds nothing and is that graph."""
        graph = self.graph
        i = len(graph.nodes)
        if i == 0:
            self.expect = None
            for cand in self.expected.get(self.segment, ()):
                nodes = cand[0].nodes
                if nodes and self._take(cand[0], nodes[0], prim, args, params, scalar_params):
                    self.expect = cand
                    return nodes[0]
            return None
        e = self.expect
        if e is not None:
            nodes = e[0].nodes
            if i < len(nodes) and self._take(e[0], nodes[i], prim, args, params,
                                             scalar_params):
                return nodes[i]
            self.expect = None
            # another graph seen here may share the recording so far and go on as this op
            # does (a last, shorter batch: the graphs part at the first op that reads it)
            for cand in self.expected.get(self.segment, ()):
                if cand is not e and self._switch(cand[0]) and \
                        self._take(cand[0], cand[0].nodes[i], prim, args, params,
                                   scalar_params):
                    self.expect = cand
                    return cand[0].nodes[i]
        return None

    def _switch(self, c: Graph) -> bool:
        """Make the recording so far graph `c`'s own nodes and values, where `c` begins as
        the recording does (node for node the same part of the key, its inputs laid out
        alike) and goes on past it; False (nothing changed) where it does not. It follows
        nothing until the caller says which graph it follows."""
        graph = self.graph
        i, k, m = len(graph.nodes), len(graph.inputs), len(graph.scalars)
        if len(c.nodes) <= i or len(c.inputs) < k or len(c.scalars) < m:
            return False
        pairs = list(zip(graph.inputs, c.inputs))
        for a, b in zip(graph.nodes, c.nodes):
            if len(a.outs) != len(b.outs) or not _same(a, b):
                return False
            pairs += zip(a.outs, b.outs)
        values = {}
        for x, y in pairs:
            if x.id != y.id or x.shape != y.shape or x.dtype is not y.dtype or \
                    x.stride != y.stride:
                return False
            values[x.id] = y
        if any(x.type is not y.type for x, y in zip(graph.scalars, c.scalars)):
            return False
        for ref in self.lazies:
            t = ref()
            if t is not None and t.__class__ is LazyTensor:
                d = t.__dict__
                if d.get("_lazy_session") is self:
                    d["_lazy_value"] = values[d["_lazy_value"].id]
        for key, v in self.input_of.items():
            self.input_of[key] = values[v.id]
        graph.nodes[:] = c.nodes[:i]
        graph.inputs[:] = c.inputs[:k]
        graph.scalars[:] = c.scalars[:m]
        return True

    def _take(self, expected: Graph, en: Node, prim, args, params,
              scalar_params: bool) -> bool:
        """Whether the op repeats node `en` of `expected` (which the recording has followed
        node for node so far): then `en` joins the recording, its new graph inputs and
        numbers with it, and True; else nothing changes. What it compares is `same_node`'s
        part of the key; with `scalar_params`, float params are numbers of the graph."""
        if en.prim is not prim or len(en.args) != len(args) or \
                len(en.params) != len(params):
            return False
        graph = self.graph
        mark = (len(graph.inputs), len(graph.scalars), graph._count)
        try:
            ok = self._take_args(expected, en.args, args) and \
                self._take_params(en.params, params, scalar_params)
        except (ValueError, TypeError):  # (a param whose == is not a bool: not followed)
            ok = False
        outs = en.outs
        if ok and (not outs or outs[0].id == graph._count):
            graph.nodes.append(en)
            if outs:
                graph._count = outs[-1].id + 1
            return True
        self._forget(mark)
        return False

    def _take_args(self, expected: Graph, eargs: tuple, args) -> bool:
        graph = self.graph
        for a, x in zip(args, eargs):
            c = x.__class__
            if c is Value:
                if a.__class__ is LazyTensor:
                    d = a.__dict__
                    if d.get("_lazy_session") is self:
                        if d["_lazy_value"] is x:
                            continue
                        return False
                if not isinstance(a, Tensor):
                    return False
                v = self.input_of.get(id(a))
                if v is None:  # a tensor new to the graph: the expected graph's next input
                    k = len(graph.inputs)
                    if k >= len(expected.inputs) or expected.inputs[k] is not x or \
                            x.id != graph._count:
                        return False
                    stride = layout_strides(a)
                    if a._shape != x.shape or a._dtype is not x.dtype or \
                            stride != x.stride:
                        return False
                    graph.inputs.append(x)
                    graph._count += 1
                    self.input_of[id(a)] = x
                    self.input_tensors.append(a)
                elif v is not x:
                    return False
            elif c is Scalar:
                if a.__class__ is not x.type or x.id != len(graph.scalars):
                    return False
                graph.scalars.append(x)
                self.scalar_values.append(a)
            elif a.__class__ is not c or not same_const(a, x):
                return False
        return True

    def _take_params(self, eparams: dict, params: dict, scalar_params: bool) -> bool:
        if not scalar_params:
            return same_params(params, eparams)
        graph = self.graph
        for k, v in params.items():
            w = eparams.get(k, _MISSING)
            if v.__class__ is float:  # (a number of the graph: a learning rate)
                if w.__class__ is not Scalar or w.type is not float or \
                        w.id != len(graph.scalars):
                    return False
                graph.scalars.append(w)
                self.scalar_values.append(v)
            elif v is not w and not same_param(v, w):
                return False
        return True

    def _forget(self, mark: tuple) -> None:
        """Drop the graph inputs and scalars added since `mark` (an op whose meta rule
        raised records nothing)."""
        graph = self.graph
        n_in, n_sc, count = mark
        for t in self.input_tensors[n_in:]:
            self.input_of.pop(id(t), None)
        del graph.inputs[n_in:], self.input_tensors[n_in:]
        del graph.scalars[n_sc:], self.scalar_values[n_sc:]
        graph._count = count

    def _record_effect(self, prim, args, params, written: list, *,
                       scalar_params: bool = False, silent: tuple = ()) -> None:
        """A node that writes into real tensors `written` (it has no outputs, and always
        runs); their versions move now, as eager's would, and until the graph runs they
        read as pending (`lazy.Pending`), as do `silent` ones (written without a version
        bump). With `scalar_params`, float params (a learning rate a scheduler moves) are
        runtime scalars, not part of the graph's key."""
        if (self.expect is None and self.graph.nodes) or \
                self._follow(prim, args, params, scalar_params) is None:
            vals = tuple(self._arg(a) for a in args)
            if scalar_params:
                params = {k: self._arg(v) if v.__class__ is float else v
                          for k, v in params.items()}
            self.graph.add_node(Node(prim, params, vals, ()))
        self.mark_written(written, silent)

    def mark_written(self, written, silent=()) -> None:
        """Tensors a node of the graph writes into: their versions move now (not `silent`
        ones), and until the graph runs they read as pending (`lazy.Pending`)."""
        self.graph.effects = True
        for t in written:
            bump_version(t)
        for t in (*written, *silent):
            if not t._is_pending:
                self.written.append((t, t.__class__))
                t.__dict__["_pending_session"] = self
                t.__class__ = pending_class(t.__class__)

    def alias(self, t: LazyTensor) -> LazyTensor:
        """A second lazy tensor of `t`'s value, sharing its version counter (what autograd
        keeps of an output it saves)."""
        v = t.__dict__["_lazy_value"]
        a = make_lazy(self, v, t._dtype, None, t._vc)
        self.lazies.append(weakref.ref(a))
        return a

    def backward(self, roots, root_grads, retain_graph: bool, engine: Callable):
        """A backward pass bound while recording: replayed from the one recorded at this
        place of the graph this recording follows, or run by `engine` (and remembered
        where it can be replayed). See backward.py."""
        e = self.expect
        graph = self.graph
        # (a pass that begins a recording, the backward of a compiled forward called from
        # outside it: any graph seen here may have remembered it)
        cands = (e,) if e is not None else () if graph.nodes else \
            tuple(self.expected.get(self.segment, ()))
        got = _backward.walk(self, roots, root_grads) if cands else None
        if got is None:
            return engine()
        fp, order, leaves, reals = got
        key = (len(graph.nodes), len(graph.inputs), retain_graph)
        for cand in cands:
            memo = cand[0].backward_memos.get(key)
            if memo is not None and memo.fingerprint == fp:
                self.expect = cand
                if _backward.replay(self, memo, root_grads, order, leaves, reals,
                                    retain_graph):
                    if self.owner is not None:
                        self.owner.backward_replays += 1
                    return {}
                self.expect = e
                break
        marks = (len(graph.nodes), len(graph.inputs), len(graph.scalars), len(self.lazies),
                 len(self.made), graph._count)
        out = engine()
        if self.graph is graph and self.expect is not None:
            # (kept by the graph followed now: another one than `e` after a switch, which
            # begins as `e` does up to here)
            memo = _backward.learn(self, graph, marks, root_grads, fp, order, leaves, reals)
            if memo is not None:
                self.expect[0].backward_memos[key] = memo
        return out

    # -- running ------------------------------------------------------------------------

    def flush(self, reason: str = "value needed", op: str | None = None) -> None:
        """Run the pending graph and turn its live results into ordinary tensors."""
        graph = self.graph
        e = self.expect
        written = [t for t, _ in self.written]
        for t, cls in self.written:
            t.__class__ = cls
            t.__dict__.pop("_pending_session", None)
        if not graph.nodes:
            self._reset()
            return
        live = []
        seen = set()
        for ref in self.lazies:
            t = ref()
            if t is not None and t.__class__ is LazyTensor:
                v = t.__dict__["_lazy_value"]
                live.append((t, v))
                if v not in seen:
                    seen.add(v)
                    graph.outputs.append(v)
        inputs, scalars = self.input_tensors, self.scalar_values
        self._reset()  # (a kernel below may bind ops: they run eagerly, not into this graph)
        if not graph.outputs and not graph.effects:
            return
        if e is not None and len(e[0].nodes) == len(graph.nodes) and \
                len(e[0].inputs) == len(graph.inputs) and \
                [v.id for v in e[0].outputs] == [v.id for v in graph.outputs]:
            _, program, key = e  # (node for node the graph that ran here before)
            _first(self.expected.setdefault(self.segment, []), e)  # (after a switch)
        else:
            key = graph.key()
            program = self.programs.get(key)
            if program is None:
                program = self.programs[key] = self.compile_graph(graph, self.segment)
            seen = self.expected.setdefault(self.segment, [])
            # (a graph seen before stays the one to follow, with its backward memos)
            _first(seen, next((c for c in seen if c[1] is program), (graph, program, key)))
        self.segment += 1
        arrays = program.run([t._array() for t in inputs] + scalars)
        index = {v: i for i, v in enumerate(graph.outputs)}
        # bases before their views: a view lands in its base's storage
        if any(t._base is not None for t, _ in live):
            live.sort(key=lambda tv: tv[0]._base is not None)
        for t, v in live:
            become(t, arrays[index[v]])
        self.runs.append(Run(graph, program, key, inputs, scalars,
                             [(t, index[v]) for t, v in live], written, reason))
        if self.on_run is not None:
            self.on_run(graph, program, Break(reason, op))


class Run:
    """One graph run of a session: the graph, its program and key, the tensors and numbers
    it read, the tensors its outputs became (with their output index), the tensors it wrote
    into, and why it ran."""

    __slots__ = ("graph", "program", "key", "inputs", "scalars", "live", "written", "reason")

    def __init__(self, graph, program, key, inputs, scalars, live, written, reason) -> None:
        self.graph, self.program, self.key = graph, program, key
        self.inputs, self.scalars, self.live = inputs, scalars, live
        self.written, self.reason = written, reason


def _first(seen: list, entry) -> None:
    """Make `entry` the graph a recording at its place follows first next time (of the
    four kept there)."""
    j = next((j for j, c in enumerate(seen) if c is entry), None)
    if j != 0:
        seen.insert(0, entry if j is None else seen.pop(j))
        del seen[4:]


def _same(node: Node, e: Node) -> bool:
    try:
        return same_node(node, e)
    except (ValueError, TypeError):  # (a param whose == is not a bool: not followed)
        return False


def _capturable(args, params) -> bool:
    """Only CPU tensors are captured (meta and other devices run eagerly)."""
    for a in args:
        if isinstance(a, Tensor):
            s = a._storage
            if s is not None and s.device.type != "cpu":
                return False
    dev = params.get("device")
    return dev is None or getattr(dev, "type", "cpu") == "cpu"


def _meta_of(prim, args, params) -> list:
    rule = meta_rules[prim]
    res = rule(*args, **params)
    outs = [res] if prim.n_outputs == 1 else list(res)
    metas = []
    for r in outs:
        shape, dtype = tuple(r[0]), r[1]
        stride = tuple(r[2]) if len(r) > 2 and r[2] is not None else _contiguous(shape)
        metas.append((shape, dtype, stride))
    return metas


def _contiguous(shape) -> tuple:
    return tuple(contiguous_strides(shape))


def _record_kernel(session: Session, prim, args, params):
    """A plain kernel (or a family member's): one node; autograd records as in eager. An
    op whose output shape depends on the values (nonzero, a bool mask index, unique) is a
    graph break, as in PyTorch: its meta rule cannot say the shape (NotImplementedError;
    the recording undoes what it added), so the graph runs, then the op eagerly."""
    try:
        lazies = session._record(prim, args, params)
    except NotImplementedError:
        session.flush("dynamic shape operator", prim.name)
        return session.lower(prim, args, params)
    out = lazies[0] if prim.n_outputs == 1 else tuple(lazies)
    if _grad_state.enabled:
        for a in args:
            if isinstance(a, Tensor) and a._requires_grad:
                autograd.record(prim, vjp_rule(prim, params), args, params, out)
                node = (out[0] if out.__class__ is tuple else out)._grad_fn
                if node is not None:
                    node._compiled = session.owner
                break
    return out


def _record_view(session: Session, prim, args, params):
    """A view: its result shares the base's version counter and lands in its storage."""
    x = args[0]
    base = x._base if x._base is not None else x
    (out,) = session._record(prim, args, params, base=base, vc=x._vc)
    if x._requires_grad and _grad_state.enabled:
        autograd.record(prim, vjp_rule(prim, params), args, params, out)
        if out._grad_fn is not None:
            out._grad_fn._compiled = session.owner
    return out


def _run_now(session: Session, prim, args, params):
    """An op that reads no tensor's data (a factory, `*_like`): it runs eagerly, without
    ending the graph; its result is an ordinary tensor (a graph input where it is used)."""
    out = session.lower(prim, args, params)
    if isinstance(out, Tensor):
        session.made.append(_ref(out))
    return out


def _run_draw(session: Session, prim, args, params):
    """A random draw runs now, in eager's order of draws (see `_run_now`); the session
    notes it, so that pure mode does not replay the call with these numbers."""
    session.drew = True
    session.draws += 1
    return session.lower(prim, args, params)


def _record_detach(session: Session, prim, args, params):
    """`detach` of a pending value is another pending tensor of the same value (sharing its
    version counter), outside autograd; of a real tensor, it runs as eager."""
    x = args[0]
    if x.__class__ is LazyTensor and x.__dict__.get("_lazy_session") is session:
        return session.alias(x)
    return session.lower(prim, args, params)


def _record_update(session: Session, prim, args, params):
    """A fused in-place update (an optimizer step) of real tensors: a node with effects,
    run in its place in the graph; the tensors it writes read as pending until then."""
    written = [args[i] for i in prim.writes if args[i] is not None]
    silent = [args[i] for i in prim.silent if args[i] is not None]
    if not all(_is_real(t) for t in written + silent):
        return _break(session, prim, args, params)
    session._record_effect(prim, args, params, written, scalar_params=True, silent=silent)
    return None


def _record_inplace(session: Session, prim, args, params):
    """`x.op_(...)` into a real tensor with nothing for autograd to record (running
    statistics, updates under no_grad): a node with effects, checked now as eager checks
    it. Into a pending value of this graph: see `_rebind`. Anything else (a write autograd
    must see into a real tensor) ends the graph."""
    self = args[0]
    if self.__class__ is LazyTensor and self.__dict__.get("_lazy_session") is session:
        return _rebind(session, prim, args, params)
    base = self._base
    if not _is_real(self) or (_grad_state.enabled and (
            self._requires_grad or (base is not None and base._requires_grad)
            or any(isinstance(a, Tensor) and a._requires_grad for a in args[1:]))):
        return _break(session, prim, args, params)
    check_inplace(self)
    res = prim.base.meta(self, *args[1:], **params) if prim.base.meta else None
    if res is not None and broadcast_shapes(res[0], self._shape) != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                           f"broadcast shape {list(res[0])}")
    session._record_effect(prim, args, params, [self])
    return self


def _rebind(session: Session, prim, args, params):
    """`x.op_(...)` on a pending value `x`: the out-of-place op is recorded and `x` names
    its result from then on; its version moves and autograd's history moves to the op,
    as eager's in-place path (`autograd/inplace.py`) records it, so the graph goes on.
    Where another tensor would see the write (a view of `x`, `x` a view, another tensor
    of its value) or the result is laid out unlike `x`, the graph ends instead."""
    from ..autograd.inplace import _protect_saved, share_saved_output
    from ..ops.copy import clone

    self, rest = args[0], args[1:]
    if prim.base.n_outputs != 1 or self._base is not None or _seen_elsewhere(session, self):
        return _break(session, prim, args, params)
    check_inplace(self)
    try:
        shape, dtype, stride = _meta_of(prim.base, args, params)[0]
    except NotImplementedError:
        return _break(session, prim, args, params)
    if broadcast_shapes(shape, self._shape) != self._shape:
        raise RuntimeError(f"output with shape {list(self._shape)} doesn't match the "
                           f"broadcast shape {list(shape)}")
    if shape != self._shape or stride != self._stride or dtype is not self._dtype:
        return _break(session, prim, args, params)
    grad = _grad_state.enabled and (self._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in rest))
    result = bind(prim.base, *args, **params)  # recorded here (see `process`)
    node = result._grad_fn if grad else None
    if node is not None and node._saved:
        _protect_saved(node, self, clone)  # a saved `x` keeps its old value
    self.__dict__["_lazy_value"] = result.__dict__["_lazy_value"]
    bump_version(self)
    if node is not None:
        take_node(self, node, result.output_nr)
        share_saved_output(node, self)
    elif grad:
        self._grad_fn = None
        self._requires_grad = False
    return self


def _seen_elsewhere(session: Session, t: LazyTensor) -> bool:
    """Whether a live tensor other than `t` shares `t`'s pending value or views `t`."""
    v = t.__dict__["_lazy_value"]
    for ref in session.lazies:
        o = ref()
        if o is not None and o is not t and o.__class__ is LazyTensor and (
                o._base is t or o.__dict__.get("_lazy_value") is v):
            return True
    return False


def _is_real(t) -> bool:
    """A tensor with data on the CPU now (not pending, not on meta)."""
    if not isinstance(t, Tensor) or t._is_lazy:
        return False
    s = t._storage
    return t._np is not None if s is None else s.device.type == "cpu"


def _break(session: Session, prim, args, params):
    session.flush("eager op", prim.name)
    return session.lower(prim, args, params)


_CAPTURED: dict = {eval_kernel: _record_kernel, eval_member: _record_kernel,
                   _eval_view: _record_view, _eval_factory: _run_now, _eval_draw: _run_draw,
                   _eval_filled_like: _run_now, _eval_detach: _record_detach,
                   _eval_update: _record_update, _eval_inplace: _record_inplace}


def capture(session: Session):
    """`with capture(session):` records the ops bound inside into `session`'s graph."""
    return interpret(session)


__all__ = ["Break", "LazyTensor", "Session", "Value", "active", "capture"]
