"""Call memos: a built-in module's call or an optimizer's step, inside a compiled call,
taken from the graph the recording follows instead of running its Python again.

In the default mode the compiled function's Python runs on every call (PyTorch's
semantics), so a model's forward pays per op for ember's own Python: the module call, the
functional wrapper, `bind`, and the recording's check that the op repeats the followed
graph. For ember's built-in modules (`MEMO_TYPES`: Linear, the activations, Sequential of
such modules, the losses, LayerNorm, Embedding, Dropout) that Python has no side effects,
and what it records depends only on what a memo checks:

- the module tree: each module's class (and that class's `forward`), every entry of its
  `__dict__` (config, `training`) and its parameters, buffers and children, by identity
  (numbers and strings by value); no hooks (a hooked module never gets here). The entries
  are compared again only after some module's attribute was set or deleted (a counter
  `Module.__setattr__` and `__delattr__` move): a value written into `__dict__` directly
  is not seen, its parameters', buffers' and children's dicts are (checked every call);
- the arguments: tensors by the graph value they are (a pending value of this recording,
  or a real tensor read as a graph input laid out as before), other arguments by value;
- grad mode, inference mode, the default dtype, and no autocast region.

The first time such a call records cleanly (only kernels and views: no random draw, no
factory, no write, no graph break, nothing rebound in place), the memo keeps where its nodes
sit in the graph. A later call at the same place of the followed graph that passes the
checks appends those nodes in one step, makes their lazy results, and records autograd's
nodes for them exactly as the ops would have (the saved tensors and versions of now), so
`backward()`, hooks on the results and the replayed backward see what they see without
it. Any check that fails runs the call as usual (and remembers the new recording).

An optimizer's step (`StepMemo`) is taken the same way where it recorded fused updates
only: its checks are the optimizer's class and update, every group's entries and parameter
list, each parameter's state entries, and the gradients and state tensors it reads.
"""

from __future__ import annotations

import weakref

from .. import _dtype as dt
from .. import _grad_mode as grad_mode
from .._core.dispatch import _stack, autograd
from .._core.memo_seam import memos
from .._core.primitive import vjp_rule
from .._core.ranges import ranges
from .._tensor import Tensor, layout_strides
from ..amp import autocast_mode
from ..autograd.graph import record_like, statics
from ..nn.modules.module import Module, attr_changes
from ..nn.parameter import Parameter
from ..ops.registry import _eval_update
from ..ops.views import _eval_view
from .capture import Session, _is_real, active
from .ir import Scalar, Value, same_const
from .lazy import LazyTensor, make_lazy

_grad_state = grad_mode.state
_ref = weakref.ref
_VALUES = (int, float, bool, complex, str, type(None))  # (compared by value)
_PLAIN = (Tensor, LazyTensor, Parameter)  # (a subclass may override ops: not memoised)

_UNREAD = object()  # a tensor argument the call's nodes do not read (any tensor will do)
MEMO_TYPES: set = set()  # the module classes whose calls are memoised (filled below)
_MIN_NODES = 2  # a call recording one node is followed op by op (cheaper than its memo)
_TOO_SMALL = ()  # kept in place of memos for such a call


def _globals() -> tuple:
    return (_grad_state.enabled, _grad_state.inference, dt.get_default_dtype())


def _same_globals(g: tuple) -> bool:
    return _grad_state.enabled is g[0] and _grad_state.inference is g[1] and \
        dt.get_default_dtype() is g[2]


def _autocast_on() -> bool:
    return bool(getattr(autocast_mode._state, "enabled", False))


def _tree(module: Module, types: set = MEMO_TYPES) -> list | None:
    """The modules under `module` (itself first), or None where one's class is not among
    `types` (the memoisable ones) or it has hooks."""
    out, todo = [], [module]
    while todo:
        m = todo.pop()
        if m.__class__ not in types or m._hooked:
            return None
        out.append(m)
        todo.extend(m._modules.values())
    return out


def _snapshot(m: Module) -> tuple:
    d = m.__dict__
    return (_ref(m), m.__class__, m.__class__.forward, len(d), list(d.items()),
            tuple(m._parameters.items()), tuple(m._buffers.items()),
            tuple(m._modules.items()))


def _same_snapshot(s: tuple) -> bool:
    ref, cls, forward, n, items, params, buffers, children = s
    m = ref()
    if m is None or m.__class__ is not cls or cls.forward is not forward or m._hooked:
        return False
    d = m.__dict__
    if len(d) != n or not _same_entries(d, items):
        return False
    return _same_items(m._parameters, params) and _same_items(m._buffers, buffers) and \
        _same_items(m._modules, children)


