"""Passes over a graph: which nodes are needed, which can share a kernel."""

from __future__ import annotations

from .direct import elide_copies
from .ir import Graph, Node, Scalar, Value, freeze, params_key
from .patterns import fuse_patterns


def live_nodes(graph: Graph) -> list[Node]:
    """The nodes the outputs depend on, in bind order (dead code dropped)."""
    producer = {o: n for n in graph.nodes for o in n.outs}  # (a pass may have replaced nodes)
    needed: set = set()
    todo = [v for v in graph.outputs if v in producer]
    for n in graph.nodes:  # nodes that write into an input run whatever else is needed
        if not n.outs:
            todo += [a for a in n.args if a.__class__ is Value and a in producer]
            needed.add(n)
    while todo:
        n = producer[todo.pop()]
        if n in needed:
            continue
        needed.add(n)
        todo += [a for a in n.args if a.__class__ is Value and a in producer]
    return [n for n in graph.nodes if n in needed]


def common_subexpressions(graph: Graph, nodes: list[Node]) -> tuple[list[Node], dict]:
    """Nodes computing what an earlier node computed (same op, params and operands) are
    dropped; returns the nodes kept and {dropped value: the value that replaces it}.
    Nodes reading a tensor that some node of the graph writes into are kept as they are
    (their value depends on where they sit)."""
    written = {a for n in nodes if not n.outs for a in n.args if a.__class__ is Value}
    seen: dict = {}
    same: dict = {}
    kept = []
    for n in nodes:
        args = tuple(same.get(a, a) if a.__class__ is Value else a for a in n.args)
        if args != n.args:
            n = Node(n.prim, n.params, args, n.outs)
        if not n.outs or any(a in written for a in args if a.__class__ is Value):
            kept.append(n)
            continue
        key = (n.prim, params_key(n.params),
               tuple(a.id if a.__class__ is Value else ("s", a.id) if a.__class__ is Scalar
                     else freeze(a) for a in args))
        first = seen.get(key)
        if first is None:
            seen[key] = n
            kept.append(n)
        else:
            for mine, theirs in zip(n.outs, first.outs):
                same[mine] = theirs
    return kept, same


def optimized(graph: Graph) -> Graph:
    """The graph the program runs: dead code, common subexpressions and copies of values
    nothing else reads (`direct.elide_copies`) removed, and `patterns` fused. Its
    outputs keep their positions (a dropped value's place is taken by its replacement)."""
    kept, same = common_subexpressions(graph, live_nodes(graph))
    outputs = [same.get(v, v) for v in graph.outputs]
    kept = fuse_patterns(kept, outputs)
    kept, copies = elide_copies(outputs, kept)
    if copies:
        kept = [n if not any(a in copies for a in n.args) else
                Node(n.prim, n.params, tuple(copies.get(a, a) if a.__class__ is Value else a
                                             for a in n.args), n.outs) for n in kept]
        same = {k: copies.get(v, v) for k, v in same.items()}
        same.update(copies)
    out = graph.with_nodes(kept)
    out.outputs = [same.get(v, v) for v in graph.outputs]
    return out
