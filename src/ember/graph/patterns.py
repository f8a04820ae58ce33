"""Rewrites of a few node patterns into one primitive that computes the same bits in one
pass (fusion across a reduction, which the pointwise fuser cannot do).

- log_softmax's backward of nll_loss's backward (the backward of `cross_entropy`):
  `nll_log_softmax_backward`, which never writes the zero matrix between them
  (ops/nll_softmax.py); and when nothing else reads the log-probabilities (the loss
  itself is not needed), log_softmax too: the one kernel reads the logits.
- a product's bias + activation (`split_epilogues`, run by the fuser): `addmm` whose only
  reader is a pointwise node becomes the product and a separate bias add, which then fuses
  with the activation into one loop (eager's addmm adds the bias to the product in place,
  so the bits are the same).
"""

from __future__ import annotations

from ..ops.binary import add_fn, binary_p
from ..ops.matmul import addmm_p, matmul_p
from ..ops.nll_softmax import nll_log_softmax_backward_p
from ..ops.nn_ops import nll_loss_backward_p
from ..ops.softmax import softmax_backward_p, softmax_p
from .ir import Graph, Node, Value

_FLOATS = ("float32", "float64")


def _readers(nodes: list[Node], outputs: list[Value]) -> dict:
    """value -> the nodes that read it (a graph output read once more, by None)."""
    readers: dict = {}
    for n in nodes:
        for a in n.args:
            if a.__class__ is Value:
                readers.setdefault(a, []).append(n)
    for v in outputs:
        readers.setdefault(v, []).append(None)
    return readers


def fuse_patterns(nodes: list[Node], outputs: list[Value]) -> list[Node]:
    """`nodes` with each pattern above replaced by its one node (a value between them that
    anything else reads, a graph output among them, keeps the pattern as it is)."""
    readers = _readers(nodes, outputs)
    replaced: dict = {}
    dropped: set = set()
    for n in nodes:
        m = _cross_entropy_backward(n, readers)
        if m is not None:
            dropped.add(n.args[0].node)
            m = _from_logits(m, readers, dropped)
            replaced[n] = m
    if not replaced:
        return nodes
    return [replaced.get(n, n) for n in nodes if n not in dropped]


def _cross_entropy_backward(n: Node, readers: dict) -> Node | None:
    """softmax_backward_data(nll_loss_backward(g, target, weight), out, log=True) over the
    class dim of a 2-d float32/float64 `out`, read by nothing else: one node."""
    if n.prim is not softmax_backward_p or not n.params.get("log") or n.params["dim"] != 1:
        return None
    gin, out = n.args
    m = gin.node if gin.__class__ is Value else None
    if m is None or m.prim is not nll_loss_backward_p or len(readers[gin]) != 1:
        return None
    if out.__class__ is not Value or len(out.shape) != 2 or out.dtype.name not in _FLOATS \
            or gin.dtype is not out.dtype or len(m.params["in_shape"]) != 2:
        return None
    g, target, weight = m.args
    params = {"reduction": m.params["reduction"], "ignore_index": m.params["ignore_index"]}
    return Node(nll_log_softmax_backward_p, params, (g, target, weight, out), n.outs)


def _from_logits(m: Node, readers: dict, dropped: set) -> Node:
    """`m` reading log_softmax's input instead of its output, when nothing else reads the
    output (the log_softmax node is then dropped)."""
    out = m.args[3]
    a = out.node
    if a is None or a.prim is not softmax_p or not a.params.get("log") \
            or a.params["dim"] != 1 or len(readers[out]) != 1:
        return m
    x = a.args[0]
    if x.__class__ is not Value or x.dtype is not out.dtype:
        return m
    dropped.add(a)
    return Node(m.prim, {**m.params, "logits": True}, (*m.args[:3], x), m.outs)


def split_epilogues(graph: Graph, fusible) -> Graph:
    """Each `addmm(bias, a, b)` (beta and alpha 1, matrices of one float dtype, a bias of
    that dtype) whose one reader is a node `fusible(node)` accepts, and which is no graph
    output: `matmul(a, b)` then `binary.add(product, bias)`, the add ready to fuse. The
    graph itself when there is none."""
    readers = _readers(graph.nodes, graph.outputs)
    next_id = graph._count  # (the first id no value of the graph has)
    kept = []
    renamed: dict = {}  # (the values are the recorded graph's: new ones, never edited)
    for n in graph.nodes:
        if renamed and any(a in renamed for a in n.args if a.__class__ is Value):
            n = Node(n.prim, n.params, tuple(renamed.get(a, a) if a.__class__ is Value
                                             else a for a in n.args), n.outs)
        if not _epilogue(n, readers, fusible):
            kept.append(n)
            continue
        bias, a, b = n.args
        out = n.outs[0]
        mm = Node(matmul_p, {}, (a, b), ())
        mm.outs = (Value(next_id, out.shape, out.dtype, out.stride, mm),)
        next_id += 1
        add = Node(binary_p, {"fn": add_fn}, (mm.outs[0], bias), ())
        add.outs = (Value(out.id, out.shape, out.dtype, out.stride, add),)
        renamed[out] = add.outs[0]
        kept += [mm, add]
    if not renamed:
        return graph
    g = graph.with_nodes(kept)
    g._count = next_id
    return g


def _epilogue(n: Node, readers: dict, fusible) -> bool:
    if n.prim is not addmm_p or n.params.get("batch_sum") or \
            n.params.get("beta").__class__ is not int or n.params["beta"] != 1 or \
            n.params.get("alpha").__class__ is not int or n.params["alpha"] != 1:
        return False
    bias, a, b = n.args
    out = n.outs[0]
    if any(v.__class__ is not Value or v.dtype is not out.dtype for v in (bias, a, b)) or \
            len(a.shape) != 2 or len(b.shape) != 2 or out.dtype.name not in _FLOATS:
        return False
    users = readers.get(out, ())  # (an output is read by None: not fusible)
    return len(users) == 1 and users[0] is not None and fusible(users[0])