def _same_parts(s: tuple) -> bool:
    """`_same_snapshot` less the `__dict__` entries (which only `__setattr__` changes)."""
    ref, cls, forward, n, items, params, buffers, children = s
    m = ref()
    return m is not None and m.__class__ is cls and cls.forward is forward and \
        not m._hooked and len(m.__dict__) == n and _same_items(m._parameters, params) and \
        _same_items(m._buffers, buffers) and _same_items(m._modules, children)


def _same_items(d: dict, items) -> bool:
    return len(d) == len(items) and _same_entries(d, items)


def _leaves(args: tuple, kwargs: dict) -> list | None:
    """The call's arguments as one flat list (keywords after, by name), or None where one
    is a container (not memoised)."""
    leaves = args
    if kwargs:
        leaves = list(args)
        for k in sorted(kwargs):
            leaves.append((k,))
            leaves.append(kwargs[k])
    for a in leaves:
        c = a.__class__
        if c in (list, dict, set) or (isinstance(a, Tensor) and c not in _PLAIN):
            return None
    return leaves


class Memo:
    """What a clean call recorded: where (nodes [start, stop) of the graph, value numbers
    [count0, count1)), what its Python read (`snaps`: the module tree, or the optimizer's
    groups and state), the arguments (tensors by value, others by value), the tensors its
    nodes read from outside and how each is found again, the Python numbers its nodes
    read, how each node is recorded, and the value(s) it returned."""

    __slots__ = ("snaps", "changes", "globals", "leaves", "start", "stop", "count0",
                 "count1", "n_inputs", "reads", "sc0", "scalars", "plans", "out")

    def check(self, session, leaves: list) -> dict | None:
        """{value: tensor} for the values the call's nodes read from outside, when this
        call may be taken from the memo; else None."""
        if not _same_globals(self.globals) or len(leaves) != len(self.leaves) or \
                len(session.graph.scalars) != self.sc0 or not self.guards_hold():
            return None
        for a, want in zip(leaves, self.leaves):
            if want.__class__ is Value or want is _UNREAD:
                if not isinstance(a, Tensor):
                    return None
            elif a.__class__ is not want.__class__ or not same_const(a, want):
                return None
        return _found(session, self, leaves)

    def guards_hold(self) -> bool:
        """Whether the module tree is as it was (see the module docstring)."""
        if attr_changes[0] == self.changes:  # (no module attribute set since: the parts)
            return all(_same_parts(s) for s in self.snaps)
        if not all(_same_snapshot(s) for s in self.snaps):
            return False
        self.changes = attr_changes[0]
        return True


class StepMemo(Memo):
    """An optimizer step's memo: its guards are the optimizer's groups and state."""

    __slots__ = ()

    def guards_hold(self) -> bool:
        return _same_optimizer(self.snaps)


class FnMemo(Memo):
    """A pure function's memo (`pure_call`): what guards it is among its leaves."""

    __slots__ = ()

    def guards_hold(self) -> bool:
        return True


class _GradOf:
    """Finds a parameter's `.grad` (a step reads the gradient the backward made)."""

    __slots__ = ("p",)

    def __init__(self, p) -> None:
        self.p = p

    def __call__(self):
        return self.p._grad


def _found(session, memo: Memo, leaves: list) -> dict | None:
    """{value: tensor} for what the memo's nodes read from outside, found again (a pending
    value of this recording, a graph input already read, or the next input of the
    followed graph laid out as before); None where one is not."""
    graph = session.graph
    k = len(graph.inputs)
    found: dict = {}
    for how, v, rg in memo.reads:
        t = leaves[how] if how.__class__ is int else how()
        if t is None or t.__class__ not in _PLAIN or t._requires_grad is not rg:
            return None
        if t.__class__ is LazyTensor and t.__dict__.get("_lazy_session") is session:
            if t.__dict__["_lazy_value"] is not v:
                return None
        elif t._is_lazy or t._is_pending:
            return None
        else:
            known = session.input_of.get(id(t))
            if known is None:  # read first here: the followed graph's next input
                if v.id < memo.count0 or t._shape != v.shape or t._dtype is not v.dtype \
                        or layout_strides(t) != v.stride or not _is_real(t):
                    return None
                k += 1
            elif known is not v:
                return None
        found[v] = t
    if k - len(graph.inputs) != memo.n_inputs:
        return None
    return found


