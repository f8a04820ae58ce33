"""A backward pass inside a compiled call, replayed from the one recorded at the same place.

In default mode a compiled training step runs its Python every call, and `loss.backward()`
runs autograd's engine over the step's nodes, whose VJP rules bind ops that the session
records. When the step repeats (the same graph recorded so far, node for node, and the same
autograd graph over it), the engine would record the very nodes it recorded last time. So
the first backward at a place of a graph is run by the engine and remembered (`Memo`: the
nodes it recorded, the tensors they read that were new to the graph, the numbers, which
value became each leaf's `.grad`, which autograd nodes it freed); a later one whose
autograd graph has the same fingerprint appends those nodes to the recording at once,
sets the leaves' `.grad`, and frees the nodes, without running the engine.

What the engine does that a replay could not redo sends the pass to the engine: hooks of
any kind, retained gradients, leaves that already hold a `.grad` (accumulation), anomaly
mode or a profiler, a node that another call or a custom Function recorded, a saved tensor
written in place since (the engine raises PyTorch's error), `create_graph`, `inputs=`,
`autograd.grad`. The fingerprint is the autograd graph's structure: each node's class,
which inputs need gradients, its edges, the graph values it saved (with their versions
unchanged) and, at the leaves, which graph input each leaf is.
"""

from __future__ import annotations

import weakref

from .._core.primitive import VJPRule
from .._core.ranges import ranges
from .._tensor import layout_strides
from ..autograd import graph as _ag
from ..autograd.engine import _unpack
from ..autograd.graph import AccumulateGrad
from ..autograd.saved_attrs import Metadata
from .ir import RUNTIME_SCALARS, Node, Scalar, Value, same_const, same_params
from .lazy import LazyTensor, make_lazy


class Memo:
    """What one engine run recorded at a place of a graph (see the module docstring)."""

    __slots__ = ("fingerprint", "first", "plan", "inputs", "grads", "released", "follows",
                 "taken")

    def __init__(self, fingerprint, first, plan, inputs, grads, released) -> None:
        self.fingerprint = fingerprint
        self.first = first  # the graph's next value id when the pass began
        # per node the engine recorded: (prim, params, args, outs), an arg being
        # (VALUE, id - first) for a value made in the pass, (EARLIER, node index, output
        # index) or (EARLIER_INPUT, input index) for one from before it, (INPUT, (shape,
        # dtype, stride), source), (SCALAR, number) or (CONST, object); an out (shape,
        # dtype, stride, index)
        self.plan = plan
        self.inputs = inputs  # ((shape, dtype, stride), source) of each new graph input
        self.grads = grads  # (leaf index in the walk, value id of its new .grad) per leaf
        self.released = released  # walk indices of the autograd nodes the engine freed
        # the graph whose nodes from this place are the plan's own (`_follows`), and what a
        # replay that follows it takes: (numbers read, the leaves' grad values, next id)
        self.follows = None
        self.taken = None


VALUE, EARLIER, EARLIER_INPUT, INPUT, SCALAR, CONST = range(6)


def _ref(session, t):
    """How the graph names tensor `t`: ("v", value id) for a pending value of this session,
    ("in", input position) for a graph input; None for anything else."""
    if t.__class__ is LazyTensor:
        d = t.__dict__
        if d.get("_lazy_session") is session:
            return ("v", d["_lazy_value"].id)
        return None
    pos = session.input_of.get(id(t))
    return None if pos is None else ("in", pos.id)


