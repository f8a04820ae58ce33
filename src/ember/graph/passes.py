"""Passes over a graph: which nodes are needed, which can share a kernel."""

from __future__ import annotations

from .ir import Graph, Node, Value


def live_nodes(graph: Graph) -> list[Node]:
    """The nodes the outputs depend on, in bind order (dead code dropped)."""
    needed: set = set()
    todo = [v for v in graph.outputs if v.node is not None]
    for n in graph.nodes:  # nodes that write into an input run whatever else is needed
        if not n.outs:
            todo += [a for a in n.args if a.__class__ is Value and a.node is not None]
            needed.add(n)
    while todo:
        n = todo.pop().node
        if n in needed:
            continue
        needed.add(n)
        todo += [a for a in n.args if a.__class__ is Value and a.node is not None]
    return [n for n in graph.nodes if n in needed]