def call(module: Module, args: tuple, kwargs: dict):
    """`module(*args, **kwargs)` while `session` records (see the module docstring)."""
    session = active.session
    if session is None or _stack.top is not session or session.written or \
            ranges.recorder is not None or _autocast_on():
        return module.forward(*args, **kwargs)
    key = (id(module), len(session.graph.nodes))
    e = session.expect
    if e is not None and e[0].call_memos.get(key) is _TOO_SMALL:
        return module.forward(*args, **kwargs)
    leaves = _leaves(args, kwargs)
    if leaves is None:
        return module.forward(*args, **kwargs)
    got = _lookup(session, key, Memo, leaves)
    if got is not None:
        return _replay(session, *got, leaves)
    tree = _tree(module)
    if tree is None:
        return module.forward(*args, **kwargs)
    return _record(session, module, tree, leaves, args, kwargs, key)


def pure_call(fn, key, leaves: list, min_nodes: int = _MIN_NODES):
    """`fn(*leaves)` while a session records (a compiled call's, or the MLX face's lazy
    one innermost on the stack), taken from the memo kept at this place of the followed
    graph where one passes, else run (and remembered where it recorded cleanly). `fn` must
    have no side effects and record what its tensors' graph values and the values of its
    other leaves decide (a guard among them: a tuple of numbers, strings, classes and
    functions); it returns a tensor or a tuple of tensors. A call that records fewer than
    `min_nodes` nodes is followed op by op (cheaper than checking its memo)."""
    session = active.session
    if session is None:
        session = _stack.top
        if not isinstance(session, Session):
            return fn(*leaves)
    if _stack.top is not session or session.written or ranges.recorder is not None or \
            _autocast_on():
        return fn(*leaves)
    key = (key, len(session.graph.nodes))
    e = session.expect
    if e is not None and e[0].call_memos.get(key) is _TOO_SMALL:
        return fn(*leaves)
    got = _lookup(session, key, FnMemo, leaves)
    if got is not None:
        return _replay(session, *got, leaves)
    out, memo, graph = _recorded(session, lambda: fn(*leaves), leaves, key, FnMemo,
                                 min_nodes)
    if memo is not None:
        _keep(session, graph, key, memo)
    return out


def _lookup(session, key, kind, leaves) -> tuple | None:
    """(graph, memo, {value: tensor}) of a memo of `kind` kept at `key` that this call
    passes, the graph now followed; or None. Only the followed graph is asked, or at a
    graph's first op the graphs seen there, in the order following takes them: a graph
    without a memo here ends the search (the call is then recorded, follows that graph
    and leaves its memo there)."""
    graph = session.graph
    e = session.expect
    cands = (e,) if e is not None else () if graph.nodes else \
        session.expected.get(session.segment, ())
    for cand in cands:
        kept = cand[0].call_memos.get(key)
        if not kept:
            break
        for memo in kept:
            if memo.__class__ is kind and graph._count == memo.count0:
                found = memo.check(session, leaves)
                if found is not None:
                    session.expect = cand
                    return cand[0], memo, found
    return None


class _Mark:
    """Where a recording stood when a call began: its graph and run, the graph's sizes,
    and how many lazy results, factory results and draws the session had made."""

    __slots__ = ("graph", "segment", "start", "count0", "n_in", "n_sc", "n_lazies", "n_made",
                 "draws")

    def __init__(self, session) -> None:
        g = self.graph = session.graph
        self.segment, self.start, self.count0 = session.segment, len(g.nodes), g._count
        self.n_in, self.n_sc = len(g.inputs), len(g.scalars)
        self.n_lazies, self.n_made, self.draws = len(session.lazies), len(session.made), \
            session.draws

    def one_run(self, session) -> bool:
        """Whether what was recorded since stayed in this graph (no graph ran) and made
        no tensor outside it (no factory, no random draw)."""
        return session.graph is self.graph and session.segment == self.segment and \
            len(session.made) == self.n_made and session.draws == self.draws


def _record(session, module, tree, leaves, args, kwargs, key):
    changes = attr_changes[0]
    snaps = [_snapshot(m) for m in tree]
    out, memo, graph = _recorded(session, lambda: module.forward(*args, **kwargs), leaves,
                                 key, Memo)
    if memo is not None and attr_changes[0] == changes:  # (else it set a module attribute)
        memo.snaps, memo.changes = snaps, changes
        _keep(session, graph, key, memo)
    return out