def walk(session, roots, root_grads):
    """(fingerprint, autograd nodes, leaves) of the backward pass from `roots`, or None
    where a replay could not do what the engine would."""
    if _ag._anomaly.enabled or ranges.recorder is not None:
        return None
    index: dict = {}
    order: list = []
    for node, _ in roots:
        if node is not None and node not in index:
            index[node] = len(order)
            order.append(node)
    prints = []
    leaves = []
    reals: dict = {}  # id -> ordinal of each real tensor a node saved (read as an input)
    real_list = []
    i = 0
    while i < len(order):
        node = order[i]
        i += 1
        if node._pre_hooks or node._post_hooks or node._tensor_hooks:
            return None
        if node.__class__ is AccumulateGrad:
            var = node.variable
            ag = var._ag
            if var._grad is not None or (ag is not None and (ag.hooks or ag.post_acc_hooks)):
                return None
            pos = session.input_of.get(id(var))
            leaves.append(var)
            prints.append(("leaf", None if pos is None else pos.id))
            continue
        rule = getattr(node, "_rule", None)
        if rule.__class__ is not VJPRule or node._retained or node._kept is not None:
            return None
        try:  # (the engine's own checks: released, or a saved tensor written since)
            _, out = _unpack(node, False)
        except RuntimeError:
            return None
        if out is None and node._out is not None:  # (a cached output written since)
            return None
        saved = []
        for s in node._saved:
            if s is None or not isinstance(s, _ag.T.Tensor):
                # (a number the rule reads: a new value must not replay the old one)
                saved.append(s if s.__class__ in RUNTIME_SCALARS or s.__class__ is Metadata
                             else None)
                continue
            r = _ref(session, s) or _real(s, reals, real_list)
            if r is None:
                return None
            saved.append(r)
        for o in out if out.__class__ is tuple else (out,):
            r = None if o is None else _ref(session, o) or _real(o, reals, real_list)
            if o is not None and r is None:
                return None
            saved.append(r)
        edges = []
        for nxt, nr in node._edges:
            if nxt is None:
                edges.append(None)
                continue
            k = index.get(nxt)
            if k is None:
                k = index[nxt] = len(order)
                order.append(nxt)
            edges.append((k, nr))
        prints.append((node.__class__, node._needs, tuple(edges), tuple(saved)))
    grads = tuple(("root", k) if g is None else (_ref(session, g) or ("new", k))
                  for k, g in enumerate(root_grads))
    return (tuple(prints), grads), order, leaves, real_list


def _real(t, reals: dict, real_list: list):
    """("real", k): the k-th distinct tensor with data (not pending) that the nodes saved,
    which the pass reads as a graph input; None for anything else."""
    if t.__class__ is LazyTensor or t._is_pending:
        return None
    k = reals.get(id(t))
    if k is None:
        k = reals[id(t)] = len(real_list)
        real_list.append(t)
    return ("real", k)


def _source(kind: str, what, root_grads, reals):
    """The tensor a new graph input of a replayed pass is: a root's gradient, a tensor a
    node saved, or a tensor the pass made (kept as is)."""
    if kind == "root":
        return root_grads[what]
    return reals[what] if kind == "real" else what


