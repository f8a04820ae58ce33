"""`torch.fx.replace_pattern`: find each occurrence of a pattern graph in a GraphModule's
graph and put a replacement graph in its place (the subgraph rewriting of the fx docs)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One occurrence: the graph node the pattern's output matched, and pattern node ->
    graph node for every pattern node."""

    anchor: Node
    nodes_map: dict[Node, Node]


class _Found:
    def __init__(self, anchors: list[Node]) -> None:
        self.anchors = anchors
        self.nodes_map: dict[Node, Node] = {}
        self.placeholder_nodes: list[Node] = []
        self.returning_nodes: list[Node] = []


def _flat_nodes(a: Any) -> list[Node]:
    if isinstance(a, Node):
        return [a]
    if isinstance(a, (list, tuple)):
        return [n for x in a for n in _flat_nodes(x)]
    return []


def _match_args(pa: Any, ga: Any, found: _Found) -> bool:
    if isinstance(pa, Node) and isinstance(ga, Node):
        return _match_nodes(pa, ga, found)
    if isinstance(pa, (list, tuple)) and isinstance(ga, (list, tuple)):
        return len(pa) == len(ga) and all(_match_args(p, g, found) for p, g in zip(pa, ga))
    if isinstance(pa, Node) or isinstance(ga, Node):
        return False
    return type(pa) is type(ga) and pa == ga


def _match_nodes(pn: Node, gn: Node, found: _Found) -> bool:
    """Whether pattern node `pn` can be graph node `gn` (recording the pairs)."""
    if pn in found.nodes_map:
        return found.nodes_map[pn] is gn
    if gn in found.nodes_map.values():
        return False  # (two pattern nodes are two graph nodes)
    if pn.op == "placeholder":
        found.nodes_map[pn] = gn
        return True
    if pn.op != gn.op or pn.target != gn.target or set(pn.kwargs) != set(gn.kwargs):
        return False
    if len(pn.args) != len(gn.args):
        return False
    found.nodes_map[pn] = gn
    saved = dict(found.nodes_map)
    ok = all(_match_args(p, g, found) for p, g in zip(pn.args, gn.args)) and \
        all(_match_args(pn.kwargs[k], gn.kwargs[k], found) for k in pn.kwargs)
    if not ok:
        found.nodes_map.clear()
        found.nodes_map.update(saved)
        del found.nodes_map[pn]
    return ok


def _find_matches(graph: Graph, pattern: Graph) -> list[_Found]:
    p_nodes = list(pattern.nodes)
    p_out = p_nodes[-1]
    p_anchors = _flat_nodes(p_out.args[0])
    p_placeholders = [n for n in p_nodes if n.op == "placeholder"]
    p_returning = set(p_anchors)
    matches: list[_Found] = []
    taken: set[Node] = set()
    for gn in graph.nodes:
        if gn.op != p_anchors[0].op or gn.target != p_anchors[0].target:
            continue
        found = _Found([p_anchors[0]])
        if not _match_nodes(p_anchors[0], gn, found):
            continue
        if not all(any(_match_nodes(pa, g, found) for g in graph.nodes)
                   for pa in p_anchors[1:]):
            continue
        internal = [found.nodes_map[p] for p in p_nodes
                    if p.op not in ("placeholder", "output") and p not in p_returning]
        inside = set(found.nodes_map[p] for p in p_nodes
                     if p.op not in ("placeholder", "output"))
        if any(u not in inside for n in internal for u in n.users):
            continue  # (a value of the pattern is used outside it: cannot be removed)
        if inside & taken:
            continue
        taken |= inside
        found.placeholder_nodes = [found.nodes_map[p] for p in p_placeholders]
        found.returning_nodes = [found.nodes_map[p] for p in p_anchors]
        matches.append(found)
    return matches


def _graph_of(obj: Callable | Graph | GraphModule) -> Graph:
    if isinstance(obj, GraphModule):
        return obj.graph
    if isinstance(obj, Graph):
        return obj
    from ._symbolic_trace import symbolic_trace

    return symbolic_trace(obj).graph


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule,
                    replacement: Callable | GraphModule) -> list[Match]:
    """Replace every non-overlapping occurrence of `pattern` in `gm.graph` with
    `replacement` (both traced when functions); returns the matches, and recompiles."""
    graph = gm.graph
    pattern_graph, replacement_graph = _graph_of(pattern), _graph_of(replacement)
    changed: dict[Node, Node] = {}
    out: list[Match] = []
    for match in _find_matches(graph, pattern_graph):
        r_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
        if len(match.placeholder_nodes) != len(r_placeholders):
            raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} "
                                 f"vs {len(r_placeholders)}")
        val_map: dict[Node, Node] = {}
        for rn, gn in zip(r_placeholders, match.placeholder_nodes):
            val_map[rn] = changed.get(gn, gn)
        users: list[Node] = [u for n in match.returning_nodes for u in n.users]
        insert_point = next((n for n in graph.nodes if n in users), None)
        if insert_point is None:
            last = max(match.returning_nodes, key=lambda n: list(graph.nodes).index(n))
            insert_point = last.next
        with graph.inserting_before(insert_point):
            copied = graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied, Node):
            copied = (copied,)
        for gn, new in zip(match.returning_nodes, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for pn in reversed(list(pattern_graph.nodes)):
            if pn.op not in ("placeholder", "output"):
                graph.erase_node(match.nodes_map[pn])
        out.append(Match(anchor=match.anchors[0], nodes_map=match.nodes_map))
    gm.recompile()
    if isinstance(replacement, GraphModule):
        _copy_attributes(gm, replacement)
    return out


def _copy_attributes(gm: GraphModule, replacement: GraphModule) -> None:
    """Give `gm` the submodules / attributes the replacement's nodes name."""
    gm.delete_all_unused_submodules()
    for node in gm.graph.nodes:
        if node.op in ("call_module", "get_attr"):
            mine = _try_get_attr(gm, node.target)
            if mine is not None:
                continue
            theirs = _try_get_attr(replacement, node.target)
            if theirs is None:
                raise RuntimeError(f'Attempted to create a "{node.op}" node during subgraph '
                                   f"rewriting with target {node.target}, but the referenced "
                                   "attribute does not exist in the replacement GraphModule")
            new = copy.deepcopy(theirs)
            from ..nn import Module

            if isinstance(theirs, Module):
                gm.add_submodule(node.target, new)
            else:
                setattr(gm, node.target, new)
    gm.graph.lint()


def _try_get_attr(mod, target: str) -> Any:
    path, _, name = target.rpartition(".")
    try:
        owner = mod.get_submodule(path)
    except AttributeError:
        return None
    return getattr(owner, name, None)