def _recorded(session, run, leaves, key, kind, min_nodes: int = _MIN_NODES) -> tuple:
    """(`run()`, a memo of `kind` of what it recorded or None where the recording was not
    clean or made fewer than `min_nodes` nodes, the graph it recorded into)."""
    mark = _Mark(session)
    graph = mark.graph
    before = [(a, a.__dict__["_lazy_value"]) for a in leaves
              if a.__class__ is LazyTensor and a.__dict__.get("_lazy_session") is session]
    glob = _globals()
    out = run()
    if not mark.one_run(session) or session.written or graph.effects or \
            _globals() != glob or any(a.__dict__.get("_lazy_value") is not v
                                      for a, v in before):
        return out, None, graph
    nodes = graph.nodes[mark.start:]
    if not nodes or any(not n.outs for n in nodes):
        return out, None, graph
    if len(nodes) < min_nodes:  # (its memo would cost more than following its ops)
        target = session.expect[0] if session.expect is not None else graph
        target.call_memos[key] = _TOO_SMALL
        return out, None, graph
    # the tensors made inside are the nodes' results (and autograd's aliases of them)
    inside = {o for n in nodes for o in n.outs}
    for ref in session.lazies[mark.n_lazies:]:
        t = ref()
        if t is not None and t.__dict__.get("_lazy_value") not in inside:
            return out, None, graph
    return out, _memo(session, mark, nodes, leaves, glob, out, kind), graph


def _keep(session, graph, key, memo) -> None:
    """Keep `memo` with the graph the recording follows (or this recording's own graph),
    before the last few made at its place (grad mode on or off, a frozen layer ...)."""
    target = session.expect[0] if session.expect is not None else graph
    kept = target.call_memos.get(key)
    if kept.__class__ is not list:
        kept = target.call_memos[key] = []
    kept.insert(0, memo)
    del kept[4:]


def _memo(session, mark: _Mark, nodes, leaves, glob, out, kind):
    """The memo of a clean recording of nodes [start, ...), or None where something it
    read or returned cannot be found again by the memo's checks."""
    inside = {o for n in nodes for o in n.outs}
    arg_of: dict = {}
    for j, a in enumerate(leaves):
        if isinstance(a, Tensor):
            v = _value_of(session, a)
            if v is not None:
                arg_of.setdefault(v, j)
    tensor_of = dict(zip(mark.graph.inputs, session.input_tensors))

    def find(v):
        j = arg_of.get(v)
        if j is not None:
            return j, leaves[j]
        t = tensor_of.get(v)
        return (None, None) if t is None else (_ref(t), t)

    m = kind()
    if not _fill(m, session, mark, nodes, inside, find):
        return None
    m.globals = glob
    m.leaves = [(_value_of(session, a) or _UNREAD) if isinstance(a, Tensor) else a
                for a in leaves]
    m.plans = [[n, n.prim.impl is _eval_view, None] for n in nodes]  # (statics: below)
    m.out = _out_spec(out, inside, arg_of, leaves)
    return None if m.out is None else m


def _fill(m: Memo, session, mark: _Mark, nodes, inside, find) -> bool:
    """Fill in where the nodes sit and what they read from outside (`find(value)`: how to
    find its tensor again, and the tensor); False where a value cannot be found again."""
    graph = mark.graph
    new_inputs = graph.inputs[mark.n_in:]
    reads, seen = [], set()
    for n in nodes:
        for a in n.args:
            if a.__class__ is Value and a not in inside and a not in seen:
                seen.add(a)
                how, t = find(a)
                # (a tensor an update of the region wrote reads as pending now)
                if t is None or (t.__class__ not in _PLAIN and not t._is_pending):
                    return False  # (a pending value the call was not handed)
                reads.append((how, a, t._requires_grad))
    if [v for _, v, _ in reads if v in set(new_inputs)] != new_inputs:
        return False
    m.start, m.stop, m.count0, m.count1 = mark.start, len(graph.nodes), mark.count0, \
        graph._count
    m.n_inputs, m.reads = len(new_inputs), reads
    m.sc0, m.scalars = mark.n_sc, list(session.scalar_values[mark.n_sc:])
    return True


def _value_of(session, t: Tensor):
    if t.__class__ is LazyTensor and t.__dict__.get("_lazy_session") is session:
        return t.__dict__["_lazy_value"]
    return session.input_of.get(id(t))