def learn(session, graph, marks, root_grads, fp, order, leaves, reals) -> Memo | None:
    """The memo of the engine run that just recorded `graph.nodes[marks[0]:]`, or None
    where a replay could not redo it."""
    i0, n_in, n_sc, n_lazy, n_made, first = marks
    nodes = graph.nodes[i0:]
    if any(not n.outs for n in nodes):  # (a node that writes into a real tensor)
        return None
    sources = {}
    made = [r() for r in session.made[n_made:]]
    for v, t in zip(graph.inputs[n_in:], session.input_tensors[n_in:]):
        k = next((k for k, g in enumerate(root_grads) if g is t), None)
        if k is not None:
            sources[v.id] = ("root", k)
        elif any(t is m for m in made):
            sources[v.id] = ("const", t)
        else:
            k = next((k for k, r in enumerate(reals) if r is t), None)
            if k is None:
                return None
            sources[v.id] = ("real", k)
    scalars = iter(session.scalar_values[n_sc:])
    where = {v.id: (EARLIER_INPUT, i) for i, v in enumerate(graph.inputs[:n_in])}
    for i, n in enumerate(graph.nodes[:i0]):
        for j, o in enumerate(n.outs):
            where[o.id] = (EARLIER, i, j)
    plan, inputs = [], []
    for n in nodes:
        args = []
        for a in n.args:
            c = a.__class__
            if c is Value:
                if a.id in sources:
                    meta = (a.shape, a.dtype, a.stride)
                    args.append((INPUT, meta, sources.pop(a.id)))
                    inputs.append((meta, args[-1][2]))
                else:
                    args.append(where.get(a.id) or (VALUE, a.id - first))
            elif c is Scalar:
                args.append((SCALAR, next(scalars)))
            else:
                args.append((CONST, a))
        plan.append((n.prim, n.params, tuple(args),
                     tuple((o.shape, o.dtype, o.stride, o.index) for o in n.outs)))
    grads = []
    kept = set()
    for k, var in enumerate(leaves):
        g = var._grad
        if g is None:
            continue
        r = _ref(session, g)
        if r is None or r[0] != "v":
            return None
        grads.append((k, r[1]))
        kept.add(id(g))
    made_at = {}
    for at, ref in enumerate(session.lazies[n_lazy:]):  # (nothing else may stay alive)
        t = ref()
        if t is not None and t.__class__ is LazyTensor:
            if id(t) not in kept:
                return None
            made_at[id(t)] = at
    # (in the order the engine made them: the graph's outputs are listed in that order)
    grads.sort(key=lambda kv: made_at[id(leaves[kv[0]]._grad)])
    released = tuple(j for j, n in enumerate(order)
                     if n.__class__ is not AccumulateGrad and n._saved is None)
    return Memo(fp, first, tuple(plan), tuple(inputs), grads, released)


def replay(session, memo: Memo, root_grads, order, leaves, reals, retain_graph: bool) -> bool:
    """Append `memo`'s nodes to the recording, set the leaves' `.grad` and free the nodes;
    False (nothing done) where a new input is not laid out as it was."""
    graph = session.graph
    if graph._count != memo.first:
        return False
    for meta, (kind, what) in memo.inputs:
        t = _source(kind, what, root_grads, reals)
        stride = layout_strides(t)
        if (t._shape, t._dtype, tuple(stride)) != meta:
            return False
    expected = session.expect[0] if session.expect is not None else None
    if expected is not None and (memo.follows is expected or _follows_safely(session, memo,
                                                                             expected)):
        _take(session, memo, root_grads, leaves, reals)
    else:
        session.expect = None  # (new nodes below: the recording follows no graph from here)
        _build(session, memo, root_grads, leaves, reals)
    if not retain_graph:
        for j in memo.released:
            order[j]._release()
    return True


def _follows_safely(session, memo: Memo, expected) -> bool:
    """`_follows`, False where a constant's or param's == is not a bool."""
    try:
        return _follows(session, memo, expected)
    except (ValueError, TypeError):
        return False


def _follows(session, memo: Memo, expected) -> bool:
    """Whether the nodes `expected` has from here are the plan's, node for node (the
    recording has followed `expected` so far); if so the memo keeps what a replay needs
    to take them (`_take`)."""
    graph = session.graph
    i0, n_in, n_sc = len(graph.nodes), len(graph.inputs), len(graph.scalars)
    plan, first = memo.plan, memo.first
    if len(expected.nodes) < i0 + len(plan):
        return False
    made = 0  # values made so far in the pass (their ids run on from `first`)
    new_in = 0
    numbers = []
    for (prim, params, spec, outs), en in zip(plan, expected.nodes[i0:]):
        if en.prim is not prim or len(en.args) != len(spec) or len(en.outs) != len(outs) \
                or not same_params(params, en.params):
            return False
        for a, x in zip(spec, en.args):
            kind = a[0]
            if kind == VALUE:
                ok = x.__class__ is Value and x.id == first + a[1]
            elif kind == EARLIER:
                ok = x is graph.nodes[a[1]].outs[a[2]]
            elif kind == EARLIER_INPUT:
                ok = x is graph.inputs[a[1]]
            elif kind == INPUT:
                k = n_in + new_in
                ok = k < len(expected.inputs) and expected.inputs[k] is x and \
                    x.id == first + made and (x.shape, x.dtype, x.stride) == a[1]
                new_in += 1
                made += 1
            elif kind == SCALAR:
                ok = x.__class__ is Scalar and x.type is a[1].__class__ and \
                    x.id == n_sc + len(numbers)
                numbers.append(a[1])
            else:
                ok = x.__class__ is a[1].__class__ and same_const(a[1], x)
            if not ok:
                return False
        for (shape, dtype, stride, i), o in zip(outs, en.outs):
            if o.id != first + made or o.index != i or (o.shape, o.dtype, o.stride) != \
                    (shape, dtype, stride):
                return False
            made += 1
    values = {v.id: v for en in expected.nodes[i0:i0 + len(plan)] for v in en.outs}
    grads = [(k, values.get(vid)) for k, vid in memo.grads]
    if any(v is None for _, v in grads):
        return False
    memo.follows = expected
    memo.taken = (tuple(numbers), grads, first + made)
    return True