def _out_spec(out, inside: set, arg_of: dict, leaves: list):
    """How to find the call's result again: ("v", value) for a tensor made inside, ("a",
    j) for argument j returned as it is, a tuple of those; None otherwise."""
    if isinstance(out, Tensor):
        if out.__class__ is not LazyTensor:  # (an argument handed back as it is?)
            j = next((j for j, a in enumerate(leaves) if a is out), None)
            return None if j is None else ("a", j)
        v = out.__dict__.get("_lazy_value")
        if v in inside:
            return ("v", v)
        j = arg_of.get(v)
        return None if j is None else ("a", j)
    if out.__class__ is tuple:
        parts = tuple(_out_spec(o, inside, arg_of, leaves) for o in out)
        return None if any(p is None for p in parts) else ("t", parts)
    return None


def _append(session, expected, memo: Memo, found: dict) -> None:
    """Append the memo's nodes (of the followed graph `expected`), with the graph inputs
    and numbers they read, to the recording."""
    graph = session.graph
    for v, t in found.items():
        if v.id >= memo.count0:  # a new graph input
            graph.inputs.append(v)
            session.input_of[id(t)] = v
            session.input_tensors.append(t)
    sc0 = memo.sc0
    graph.scalars.extend(expected.scalars[sc0:sc0 + len(memo.scalars)])
    session.scalar_values.extend(memo.scalars)
    graph.nodes.extend(expected.nodes[memo.start:memo.stop])
    graph._count = memo.count1


def _replay(session, expected, memo: Memo, found: dict, leaves: list):
    """Append the memo's nodes to the recording and make their results (see `call`)."""
    _append(session, expected, memo, found)
    sc0 = memo.sc0
    grad = _grad_state.enabled
    refs = session.lazies
    owner = session.owner
    if not grad or not any(t._requires_grad for t in found.values()):
        # (no autograd node to record: only the returned values need their tensors)
        _make_results(session, memo.out, found)
        if owner is not None:
            owner.call_memo_hits += 1
        return _result(memo.out, found, leaves)
    for plan in memo.plans:
        n, is_view, like = plan
        args = tuple(found[a] if a.__class__ is Value else memo.scalars[a.id - sc0]
                     if a.__class__ is Scalar else a for a in n.args)
        if is_view:
            x = args[0]
            base = x._base if x._base is not None else x
            (v,) = n.outs
            out = make_lazy(session, v, v.dtype, base, x._vc)
            refs.append(_ref(out))
            found[v] = out
            records = grad and x._requires_grad
        else:
            lazies = []
            for v in n.outs:
                t = make_lazy(session, v, v.dtype, None, None)
                refs.append(_ref(t))
                found[v] = t
                lazies.append(t)
            out = lazies[0] if n.prim.n_outputs == 1 else tuple(lazies)
            records = grad and any(isinstance(a, Tensor) and a._requires_grad for a in args)
        if records:
            if like is None or not record_like(like, args, out):
                autograd.record(n.prim, vjp_rule(n.prim, n.params), args, n.params, out)
            node = (out[0] if out.__class__ is tuple else out)._grad_fn
            if node is not None:
                node._compiled = owner
                if like is None:
                    plan[2] = statics(node)
    if owner is not None:
        owner.call_memo_hits += 1
    return _result(memo.out, found, leaves)


def _make_results(session, spec, found: dict) -> None:
    """Lazy tensors of the values a replayed call returns, made in the order the call's
    ops made them (the pending graph's outputs keep the order of a recorded step), a
    view's on its base's storage as the view op makes it."""
    wanted: list = []
    _returned(spec, wanted)
    for v in sorted(wanted, key=lambda v: v.id):
        _make_result(session, v, found)


def _returned(spec, out: list) -> None:
    kind, x = spec
    if kind == "t":
        for part in x:
            _returned(part, out)
    elif kind == "v":
        out.append(x)


def _make_result(session, v: Value, found: dict):
    t = found.get(v)
    if t is not None:
        return t
    n = v.node
    base = vc = None
    if n.prim.impl is _eval_view and n.args[0].__class__ is Value:
        src = _make_result(session, n.args[0], found)
        base, vc = (src._base if src._base is not None else src), src._vc
    t = found[v] = make_lazy(session, v, v.dtype, base, vc)
    session.lazies.append(_ref(t))
    return t


def _result(spec, found: dict, leaves: list):
    kind, x = spec
    if kind == "v":
        return found[x]
    if kind == "a":
        return leaves[x]
    return tuple(_result(p, found, leaves) for p in x)


# -- optimizer steps -------------------------------------------------------------------