def _take(session, memo: Memo, root_grads, leaves, reals) -> None:
    """Replay by taking the followed graph's own nodes from here (see `_follows`)."""
    graph, expected = session.graph, memo.follows
    numbers, grads, count = memo.taken
    i0, n_in, n_sc = len(graph.nodes), len(graph.inputs), len(graph.scalars)
    input_of, tensors = session.input_of, session.input_tensors
    for v, (_, (src, what)) in zip(expected.inputs[n_in:n_in + len(memo.inputs)],
                                   memo.inputs):
        t = _source(src, what, root_grads, reals)
        graph.inputs.append(v)
        input_of[id(t)] = v
        tensors.append(t)
    graph.scalars.extend(expected.scalars[n_sc:n_sc + len(numbers)])
    session.scalar_values.extend(numbers)
    graph.nodes.extend(expected.nodes[i0:i0 + len(memo.plan)])
    graph._count = count
    _set_grads(session, leaves, grads)


def _build(session, memo: Memo, root_grads, leaves, reals) -> None:
    """Replay by making the plan's nodes anew."""
    graph = session.graph
    nodes, graph_inputs = graph.nodes, graph.inputs
    made = []  # the values made in the pass, by id - first
    count = graph._count
    input_of, tensors, numbers = session.input_of, session.input_tensors, session.scalar_values
    for prim, params, spec, outs in memo.plan:
        args = []
        for a in spec:
            kind = a[0]
            if kind == VALUE:
                args.append(made[a[1]])
            elif kind == EARLIER:
                args.append(nodes[a[1]].outs[a[2]])
            elif kind == EARLIER_INPUT:
                args.append(graph_inputs[a[1]])
            elif kind == INPUT:
                (shape, dtype, stride), (src, what) = a[1], a[2]
                t = _source(src, what, root_grads, reals)
                v = Value(count, shape, dtype, stride)
                count += 1
                graph_inputs.append(v)
                input_of[id(t)] = v
                tensors.append(t)
                made.append(v)
                args.append(v)
            elif kind == SCALAR:
                numbers.append(a[1])
                args.append(graph.add_scalar(a[1]))
            else:
                args.append(a[1])
        node = Node(prim, params, tuple(args), ())
        vs = []
        for shape, dtype, stride, i in outs:
            v = Value(count, shape, dtype, stride, node, i)
            count += 1
            vs.append(v)
            made.append(v)
        node.outs = tuple(vs)
        nodes.append(node)
    graph._count = count
    _set_grads(session, leaves, [(k, made[vid - memo.first]) for k, vid in memo.grads])


def _set_grads(session, leaves, grads) -> None:
    """Each leaf's `.grad`: a pending tensor of the value (leaf index, value) names."""
    for k, v in grads:
        g = make_lazy(session, v, v.dtype, None, None)
        session.lazies.append(weakref.ref(g))
        leaves[k]._grad = g