def step(opt) -> None:
    """`opt`'s updates of one step (`Optimizer._step_groups`) while a session records: taken
    from the followed graph where the same step recorded cleanly (fused updates only) and
    the optimizer's groups and state are as they were, else run as usual."""
    session = active.session
    if session is None or _stack.top is not session or ranges.recorder is not None or \
            _grad_state.enabled:
        return opt._step_groups()
    key = (id(opt), len(session.graph.nodes))
    got = _lookup(session, key, StepMemo, [])
    if got is None:
        return _record_step(session, opt, key)
    expected, memo, found = got
    _append(session, expected, memo, found)
    for n in memo.plans:
        a = n.args
        session.mark_written([found[a[i]] for i in n.prim.writes if a[i] is not None],
                             [found[a[i]] for i in n.prim.silent if a[i] is not None])
    if session.owner is not None:
        session.owner.call_memo_hits += 1
    return None


def _record_step(session, opt, key) -> None:
    mark = _Mark(session)
    graph = mark.graph
    snaps = _optimizer_snapshot(opt)
    opt._step_groups()
    nodes = graph.nodes[mark.start:]
    if not mark.one_run(session) or not nodes or len(session.lazies) != mark.n_lazies or \
            any(n.outs or n.prim.impl is not _eval_update for n in nodes) or \
            not _same_optimizer(snaps):
        return
    grad_of = {}
    for g in opt.param_groups:
        for p in g["params"]:
            if p._grad is not None:
                grad_of.setdefault(_value_of(session, p._grad), p)
    tensor_of = dict(zip(graph.inputs, session.input_tensors))

    def find(v):
        p = grad_of.get(v)
        if p is not None:
            return _GradOf(p), p._grad
        t = tensor_of.get(v)
        return (None, None) if t is None else (_ref(t), t)

    m = StepMemo()
    if _fill(m, session, mark, nodes, set(), find):
        m.snaps, m.globals, m.leaves, m.plans, m.out = snaps, _globals(), [], nodes, None
        _keep(session, graph, key, m)


def _optimizer_snapshot(opt) -> tuple:
    """What an optimizer's step reads besides tensors: its class and update, each group's
    entries (the parameter lists by their members) and each parameter's state entries."""
    groups = opt.param_groups
    return (opt, opt.__class__, opt.__class__._update, opt.__class__._step_groups, groups,
            [(g, len(g), list(g.items()), tuple(g["params"])) for g in groups],
            [(p, st, None if st is None else list(st.items()))
             for g in groups for p in g["params"] for st in (opt.state.get(p),)])


def _same_optimizer(snaps: tuple) -> bool:
    opt, cls, update, step_groups, groups, group_items, states = snaps
    if opt.__class__ is not cls or cls._update is not update or \
            cls._step_groups is not step_groups or opt.param_groups is not groups or \
            len(groups) != len(group_items):
        return False
    for g, n, items, params in group_items:
        if len(g) != n or not _same_entries(g, items) or len(g["params"]) != len(params) or \
                any(a is not b for a, b in zip(g["params"], params)):
            return False
    state = opt.state
    for p, st, items in states:
        now = state.get(p)
        if now is not st or (items is not None and (len(now) != len(items) or
                                                    not _same_entries(now, items))):
            return False
    return True


def _same_entries(d: dict, items: list) -> bool:
    for k, v in items:
        if not _same_value(d.get(k, d), v):
            return False
    return True


def _same_value(w, v) -> bool:
    """The same object, or numbers / strings (and tuples of them) of equal value."""
    if w is v:
        return True
    c = v.__class__
    if w.__class__ is not c:
        return False
    if c in _VALUES:
        return w == v
    return c is tuple and len(w) == len(v) and all(map(_same_value, w, v))


def _register() -> None:
    from .. import nn

    MEMO_TYPES.update({
        nn.Linear, nn.Identity, nn.Flatten, nn.Sequential, nn.ReLU, nn.GELU, nn.Tanh,
        nn.Sigmoid, nn.SiLU, nn.LeakyReLU, nn.ELU, nn.Softplus, nn.Softmax, nn.LogSoftmax,
        nn.Dropout, nn.CrossEntropyLoss, nn.NLLLoss, nn.MSELoss, nn.L1Loss, nn.BCELoss,
        nn.BCEWithLogitsLoss, nn.LayerNorm, nn.Embedding,
    })
    memos.module_types = frozenset(MEMO_TYPES)
    memos.module_call = call
    memos.optimizer_step = step


_register()
